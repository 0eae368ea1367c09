"""Socket messages mapped onto services: read the fields, call the service, return the seq.

Each handler is one short synchronous function (one ORM thread per process), taking the seat
id and the decoded message; ServiceError carries refusals back to the socket."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..models import GameSession, Seat
from . import gm_tools, pools, zoria
from .errors import forbidden, invalid
from .rolls import ROLL_OPTIONS, make_roll, reveal_roll
from .sessions import end_session, start_session


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
        options={k: message[k] for k in ROLL_OPTIONS if k in message},
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


def _zoria(seat_id: int) -> Seat:
    seat = _seat(seat_id)
    if seat.session.campaign.system != "zoria":
        raise invalid("action dice pools belong to Zoria tables", field="type")
    return seat


HANDLERS: dict[str, Callable[..., int | None]] = {
    "roll": roll,
    "reveal": reveal,
    "session.start": session_start,
    "session.end": session_end,
    "pool.use": lambda *, seat_id, message: (
        zoria.use_die(
            seat=_zoria(seat_id),
            roll_seq=message.get("roll"),
            pool_id=message.get("pool"),
            client_seed=message.get("client_seed", ""),
        ).seq
    ),
    "pool.spend": lambda *, seat_id, message: (
        zoria.spend_dice(
            seat=_zoria(seat_id),
            effect=message.get("effect"),
            roll_seq=message.get("roll"),
            count=message.get("count", 1),
            pool_id=message.get("pool"),
            note=message.get("note", ""),
        ).seq
    ),
    "pool.award": lambda *, seat_id, message: (
        zoria.award(
            seat=_zoria(seat_id), to_seat=message.get("seat"), count=message.get("count", 1)
        ).seq
    ),
    "pool.undo-award": lambda *, seat_id, message: zoria.undo_award(seat=_zoria(seat_id)).seq,
    "pool.refund": lambda *, seat_id, message: (
        zoria.refund(
            seat=_zoria(seat_id),
            to_seat=message.get("seat"),
            count=message.get("count", 1),
            note=message.get("note", ""),
        ).seq
    ),
    "pool.lucky-break": lambda *, seat_id, message: zoria.lucky_break(seat=_zoria(seat_id)).seq,
    "roll.close": lambda *, seat_id, message: (
        zoria.declare(
            seat=_zoria(seat_id), roll_seq=message.get("roll"), result=message.get("result", "")
        ).seq
    ),
    "resource.spend": lambda *, seat_id, message: (
        pools.use_resource(
            seat=_seat(seat_id),
            character_id=message.get("character"),
            use=message.get("use"),
            amount=message.get("amount", 1),
            roll_seq=message.get("roll"),
        ).seq
    ),
    "resource.award": lambda *, seat_id, message: (
        pools.award_resource(
            seat=_seat(seat_id),
            character_id=message.get("character"),
            name=message.get("name"),
            amount=message.get("amount", 1),
        ).seq
    ),
    "discord.roll": lambda *, seat_id, message: (
        gm_tools.roll_discord_die(
            seat=_seat(seat_id), client_seed=message.get("client_seed", "")
        ).seq
    ),
    "extended.open": lambda *, seat_id, message: (
        gm_tools.open_extended(
            seat=_seat(seat_id), label=message.get("label"), target=message.get("target")
        ).seq
    ),
    "extended.close": lambda *, seat_id, message: (
        gm_tools.close_extended(seat=_seat(seat_id), extended=message.get("extended")).seq
    ),
    "round.new": lambda *, seat_id, message: gm_tools.new_round(seat=_seat(seat_id)).seq,
}
