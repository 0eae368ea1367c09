"""Saved rolls: a character's rolls kept on the server, one tap each in the room (a seat's own,
for a player who has no character)."""

from __future__ import annotations

from django.db import models

from .campaigns import Character
from .sessions import Seat


class SavedRoll(models.Model):
    """One named roll of a character ("Longsword attack"): the request and the engine it is
    rolled with, as the panel would send them."""

    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="saved_rolls", null=True, blank=True
    )
    # A seat without a character keeps its rolls itself; a roll has one owner or the other.
    seat = models.ForeignKey(
        Seat, on_delete=models.CASCADE, related_name="saved_rolls", null=True, blank=True
    )
    label = models.CharField(max_length=60)
    system = models.CharField(max_length=40)
    request = models.JSONField()
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("position", "pk")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(character__isnull=False, seat__isnull=True)
                | models.Q(character__isnull=True, seat__isnull=False),
                name="saved_roll_has_one_owner",
            )
        ]

    def __str__(self) -> str:
        owner = self.character or self.seat
        return f"{owner.name if owner else '?'}: {self.label}"
