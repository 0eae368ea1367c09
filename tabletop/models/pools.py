"""Session resources: dice pools held by seats, rolls still open to augment. What a game system
keeps beyond them is its own models' (``tabletop/systems/<id>/models.py``)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from .campaigns import Character
from .sessions import GameSession, Seat


class PoolKind(models.TextChoices):
    SESSION_DICE = "session-dice", "Dice for the session (a seat's pool)"
    BONUS_DICE = "bonus-dice", "Bonus dice (one character's: a class's, or the GM's award)"
    ROUND_DICE = "round-dice", "Dice for this round (one character)"


class Pool(models.Model):
    """A stack of dice of one size held for this session: a seat's pool for the session (one
    stack per die size), class bonus dice bound to one character, or a character's dice for the
    round (``label`` names the class of actions or the skill that restricted dice are for).

    ``remaining`` only ever changes by one conditional UPDATE, and never goes below zero."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="pools")
    seat = models.ForeignKey(
        Seat, on_delete=models.CASCADE, related_name="pools", verbose_name=_("seat")
    )
    character = models.ForeignKey(
        Character,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="pools",
        verbose_name=_("character"),
    )
    kind = models.CharField(max_length=20, choices=PoolKind.choices, verbose_name=_("kind"))
    sides = models.PositiveSmallIntegerField(verbose_name=_("sides"))
    remaining = models.IntegerField(default=0, verbose_name=_("remaining"))
    # What the stack started the session (or round) with, for the dashboard.
    initial = models.IntegerField(default=0, verbose_name=_("initial"))
    # Restricted or specialized dice: the class of actions or the skill they may be spent on.
    label = models.CharField(max_length=60, blank=True, default="")

    class Meta:
        verbose_name = _("pool")
        verbose_name_plural = _("pools")
        ordering = ["session", "seat", "kind", "sides"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(remaining__gte=0), name="pool_never_negative"
            ),
            models.UniqueConstraint(
                fields=["seat", "kind", "sides", "label"],
                condition=models.Q(character__isnull=True),
                name="one_stack_per_seat_kind_size_label",
            ),
            models.UniqueConstraint(
                fields=["seat", "kind", "sides", "character", "label"],
                condition=models.Q(character__isnull=False),
                name="one_stack_per_character_kind_size_label",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.seat}: {self.remaining}d{self.sides} {self.kind}"


class OpenRoll(models.Model):
    """A roll the GM has not yet declared: pool dice may still be used on it."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="open_rolls")
    seq = models.BigIntegerField(help_text=_("the roll event"))
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="open_rolls")
    character = models.ForeignKey(Character, null=True, blank=True, on_delete=models.SET_NULL)
    total = models.IntegerField()
    flags = models.JSONField(default=list)
    dc = models.IntegerField(null=True, blank=True)
    added = models.IntegerField(default=0, help_text=_("what used pool dice added"))
    critical_dice = models.IntegerField(default=0)
    is_open = models.BooleanField(default=True)
    declared = models.CharField(max_length=200, blank=True)
    # The roll's own visibility: events about it (dice used, declared) are as hidden as it is.
    visibility = models.CharField(max_length=10, default="public")
    # What the roll is about, as the table's rules compare it (normalised; empty: nothing).
    subject = models.CharField(max_length=200, blank=True, default="")
    # What the table's system marks on the roll, shown with it (its own counts: dice committed).
    marks = models.JSONField(default=dict)

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="one_open_roll_per_event"),
            models.CheckConstraint(
                condition=models.Q(critical_dice__gte=0), name="critical_dice_not_negative"
            ),
        ]

    def __str__(self) -> str:
        return f"roll #{self.seq} ({'open' if self.is_open else 'declared'})"
