"""Pools and resources: the atomic arithmetic every system's pool rules are built from.

Counts only change by conditional UPDATEs (``remaining >= n``), so two sockets spending the
last die at the same moment cannot both succeed; the CHECK constraints stand behind them.
"""

from __future__ import annotations

import threading
from typing import Any

from django.db.models import F

from ..models import Character, CharacterResource, Event, GameSession, Seat, Visibility
from ..models.pools import Pool
from ..selectors.events import Viewer, can_see
from ..selectors.pools import (
    COUNTS,
    count_key,
    pending_withheld,
    pool_snapshot,
    resource_names,
    resource_snapshot,
    seen_counts,
    starting_amount,
    withheld_view,
)
from .errors import conflict, forbidden, invalid
from .events import record_event

# What this thread's change has moved so far, count by count (``count_key``), and the hidden
# events of a roll being made whose roll has no seq yet. A change begins with ``forget_moves``
# (the session's lock is held from then on), so nothing of a change that failed carries over.
_change = threading.local()


def forget_moves(*, roll_being_made: bool = False) -> None:
    """A change begins (its session locked): nothing of one that failed carries over. While a
    roll is being made, notes of what its payments moved wait for its seq (``roll_made``)."""
    _change.moves = {}
    _change.roll = None
    _change.untied = [] if roll_being_made else None


def _moved(key: tuple[Any, ...], delta: int) -> None:
    moves = getattr(_change, "moves", None)
    if moves is None:
        moves = _change.moves = {}
    moves[key] = moves.get(key, 0) + delta


def _take_moves(data: dict[str, Any]) -> dict[tuple[Any, ...], int]:
    """The moves of the counts ``data`` carries (they are told now, so forgotten here)."""
    moves = getattr(_change, "moves", None) or {}
    keys = [count_key("pools", p) for p in data.get("pools") or ()]
    keys += [count_key("resources", r) for r in data.get("resources") or ()]
    # A count noted with no move (``hold_resource``) is told like one that moved.
    return {k: moves.pop(k) for k in keys if k in moves}


def roll_made(seq: int) -> None:
    """The roll being made has its seq: what was paid before it and what follows it in this
    change are about it (their notes wait for its reveal)."""
    _change.roll = seq
    for note in getattr(_change, "untied", None) or ():
        record_event(**{**note, "data": {**note["data"], "roll": seq}})
    _change.untied = None


def take_dice(*, pool_id: int, count: int = 1) -> bool:
    """Take ``count`` dice if that many are there; False (and nothing taken) otherwise."""
    done = bool(
        Pool.objects.filter(pk=pool_id, remaining__gte=count).update(
            remaining=F("remaining") - count
        )
    )
    if done:
        _moved(("pools", pool_id), -count)
    return done


def give_dice(*, pool_id: int, count: int = 1) -> None:
    Pool.objects.filter(pk=pool_id).update(remaining=F("remaining") + count)
    _moved(("pools", pool_id), count)


def _as_seen(data: dict[str, Any], unseen: dict[tuple[Any, ...], int]) -> dict[str, Any]:
    """``data``'s counts less the moves a viewer does not see yet (``unseen``)."""
    return {key: seen_counts(key, data[key], unseen) for key in COUNTS if data.get(key)}


def tell_counts(
    *,
    session_id: int,
    data: dict[str, Any],
    but_roll: int | None = None,
    only: set[tuple[Any, ...]] | None = None,
) -> dict[str, Any]:
    """The counts in ``data`` (new absolute values, as they are) as the room may see them now.

    A spend or use tied to a hidden roll that is not revealed yet (``pending_withheld``) moves
    its counts for its roller and the GM only: everyone else keeps the count as it was until
    the roll is revealed or the session ends. So the public values leave out every pending
    move, and each seat that sees some of them is told its own values in a ``counts`` event
    of its own (``of``: the public event they go with). Returns ``data`` with the public values;
    the seats' events are recorded by ``record_counts`` once ``of`` has its seq."""
    pending = pending_withheld(session_id=session_id, but_roll=but_roll)
    unseen = withheld_view(pending, viewer=None)
    if only is not None:
        unseen = {k: v for k, v in unseen.items() if k in only}
    if not unseen:
        return data
    return {**data, **_as_seen(data, unseen)}


