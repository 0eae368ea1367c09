"""Turn order: the initiative tracker every table keeps in its rule state (``table.turns``),
next to the round the table is in (``table.round``).

Entries are kept in turn order. A new entry goes before the first entry with a lower result, so
entries sort by result, highest first, and a tie keeps the order they came in: the entry that
was there first acts first (the GM moves anyone with delay and act). A delayed entry waits at
the end of the order, out of it, until it acts: then it goes right after whoever's turn it was
and takes the turn.

A round is started once: at a table whose system keeps rounds of its own (its ``start_round``
hook, ``tabletop/systems/registry.py``), the tracker's next round is the system's, and the
system's own new round puts the tracker at the top of the order (``round_began``). Everyone
sees the order: the state travels in every event that changes it, as the table's rule state
does, and the room's one reducer puts it on every screen."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.utils.translation import gettext as _

from ..models import Event, GameSession, Seat, SessionStatus, Visibility, status_word
from ..systems.registry import table_system
from .errors import conflict, forbidden, invalid, not_found
from .events import UnitOfWork, change, lock_session, sent_by
from .store import seated, take_seq

MAX_ENTRIES = 50  # a battle with more combatants than this is several groups of them
KEY = "turns"


def empty() -> dict[str, Any]:
    return {"entries": [], "current": None, "next_id": 1}


def turns_of(state: dict[str, Any] | None) -> dict[str, Any]:
    """The tracker in a table state, as a new dict to change (empty when there is none)."""
    found = (state or {}).get(KEY) or empty()
    return {**found, "entries": [dict(e) for e in found["entries"]]}


def _in_order(turns: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in turns["entries"] if not e.get("delayed")]


def place(turns: dict[str, Any], entry: dict[str, Any]) -> None:
    """Put ``entry`` in the order: before the first waiting entry with a lower result (ties: the
    one there first goes first), and before the delayed ones."""
    entries = turns["entries"]
    at = next(
        (
            i
            for i, e in enumerate(entries)
            if e.get("delayed") or int(e["value"]) < int(entry["value"])
        ),
        len(entries),
    )
    entries.insert(at, entry)


def round_began(state: dict[str, Any]) -> None:
    """A new round (the tracker's or the system's): the first in the order has the turn."""
    if KEY not in state:
        return
    turns = turns_of(state)
    order = _in_order(turns)
    turns["current"] = order[0]["id"] if order else None
    state[KEY] = turns


def roll_value(data: dict[str, Any]) -> int | None:
    """The number a roll puts in the order: its total, else its net result or successes."""
    for key in ("total", "net", "successes"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _entry(turns: dict[str, Any], entry_id: int) -> dict[str, Any]:
    found = next((e for e in turns["entries"] if e["id"] == entry_id), None)
    if found is None:
        raise not_found(_("no entry #%(entry)s in the turn order") % {"entry": entry_id})
    return found


def _name(turns: dict[str, Any], entry_id: int | None) -> str:
    found = next((e for e in turns["entries"] if e["id"] == entry_id), None)
    return found["name"] if found else "nobody"


def _record(
    uow: UnitOfWork,
    seat: Seat,
    seq: int,
    state: dict[str, Any],
    *,
    action: str,
    text: str,
    **more: Any,
) -> Event:
    GameSession.objects.filter(pk=seat.session_id).update(table_state=state)
    return uow.record(
        session_id=seat.session_id,
        kind="turns",
        actor=seat,
        seq=seq,
        data={"action": action, **more, "table": state, "text": text},
    )


def _live(seat: Seat, uow: UnitOfWork) -> tuple[int, dict[str, Any]]:
    """Take the change's seq with the session locked; its rule state as the lock found it."""
    taken = take_seq(session_id=seat.session_id, sent=uow.sent)
    _must_be_live(taken.status)
    return taken.seq, dict(taken.table_state or {})


def _must_be_live(status: str) -> None:
    if status != SessionStatus.LIVE:
        raise conflict(
            _("the session is %(status)s: the turn order changes only while live")
            % {"status": status_word(status)}
        )


class _Changing:
    """One change of the order: the session locked and its seq taken (``_live``), the tracker
    to change (``turns``), and ``record`` to keep it and store its event."""

    def __init__(self, uow: UnitOfWork, seat: Seat) -> None:
        self.uow, self.seat = uow, seat
        self.seq, self.state = _live(seat, uow)
        self.turns = turns_of(self.state)

    def record(self, *, action: str, text: str, **more: Any) -> Event:
        self.state[KEY] = self.turns
        return _record(self.uow, self.seat, self.seq, self.state, action=action, text=text, **more)


