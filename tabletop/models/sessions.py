"""Game sessions and the seats at their table."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext

from .campaigns import Campaign, Character, Player
from .codes import new_invite_code


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def carried_token_hash(token_hash: str, session_id: int) -> str:
    """The hash a player's token takes on a seat carried into a later session: bound to that
    session, so each seat's hash stays unique while one token opens them all."""
    return hashlib.sha256(f"{session_id}:{token_hash}".encode()).hexdigest()


class SessionStatus(models.TextChoices):
    PLANNED = "planned", _("Planned")
    LIVE = "live", _("Live")
    ENDED = "ended", _("Ended")


def status_word(status: str) -> str:
    """A session's status as a word in a sentence ("this one is ended"), in the reader's
    language (the browser modules say the same words: ``pgettext("session", ...)``)."""
    words = {
        SessionStatus.PLANNED: pgettext("session", "planned"),
        SessionStatus.LIVE: pgettext("session", "live"),
        SessionStatus.ENDED: pgettext("session", "ended"),
    }
    return words.get(status, status)  # type: ignore[call-overload]


class GameSession(models.Model):
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="sessions", verbose_name=_("campaign")
    )
    title = models.CharField(max_length=120, verbose_name=_("title"))
    status = models.CharField(
        max_length=10,
        choices=SessionStatus.choices,
        default=SessionStatus.PLANNED,
        verbose_name=_("status"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created"))
    started_at = models.DateTimeField(null=True, blank=True, verbose_name=_("started"))
    ended_at = models.DateTimeField(null=True, blank=True, verbose_name=_("ended"))
    invite_code = models.CharField(
        max_length=32,
        unique=True,
        default=new_invite_code,
        editable=False,
        verbose_name=_("invite code"),
    )
    # The last event's sequence number: the next event takes last_seq + 1 in one UPDATE.
    last_seq = models.BigIntegerField(default=0, editable=False)
    # Fair dice: sha256(server_seed) is public from the start; the seed itself only after the end.
    commitment = models.CharField(max_length=64, blank=True, editable=False)
    server_seed = models.BinaryField(null=True, blank=True, editable=False)
    # Room-wide state a system's rules keep between rolls (hello.state.table).
    table_state = models.JSONField(default=dict, blank=True, editable=False)

    class Meta:
        verbose_name = _("session")
        verbose_name_plural = _("sessions")
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(last_seq__gte=0), name="session_seq_not_negative"
            ),
            models.CheckConstraint(
                condition=~models.Q(status="ended") | models.Q(ended_at__isnull=False),
                name="ended_session_has_end_time",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def seed(self) -> bytes:
        """The server seed, made with the session (the database may hand back a memoryview)."""
        if self.server_seed is None:
            raise ValueError(f"session {self.pk} has no server seed")
        return bytes(self.server_seed)

    @property
    def revealed_seed(self) -> str | None:
        """The server seed in hex, once the session has ended; never before."""
        if self.status != SessionStatus.ENDED or self.server_seed is None:
            return None
        return bytes(self.server_seed).hex()


class SeatRole(models.TextChoices):
    GM = "gm", "GM"
    PLAYER = "player", "Player"


class Seat(models.Model):
    session = models.ForeignKey(
        GameSession, on_delete=models.CASCADE, related_name="seats", verbose_name=_("session")
    )
    name = models.CharField(_("display name"), max_length=40)
    role = models.CharField(
        max_length=10, choices=SeatRole.choices, default=SeatRole.PLAYER, verbose_name=_("role")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="seats",
        verbose_name=_("user"),
    )
    characters = models.ManyToManyField(
        Character, blank=True, related_name="seats", verbose_name=_("characters")
    )
    # sha256 of the seat's secret token; the token itself is shown once, to its holder.
    token_hash = models.CharField(max_length=64, unique=True, null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created"))
    # Sockets of this seat open now, in every server process (presence: here while above 0).
    sockets = models.PositiveIntegerField(default=0, editable=False)
    # Set when the GM removes the seat from the table: its token no longer opens the room.
    removed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The campaign's player this seat belongs to: the same player sits at every session.
    player = models.ForeignKey(
        Player,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="seats",
        verbose_name=_("player"),
    )

    class Meta:
        verbose_name = _("seat")
        verbose_name_plural = _("seats")
        ordering = ["session", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["session"], condition=models.Q(role="gm"), name="one_gm_seat_per_session"
            ),
            models.UniqueConstraint(
                fields=["session", "user"],
                condition=models.Q(user__isnull=False),
                name="one_seat_per_user_per_session",
            ),
            models.UniqueConstraint(
                fields=["session", "player"],
                condition=models.Q(player__isnull=False),
                name="one_seat_per_player_per_session",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_role_display()})"

    @property
    def is_gm(self) -> bool:
        return self.role == SeatRole.GM
