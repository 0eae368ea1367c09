"""The socket's way in: a message is decoded and checked against its declaration here, at the
edge, then run as one unit of work whose stored events come back to the socket to publish.

    decode(raw, system=..., is_gm=...) -> Decoded | Refused      (the socket's event loop)
    precheck(decoded, system=...) -> Decoded | Refused           (event loop, or a thread if long)
    perform(decoded, seat_id=..., deadline=...) -> Done          (the ORM thread)
    hub.publish(layer, group, payload) for each of Done.payloads (the socket's event loop)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from rules.engines import system_ids

from .. import outage, timing
from ..outage import DatabaseAway, run_with_database
from ..services.errors import ServiceError, busy, forbidden
from ..services.events import room_payload, unit_of_work
from ..systems import registry
from .commands import Command, Decoded, Refused, check_fields, parse_json, valid_ref
from .core import CORE

ANSWERED_BY_THE_SOCKET = frozenset({"ping"})
CORE_ROLL = next(c for c in CORE if c.type == "roll")


@cache
def commands(system: str) -> dict[str, Command]:
    """Every command a table playing ``system`` takes, by type: the core ones (its ``roll``
    with the system's own roll options) and the system's."""
    table = {c.type: c for c in CORE}
    options = registry.table_system(system).roll_options
    if options:
        roll = table["roll"]
        table["roll"] = replace(roll, fields=roll.fields + tuple(options))
    for command in registry.commands_for(system):
        table[command.type] = command
    return table


@cache
def tables_taking(kind: str) -> tuple[str, ...]:
    """The systems whose tables take message type ``kind`` (empty for an unknown type)."""
    return tuple(s for s in system_ids() if registry.command(s, kind) is not None)


def decode(raw: str | bytes, *, system: str, is_gm: bool) -> Decoded | Refused:
    """One socket message, checked against its declaration for a table playing ``system``:
    JSON, a ``ref`` that can come back, a known type, the seat's role, and every field (types,
    ranges, text that encodes, finite numbers, no unknown fields)."""
    try:
        message = parse_json(raw)
    except ValueError:
        message = None
    if not isinstance(message, dict):
        return Refused(None, "invalid", _("The message is not a JSON object with a type."))
    ref = message.get("ref")
    if not valid_ref(ref):
        return Refused(None, "invalid", _("Ref: text or a number of at most 100 characters"), "ref")
    kind = message.get("type")
    command = commands(system).get(kind) if isinstance(kind, str) else None
    if command is None:
        homes = tables_taking(kind) if isinstance(kind, str) else ()
        if homes:
            where = " and ".join(homes)
            text = _(
                "Type: %(kind)s is played at %(where)s tables; this table plays %(system)s"
            ) % {
                "kind": kind,
                "where": where,
                "system": system,
            }
            return Refused(ref, "invalid", text, "type")
        shown = repr(kind)[:60] if isinstance(kind, str) and kind.isprintable() else _("that")
        return Refused(ref, "unknown-type", _("Unknown message type %(type)s") % {"type": shown})
    if command.gm_only and not is_gm:
        return Refused.because(ref, forbidden(_(command.refusal)))
    body = {key: value for key, value in message.items() if key not in ("type", "ref")}
    if command.type == "roll" and body.get("system") not in (None, system):
        # The table's roll options belong to rolls in its own system, not to the notation box.
        command = CORE_ROLL
    try:
        values = check_fields(command.fields, body)
    except ServiceError as exc:  # a field's refusal
        return Refused.because(ref, exc)
    return Decoded(command, ref, values, table=system)


def precheck(decoded: Decoded, *, system: str) -> Decoded | Refused:
    """The refusals a command can decide without the database (``Command.precheck``), for a
    table playing ``system``: run before the command waits for the ORM thread (never on it),
    so a refused message costs it nothing; in a thread of its own for a long message, on the
    event loop for a short one (tabletop/consumers.py). Answers the message
    with the values its handler takes (the precheck's), or its refusal; a message already
    prechecked is not checked again."""
    check = decoded.command.precheck
    if check is None or decoded.prechecked:
        return decoded
    try:
        values = check(table=system, **decoded.values)
    except ServiceError as exc:
        return Refused.because(decoded.ref, exc)
    return replace(decoded, values=dict(values), prechecked=True)


@dataclass(frozen=True)
class Done:
    """What a command did: the seq its sender's ``ref`` goes with (None if it stored nothing),
    and the room payloads of every event it stored, committed, in seq order."""

    seq: int | None
    payloads: list[dict[str, Any]]


def perform(decoded: Decoded, *, seat_id: int, deadline: float) -> Done:
    """Run a checked command on the ORM thread as one unit of work (its own transaction), unless
    it waited for the thread past its ``deadline``. Refusals raise ServiceError."""
    if timing.recorder() is not None:  # the deadline was set as the action was queued
        waited = time.monotonic() + settings.TABLETOP["ACTION_DEADLINE_SECONDS"] - deadline
        timing.record("orm.wait", waited * 1e3)
    if time.monotonic() > deadline:
        raise busy()
    if not decoded.prechecked:  # (a caller that did not precheck it: here, once all the same)
        checked = precheck(decoded, system=decoded.table)
        if isinstance(checked, Refused):
            raise ServiceError(checked.code, checked.message, field=checked.field)
        decoded = checked
    handler = decoded.command.handler
    with timing.span("service"):
        try:
            main, events = run_with_database(
                lambda: unit_of_work(
                    lambda uow: handler(uow=uow, seat_id=seat_id, **decoded.values)
                )
            )
        except DatabaseAway:
            raise ServiceError("busy", _(outage.MESSAGE)) from None
    seq = main if isinstance(main, int) else getattr(main, "seq", None)
    with timing.span("serialise"):
        payloads = [room_payload(event) for event in events]
    return Done(seq=seq, payloads=payloads)