def _set_anew(*, session_id: int, data: dict[str, Any], moved: set[Any], of: int) -> None:
    """Counts a public change set anew (not moved): what hidden rolls had moved of them is
    withheld no more. Each such note is answered by one as hidden, taking its moves back."""
    keys = {count_key(k, item) for k in COUNTS for item in data.get(k) or ()} - moved
    if not keys:
        return
    revealed = set(
        Event.objects.filter(session_id=session_id, kind="roll.reveal").values_list(
            "data__seq", flat=True
        )
    )
    # Per roll and audience, what is still withheld of these counts (earlier notes may have
    # taken some back already).
    held: dict[tuple[Any, ...], dict[tuple[Any, ...], int]] = {}
    who: dict[tuple[Any, ...], Event] = {}
    for note in _notes(session_id=session_id):
        roll = note.data.get("roll")
        if roll is not None and roll in revealed:
            continue
        group = (roll, note.visibility, note.owner_id, note.actor_id)
        who[group] = note
        for m in note.data["withheld"]:
            if tuple(m["count"]) in keys:
                sums = held.setdefault(group, {})
                sums[tuple(m["count"])] = sums.get(tuple(m["count"]), 0) + m["moved"]
    for group, sums in held.items():
        back = [{"count": list(k), "moved": -d} for k, d in sums.items() if d]
        if back:
            note = who[group]
            record_event(
                session_id=session_id,
                kind="pool",
                actor=note.actor,
                visibility=note.visibility,
                owner=note.owner,
                data={
                    "action": "counts",
                    "of": of,
                    "roll": group[0],
                    "withheld": back,
                    "text": "Counts set anew for the whole table",
                },
            )


def record_counts(*, session_id: int, actor: Seat | None, data: dict[str, Any], of: int) -> None:
    """After a public event carrying counts (``data``: their true values): each seat that sees
    some withheld move of them gets its own values, seen by it alone. Whether a seat is told
    depends on which hidden changes touched the counts, never on how far they moved them (a
    hidden roll's dice may decide that: its protection may shield no die)."""
    pending = pending_withheld(session_id=session_id)  # ``of`` is stored: it counts as told
    keys = {count_key(k, item) for k in COUNTS for item in data.get(k) or ()}
    touching = [w for w in pending if any(key in keys for key, _ in w.moves)]
    if not touching:
        return
    seats = {w.owner for w in touching} | set(
        Seat.objects.filter(session_id=session_id, role="gm", removed_at__isnull=True).values_list(
            "pk", flat=True
        )
    )
    for seat_id in sorted(s for s in seats if s is not None):
        viewer = Viewer(seat_id=seat_id, is_gm=Seat.objects.filter(pk=seat_id, role="gm").exists())
        sees = (
            can_see(visibility=w.visibility, actor_seat_id=w.owner, viewer=viewer) for w in touching
        )
        if any(sees):
            theirs = _as_seen(data, withheld_view(pending, viewer=viewer))
            record_event(
                session_id=session_id,
                kind="pool",
                actor=actor,
                visibility=Visibility.SELF,
                owner=Seat.objects.get(pk=seat_id),
                data={"action": "counts", "of": of, **theirs, "text": "Counts as you see them"},
            )


