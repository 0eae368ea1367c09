"""The room as a seat sees it: ``hello``'s ``seat`` and ``state`` (TABLE.md)."""

from __future__ import annotations

from typing import Any

from ..models import Character, GameSession, Seat
from .events import Viewer
from .pools import pools_state


def seat_summary(seat: Seat) -> dict[str, Any]:
    return {
        "id": seat.pk,
        "name": seat.name,
        "role": seat.role,
        "characters": [{"id": c.pk, "name": c.name} for c in seat.characters.all()],
    }


def session_summary(session: GameSession) -> dict[str, Any]:
    return {
        "id": session.pk,
        "title": session.title,
        "status": session.status,
        "code": session.invite_code,
        "system": session.campaign.system,
        "campaign": session.campaign.name,
        "started_at": session.started_at.isoformat() if session.started_at else None,
        "ended_at": session.ended_at.isoformat() if session.ended_at else None,
    }


def fairness(session: GameSession) -> dict[str, Any]:
    return {"commitment": session.commitment or None, "server_seed": session.revealed_seed}


def room_state(*, session: GameSession, viewer: Viewer) -> dict[str, Any]:
    """Everything a screen needs to draw the room now; events after ``last_seq`` update it."""
    seats = (
        Seat.objects.filter(session=session).prefetch_related("characters").order_by("created_at")
    )
    characters = Character.objects.filter(campaign_id=session.campaign_id).order_by("name")
    return {
        "session": session_summary(session),
        "seats": [seat_summary(s) for s in seats],
        "characters": [{"id": c.pk, "name": c.name, "sheet": c.sheet} for c in characters],
        "table": session.table_state,
        **pools_state(session=session, viewer=viewer),
        "fairness": fairness(session),
    }
