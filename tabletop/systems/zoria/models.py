"""What Zoria's table keeps of its own: each seat's facts its pool rules depend on."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from ...models import Seat


class SeatPoolState(models.Model):
    """Per-seat facts Zoria's pool rules depend on: dice used (no lucky break after), a lucky break
    taken (no awards after), what the pool started with."""

    seat = models.OneToOneField(Seat, on_delete=models.CASCADE, related_name="pool_state")
    touched = models.BooleanField(default=False, help_text=_("used or spent a die this session"))
    lucky_break = models.BooleanField(
        default=False, help_text=_("gave up the pool; no more awards")
    )
    starting_dice = models.IntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.seat} pool state"
