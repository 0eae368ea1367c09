"""Character sheets and campaign settings, edited as forms: checked against the system's own
schema (the same one the admin describes), then kept."""

from __future__ import annotations

from typing import Any

from rules.engines import RuleError, get_system

from ..models import Campaign, Character, Seat
from .errors import ServiceError, forbidden, invalid
from .pools import character_for


def update_sheet(*, seat: Seat, character_id: Any, sheet: Any) -> Character:
    """A player changes their own character's sheet; the GM any of the campaign's."""
    character = character_for(seat=seat, character_id=character_id)
    try:
        checked = get_system(seat.session.campaign.system).validate_sheet(sheet)
    except RuleError as exc:
        raise ServiceError.from_rule(exc, prefix="") from None
    character.sheet = checked
    character.save(update_fields=["sheet"])
    return character


def update_settings(*, seat: Seat, settings: Any) -> Campaign:
    """The GM changes the campaign's settings."""
    if not seat.is_gm:
        raise forbidden("only the GM changes the campaign's settings")
    campaign = seat.session.campaign
    if not isinstance(settings, dict):
        raise invalid("expected an object of settings", field="settings")
    try:
        checked = get_system(campaign.system).validate_settings(settings)
    except RuleError as exc:
        raise ServiceError.from_rule(exc, prefix="") from None
    campaign.settings = checked
    campaign.save(update_fields=["settings"])
    return campaign
