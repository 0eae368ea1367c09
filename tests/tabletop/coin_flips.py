"""A game system that lives only in the tests: coin flips. It declares through the seam alone
what a system brings to the table (its engine, its commands, its own event with the log line
people read, the words of its resource, its own key of the room state and the reducer rule
for it), so a test can play it over the real socket with no change outside ``tests/``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar

from rules.engines import registry as engines
from rules.engines.generic import Generic
from rules.engines.schema import Field
from tabletop.models import Event, GameSession
from tabletop.protocol import events as ev
from tabletop.protocol.commands import Command
from tabletop.services.events import UnitOfWork, change
from tabletop.services.rolls import fair_stream
from tabletop.systems import registry
from tabletop.systems.base import (
    ResourceUse,
    live_seq,
    resource_award_command,
    resource_spend_command,
    save_table_state,
    seat_change,
    seat_of,
)

ID = "coin-flips"


class CoinFlips(Generic):
    """Dice notation, and a resource: reflips."""

    id = ID
    title = "Coin flips"
    summary = "Call heads or tails; reflips flip again."
    resources = (Field("reflips", "int", label="Reflips", default=0, min=0, max=99),)
    sheet_fields = resources


def _flip_line(data: Mapping[str, Any], actor: str) -> str:
    streak = f" ({data['streak']} right in a row)" if data["streak"] > 1 else ""
    return f"{actor} calls {data['call']}: the coin lands {data['coin']}{streak}"


FLIPPED = ev.EventType(
    "pool",
    "flip",
    (
        ev.ACTION,
        Field("call", "choice", choices=("heads", "tails"), required=True),
        Field("coin", "choice", choices=("heads", "tails"), required=True),
        ev.int_field("streak", min=0, required=True),
        ev.CLIENT_SEED,
        ev.TABLE,
        ev.TEXT,
    ),
    ev.PUBLIC,
    "everyone",
    "a called coin flipped",
    _flip_line,
    writes_text=True,
)


class CoinTable(registry.TableSystem):
    id = ID
    events = (FLIPPED,)
    use_words: ClassVar[Mapping[str, ev.UseWords]] = {
        "reflip": ev.UseWords("to flip again", "to flip {amount} more times"),
    }
    resource_words: ClassVar[Mapping[str, tuple[str, str]]] = {"reflips": ("reflip", "reflips")}
    state_keys: ClassVar[Mapping[str, Any]] = {"streak": 0}

    def room_state(self, session_ids: list[int]) -> dict[int, dict[str, Any]]:
        found = GameSession.objects.filter(pk__in=session_ids, campaign__system=ID)
        return {
            pk: {"streak": (t or {}).get("streak", 0)}
            for pk, t in found.values_list("pk", "table_state")
        }

    def fold(self, state: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        data = message.get("data") or {}
        if message["kind"] == "pool" and data.get("action") == "flip":
            return {**state, "streak": data["streak"]}
        return state


def flip(*, uow: UnitOfWork | None = None, seat_id: int, call: str, client_seed: str = "") -> Event:
    """Flip the coin from the session's fair stream; a right call lengthens the table's streak."""
    seat = seat_of(seat_id)
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id)
        session = GameSession.objects.get(pk=seat.session_id)
        stream, client_seed = fair_stream(
            server_seed=bytes(session.server_seed), client_seed=client_seed, seq=seq
        )
        coin = ("heads", "tails")[stream.roll(2) - 1]
        state = dict(session.table_state or {})
        state["streak"] = int(state.get("streak") or 0) + 1 if coin == call else 0
        save_table_state(session, state)
        data = {
            "action": "flip",
            "call": call,
            "coin": coin,
            "streak": state["streak"],
            "client_seed": client_seed,
            "table": state,
            "text": "",
        }
        return seat_change(uow, seat, seq, data=data)


COMMANDS = (
    Command(
        "coin.flip",
        (
            Field("call", "choice", label="Call", required=True, choices=("heads", "tails")),
            Field("client_seed", "text", label="Client seed", default="", max_length=200),
        ),
        flip,
        "call a coin and flip it",
    ),
    resource_spend_command({"reflip": ResourceUse("reflips")}),
    resource_award_command(("reflips",)),
)


@contextmanager
def coin_flips(monkeypatch: Any) -> Iterator[None]:
    """The system registered, as a system module is at app start, for one test (its engine in
    the rules' registry, its table, commands, events and words in the table's)."""
    engine = CoinFlips()
    monkeypatch.setattr(engines, "SYSTEMS", (*engines.SYSTEMS, engine))
    monkeypatch.setitem(engines._BY_ID, ID, engine)
    for name in ("_SYSTEMS", "_COMMANDS"):
        monkeypatch.setattr(registry, name, dict(getattr(registry, name)))
    monkeypatch.setattr(ev, "_DECLARED", list(ev._DECLARED))
    for name in ("_USE_WORDS", "_RESOURCE_WORDS"):
        monkeypatch.setattr(ev, name, dict(getattr(ev, name)))
    registry.register(CoinTable(), COMMANDS)
    yield
