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
from tabletop.services.events import change


def send(seat: Seat, kind: str, /, **fields: Any) -> Event | None:
    """Run one command for ``seat``; the event it answers with (None if it stored nothing)."""
    system = seat.session.campaign.system
    decoded = decode(json.dumps({"type": kind, **fields}), system=system, is_gm=seat.is_gm)
    if isinstance(decoded, Refused):
        raise ServiceError(decoded.code, decoded.message, field=decoded.field)
    with change(None) as uow:  # a unit of work of its own, as the socket runs one
        done = decoded.command.handler(uow=uow, seat_id=seat.pk, **decoded.values)
    return done if isinstance(done, Event) else None


def granted(seat: Seat, *subjects: str) -> None:
    """A Zoria player asks for an inspiration check on each subject and the GM agrees."""
    from tabletop.services.seats import seat_gm
    from tabletop.systems import zoria

    gm = seat_gm(session=seat.session)
    for subject in subjects:
        ask = zoria.ask_insight(seat_id=seat.pk, subject=subject)
        zoria.answer_insight(seat_id=gm.pk, ask=ask.seq, grant=True)
