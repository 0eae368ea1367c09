"""Pools, resources and open rolls as the protocol shows them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from rules.engines import get_system

from ..models import Character, CharacterResource, GameSession
from ..models.pools import OpenRoll, Pool
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
        if roll.character is not None
        else None,
        "total": roll.total,
        "added": roll.added,
        "dc": roll.dc,
        "flags": roll.flags,
        **roll.marks,  # what the table's system marks on it (counts it keeps of its own)
        "critical_dice": roll.critical_dice,
        "open": roll.is_open,
        "declared": roll.declared,
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


def resources_states(sessions: Sequence[GameSession]) -> dict[int, list[dict[str, Any]]]:
    """Every character's amount of every resource its table keeps, whether or not it has been
    touched yet (a character's row is made on first use: that changes nothing a screen sees),
    for each session."""
    names = {s.pk: resource_names(s.campaign.system) for s in sessions}
    campaigns = {s.campaign_id for s in sessions if names[s.pk]}
    out: dict[int, list[dict[str, Any]]] = {s.pk: [] for s in sessions}
    if not campaigns:
        return out
    rows = {
        (r.character_id, r.name): r.amount
        for r in CharacterResource.objects.filter(character__campaign_id__in=campaigns)
    }
    characters: dict[int, list[Character]] = defaultdict(list)
    for c in Character.objects.filter(campaign_id__in=campaigns).order_by("pk"):
        characters[c.campaign_id].append(c)
    for s in sessions:
        out[s.pk] = [
            {"character": c.pk, "name": n, "amount": rows.get((c.pk, n), starting_amount(c, n))}
            for c in characters[s.campaign_id]
            for n in names[s.pk]
        ]
    return out


def pools_states(sessions: Sequence[GameSession]) -> dict[int, dict[str, Any]]:
    """The part of ``hello.state`` that pool events update, as the whole table has it, for each
    session; one query per part for all of them. Open rolls come with who may see them
    (``visible_open_rolls`` picks a viewer's)."""
    ids = [s.pk for s in sessions]
    resources = resources_states(sessions)
    out: dict[int, dict[str, Any]] = {
        s.pk: {
            "pools": [],
            "resources": resources[s.pk],
            "open_rolls": [],
        }
        for s in sessions
    }
    for pool in Pool.objects.filter(session_id__in=ids).order_by("pk"):
        out[pool.session_id]["pools"].append(pool_snapshot(pool))
    for roll in (
        OpenRoll.objects.filter(session_id__in=ids, is_open=True)
        .select_related("character")
        .order_by("seq")
    ):
        out[roll.session_id]["open_rolls"].append((roll.visibility, open_roll_summary(roll)))
    return out


def visible_open_rolls(
    open_rolls: list[tuple[str, dict[str, Any]]], viewer: Viewer
) -> list[dict[str, Any]]:
    return [
        summary
        for visibility, summary in open_rolls
        if can_see(visibility=visibility, actor_seat_id=summary["seat"], viewer=viewer)
    ]
