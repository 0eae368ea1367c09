"""What the home page shows a logged-in GM, and the quick rolls of a campaign's characters."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from rules.engines import RuleError, get_system

from ..models import Campaign, Character


def campaigns_run_by(*, user: AbstractBaseUser) -> QuerySet[Campaign]:
    return Campaign.objects.filter(gm_id=user.pk).prefetch_related("sessions").order_by("name")


def quick_rolls_of(
    *, campaign: Campaign, characters: list[Character], seconds: float | None = None
) -> list[dict[str, Any]]:
    """Each character's ready-made rolls from its sheet and the campaign's settings (a sheet
    the engine cannot read gives none). Each sheet's quick rolls cost time linear in the sheet,
    and sheets are bounded by their schema; a campaign of many characters still stops once
    ``seconds`` are spent (the rest get their quick rolls on the next load, and none now)."""
    system = get_system(campaign.system)
    settings = campaign.settings or {}
    deadline = None if seconds is None else time.monotonic() + seconds
    out = []
    for character in characters:
        rolls: list[Any] = []
        if deadline is None or time.monotonic() < deadline:
            with contextlib.suppress(RuleError):  # (a sheet its schema refuses: none)
                rolls = system.quick_rolls(character.sheet or {}, settings)
        out.append({"character": {"id": character.pk, "name": character.name}, "rolls": rolls})
    return out


# The campaign's settings for talk at the table (``Campaign.talk``): whether the GM reads
# players' whispers to each other, and whether public messages go to the webhooks.
TALK_DEFAULTS: dict[str, bool] = {"gm_reads_whispers": False, "to_webhooks": False}


def talk_settings(campaign: Campaign) -> dict[str, bool]:
    """What the campaign says about talk at its table, every key present (off unless set)."""
    found = campaign.talk if isinstance(campaign.talk, dict) else {}
    return {key: bool(found.get(key, default)) for key, default in TALK_DEFAULTS.items()}
