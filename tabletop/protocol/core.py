"""The commands every table takes, whatever its system: roll, reveal, session start and end,
ping. A system's own commands (and its roll options) come from ``tabletop.systems``."""

from __future__ import annotations

from typing import Any, TypedDict

from django.utils.translation import gettext_noop

from rules.engines import system_ids
from rules.engines.schema import Field

from ..models import ROLL_VISIBILITIES, Event, Visibility
from ..services.events import UnitOfWork, change
from ..services.initiative import enter_roller
from ..services.rolls import CheckedRoll, check_roll, make_roll, reveal_roll
from ..services.seats import ONLY_GM_REMOVES, remove_seat
from ..services.sessions import end_session, start_session
from ..services.store import seat_at_table
from .commands import ID, Command
from .talk import TALK


def _last(uow: UnitOfWork, kind: str) -> Event:
    """The event of ``kind`` the unit of work stored last."""
    return next(e for e in reversed(uow.events) if e.kind == kind)


class RollValues(TypedDict):
    """What the roll's handler takes: the roll checked once, and whether it enters the turn
    order."""

    roll: CheckedRoll
    turn_order: bool


def checked_roll(
    *,
    table: str,
    request: dict[str, Any],
    visibility: str,
    client_seed: str,
    system: str | None = None,
    character: int | None = None,
    label: str = "",
    turn_order: bool = False,
    **options: Any,
) -> RollValues:
    """The roll's precheck: ``check_roll`` on the declared values; ``options`` are the table
    system's own roll fields, checked against its declaration as the message was decoded."""
    return {
        "roll": check_roll(
            table=table,
            request=request,
            system=system,
            visibility=visibility,
            character=character,
            client_seed=client_seed,
            label=label,
            options=options,
        ),
        "turn_order": turn_order,
    }


def roll(*, uow: UnitOfWork, seat_id: int, roll: CheckedRoll, turn_order: bool) -> Event:
    """``turn_order``: the roll puts its roller in the turn order (an initiative roll)."""
    if not turn_order:
        return make_roll(uow=uow, seat_id=seat_id, roll=roll)
    with change(uow) as uow:  # the roll and its place in the turn order: one change
        event = make_roll(uow=uow, seat_id=seat_id, roll=roll)
        assert event.actor is not None  # the roller, read by make_roll: no second read
        enter_roller(uow, seat=event.actor, roll=event, name=event.data.get("label") or "")
        return event


def reveal(*, uow: UnitOfWork, seat_id: int, seq: int) -> Event:
    return reveal_roll(uow=uow, seat=seat_at_table(seat_id), seq=seq)


def session_start(*, uow: UnitOfWork, seat_id: int) -> Event:
    seat = seat_at_table(seat_id)
    start_session(uow=uow, session_id=seat.session_id, by=seat)
    return _last(uow, "session.start")


def session_end(*, uow: UnitOfWork, seat_id: int) -> Event:
    seat = seat_at_table(seat_id)
    end_session(uow=uow, session_id=seat.session_id, by=seat)
    return _last(uow, "session.end")


def seat_remove(*, uow: UnitOfWork, seat_id: int, seat: int) -> Event:
    return remove_seat(uow=uow, by_seat_id=seat_id, seat_id=seat)


def ping(*, uow: UnitOfWork, seat_id: int) -> None:
    """Answered by the socket itself with a ``pong``: nothing to do at the table."""


CLIENT_SEED = Field(
    "client_seed",
    "text",
    label="Client seed",
    help="your own seed for the fair-dice stream (none: the server draws a random one)",
    default="",
    max_length=200,
)

ROLL_FIELDS: tuple[Field, ...] = (
    Field("request", "json", label="Request", required=True, help="the engine's request"),
    Field(
        "system",
        "choice",
        label="System",
        choices=tuple(sorted(system_ids())),
        help="the table's system (the default) or generic",
    ),
    Field(
        "visibility",
        "choice",
        label="Visibility",
        choices=ROLL_VISIBILITIES,
        default=Visibility.PUBLIC.value,
    ),
    Field("character", "int", label="Character", nullable=True, help="a character id", **ID),
    CLIENT_SEED,
    Field(
        "label",
        "text",
        label="What for",
        help='what the roll is for, shown with it: "Attack", "Stealth"',
        default="",
        max_length=60,
    ),
    Field(
        "turn_order",
        "bool",
        label="Initiative (the turn order)",
        default=False,
        help="the roll enters its roller in the turn order (a public roll)",
    ),
)

CORE: tuple[Command, ...] = (
    Command(
        "roll",
        ROLL_FIELDS,
        roll,
        "roll dice: a roll event to everyone allowed to see it",
        precheck=checked_roll,
    ),
    Command(
        "reveal",
        (Field("seq", "int", label="Roll", required=True, help="the hidden roll's seq", **ID),),
        reveal,
        "show a hidden roll to the room (the GM: gm and blind rolls; the roller: gm and self)",
    ),
    Command(
        "session.start",
        (),
        session_start,
        "start the planned session",
        gm_only=True,
        refusal=gettext_noop("only the GM starts the session"),
    ),
    Command(
        "session.end",
        (),
        session_end,
        "end the session and reveal its seed",
        gm_only=True,
        refusal=gettext_noop("only the GM ends the session"),
    ),
    Command(
        "seat.remove",
        (Field("seat", "int", label="Seat", required=True, help="the seat's id", **ID),),
        seat_remove,
        "take a player's seat away: its link no longer opens the room",
        gm_only=True,
        refusal=ONLY_GM_REMOVES,
    ),
    Command("ping", (), ping, "keep the socket alive: a pong with last_seq answers"),
    *TALK,
)
