"""The room as a seat sees it: ``hello``'s ``seat`` and ``state`` (docs/protocol.md, "The
socket")."""

from __future__ import annotations

import copy
import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from typing import Any

from ..models import Character, GameSession, Seat, SeatRole, Visibility
from ..services.withheld import pending_withheld_of, seen_counts, withheld_view
from ..systems.registry import keeping_state, state_keys, table_system
from .campaigns import sheet_of, talk_settings, with_sheets
from .events import Viewer, dumps
from .pools import pools_states, visible_open_rolls

# A room's state as the whole table has it, per session: (last_seq, built at, state). Sockets
# connecting at the same moment (a class logging in, a reconnect after a network blip) would
# otherwise each read every seat of the room: O(N) a socket, O(N^2) a burst.
_shared: OrderedDict[int, tuple[int, float, dict[str, Any]]] = OrderedDict()
_shared_lock = threading.Lock()
SHARED_ROOMS = 256  # rooms remembered per process
SHARED_SECONDS = 1.0  # reused this long at most: a few changes (an admin's edit) take no seq


def seat_summary(seat: Seat) -> dict[str, Any]:
    return {
        "id": seat.pk,
        "name": seat.name,
        "role": seat.role,
        "characters": [{"id": c.pk, "name": c.name} for c in seat.characters.all()],
    }


def seat_entry(summary: dict[str, Any]) -> dict[str, Any]:
    """A seat as the room's list (``hello.state.seats``) holds it: its keys at their defaults
    left out (``role`` "player", ``characters`` none). A room of 200 sends the list to each of its
    200 sockets as they arrive, and those two keys were half of it; every page reads them with
    those defaults. The browser's reducer (``static/tabletop/state.js``) lists seats alike."""
    entry = {"id": summary["id"], "name": summary["name"]}
    if summary.get("role", SeatRole.PLAYER) != SeatRole.PLAYER:
        entry["role"] = summary["role"]
    if summary.get("characters"):
        entry["characters"] = summary["characters"]
    return entry


def session_summary(session: GameSession) -> dict[str, Any]:
    return {
        "id": session.pk,
        "title": session.title,
        "status": session.status,
        "code": session.invite_code,
        "system": session.campaign.system,
        "campaign": session.campaign.name,
        "started_at": session.started_at.isoformat() if session.started_at else None,
        "ended_at": session.ended_at.isoformat() if session.ended_at else None,
    }


def fairness(session: GameSession) -> dict[str, Any]:
    return {"commitment": session.commitment or None, "server_seed": session.revealed_seed}


