"""Commands in: what a socket message or a JSON body is, declared once, field by field.

A declaration feeds the check at the edge (before any service runs), the error a client gets
(naming the field), and the command tables of ``docs/protocol.md``. Handlers take the checked
values as typed keyword arguments, so the services behind them never see a raw message.

This module imports no service (the systems' modules import ``Command`` from here).
"""

from __future__ import annotations

import builtins
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, NotRequired, Required, TypedDict

from django.utils.translation import gettext as _

from rules.engines import RuleError
from rules.engines.schema import Field, encodes, validate

from ..services.errors import ServiceError, invalid
from .events import EventType


@dataclass(frozen=True)
class Command:
    type: str  # the socket message type, e.g. "roll" or "pool.use"
    # rules.engines.schema.Field declarations ("type" and "ref" are implicit)
    fields: tuple[Field, ...]
    # handler(*, uow: UnitOfWork, seat_id: int, **checked_fields), run on the ORM thread
    handler: Callable[..., Any]
    doc: str  # one line for docs/protocol.md
    gm_only: bool = False
    # What a player's seat is told when it sends a gm_only command: a whole sentence, marked
    # with gettext_noop where it is declared and translated when it is sent ("only the GM
    # starts a new round"), so each language words it its own way; ``doc`` is a line of the
    # protocol's tables, in English, and no sentence can be made of it.
    refusal: str = ""
    # precheck(*, table: str, **checked_fields) -> the handler's values: what can be refused
    # without the database (a roll of too many dice), run once, before the command waits for
    # the ORM thread (on the event loop for a short message, in a thread of its own for a long
    # one: tabletop/consumers.py, PRECHECK_ON_THE_LOOP_BYTES); it raises ServiceError
    # to refuse, and what it answers (a roll: the checked roll) is what the handler takes, so
    # nothing it checked is checked again.
    precheck: Callable[..., Mapping[str, Any]] | None = None
    # The events it records that the core does not declare (protocol/events.py).
    events: tuple[EventType, ...] = ()

    def __post_init__(self) -> None:
        if self.gm_only and not self.refusal:
            raise ValueError(f"{self.type} is the GM's alone: declare its refusal")

    @property
    def values_type(self) -> builtins.type:
        """The checked values' type, made from the declaration: a TypedDict with a key per
        field, of the field's Python type (``values_type(...)``). The handler's keyword
        arguments are typed to agree with it; a command with a precheck, the precheck's, and
        its handler's with the TypedDict the precheck answers
        (tests/tabletop/test_protocol_commands.py)."""
        return values_type(self.type, self.fields)


# The Python type of a checked value, by field type (rules.engines.schema); a field that is
# nullable may also be None.
PYTHON_TYPES: dict[str, Any] = {
    "int": int,
    "bool": bool,
    "text": str,
    "die": str,
    "dice": list[str],
    "list": list[Any],
    "counts": dict[str, int],
    "json": dict[str, Any],
    "object": dict[str, Any],
    "map": dict[str, Any],
}


def python_type(field: Field) -> Any:
    if field.type == "choice":
        kinds = sorted({type(c) for c in field.choices or ()}, key=lambda t: t.__name__)
        found: Any = kinds[0] if len(kinds) == 1 else Any
    else:
        found = PYTHON_TYPES[field.type]
    return found | None if field.nullable else found


@cache
def values_type(command_type: str, fields: tuple[Field, ...]) -> type:
    """A command's checked values as a TypedDict: a field with a default or required is always
    there (the check fills the default in); one with neither only when the sender gave it."""
    keys = {
        f.name: (Required if f.required or f.has_default else NotRequired)[python_type(f)]
        for f in fields
    }
    name = "".join(part.title() for part in command_type.replace(".", "-").split("-"))
    # (made at run time from the declaration: mypy reads only TypedDicts written out)
    made: type = TypedDict(f"{name}Values", keys)  # type: ignore[misc]
    return made


# Ids the database hands out (a seq, a seat, a pool, a character): Field(..., **ID).
ID: dict[str, Any] = {"min": 1, "max": 2**62}


@dataclass(frozen=True)
class Decoded:
    """A message that passed its declaration, at a table playing ``table``: what to run, and
    with what. ``prechecked``: its values are the precheck's answer (the handler's)."""

    command: Command
    ref: str | int | None
    values: dict[str, Any]
    table: str = ""
    prechecked: bool = False


@dataclass(frozen=True)
class Refused:
    """A message refused before anything ran: the ``error`` its sender alone gets."""

    ref: str | int | None
    code: str
    message: str
    field: str | None = None

    @classmethod
    def because(cls, ref: str | int | None, exc: ServiceError) -> Refused:
        return cls(ref, exc.code, exc.message, exc.field)

    def as_message(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "error",
            "ref": self.ref,
            "code": self.code,
            "message": self.message,
        }
        if self.field:
            out["field"] = self.field
        return out


def parse_json(raw: str | bytes) -> Any:
    """JSON as a client may send it. Raises ValueError. ``NaN`` and ``Infinity`` (which Python
    reads though JSON has no such thing) and ``1e999`` parse as floats that ``junk`` refuses by
    name, so the message's ``ref`` still comes back on its error."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def junk(value: Any, where: str = "") -> tuple[str, str] | None:
    """The first place in parsed JSON that no store or socket can carry, and why: text that does
    not encode as UTF-8 (a lone surrogate), or a number that is not finite (``1e999``)."""
    if isinstance(value, str):
        return (
            None if encodes(value) else (where, _("is not valid text (it holds a lone surrogate)"))
        )
    if isinstance(value, float):
        return None if math.isfinite(value) else (where, _("must be a finite number"))
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = junk(item, f"{where}.{i}" if where else str(i))
            if found:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            if not encodes(key):
                return (where or "message", _("has a field name that is not valid text"))
            found = junk(item, f"{where}.{key}" if where else key)
            if found:
                return found
    return None


def check_fields(fields: tuple[Field, ...], body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` checked against ``fields``, with defaults filled in; no unknown fields. Raises
    a ServiceError naming the field and saying why."""
    found = junk(dict(body))
    if found:
        raise invalid(found[1], field=found[0])
    try:
        return validate(fields, body)
    except RuleError as exc:
        raise ServiceError.from_rule(exc, prefix="") from None


def valid_ref(ref: Any) -> bool:
    """A ``ref`` comes back on the error or event it causes: short text or a number."""
    if ref is None:
        return True
    if isinstance(ref, bool) or not isinstance(ref, (str, int)):
        return False
    return len(str(ref)) <= 100 and (not isinstance(ref, str) or encodes(ref))
