"""Character sheets and campaign settings, edited as forms: checked against the system's own
schema (the same one the admin describes), then kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from rules.engines import RuleError, get_system

from ..models import Campaign, Character, GameSession, Seat, SessionStatus
from ..selectors.campaigns import quick_rolls_of
from .errors import ServiceError, forbidden
from .events import notice_on_commit
from .pools import character_for
from .seats import check_still_seated


def update_sheet(*, seat: Seat, character_id: int, sheet: Mapping[str, Any]) -> Character:
    """A player changes their own character's sheet; the GM any of the campaign's. The sheet
    comes checked against the body's declaration (an object, ``protocol.bodies.SHEET``); its
    fields are the system's schema's to check."""
    check_still_seated(seat=seat)
    character = character_for(seat=seat, character_id=character_id)
    try:
        checked = get_system(seat.session.campaign.system).validate_sheet(sheet)
    except RuleError as exc:
        raise ServiceError.from_rule(exc, prefix="") from None
    if checked == character.sheet:
        return character  # the same sheet again: nothing to keep or tell
    (before,) = quick_rolls_of(campaign=character.campaign, characters=[character])
    character.sheet = checked
    character.save(update_fields=["sheet"])
    (after,) = quick_rolls_of(campaign=character.campaign, characters=[character])
    if after != before:
        _tell_quick_rolls(character, after)
    return character


def _tell_quick_rolls(character: Character, quick: dict[str, Any]) -> None:
    """The character's quick rolls follow its sheet: every live room of the campaign tells the
    seats playing it (and the GM) at once, so no page needs a reload. Only when they changed:
    a large sheet's notice is large (600 quick rolls are ~136 KB), and the GM's socket carries
    every character's."""
    notice = {"type": "quick_rolls", **quick}
    live = GameSession.objects.filter(campaign_id=character.campaign_id, status=SessionStatus.LIVE)
    for session_id in live.values_list("pk", flat=True):
        seats = Seat.objects.filter(
            session_id=session_id, characters=character, removed_at__isnull=True
        )
        notice_on_commit(
            session_id=session_id, notice=notice, seats=list(seats.values_list("pk", flat=True))
        )


def update_settings(*, seat: Seat, settings: Mapping[str, Any]) -> Campaign:
    """The GM changes the campaign's settings. They come checked against the body's
    declaration (an object, ``protocol.bodies.SETTINGS``); their fields are the system's
    schema's to check."""
    if not seat.is_gm:
        raise forbidden(_("only the GM changes the campaign's settings"))
    campaign = seat.session.campaign
    try:
        checked = get_system(campaign.system).validate_settings(settings)
    except RuleError as exc:
        raise ServiceError.from_rule(exc, prefix="") from None
    campaign.settings = checked
    campaign.save(update_fields=["settings"])
    return campaign