def room_state(
    *,
    session: GameSession,
    viewer: Viewer,
    last_seq: int | None = None,
    table: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything a screen needs to draw the room now; events after ``last_seq`` update it.

    With ``last_seq`` (read before anything else), a state this process built for the same
    ``last_seq`` within the last second is reused: it was read after that seq was, so it is
    never older than ``last_seq``, which is all a screen needs to apply the events after it.
    ``table``: the room's state as ``table_states_at`` gave it for this ``last_seq``."""
    if table is None:
        table = (
            table_states([session])[session.pk]
            if last_seq is None
            else table_states_at([(session, last_seq)])[session.pk]
        )
    if _the_same_for_everyone(table):
        return _everyones(table)
    state = {k: v for k, v in table.items() if k not in PRIVATE}
    state["open_rolls"] = visible_open_rolls(table["open_rolls"], viewer)
    # Counts moved for hidden rolls not revealed yet: as they were, for whoever does not see them.
    unseen = withheld_view(table[WITHHELD], viewer=viewer) if table[WITHHELD] else {}
    if unseen:
        for key in ("pools", "resources"):
            state[key] = seen_counts(key, state[key], unseen)
    return state


WITHHELD = "_withheld"  # internal: the moves not every seat sees yet (pending_withheld)
EVERYONE = "_everyone"  # internal: the state as every seat sees it, when they all see the same
SEATS = "_seats"  # internal: the room's seats' summaries by id (``seat_in_room``)
PRIVATE = frozenset({WITHHELD, EVERYONE, SEATS})


class SharedState(dict[str, Any]):
    """A room's state that every seat sees alike (no hidden open roll, no count withheld), with
    its JSON made once: a burst of 200 sockets into a room sends the same 12 KB 200 times, and
    encoding it per socket was a fifth of the event loop's work per connect
    (``python -m bench.scenarios.connects``)."""

    text: str


def seat_in_room(table: dict[str, Any], seat: Seat) -> dict[str, Any]:
    """``hello.seat``: ``seat_summary(seat)`` as the room's state (``table``) lists the seat,
    read with it. The lookup by id is made once per room and seq for all of its sockets: a
    burst of 200 sockets otherwise read each seat's characters again, one related manager per
    socket on the database thread, after the room's read had them all. A seat the list does not
    have (removed meanwhile) is summarised from the seat itself."""
    by_id = table.get(SEATS)
    if by_id is None:  # (built once per room and seq; the same answer if two threads race)
        by_id = {
            entry["id"]: {
                "id": entry["id"],
                "name": entry["name"],
                "role": entry.get("role", SeatRole.PLAYER.value),
                "characters": entry.get("characters", []),
            }
            for entry in table["seats"]
        }
        table[SEATS] = by_id
    found = by_id.get(seat.pk)
    return dict(found) if found is not None else seat_summary(seat)


def _the_same_for_everyone(table: dict[str, Any]) -> bool:
    return not table[WITHHELD] and all(
        visibility == Visibility.PUBLIC for visibility, _ in table["open_rolls"]
    )


def _everyones(table: dict[str, Any]) -> SharedState:
    state = table.get(EVERYONE)
    if state is None:  # (built once per room and seq; the same answer if two threads race)
        state = SharedState({k: v for k, v in table.items() if k not in PRIVATE})
        state["open_rolls"] = [summary for _, summary in table["open_rolls"]]
        state.text = dumps(state)
        table[EVERYONE] = state
    return state


def table_states_at(rooms: Sequence[tuple[GameSession, int]]) -> dict[int, dict[str, Any]]:
    """Each room's state as the whole table has it at its ``last_seq``: reused when this process
    read it at that seq within the last second, the others read together (``table_states``)."""
    out: dict[int, dict[str, Any]] = {}
    missing: dict[int, tuple[GameSession, int]] = {}
    for session, last_seq in rooms:
        recent = _recent(session.pk, last_seq)
        if recent is not None:
            out[session.pk] = recent
        else:
            missing[session.pk] = (session, last_seq)
    if missing:
        read = table_states([session for session, _ in missing.values()])
        for pk, (_, last_seq) in missing.items():
            out[pk] = read[pk]
            _remember(pk, last_seq, read[pk])
    return out


def table_states(sessions: Sequence[GameSession]) -> dict[int, dict[str, Any]]:
    """The rooms' states as the whole table has them, one query per part for all the rooms:
    sockets arriving in many rooms at once (an evening's tables starting) share the reads."""
    ids = [s.pk for s in sessions]
    seats = seats_of(ids)
    characters: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for c in with_sheets(
        Character.objects.filter(campaign_id__in={s.campaign_id for s in sessions}).order_by("name")
    ):
        characters[c.campaign_id].append(sheet_of(c))
    pools = pools_states(sessions)
    systems = systems_states(sessions)
    withheld = pending_withheld_of(ids)
    return {
        s.pk: {
            "session": session_summary(s),
            "seats": seats[s.pk],
            "characters": list(characters[s.campaign_id]),
            "table": s.table_state,
            **pools[s.pk],
            **systems[s.pk],
            "fairness": fairness(s),
            "talk": talk_settings(s.campaign.talk),
            WITHHELD: withheld[s.pk],
        }
        for s in sessions
    }


def seats_of(session_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """The rooms' seats as ``hello.state.seats`` lists them (``seat_entry(seat_summary(seat))``
    for each seat at the table, oldest first), read as rows: the seats, then the characters they
    play (in the order ``seat.characters.all()`` gives). A room of 200 seats read as models,
    each with its characters prefetched, made 200 seats and 400 related managers on the database
    thread for one hello, while the room's sockets waited behind it."""
    seats: dict[int, list[dict[str, Any]]] = defaultdict(list)
    at_table = Seat.objects.filter(session_id__in=session_ids, removed_at__isnull=True)
    played: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for seat_id, character_id, name in (
        Seat.characters.through.objects.filter(seat__in=at_table)
        .order_by(*(f"character__{key}" for key in Character._meta.ordering or ()))
        .values_list("seat_id", "character_id", "character__name")
    ):
        played[seat_id].append({"id": character_id, "name": name})
    for row in at_table.order_by("created_at").values("pk", "session_id", "name", "role"):
        summary = {
            "id": row["pk"],
            "name": row["name"],
            "role": row["role"],
            "characters": played.get(row["pk"], []),
        }
        seats[row["session_id"]].append(seat_entry(summary))
    return seats


def systems_states(sessions: Sequence[GameSession]) -> dict[int, dict[str, Any]]:
    """Every system's own keys of ``hello.state`` for each session: its system's values, the
    others' empty ones. Each system that keeps state reads it for all the sessions at once, so
    a burst into many rooms takes as many queries as one room."""
    ids = [s.pk for s in sessions]
    out = {pk: copy.deepcopy(state_keys()) for pk in ids}
    for table in keeping_state():
        for session_id, part in table.room_state(ids).items():
            out[session_id].update(part)
    return out


def _recent(session_id: int, last_seq: int) -> dict[str, Any] | None:
    with _shared_lock:
        entry = _shared.get(session_id)
    if entry is None or entry[0] != last_seq or time.monotonic() - entry[1] > SHARED_SECONDS:
        return None
    return entry[2]


def _remember(session_id: int, last_seq: int, state: dict[str, Any]) -> None:
    with _shared_lock:
        _shared[session_id] = (last_seq, time.monotonic(), state)
        _shared.move_to_end(session_id)
        while len(_shared) > SHARED_ROOMS:
            _shared.popitem(last=False)


# --- one reducer: what an event does to the room as a seat sees it ---------------------------


def _upsert(items: list[dict[str, Any]], item: dict[str, Any], key: Any) -> list[dict[str, Any]]:
    out = [x for x in items if key(x) != key(item)]
    if len(out) == len(items):
        return [*items, item]
    return [item if key(x) == key(item) else x for x in items]


def _by_seq(rolls: list[dict[str, Any]], roll: dict[str, Any]) -> list[dict[str, Any]]:
    """An open roll's new state: listed while open (in seq order), gone once closed."""
    rest = [r for r in rolls if r["seq"] != roll["seq"]]
    if roll.get("open", True):
        rest.append(roll)
    return sorted(rest, key=lambda r: r["seq"])


def apply_event(state: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    """``hello.state`` after one event, as the seat that holds ``state`` received it (redacted
    where it had to be). Events carry the absolute values they change, so this reads them and
    applies no rule of the game; the browser's ``static/tabletop/state.js`` does the same."""
    data = message.get("data") or {}
    if data.get("hidden") or data.get("too_large"):
        return state
    kind = message["kind"]
    new = dict(state)
    if kind == "seat.join":
        new["seats"] = _upsert(state["seats"], seat_entry(data["seat"]), lambda s: s["id"])
    elif kind == "seat.leave":
        new["seats"] = [s for s in state["seats"] if s["id"] != data["seat"]]
    elif kind == "session.start":
        new["session"] = {**state["session"], "status": "live", "started_at": data["started_at"]}
        new["fairness"] = {**state["fairness"], "commitment": data["commitment"]}
    elif kind == "session.end":
        new["session"] = {**state["session"], "status": "ended", "ended_at": data["ended_at"]}
        new["fairness"] = {**state["fairness"], "server_seed": data["server_seed"]}
    elif kind == "chat.settings":
        new["talk"] = data["talk"]
    for pool in data.get("pools") or ():
        new["pools"] = _upsert(new["pools"], pool, lambda p: p["id"])
    for row in data.get("resources") or ():
        new["resources"] = _upsert(new["resources"], row, lambda r: (r["character"], r["name"]))
    if "table" in data:
        new["table"] = data["table"]
    if data.get("open_roll"):
        roll = data["open_roll"] if kind != "roll" else {"seq": message["seq"], **data["open_roll"]}
        new["open_rolls"] = _by_seq(new["open_rolls"], roll)
    # What the table's system keeps of its own (its ``fold``, declared with it).
    return table_system((new.get("session") or {}).get("system", "")).fold(new, message)