@contextmanager
def _changing(uow: UnitOfWork | None, seat: Seat) -> Iterator[_Changing]:
    with change(uow) as unit:
        yield _Changing(unit, seat)


def _may_move(seat: Seat, entry: dict[str, Any]) -> None:
    if not seat.is_gm and entry.get("seat") != seat.pk:
        raise forbidden(_("only the GM or %(name)s's player can do that") % {"name": entry["name"]})


# --- entries --------------------------------------------------------------------------------


def enter_roller(uow: UnitOfWork, *, seat: Seat, roll: Event, name: str = "") -> Event:
    """A public roll marked "initiative" puts its roller in the order (in the roll's unit of
    work, right after it): named for its character, else its seat; the GM's may be named for
    what it was for (``name``: "Goblins"). A seat's new roll for the same combatant replaces
    its entry."""
    if roll.visibility != Visibility.PUBLIC:
        raise invalid(
            _("an initiative roll is public: everyone sees the turn order"), field="visibility"
        )
    value = roll_value(roll.data)
    if value is None:
        raise invalid(_("this roll has no number to order turns by"), field="request")
    character = roll.data.get("character") or None
    if not seat.is_gm:
        name = ""  # a player's entry is their character or themselves, whatever the roll is for
    if not name:
        name = (character or {}).get("name") or seat.name
    move = _Changing(uow, seat)
    turns = move.turns
    same = [
        e
        for e in turns["entries"]
        if e.get("seat") == seat.pk
        and (e.get("character") == (character or {}).get("id"))
        and (not seat.is_gm or e["name"] == name)
    ]
    current = turns["current"]
    for old in same:
        turns["entries"].remove(old)
        if current == old["id"]:
            turns["current"] = None
    entry = _new(turns, name=name, value=value, seat=seat.pk, roll=roll.seq)
    entry["character"] = (character or {}).get("id")
    place(turns, entry)
    if turns["current"] is None and current is not None:
        turns["current"] = entry["id"]  # a reroll of whoever had the turn keeps the turn
    return move.record(
        action="enter",
        entry=entry["id"],
        roll=roll.seq,
        text=f"{name} enters the turn order with {value}",
    )


def _new(turns: dict[str, Any], **fields: Any) -> dict[str, Any]:
    if len(turns["entries"]) >= MAX_ENTRIES:
        raise conflict(
            _("the turn order holds at most %(count)d entries: remove some first")
            % {"count": MAX_ENTRIES}
        )
    entry = {"id": turns["next_id"], "delayed": False, "seat": None, "character": None, **fields}
    turns["next_id"] += 1
    return entry


def add_npc(*, uow: UnitOfWork | None = None, seat_id: int, name: str, value: int) -> Event:
    """The GM puts a combatant of their own in the order with a result they rolled or chose."""
    seat = seated(seat_id, sent=sent_by(uow))
    if not seat.is_gm:
        raise forbidden(_("only the GM adds to the turn order by hand"))
    name = " ".join(name.split())
    if not name:
        raise invalid(_("who this is, shown in the order"), field="name")
    with _changing(uow, seat) as move:
        entry = _new(move.turns, name=name, value=value, roll=None)
        place(move.turns, entry)
        return move.record(
            action="add", entry=entry["id"], text=f"{name} joins the turn order with {value}"
        )


def remove_entry(*, uow: UnitOfWork | None = None, seat_id: int, entry: int) -> Event:
    seat = seated(seat_id, sent=sent_by(uow))
    with _changing(uow, seat) as move:
        turns = move.turns
        found = _entry(turns, entry)
        _may_move(seat, found)
        order = _in_order(turns)
        if turns["current"] == entry:  # the turn passes to the next in the order
            later = order[order.index(found) + 1 :] if found in order else []
            turns["current"] = later[0]["id"] if later else None
        turns["entries"].remove(found)
        return move.record(
            action="remove", entry=entry, text=f"{found['name']} leaves the turn order"
        )


