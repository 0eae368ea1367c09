"""Pools and resources: the atomic arithmetic every system's pool rules are built from.

Counts only change by conditional UPDATEs (``remaining >= n``), so two sockets spending the
last die at the same moment cannot both succeed; the CHECK constraints stand behind them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F

from ..models import Character, CharacterResource, Event, GameSession, Seat, Visibility
from ..models.pools import Pool
from ..selectors.pools import pool_snapshot, resource_names, starting_amount
from .errors import conflict, forbidden, invalid
from .events import record_event


def take_dice(*, pool_id: int, count: int = 1) -> bool:
    """Take ``count`` dice if that many are there; False (and nothing taken) otherwise."""
    return bool(
        Pool.objects.filter(pk=pool_id, remaining__gte=count).update(
            remaining=F("remaining") - count
        )
    )


def give_dice(*, pool_id: int, count: int = 1) -> None:
    Pool.objects.filter(pk=pool_id).update(remaining=F("remaining") + count)


COUNTED = {"pools": "pool dice", "resources": "resources spent"}


def record_pool_event(
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

    A change about a hidden roll takes that roll's ``visibility`` and ``owner`` (its roller),
    and a public companion event carries only the new counts (pools, resources), so every screen
    still sees every count change without learning anything of the roll."""
    if visibility == Visibility.PUBLIC:
        return record_event(session_id=session_id, kind="pool", actor=actor, data=data, seq=seq)
    event = record_event(
        session_id=session_id,
        kind="pool",
        actor=actor,
        data=data,
        seq=seq,
        visibility=visibility,
        owner=owner,
    )
    counts = {key: data[key] for key in ("pools", "resources") if data.get(key)}
    if counts:
        who = actor.name if actor else "The table"
        record_event(
            session_id=session_id,
            kind="pool",
            actor=actor,
            data={
                "action": "counts",
                "of": event.seq,
                **counts,
                "text": f"{who}: {' and '.join(COUNTED[key] for key in counts)} on a hidden roll",
            },
        )
    return event


def pools_changed(pool_ids: list[int]) -> list[dict[str, Any]]:
    return [pool_snapshot(p) for p in Pool.objects.filter(pk__in=pool_ids).order_by("pk")]


# --- per-character resources (character points, Luck, Instant Karma) ------------------------


def ensure_resources(*, character: Character) -> list[CharacterResource]:
    """Rows for the system's persistent resources, seeded from the sheet the first time."""
    rows = []
    for name in resource_names(character.campaign.system):
        row, _ = CharacterResource.objects.get_or_create(
            character=character, name=name, defaults={"amount": starting_amount(character, name)}
        )
        rows.append(row)
    return rows


def character_for(*, seat: Seat, character_id: Any) -> Character:
    """A character this seat may act for: its own (players), any in the campaign (GM)."""
    if isinstance(character_id, bool) or not isinstance(character_id, int):
        raise invalid("expected a character id", field="character")
    if seat.is_gm:
        character = Character.objects.filter(
            pk=character_id, campaign__sessions=seat.session_id
        ).first()
        if character is None:
            raise invalid("no such character at this table", field="character")
        return character
    character = seat.characters.filter(pk=character_id).first()
    if character is None:
        raise forbidden("you can act only for your own characters")
    return character


def spend_resource(*, character: Character, name: str, amount: int = 1) -> CharacterResource:
    """Spend ``amount`` of a resource atomically, or refuse with what is left."""
    if name not in resource_names(character.campaign.system):
        raise invalid(f"{character.campaign.system} has no resource {name!r}", field="resource")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1 or amount > 1000:
        raise invalid("a whole number from 1 to 1000", field="amount")
    ensure_resources(character=character)
    done = CharacterResource.objects.filter(
        character=character, name=name, amount__gte=amount
    ).update(amount=F("amount") - amount)
    row = CharacterResource.objects.get(character=character, name=name)
    if not done:
        raise conflict(f"{character.name} has only {row.amount} {name.replace('_', ' ')}")
    return row


def grant_resource(*, character: Character, name: str, amount: int = 1) -> CharacterResource:
    if name not in resource_names(character.campaign.system):
        raise invalid(f"{character.campaign.system} has no resource {name!r}", field="resource")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1 or amount > 1000:
        raise invalid("a whole number from 1 to 1000", field="amount")
    ensure_resources(character=character)
    CharacterResource.objects.filter(character=character, name=name).update(
        amount=F("amount") + amount
    )
    return CharacterResource.objects.get(character=character, name=name)


def expire_pools(*, session: GameSession, by: Seat | None) -> Event | None:
    """At the session's end whatever is left in every pool is lost."""
    stacks = list(Pool.objects.filter(session=session, remaining__gt=0))
    if not stacks:
        return None
    lost = sum(p.remaining for p in stacks)
    Pool.objects.filter(pk__in=[p.pk for p in stacks]).update(remaining=0)
    return record_pool_event(
        session_id=session.pk,
        actor=by,
        data={
            "action": "expire",
            "lost": lost,
            "pools": pools_changed([p.pk for p in stacks]),
            "text": f"The session ends: {lost} unused dice expire",
        },
    )
