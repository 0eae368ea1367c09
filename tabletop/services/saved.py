"""Saved rolls: a player keeps named rolls for their characters (the GM for any of the
campaign's; a player with no character for their seat), checked like a roll is, so one tap rolls
them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from rules.engines import RuleError, get_system, system_ids

from ..models import Character, SavedRoll, Seat
from .errors import ServiceError, invalid, not_found
from .names import clean_label
from .pools import character_for
from .seats import check_still_seated

MAX_PER_CHARACTER = 40


def _seat_keeps(seat: Seat) -> bool:
    """A player with no character keeps saved rolls on the seat itself."""
    return not seat.is_gm and not seat.characters.exists()


def saved_for(*, seat: Seat) -> list[dict[str, Any]]:
    """The seat's characters (the GM: the campaign's) with their saved rolls; first, with id
    null, the seat's own (a player with no character, or rolls kept before one came)."""
    characters = (
        Character.objects.filter(campaign_id=seat.session.campaign_id)
        if seat.is_gm
        else seat.characters.all()
    )
    out: list[dict[str, Any]] = []
    own = [_summary(r) for r in SavedRoll.objects.filter(seat=seat)]
    if own or _seat_keeps(seat):
        out.append({"id": None, "name": seat.name, "rolls": own})
    for character in characters.order_by("name").prefetch_related("saved_rolls"):
        out.append(
            {
                "id": character.pk,
                "name": character.name,
                "rolls": [_summary(r) for r in character.saved_rolls.all()],
            }
        )
    return out


def _summary(roll: SavedRoll) -> dict[str, Any]:
    return {"id": roll.pk, "label": roll.label, "system": roll.system, "request": roll.request}


def _checked(
    *, seat: Seat, label: str, system: str | None, request: Mapping[str, Any]
) -> tuple[str, str, dict[str, Any]]:
    """What the body's declaration cannot say: a label with something shown, a system this
    table rolls, and a request its engine takes."""
    label = clean_label(label)
    if not label:
        raise invalid(_("name the roll, like Longsword attack"), field="label")
    table = seat.session.campaign.system
    if system in (None, ""):
        system = table
    if system not in (table, "generic") or system not in system_ids():
        # A generic table takes one system, named once; any other its own and generic.
        takes = (
            _("%(system)s is not played at this table: it takes only %(table)s rolls")
            if table == "generic"
            else _("%(system)s is not played at this table: it takes %(table)s or 'generic' rolls")
        )
        raise invalid(takes % {"system": repr(system), "table": repr(table)}, field="system")
    try:
        request = get_system(system).normalise(request)
    except RuleError as exc:
        raise ServiceError.from_rule(exc) from None
    return label, system, request


def save_roll(
    *,
    seat: Seat,
    character_id: int | None,
    label: str,
    system: str | None,
    request: Mapping[str, Any],
) -> SavedRoll:
    """Keep a new roll for a character this seat acts for; with no character, for a seat that
    has none (its own). The values come checked against the body's declaration
    (``protocol.bodies.SAVED_ROLL``)."""
    check_still_seated(seat=seat)
    owner: dict[str, Any]
    if character_id is None:
        if not _seat_keeps(seat):
            raise invalid(_("pick the character who rolls it"), field="character")
        owner = {"seat": seat}
    else:
        owner = {"character": character_for(seat=seat, character_id=character_id)}
    label, system, request = _checked(seat=seat, label=label, system=system, request=request)
    with transaction.atomic():
        rolls = SavedRoll.objects.select_for_update().filter(**owner)
        if rolls.count() >= MAX_PER_CHARACTER:
            most = (
                _("at most %(count)s saved rolls a character")
                if "character" in owner
                else _("at most %(count)s saved rolls a seat")
            )
            raise invalid(most % {"count": MAX_PER_CHARACTER}, field="label")
        last = rolls.aggregate(last=Max("position"))["last"]
        return SavedRoll.objects.create(
            **owner,
            label=label,
            system=system,
            request=request,
            position=0 if last is None else last + 1,
        )


def _own(*, seat: Seat, roll_id: int) -> SavedRoll:
    check_still_seated(seat=seat)
    roll = SavedRoll.objects.select_related("character").filter(pk=roll_id).first()
    if roll is not None and roll.seat_id is not None:
        if roll.seat_id != seat.pk:
            raise not_found(_("no such saved roll"))
        return roll
    if roll is None or roll.character is None:
        raise not_found(_("no such saved roll"))
    if roll.character.campaign_id != seat.session.campaign_id:
        raise not_found(_("no such saved roll"))
    character_for(seat=seat, character_id=roll.character.pk)  # refuses another's character
    return roll


def change_roll(
    *,
    seat: Seat,
    roll_id: int,
    label: str,
    system: str | None = None,
    request: Mapping[str, Any] | None = None,
) -> SavedRoll:
    """Rename a saved roll, or (with ``request``) change what it rolls. The values come
    checked against the body's declaration (``protocol.bodies.SAVED_ROLL_CHANGE``)."""
    roll = _own(seat=seat, roll_id=roll_id)
    if request is None:
        request, system = roll.request, roll.system
    roll.label, roll.system, roll.request = _checked(
        seat=seat, label=label, system=system, request=request
    )
    roll.save(update_fields=["label", "system", "request"])
    return roll


def delete_roll(*, seat: Seat, roll_id: int) -> None:
    _own(seat=seat, roll_id=roll_id).delete()
