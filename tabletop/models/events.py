"""The session's record: every roll and change, numbered, append-only."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _

from .sessions import GameSession, Seat


class Visibility(models.TextChoices):
    PUBLIC = "public", "Everyone"
    GM = "gm", "GM and roller"
    BLIND = "blind", "GM only"
    SELF = "self", "Roller only"
    # A message (and its inline rolls) to one seat: its sender, its recipient and, where the
    # event says so (``data.gm_reads``), the GM.
    WHISPER = "whisper", "Sender and recipient"


# What a roll may be asked to be: a whisper's rolls are made by its message, never on their own.
ROLL_VISIBILITIES = tuple(v for v in Visibility.values if v != Visibility.WHISPER)


class AppendOnlyError(Exception):
    pass


class Event(models.Model):
    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="events")
    seq = models.BigIntegerField(verbose_name=_("seq"))
    kind = models.CharField(max_length=40, verbose_name=_("kind"))
    actor = models.ForeignKey(
        Seat, null=True, blank=True, on_delete=models.RESTRICT, related_name="+"
    )
    # The actor's display name when the event happened, so replays need no join.
    actor_name = models.CharField(max_length=40, blank=True, verbose_name=_("actor"))
    # Whose hidden roll this event is about, when that is not the actor (the GM declaring a
    # player's "gm" roll): visibility is judged for this seat. Null means the actor.
    owner = models.ForeignKey(
        Seat, null=True, blank=True, on_delete=models.RESTRICT, related_name="+"
    )
    visibility = models.CharField(
        max_length=10,
        choices=Visibility.choices,
        default=Visibility.PUBLIC,
        verbose_name=_("visibility"),
    )
    data = models.JSONField(default=dict, verbose_name=_("data"))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("event")
        verbose_name_plural = _("events")
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="event_seq_unique_per_session"),
            models.CheckConstraint(condition=models.Q(seq__gte=1), name="event_seq_positive"),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.kind}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError("events are append-only: record a new event instead")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise AppendOnlyError("events are append-only")
