"""Pools and resources: the atomic arithmetic every system's pool rules are built from.

Counts only change by conditional UPDATEs (``remaining >= n``), so two sockets spending the
last die at the same moment cannot both succeed; the CHECK constraints stand behind them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F
from django.utils.translation import gettext as _

from ..models import Character, CharacterResource, Event, GameSession, Seat, Visibility
from ..models.pools import Pool
from ..selectors.pools import pool_snapshot, resource_names, starting_amount
from .errors import conflict, forbidden, invalid
from .events import UnitOfWork
from .withheld import count_key, tell_hidden, tell_public, withhold_moves


def _take_moves(uow: UnitOfWork, data: dict[str, Any]) -> dict[tuple[Any, ...], int]:
    """The moves of the counts ``data`` carries (they are told now, so forgotten here)."""
    keys = [count_key("pools", p) for p in data.get("pools") or ()]
    keys += [count_key("resources", r) for r in data.get("resources") or ()]
    # A count noted with no move (``hold_resource``) is told like one that moved.
    return {k: uow.moves.pop(k) for k in keys if k in uow.moves}


def take_dice(uow: UnitOfWork, *, pool_id: int, count: int = 1) -> bool:
    """Take ``count`` dice if that many are there; False (and nothing taken) otherwise."""
    done = bool(
        Pool.objects.filter(pk=pool_id, remaining__gte=count).update(
            remaining=F("remaining") - count
        )
    )
    if done:
        uow.moved(("pools", pool_id), -count)
    return done


def give_dice(uow: UnitOfWork, *, pool_id: int, count: int = 1) -> None:
    Pool.objects.filter(pk=pool_id).update(remaining=F("remaining") + count)
    uow.moved(("pools", pool_id), count)


def record_pool_event(
    uow: UnitOfWork,
    *,
    session_id: int,
    actor: Seat | None,
    data: dict[str, Any],
    seq: int | None = None,
    visibility: str = Visibility.PUBLIC,
    owner: Seat | None = None,
) -> Event:
    """Every pool change is a ``pool`` event carrying the new absolute counts, so a screen that
    applies it twice still shows the truth.

    A change about a hidden roll takes that roll's ``visibility`` and ``owner`` (its roller).
    What it moved is withheld from everyone else until the roll is revealed or the session
    ends (its price or its very existence would tell of the roll's dice): a ``counts`` event as
    hidden as the roll notes the moves (``withheld``) and the roll they wait for; the reveal
    or the session's end then carries the counts to the room (``services/withheld.py``)."""
    moves = _take_moves(uow, data)
    if visibility == Visibility.PUBLIC:
        return tell_public(
            uow, session_id=session_id, actor=actor, data=data, moved=set(moves), seq=seq
        )
    event = tell_hidden(
        uow,
        session_id=session_id,
        visibility=visibility,
        roller=owner if owner is not None else actor,
        actor=actor,
        data=data,
        record=lambda told: uow.record(
            session_id=session_id,
            kind="pool",
            actor=actor,
            data=told,
            seq=seq,
            visibility=visibility,
            owner=owner,
        ),
    )
    if moves:
        note = {
            "session_id": session_id,
            "kind": "pool",
            "actor": actor,
            "visibility": visibility,
            "owner": owner,
            "data": {
                "action": "counts",
                "of": event.seq,
                "roll": data.get("roll") or uow.roll,
                "withheld": [{"count": list(k), "moved": d} for k, d in moves.items()],
                "text": "Counts withheld from the room until the roll is revealed",
            },
        }
        withhold_moves(uow, note=note)  # paid before the roll: noted once the roll has its seq
    return event


def pools_changed(pool_ids: list[int]) -> list[dict[str, Any]]:
    return [pool_snapshot(p) for p in Pool.objects.filter(pk__in=pool_ids).order_by("pk")]


# --- per-character resources (the amounts a system keeps on each character) ------------------


def ensure_resources(*, character: Character) -> list[CharacterResource]:
    """Rows for the system's persistent resources, seeded from the sheet the first time."""
    rows = []
    for name in resource_names(character.campaign.system):
        row, _ = CharacterResource.objects.get_or_create(
            character=character, name=name, defaults={"amount": starting_amount(character, name)}
        )
        rows.append(row)
    return rows


def character_for(*, seat: Seat, character_id: int) -> Character:
    """A character this seat may act for: its own (players), any in the campaign (GM)."""
    if seat.is_gm:
        character = Character.objects.filter(
            pk=character_id, campaign__sessions=seat.session_id
        ).first()
        if character is None:
            raise invalid(_("no such character at this table"), field="character")
        return character
    character = seat.characters.filter(pk=character_id).first()
    if character is None:
        raise forbidden(_("you can act only for your own characters"))
    return character


def spend_resource(
    uow: UnitOfWork, *, character: Character, name: str, amount: int = 1
) -> CharacterResource:
    """Spend ``amount`` of a resource atomically, or refuse with what is left."""
    if name not in resource_names(character.campaign.system):
        raise invalid(
            _("%(system)s has no resource %(name)s")
            % {"system": character.campaign.system, "name": repr(name)},
            field="resource",
        )
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1 or amount > 1000:
        raise invalid(_("a whole number from 1 to 1000"), field="amount")
    ensure_resources(character=character)
    done = CharacterResource.objects.filter(
        character=character, name=name, amount__gte=amount
    ).update(amount=F("amount") - amount)
    row = CharacterResource.objects.get(character=character, name=name)
    if not done:
        raise conflict(
            _("%(character)s has only %(amount)s %(name)s")
            % {"character": character.name, "amount": row.amount, "name": name.replace("_", " ")}
        )
    uow.moved(("resources", character.pk, name), -amount)
    return row


def hold_resource(uow: UnitOfWork, *, character: Character, name: str) -> CharacterResource:
    """Note a resource a change may spend or not, as a hidden roll's dice decide, even when it
    spends none: what others see of the change (its withheld count) is then the same whatever
    the dice. Returns the row as it is."""
    if name not in resource_names(character.campaign.system):
        raise invalid(
            _("%(system)s has no resource %(name)s")
            % {"system": character.campaign.system, "name": repr(name)},
            field="resource",
        )
    ensure_resources(character=character)
    uow.moved(("resources", character.pk, name), 0)
    return CharacterResource.objects.get(character=character, name=name)


def grant_resource(
    uow: UnitOfWork, *, character: Character, name: str, amount: int = 1
) -> CharacterResource:
    if name not in resource_names(character.campaign.system):
        raise invalid(
            _("%(system)s has no resource %(name)s")
            % {"system": character.campaign.system, "name": repr(name)},
            field="resource",
        )
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1 or amount > 1000:
        raise invalid(_("a whole number from 1 to 1000"), field="amount")
    ensure_resources(character=character)
    CharacterResource.objects.filter(character=character, name=name).update(
        amount=F("amount") + amount
    )
    uow.moved(("resources", character.pk, name), amount)
    return CharacterResource.objects.get(character=character, name=name)


def expire_pools(uow: UnitOfWork, *, session: GameSession, by: Seat | None) -> Event | None:
    """At the session's end whatever is left in every pool is lost."""
    stacks = list(Pool.objects.filter(session=session, remaining__gt=0))
    if not stacks:
        return None
    lost = sum(p.remaining for p in stacks)
    Pool.objects.filter(pk__in=[p.pk for p in stacks]).update(remaining=0)
    return record_pool_event(
        uow,
        session_id=session.pk,
        actor=by,
        data={
            "action": "expire",
            "lost": lost,
            "pools": pools_changed([p.pk for p in stacks]),
            "text": f"The session ends: {lost} unused dice expire",
        },
    )
