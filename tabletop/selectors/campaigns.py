"""What the home page shows a logged-in GM, and the quick rolls of a campaign's characters."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast, Length

from rules.engines import RuleError, get_system

from ..models import Campaign, Character
from ..protocol.bodies import SHEET_BYTES


def campaigns_run_by(*, user: AbstractBaseUser) -> QuerySet[Campaign]:
    return Campaign.objects.filter(gm_id=user.pk).prefetch_related("sessions").order_by("name")


# The most of a stored sheet a page or a socket's hello carries: what a sheet form may send
# (``SHEET_BYTES``), twice over for the spaces the database's spelling of it adds.
STORED_SHEET_CHARS = 2 * SHEET_BYTES


def with_sheets(characters: QuerySet[Character]) -> list[Character]:
    """The characters, each with its sheet where its stored size is within the budget of a
    page. A sheet stored before sheets had limits can be megabytes: it is measured in the
    database and left unread (``sheet`` None, ``sheet_chars`` its size), so the pages and the
    room's hello stay their size; its form tells its editor, who can replace it."""
    measured = characters.annotate(sheet_chars=Length(Cast("sheet", TextField())))
    found: list[Character] = list(measured.defer("sheet"))
    within = [c.pk for c in found if (getattr(c, "sheet_chars", 0) or 0) <= STORED_SHEET_CHARS]
    sheets = dict(Character.objects.filter(pk__in=within).values_list("pk", "sheet"))
    for character in found:
        character.sheet = sheets.get(character.pk)
    return found


def sheet_of(character: Character) -> dict[str, Any]:
    """A character's sheet for its form: its values, or (a sheet past the budget, unread) its
    size and the most a sheet may be, for the form to say so."""
    out = {"id": character.pk, "name": character.name, "sheet": character.sheet}
    chars = getattr(character, "sheet_chars", None) or 0
    if chars > STORED_SHEET_CHARS:
        out["too_large"] = {"kib": -(-chars // 1024), "limit_kib": SHEET_BYTES // 1024}
    return out


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


def talk_settings(talk: Any) -> dict[str, bool]:
    """What a campaign says about talk at its table (its ``talk`` as stored), every key
    present (off unless set)."""
    found = talk if isinstance(talk, dict) else {}
    return {key: bool(found.get(key, default)) for key, default in TALK_DEFAULTS.items()}
