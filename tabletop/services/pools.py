"""Pools and resources: the atomic arithmetic every system's pool rules are built from.

Counts only change by conditional UPDATEs (``remaining >= n``), so two sockets spending the
last die at the same moment cannot both succeed; the CHECK constraints stand behind them.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F

from rules.engines import get_system

from ..models import Character, CharacterResource, Event, GameSession, Seat, Visibility
from ..models.pools import Pool
from ..selectors.events import Viewer, can_see
from ..selectors.pools import pool_snapshot, resource_snapshot
from .errors import conflict, forbidden, invalid, not_found
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


def resource_names(system_id: str) -> list[str]:
    return [f.name for f in get_system(system_id).resources if f.name != "action_dice_left"]


def ensure_resources(*, character: Character) -> list[CharacterResource]:
    """Rows for the system's persistent resources, seeded from the sheet the first time."""
    rows = []
    for name in resource_names(character.campaign.system):
        start = character.sheet.get(name, 0) if isinstance(character.sheet, dict) else 0
        row, _ = CharacterResource.objects.get_or_create(
            character=character, name=name, defaults={"amount": max(0, int(start or 0))}
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


def _label(name: str, amount: int) -> str:
    """'character_points', 1 -> 'character point'."""
    label = name.replace("_", " ")
    return label.removesuffix("s") if amount == 1 else label


RESOURCE_USES: dict[str, dict[str, str]] = {
    # system -> use -> resource it costs (the amount comes with the action)
    "d6-chance": {"survive": "character_points"},
    "discordian": {
        "avoid-costly": "instant_karma",
        "avoid-costly-luck": "luck",
        "extra-success": "luck",
    },
}


def use_resource(
    *, seat: Seat, character_id: Any, use: Any, amount: Any = 1, roll_seq: Any = None
) -> Event:
    """A table action that costs a resource with no roll of its own (survive, +1 success, avoid a
    costly success...), tied to a roll where the rules tie it to one."""
    system_id = seat.session.campaign.system
    uses = RESOURCE_USES.get(system_id, {})
    if not isinstance(use, str) or use not in uses:
        raise invalid(f"one of {sorted(uses)}", field="use")
    name = uses[use]
    if use in {"extra-success", "avoid-costly", "avoid-costly-luck"} and (
        isinstance(roll_seq, bool) or not isinstance(roll_seq, int)
    ):
        raise invalid("which roll (its seq) this is for", field="roll")
    with transaction.atomic():
        character = character_for(seat=seat, character_id=character_id)
        if roll_seq is not None:
            roll = (
                Event.objects.select_for_update()
                .filter(session_id=seat.session_id, seq=roll_seq, kind="roll")
                .first()
            )
            viewer = Viewer(seat_id=seat.pk, is_gm=seat.is_gm)
            if roll is None or not can_see(
                visibility=roll.visibility, actor_seat_id=roll.actor_id, viewer=viewer
            ):
                raise not_found(f"no roll #{roll_seq} of yours in this session")
            if (roll.data.get("character") or {}).get("id") != character.pk:
                raise invalid(f"roll #{roll_seq} is not {character.name}'s", field="roll")
            hidden_as = {"visibility": roll.visibility, "owner": roll.actor}
            if use == "extra-success" and roll.data.get("outcome") != "success":
                raise conflict("+1 success is only for a successful roll")
            if use.startswith("avoid-costly"):
                if "costly" not in roll.data.get("flags", []):
                    raise conflict(f"roll #{roll_seq} is not a costly success")
                if Event.objects.filter(
                    session_id=seat.session_id,
                    kind="pool",
                    data__roll=roll_seq,
                    data__use__in=["avoid-costly", "avoid-costly-luck"],
                ).exists():
                    raise conflict(f"roll #{roll_seq}'s costly success is already avoided")
                # The roll sets the price: Instant Karma equal to its 1s, or 1 Luck.
                amount = max(1, int(roll.data.get("ones") or 0)) if use == "avoid-costly" else 1
        else:
            hidden_as = {}
        row = spend_resource(character=character, name=name, amount=amount)
        # A spend on a hidden roll is as hidden as the roll: its price tells of its dice.
        return record_pool_event(
            session_id=seat.session_id,
            actor=seat,
            **hidden_as,
            data={
                "action": "spend",
                "use": use,
                "character": {"id": character.pk, "name": character.name},
                "roll": roll_seq,
                "amount": amount,
                "resources": [resource_snapshot(row)],
                "text": f"{character.name} spends {amount} {_label(name, amount)}: "
                f"{use.replace('-', ' ')}",
            },
        )


def award_resource(*, seat: Seat, character_id: Any, name: Any, amount: Any = 1) -> Event:
    """The GM awards character points, Luck or Instant Karma; a negative amount takes some
    back (a correction), never below zero."""
    if not seat.is_gm:
        raise forbidden("only the GM awards")
    if isinstance(amount, bool) or not isinstance(amount, int) or not 0 < abs(amount) <= 1000:
        raise invalid("a whole number from -1000 to 1000, not 0", field="amount")
    with transaction.atomic():
        character = character_for(seat=seat, character_id=character_id)
        label = str(name).replace("_", " ")
        if amount > 0:
            row = grant_resource(character=character, name=name, amount=amount)
            text = f"GM awards {character.name} {amount} {label}"
        else:
            row = spend_resource(character=character, name=name, amount=-amount)
            text = f"GM takes back {-amount} {label} from {character.name}"
        return record_pool_event(
            session_id=seat.session_id,
            actor=seat,
            data={
                "action": "award",
                "character": {"id": character.pk, "name": character.name},
                "amount": amount,
                "resources": [resource_snapshot(row)],
                "text": text,
            },
        )


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
