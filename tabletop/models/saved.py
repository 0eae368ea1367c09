"""Saved rolls: a character's rolls kept on the server, one tap each in the room."""

from __future__ import annotations

from django.db import models

from .campaigns import Character


class SavedRoll(models.Model):
    """One named roll of a character ("Longsword attack"): the request and the engine it is
    rolled with, as the panel would send them."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="saved_rolls")
    label = models.CharField(max_length=60)
    system = models.CharField(max_length=40)
    request = models.JSONField()
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("position", "pk")

    def __str__(self) -> str:
        return f"{self.character.name}: {self.label}"