def record_pool_event(
    *,
    session_id: int,
    actor: Seat | None,
    data: dict[str, Any],
    seq: int | None = None,
    visibility: str = Visibility.PUBLIC,
    owner: Seat | None = None,
) -> Event:
    """Every pool change is a ``pool`` event carrying the new absolute counts, so a screen that
    applies it twice still shows the truth.

    A change about a hidden roll takes that roll's ``visibility`` and ``owner`` (its roller).
    What it moved is withheld from everyone else until the roll is revealed or the session
    ends (its price or its very existence would tell of the roll's dice): a ``counts`` event as
    hidden as the roll notes the moves (``withheld``) and the roll they wait for; the reveal
    or the session's end then carries the counts to the room (``tell_counts``)."""
    moves = _take_moves(data)
    if visibility == Visibility.PUBLIC:
        # Counts this change moved keep what is withheld out; counts it set anew (a new round's
        # dice) are what they are for everyone, and what was withheld of them is no more.
        told = tell_counts(session_id=session_id, data=data, only=set(moves))
        event = record_event(session_id=session_id, kind="pool", actor=actor, data=told, seq=seq)
        _set_anew(session_id=session_id, data=data, moved=set(moves), of=event.seq)
        if told is not data:
            record_counts(session_id=session_id, actor=actor, data=data, of=event.seq)
        return event
    event = record_event(
        session_id=session_id,
        kind="pool",
        actor=actor,
        data=data,
        seq=seq,
        visibility=visibility,
        owner=owner,
    )
    if moves:
        roll = data.get("roll") or getattr(_change, "roll", None)
        note = {
            "session_id": session_id,
            "kind": "pool",
            "actor": actor,
            "visibility": visibility,
            "owner": owner,
            "data": {
                "action": "counts",
                "of": event.seq,
                "roll": roll,
                "withheld": [{"count": list(k), "moved": d} for k, d in moves.items()],
                "text": "Counts withheld from the room until the roll is revealed",
            },
        }
        untied = getattr(_change, "untied", None)
        if roll is None and untied is not None:
            untied.append(note)  # paid before the roll: noted once the roll has its seq
        else:
            record_event(**note)
    return event


def pools_changed(pool_ids: list[int]) -> list[dict[str, Any]]:
    return [pool_snapshot(p) for p in Pool.objects.filter(pk__in=pool_ids).order_by("pk")]


# --- per-character resources (character points, Luck, Instant Karma) ------------------------


def ensure_resources(*, character: Character) -> list[CharacterResource]:
    """Rows for the system's persistent resources, seeded from the sheet the first time."""
    rows = []
    for name in resource_names(character.campaign.system):
        row, _ = CharacterResource.objects.get_or_create(
            character=character, name=name, defaults={"amount": starting_amount(character, name)}
        )
        rows.append(row)
    return rows


def character_for(*, seat: Seat, character_id: Any) -> Character:
    """A character this seat may act for: its own (players), any in the campaign (GM)."""
    if isinstance(character_id, bool) or not isinstance(character_id, int):
        raise invalid("expected a character id", field="character")
    if seat.is_gm:
        character = Character.objects.filter(
            pk=character_id, campaign__sessions=seat.session_id
        ).first()
        if character is None:
            raise invalid("no such character at this table", field="character")
        return character
    character = seat.characters.filter(pk=character_id).first()
    if character is None:
        raise forbidden("you can act only for your own characters")
    return character


def spend_resource(*, character: Character, name: str, amount: int = 1) -> CharacterResource:
    """Spend ``amount`` of a resource atomically, or refuse with what is left."""
    if name not in resource_names(character.campaign.system):
        raise invalid(f"{character.campaign.system} has no resource {name!r}", field="resource")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1 or amount > 1000:
        raise invalid("a whole number from 1 to 1000", field="amount")
    ensure_resources(character=character)
    done = CharacterResource.objects.filter(
        character=character, name=name, amount__gte=amount
    ).update(amount=F("amount") - amount)
    row = CharacterResource.objects.get(character=character, name=name)
    if not done:
        raise conflict(f"{character.name} has only {row.amount} {name.replace('_', ' ')}")
    _moved(("resources", character.pk, name), -amount)
    return row


