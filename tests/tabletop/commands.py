"""Sending a socket command as a test: checked at the same edge a socket's message is (the
table's system must take the type, GM-only types refuse players, every field is checked), then
its handler runs in the test's transaction."""

from __future__ import annotations

import json
from typing import Any

from tabletop.models import Event, Seat
from tabletop.protocol.commands import Refused
from tabletop.protocol.wire import decode, precheck
from tabletop.services.errors import ServiceError
from tabletop.services.events import UnitOfWork, change


def send(seat: Seat, kind: str, /, *, uow: UnitOfWork | None = None, **fields: Any) -> Event | None:
    """Run one command for ``seat``; the event it answers with (None if it stored nothing).
    Its precheck runs as the socket runs it, once; then its handler, in ``uow`` if given, else
    in a unit of work of its own, as the socket runs one."""
    system = seat.session.campaign.system
    decoded = decode(json.dumps({"type": kind, **fields}), system=system, is_gm=seat.is_gm)
    if not isinstance(decoded, Refused):
        decoded = precheck(decoded, system=system)
    if isinstance(decoded, Refused):
        raise ServiceError(decoded.code, decoded.message, field=decoded.field)
    with change(uow) as uow:
        done = decoded.command.handler(uow=uow, seat_id=seat.pk, **decoded.values)
    return done if isinstance(done, Event) else None


def rolled(
    *,
    seat_id: int,
    request: dict[str, Any],
    options: dict[str, Any] | None = None,
    uow: UnitOfWork | None = None,
    **fields: Any,
) -> Event:
    """A roll by the seat, as its ``roll`` message makes it: checked once at the edge (the
    declaration, the table system's options among its fields, then ``check_roll``), then
    ``make_roll``. Refusals raise ServiceError as the socket answers them."""
    seat = Seat.objects.select_related("session__campaign").get(pk=seat_id)
    event = send(seat, "roll", uow=uow, request=request, **fields, **(options or {}))
    assert event is not None
    return event


def granted(seat: Seat, *subjects: str) -> None:
    """A Zoria player asks for an inspiration check on each subject and the GM agrees."""
    from tabletop.services.seats import seat_gm
    from tabletop.systems import zoria

    gm = seat_gm(session=seat.session)
    for subject in subjects:
        ask = zoria.ask_insight(seat_id=seat.pk, subject=subject)
        zoria.answer_insight(seat_id=gm.pk, ask=ask.seq, grant=True)


def body(answer: Any) -> bytes:
    """A page's or a download's bytes, streamed or not (read once, then kept on the answer)."""
    if not hasattr(answer, "whole"):
        answer.whole = b"".join(answer)
    return answer.whole
