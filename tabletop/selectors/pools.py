"""Pools, resources, open rolls and extended actions as the protocol shows them."""

from __future__ import annotations

from typing import Any

from rules.engines import get_system

from ..models import Character, CharacterResource, GameSession
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