def hold_resource(*, character: Character, name: str) -> CharacterResource:
    """Note a resource a change may spend or not, as a hidden roll's dice decide, even when it
    spends none: what others see of the change (its withheld count) is then the same whatever
    the dice. Returns the row as it is."""
    if name not in resource_names(character.campaign.system):
        raise invalid(f"{character.campaign.system} has no resource {name!r}", field="resource")
    ensure_resources(character=character)
    _moved(("resources", character.pk, name), 0)
    return CharacterResource.objects.get(character=character, name=name)


def grant_resource(*, character: Character, name: str, amount: int = 1) -> CharacterResource:
    if name not in resource_names(character.campaign.system):
        raise invalid(f"{character.campaign.system} has no resource {name!r}", field="resource")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1 or amount > 1000:
        raise invalid("a whole number from 1 to 1000", field="amount")
    ensure_resources(character=character)
    CharacterResource.objects.filter(character=character, name=name).update(
        amount=F("amount") + amount
    )
    _moved(("resources", character.pk, name), amount)
    return CharacterResource.objects.get(character=character, name=name)


def expire_pools(*, session: GameSession, by: Seat | None) -> Event | None:
    """At the session's end whatever is left in every pool is lost."""
    stacks = list(Pool.objects.filter(session=session, remaining__gt=0))
    if not stacks:
        return None
    lost = sum(p.remaining for p in stacks)
    Pool.objects.filter(pk__in=[p.pk for p in stacks]).update(remaining=0)
    return record_pool_event(
        session_id=session.pk,
        actor=by,
        data={
            "action": "expire",
            "lost": lost,
            "pools": pools_changed([p.pk for p in stacks]),
            "text": f"The session ends: {lost} unused dice expire",
        },
    )


# --- telling withheld counts: at a roll's reveal, at the session's end ------------------------


def _notes(*, session_id: int, roll: int | None = None) -> list[Event]:
    notes = Event.objects.filter(
        session_id=session_id, kind="pool", data__action="counts", data__has_key="withheld"
    ).exclude(visibility=Visibility.PUBLIC)
    if roll is not None:
        notes = notes.filter(data__roll=roll)
    return list(notes)


def _current(keys: set[tuple[Any, ...]]) -> dict[str, Any]:
    """The counts of ``keys`` as they are now."""
    out: dict[str, Any] = {}
    pool_ids = sorted(k[1] for k in keys if k[0] == "pools")
    if pool_ids:
        out["pools"] = pools_changed(pool_ids)
    rows = [k for k in keys if k[0] == "resources"]
    if rows:
        found = CharacterResource.objects.filter(
            character_id__in={k[1] for k in rows}, name__in={k[2] for k in rows}
        ).order_by("character_id", "name")
        out["resources"] = [
            resource_snapshot(r) for r in found if ("resources", r.character_id, r.name) in rows
        ]
    return out


def _keys(notes: list[Event]) -> set[tuple[Any, ...]]:
    return {tuple(m["count"]) for note in notes for m in note.data["withheld"]}


def told_on_reveal(*, session_id: int, roll: int, record: Any) -> Event:
    """Store a roll's reveal (``record(counts)``) with the counts its spends moved, as the room
    sees them once it is revealed (other rolls' moves may still be withheld)."""
    keys = _keys(_notes(session_id=session_id, roll=roll))
    if not keys:
        return record({})
    current = _current(keys)
    # Another hidden roll's moves may touch the same counts: the reveal carries what the room
    # sees; seats that see more are told theirs after it.
    told = tell_counts(session_id=session_id, data=current, but_roll=roll)
    event = record({k: told[k] for k in COUNTS if k in told})
    if told is not current:
        record_counts(session_id=session_id, actor=event.actor, data=current, of=event.seq)
    return event


def withheld_counts(*, session_id: int) -> Any:
    """At the session's end: a function giving every withheld count as it is then (for the
    session.end event), read after whatever else the end changes."""
    keys = _keys(_notes(session_id=session_id))
    return lambda: _current(keys) if keys else {}
