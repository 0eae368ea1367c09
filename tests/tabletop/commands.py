"""Sending a socket command as a test: through the same edge a socket uses (the table's system
must define the type, GM-only types refuse players, fields are checked), then the service."""

from __future__ import annotations

from typing import Any

from tabletop.models import Event, Seat
from tabletop.services.actions import HANDLERS


def send(seat: Seat, kind: str, /, **fields: Any) -> Event | None:
    """Run one command for ``seat``; the event it answers with (None if it stored nothing)."""
    seq = HANDLERS[kind](seat_id=seat.pk, message={"type": kind, **fields})
    return Event.objects.get(session_id=seat.session_id, seq=seq) if seq else None
