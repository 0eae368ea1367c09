"""Pools, resources, open rolls and extended actions as the protocol shows them."""

from __future__ import annotations

from typing import Any

from ..models import CharacterResource, GameSession
from ..models.pools import ExtendedAction, OpenRoll, Pool, SeatPoolState
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


def pools_state(*, session: GameSession, viewer: Viewer) -> dict[str, Any]:
    """The part of ``hello.state`` that pool events update."""
    return {
        "pools": [pool_snapshot(p) for p in Pool.objects.filter(session=session).order_by("pk")],
        "resources": [
            resource_snapshot(r)
            for r in CharacterResource.objects.filter(
                character__campaign_id=session.campaign_id
            ).order_by("pk")
        ],
        "open_rolls": [
            open_roll_summary(r)
            for r in OpenRoll.objects.filter(session=session, is_open=True).select_related(
                "character"
            )
            if can_see(visibility=r.visibility, actor_seat_id=r.seat_id, viewer=viewer)
        ],
        "extended": [
            extended_summary(a)
            for a in ExtendedAction.objects.filter(session=session, is_open=True)
        ],
        "lucky_breaks": list(
            SeatPoolState.objects.filter(seat__session=session, lucky_break=True).values_list(
                "seat_id", flat=True
            )
        ),
    }
