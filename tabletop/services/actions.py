"""Socket messages mapped onto services: read the fields, call the service, return the seq.

Each handler is one short synchronous function (one ORM thread per process), taking the seat
id and the decoded message; ServiceError carries refusals back to the socket. The core
messages are here; every other type is a command some game system declares
(``tabletop.systems``), and exists only at the tables that play that system."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from rules.engines import RuleError
from rules.engines.schema import validate

from ..models import Event, GameSession, Seat
from ..systems import registry
from .errors import ServiceError, forbidden, invalid
from .rolls import ROLL_FIELDS, make_roll, reveal_roll
from .sessions import end_session, start_session

Handler = Callable[..., int | None]


def _seat(seat_id: int) -> Seat:
    return Seat.objects.select_related("session__campaign").get(pk=seat_id)


def roll(*, seat_id: int, message: dict[str, Any]) -> int:
    return make_roll(
        seat_id=seat_id,
        request=message.get("request"),
        system=message.get("system"),
        visibility=message.get("visibility", "public"),
        character=message.get("character"),
        client_seed=message.get("client_seed", ""),
        options={k: v for k, v in message.items() if k not in ROLL_FIELDS},
    ).seq


def reveal(*, seat_id: int, message: dict[str, Any]) -> int:
    return reveal_roll(seat=_seat(seat_id), seq=message.get("seq")).seq


def session_end(*, seat_id: int, message: dict[str, Any]) -> int:
    seat = _seat(seat_id)
    if not seat.is_gm:
        raise forbidden("only the GM can end the session")
    end_session(session_id=seat.session_id, by=seat)
    return GameSession.objects.values_list("last_seq", flat=True).get(pk=seat.session_id)


def session_start(*, seat_id: int, message: dict[str, Any]) -> int:
    seat = _seat(seat_id)
    if not seat.is_gm:
        raise forbidden("only the GM can start the session")
    start_session(session_id=seat.session_id, by=seat)
    return GameSession.objects.values_list("last_seq", flat=True).get(pk=seat.session_id)


CORE: dict[str, Handler] = {
    "roll": roll,
    "reveal": reveal,
    "session.start": session_start,
    "session.end": session_end,
}


def system_command(kind: str) -> Handler:
    """The handler for a system's command type: the table's system must define it; its fields
    are checked against the declaration before the service sees them."""

    def run(*, seat_id: int, message: dict[str, Any]) -> int | None:
        seat = _seat(seat_id)
        system = seat.session.campaign.system
        command = registry.command(system, kind)
        if command is None:
            raise invalid(f"this table plays {system}: it has no {kind!r} action", field="type")
        if command.gm_only and not seat.is_gm:
            raise forbidden(f"only the GM may send {kind!r}")
        body = {key: value for key, value in message.items() if key not in ("type", "ref")}
        try:
            checked = validate(command.fields, body)
        except RuleError as exc:
            raise ServiceError.from_rule(exc, prefix="") from None
        done = command.handler(seat_id=seat_id, **checked)
        return done.seq if isinstance(done, Event) else done

    return run


class _Handlers(Mapping[str, Handler]):
    """The core messages and every type some system declares (read from the registry, which
    is filled at app start)."""

    def __getitem__(self, kind: str) -> Handler:
        if kind in CORE:
            return CORE[kind]
        if kind in registry.command_types():
            return system_command(kind)
        raise KeyError(kind)

    def __iter__(self) -> Iterator[str]:
        yield from CORE
        yield from sorted(registry.command_types() - CORE.keys())

    def __len__(self) -> int:
        return len(CORE) + len(registry.command_types() - CORE.keys())


HANDLERS: Mapping[str, Handler] = _Handlers()
