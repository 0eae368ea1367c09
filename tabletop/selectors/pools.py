"""Pools, resources, open rolls and extended actions as the protocol shows them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rules.engines import get_system

from ..models import Character, CharacterResource, Event, GameSession, SessionStatus, Visibility
from ..models.pools import ExtendedAction, OpenRoll, Pool, SeatPoolState
from ..systems.registry import table_system
from .events import Viewer, can_see


def pool_snapshot(pool: Pool) -> dict[str, Any]:
    return {
        "id": pool.pk,
        "seat": pool.seat_id,
        "character": pool.character_id,
        "kind": pool.kind,
        "die": f"d{pool.sides}",
        "sides": pool.sides,
        "remaining": pool.remaining,
        "initial": pool.initial,
    }


def resource_snapshot(resource: CharacterResource) -> dict[str, Any]:
    return {"character": resource.character_id, "name": resource.name, "amount": resource.amount}


def open_roll_summary(roll: OpenRoll) -> dict[str, Any]:
    return {
        "seq": roll.seq,
        "seat": roll.seat_id,
        "character": {"id": roll.character_id, "name": roll.character.name}
        if roll.character_id
        else None,
        "total": roll.total,
        "added": roll.added,
        "dc": roll.dc,
        "flags": roll.flags,
        "botch_dice": roll.botch_dice,
        "critical_dice": roll.critical_dice,
        "open": roll.is_open,
        "declared": roll.declared,
    }


def extended_summary(action: ExtendedAction) -> dict[str, Any]:
    return {
        "id": action.pk,
        "label": action.label,
        "target": action.target,
        "progress": action.progress,
        "open": action.is_open,
    }


def resource_names(system_id: str) -> list[str]:
    """The per-character resources a table of ``system_id`` keeps (its system says which)."""
    return table_system(system_id).kept_resources(get_system(system_id))


def starting_amount(character: Character, name: str) -> int:
    """What a character has of a resource before anything is spent: its sheet's number."""
    start = character.sheet.get(name, 0) if isinstance(character.sheet, dict) else 0
    try:
        return max(0, int(start or 0))
    except (TypeError, ValueError):
        return 0


def resources_state(*, session: GameSession) -> list[dict[str, Any]]:
    """Every character's amount of every resource the table keeps, whether or not it has been
    touched yet (a character's row is made on first use: that changes nothing a screen sees)."""
    names = resource_names(session.campaign.system)
    if not names:
        return []
    rows = {
        (r.character_id, r.name): r.amount
        for r in CharacterResource.objects.filter(character__campaign_id=session.campaign_id)
    }
    characters = Character.objects.filter(campaign_id=session.campaign_id).order_by("pk")
    return [
        {"character": c.pk, "name": n, "amount": rows.get((c.pk, n), starting_amount(c, n))}
        for c in characters
        for n in names
    ]


def pools_state(*, session: GameSession) -> dict[str, Any]:
    """The part of ``hello.state`` that pool events update, as the whole table has it: open
    rolls come with who may see them (``visible_open_rolls`` picks a viewer's)."""
    return {
        "pools": [pool_snapshot(p) for p in Pool.objects.filter(session=session).order_by("pk")],
        "resources": resources_state(session=session),
        "open_rolls": [
            (r.visibility, open_roll_summary(r))
            for r in OpenRoll.objects.filter(session=session, is_open=True)
            .select_related("character")
            .order_by("seq")
        ],
        "extended": [
            extended_summary(a)
            for a in ExtendedAction.objects.filter(session=session, is_open=True).order_by("pk")
        ],
        "lucky_breaks": sorted(
            SeatPoolState.objects.filter(seat__session=session, lucky_break=True).values_list(
                "seat_id", flat=True
            )
        ),
    }


def visible_open_rolls(
    open_rolls: list[tuple[str, dict[str, Any]]], viewer: Viewer
) -> list[dict[str, Any]]:
    return [
        summary
        for visibility, summary in open_rolls
        if can_see(visibility=visibility, actor_seat_id=summary["seat"], viewer=viewer)
    ]


# --- counts withheld: what a hidden roll's spends moved, until the roll is revealed -----------

COUNTS = {"pools": "remaining", "resources": "amount"}  # what each list's items count


def count_key(key: str, item: dict[str, Any]) -> tuple[Any, ...]:
    """One count's key: ("pools", id) or ("resources", character, name)."""
    if key == "pools":
        return ("pools", item["id"])
    return ("resources", item["character"], item["name"])


@dataclass(frozen=True)
class Withheld:
    """Moves of counts made for a hidden roll, seen only by whoever sees that roll."""

    visibility: str
    owner: int | None
    roll: int | None
    moves: tuple[tuple[tuple[Any, ...], int], ...]


def pending_withheld(*, session_id: int, but_roll: int | None = None) -> list[Withheld]:
    """The moves still withheld from the room: those of hidden rolls not revealed yet (nor
    ``but_roll``, being revealed), while the session is live (its end tells every count)."""
    status = GameSession.objects.values_list("status", flat=True).get(pk=session_id)
    if status != SessionStatus.LIVE:
        return []
    notes = Event.objects.filter(
        session_id=session_id, kind="pool", data__action="counts", data__has_key="withheld"
    ).exclude(visibility=Visibility.PUBLIC)
    notes = list(notes.values_list("visibility", "owner_id", "actor_id", "data"))
    if not notes:
        return []
    revealed = set(
        Event.objects.filter(session_id=session_id, kind="roll.reveal").values_list(
            "data__seq", flat=True
        )
    )
    return [
        Withheld(
            visibility=visibility,
            owner=owner if owner is not None else actor,
            roll=data.get("roll"),
            moves=tuple((tuple(m["count"]), int(m["moved"])) for m in data["withheld"]),
        )
        for visibility, owner, actor, data in notes
        if data.get("roll") is None or data["roll"] not in revealed | {but_roll}
    ]


def withheld_view(pending: list[Withheld], *, viewer: Viewer | None) -> dict[tuple[Any, ...], int]:
    """The withheld moves ``viewer`` (None: the room at large) does not see, summed by count."""
    unseen: dict[tuple[Any, ...], int] = {}
    for w in pending:
        if viewer is not None and can_see(
            visibility=w.visibility, actor_seat_id=w.owner, viewer=viewer
        ):
            continue
        for key, delta in w.moves:
            unseen[key] = unseen.get(key, 0) + delta
    return unseen


def seen_counts(
    key: str, items: list[dict[str, Any]], unseen: dict[tuple[Any, ...], int]
) -> list[dict[str, Any]]:
    """Pool or resource snapshots less the moves not seen yet."""
    field = COUNTS[key]
    return [
        {**item, field: item[field] - unseen[count_key(key, item)]}
        if unseen.get(count_key(key, item))
        else item
        for item in items
    ]
