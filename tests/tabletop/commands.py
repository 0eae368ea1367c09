"""Sending a socket command as a test: checked at the same edge a socket's message is (the
table's system must take the type, GM-only types refuse players, every field is checked), then
its handler runs in the test's transaction."""

from __future__ import annotations

import json
from typing import Any

from tabletop.models import Event, Seat
from tabletop.protocol.commands import Refused
from tabletop.protocol.wire import decode
from tabletop.services.errors import ServiceError


def send(seat: Seat, kind: str, /, **fields: Any) -> Event | None:
    """Run one command for ``seat``; the event it answers with (None if it stored nothing)."""
    system = seat.session.campaign.system
    decoded = decode(json.dumps({"type": kind, **fields}), system=system, is_gm=seat.is_gm)
    if isinstance(decoded, Refused):
        raise ServiceError(decoded.code, decoded.message, field=decoded.field)
    done = decoded.command.handler(seat_id=seat.pk, **decoded.values)
    return done if isinstance(done, Event) else None