def set_turn(*, uow: UnitOfWork | None = None, seat_id: int, entry: int) -> Event:
    """The GM gives the turn to an entry (a delayed one acts: see ``act_delayed``)."""
    seat = seated(seat_id, sent=sent_by(uow))
    if not seat.is_gm:
        raise forbidden(_("only the GM sets whose turn it is"))
    with _changing(uow, seat) as move:
        found = _entry(move.turns, entry)
        if found.get("delayed"):
            raise conflict(
                _("%(name)s is delaying: they act when they choose to") % {"name": found["name"]}
            )
        move.turns["current"] = entry
        return move.record(action="turn", entry=entry, text=f"{found['name']}'s turn")


def delay_entry(*, uow: UnitOfWork | None = None, seat_id: int, entry: int) -> Event:
    """An entry holds its action: out of the order until it acts. If it had the turn, the turn
    passes on (to nobody at the end of the round: the next turn starts a new round)."""
    seat = seated(seat_id, sent=sent_by(uow))
    with _changing(uow, seat) as move:
        turns = move.turns
        found = _entry(turns, entry)
        _may_move(seat, found)
        if found.get("delayed"):
            raise conflict(_("%(name)s is already delaying") % {"name": found["name"]})
        order = _in_order(turns)
        if turns["current"] == entry:
            later = order[order.index(found) + 1 :]
            turns["current"] = later[0]["id"] if later else None
        turns["entries"].remove(found)
        turns["entries"].append({**found, "delayed": True})
        return move.record(action="delay", entry=entry, text=f"{found['name']} delays")


def act_delayed(*, uow: UnitOfWork | None = None, seat_id: int, entry: int) -> Event:
    """A delayed entry acts now: it goes right after whoever had the turn and takes it; from
    then on it keeps that place in the order."""
    seat = seated(seat_id, sent=sent_by(uow))
    with _changing(uow, seat) as move:
        turns = move.turns
        found = _entry(turns, entry)
        _may_move(seat, found)
        if not found.get("delayed"):
            raise conflict(_("%(name)s is not delaying") % {"name": found["name"]})
        turns["entries"].remove(found)
        acting = {**found, "delayed": False}
        order = turns["entries"]
        at = next((i + 1 for i, e in enumerate(order) if e["id"] == turns["current"]), 0)
        order.insert(at, acting)
        turns["current"] = entry
        return move.record(action="act", entry=entry, text=f"{found['name']} acts now")


def clear_order(*, uow: UnitOfWork | None = None, seat_id: int) -> Event:
    """The fight is over: the order is emptied (the round count stays the table's)."""
    seat = seated(seat_id, sent=sent_by(uow))
    if not seat.is_gm:
        raise forbidden(_("only the GM clears the turn order"))
    with _changing(uow, seat) as move:
        move.turns = {**empty(), "next_id": move.turns["next_id"]}
        return move.record(action="clear", text="The turn order is cleared")


# --- turns and rounds -----------------------------------------------------------------------


def pass_turn(*, uow: UnitOfWork | None = None, seat_id: int, round: bool = False) -> Event:
    """The turn passes to the next in the order; after the last (or with ``round``: at once) a
    new round begins with the first. Whoever has the turn may end it; only the GM starts a
    round. At a table whose system keeps rounds, its new round is the tracker's."""
    seat = seated(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        locked = lock_session(session_id=seat.session_id)
        _must_be_live(locked.status)
        turns = turns_of(locked.table_state)
        order = _in_order(turns)
        current = next((e for e in order if e["id"] == turns["current"]), None)
        if not seat.is_gm and (current is None or current.get("seat") != seat.pk):
            raise forbidden(_("only the GM or whoever has the turn can move it on"))
        later = order[order.index(current) + 1 :] if current is not None else order
        if not round and current is not None and later:
            passing = _Changing(uow, seat)
            passing.turns["current"] = later[0]["id"]
            return passing.record(
                action="next", entry=later[0]["id"], text=f"{later[0]['name']}'s turn"
            )
        if not seat.is_gm:
            raise forbidden(_("the round is over: the GM starts the next one"))
        started = table_system(seat.session.campaign.system).start_round(uow, seat_id=seat.pk)
        if started is not None:
            return started
        seq, state = _live(seat, uow)
        state["round"] = int(state.get("round") or 0) + 1
        round_began(state)
        turns = state.get(KEY) or empty()
        first = _name(turns, turns["current"])
        return _record(
            uow,
            seat,
            seq,
            state,
            action="round",
            entry=turns["current"],
            text=f"Round {state['round']} begins: {first}'s turn"
            if turns["current"]
            else f"Round {state['round']} begins",
        )
