"""What roll-and-keep's table keeps of its own: extended actions."""

from __future__ import annotations

from django.db import models

from ...models import GameSession


class ExtendedAction(models.Model):
    """Roll-and-keep: a GM-set number of successes that rolls accumulate toward (a roll that
    falls short of ``each``, when the GM sets it, adds nothing)."""

    session = models.ForeignKey(
        GameSession, on_delete=models.CASCADE, related_name="extended_actions"
    )
    label = models.CharField(max_length=120)
    target = models.PositiveIntegerField()
    # The successes each round of rolling must reach to count at all (none: every roll counts).
    each = models.PositiveIntegerField(null=True, blank=True)
    progress = models.IntegerField(default=0)
    is_open = models.BooleanField(default=True)
    opened_seq = models.BigIntegerField()

    class Meta:
        ordering = ["session", "opened_seq"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(target__gte=1), name="extended_target_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.label}: {self.progress}/{self.target}"
