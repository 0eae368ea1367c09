"""Counts withheld from the room: what a hidden roll's spends moved, until the roll is revealed
or the session ends. Every rule of them lives here, read in one query.

A spend or use tied to a hidden roll moves its counts for its roller and the GM only: a
``counts`` event as hidden as the roll notes the moves (``withheld``) and the roll they wait
for. Everyone else keeps the counts as they were: public events carry the counts less every
pending move (``tell_public``), and each seat that sees some of them is told its own in a
``counts`` event of its own (``record_counts``); the reveal and the session's end tell them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from ..models import CharacterResource, Event, Seat, SessionStatus, Visibility
from ..models.pools import Pool
from ..selectors.events import Viewer, can_see
from ..selectors.pools import pool_snapshot, resource_snapshot
from .events import UnitOfWork

COUNTS = {"pools": "remaining", "resources": "amount"}  # what each list's items count


def count_key(key: str, item: dict[str, Any]) -> tuple[Any, ...]:
    """One count's key: ("pools", id) or ("resources", character, name)."""
    if key == "pools":
        return ("pools", item["id"])
    return ("resources", item["character"], item["name"])


@dataclass(frozen=True)
class Withheld:
    """Moves of counts made for a hidden roll, seen only by whoever sees that roll (``owner``:
    its roller)."""

    visibility: str
    owner: int | None
    roll: int | None
    moves: tuple[tuple[tuple[Any, ...], int], ...]
    actor: int | None = None  # who made the change the note is about
    noted_for: int | None = None  # the note's own owner (None: its actor)


def _notes(
    session_ids: Sequence[int], *, live: bool, revealed_too: bool = False
) -> dict[int, list[Withheld]]:
    """Every note of withheld moves not revealed yet (``revealed_too``: and those revealed),
    per session (``live``: of live sessions only): one query, the notes and the reveals
    together."""
    out: dict[int, list[Withheld]] = {pk: [] for pk in session_ids}
    found = Event.objects.filter(session_id__in=session_ids).filter(
        (
            Q(kind="pool", data__action="counts", data__has_key="withheld")
            & ~Q(visibility=Visibility.PUBLIC)
        )
        | Q(kind="roll.reveal")
    )
    if live:
        found = found.filter(session__status=SessionStatus.LIVE)
    rows = list(
        found.values_list(
            "session_id",
            "kind",
            "visibility",
            "owner_id",
            "actor_id",
            "data__roll",
            "data__withheld",
            "data__seq",
        )
    )
    revealed = {(r[0], r[7]) for r in rows if r[1] == "roll.reveal"}
    for session_id, kind, visibility, owner, actor, roll, moves, _seq in rows:
        if kind == "roll.reveal":
            continue
        if not revealed_too and roll is not None and (session_id, roll) in revealed:
            continue
        out[session_id].append(
            Withheld(
                visibility=visibility,
                owner=owner if owner is not None else actor,
                roll=roll,
                moves=tuple((tuple(m["count"]), int(m["moved"])) for m in moves),
                actor=actor,
                noted_for=owner,
            )
        )
    return out


def pending_withheld_of(
    session_ids: Sequence[int], *, but_roll: int | None = None
) -> dict[int, list[Withheld]]:
    """The moves still withheld from the room, per session: those of hidden rolls not revealed
    yet (nor ``but_roll``, being revealed), while the session is live (its end tells every
    count)."""
    found = _notes(session_ids, live=True)
    if but_roll is None:
        return found
    return {pk: [w for w in notes if w.roll != but_roll] for pk, notes in found.items()}


def pending_withheld(*, session_id: int, but_roll: int | None = None) -> list[Withheld]:
    return pending_withheld_of([session_id], but_roll=but_roll)[session_id]


def withheld_view(pending: list[Withheld], *, viewer: Viewer | None) -> dict[tuple[Any, ...], int]:
    """The withheld moves ``viewer`` (None: the room at large) does not see, summed by count."""
    unseen: dict[tuple[Any, ...], int] = {}
    for w in pending:
        if viewer is not None and can_see(
            visibility=w.visibility, actor_seat_id=w.owner, viewer=viewer
        ):
            continue
        for key, delta in w.moves:
            unseen[key] = unseen.get(key, 0) + delta
    return unseen


def seen_counts(
    key: str, items: list[dict[str, Any]], unseen: dict[tuple[Any, ...], int]
) -> list[dict[str, Any]]:
    """Pool or resource snapshots less the moves not seen yet."""
    field = COUNTS[key]
    return [
        {**item, field: item[field] - unseen[count_key(key, item)]}
        if unseen.get(count_key(key, item))
        else item
        for item in items
    ]


def _as_seen(data: dict[str, Any], unseen: dict[tuple[Any, ...], int]) -> dict[str, Any]:
    """``data``'s counts less the moves a viewer does not see yet (``unseen``)."""
    return {key: seen_counts(key, data[key], unseen) for key in COUNTS if data.get(key)}


def _told(data: dict[str, Any], pending: list[Withheld], only: set[Any] | None) -> dict[str, Any]:
    unseen = withheld_view(pending, viewer=None)
    if only is not None:
        unseen = {k: v for k, v in unseen.items() if k in only}
    if not unseen:
        return data
    return {**data, **_as_seen(data, unseen)}


def _seats(seat_ids: set[int]) -> dict[int, Seat]:
    return {s.pk: s for s in Seat.objects.filter(pk__in=seat_ids)}


def record_counts(
    uow: UnitOfWork,
    *,
    session_id: int,
    actor: Seat | None,
    data: dict[str, Any],
    of: int,
    pending: list[Withheld],
) -> None:
    """After a public event carrying counts (``data``: their true values; ``pending``: what is
    withheld once it is stored): each seat that sees some withheld move of them gets its own
    values, seen by it alone. Whether a seat is told depends on which hidden changes touched
    the counts, never on how far they moved them (a hidden roll's dice may decide that: its
    protection may shield no die)."""
    keys = {count_key(k, item) for k in COUNTS for item in data.get(k) or ()}
    touching = [w for w in pending if any(key in keys for key, _ in w.moves)]
    if not touching:
        return
    owners = {w.owner for w in touching if w.owner is not None}
    # The seats told: the owners and the table's GMs, read in one statement.
    seats = Seat.objects.filter(
        Q(pk__in=owners) | Q(session_id=session_id, role="gm", removed_at__isnull=True)
    )
    for seat in sorted(seats, key=lambda s: s.pk):
        viewer = Viewer(seat_id=seat.pk, is_gm=seat.role == "gm")
        sees = (
            can_see(visibility=w.visibility, actor_seat_id=w.owner, viewer=viewer) for w in touching
        )
        if any(sees):
            theirs = _as_seen(data, withheld_view(pending, viewer=viewer))
            uow.record(
                session_id=session_id,
                kind="pool",
                actor=actor,
                visibility=Visibility.SELF,
                owner=seat,
                data={"action": "counts", "of": of, **theirs, "text": "Counts as you see them"},
            )


def tell_hidden(
    uow: UnitOfWork,
    *,
    session_id: int,
    visibility: str,
    roller: Seat | None,
    actor: Seat | None,
    data: dict[str, Any],
    record: Callable[[dict[str, Any]], Event],
) -> Event:
    """Store a hidden change's event (``record(data)``) with the counts as its roller sees them
    (a blind change's: as the GM sees them). Without that, a roller would read in their own
    spend the price of another hidden roll they may not see. Each other seat of its audience
    that sees other hidden changes of those counts is told its own values after it; whether
    it is told depends on which changes it sees, never on how far they moved the counts."""
    keys = {count_key(k, item) for k in COUNTS for item in data.get(k) or ()}
    if not keys:
        return record(data)
    touching = [
        w for w in pending_withheld(session_id=session_id) if any(key in keys for key, _ in w.moves)
    ]
    if not touching:
        return record(data)
    roller_id = roller.pk if roller is not None else None
    audience = [
        Viewer(seat_id=seat.pk, is_gm=seat.role == "gm")
        for seat in sorted(
            Seat.objects.filter(
                Q(pk=roller_id) | Q(session_id=session_id, role="gm", removed_at__isnull=True)
            ),
            key=lambda s: (s.pk != roller_id, s.pk),  # the roller first
        )
    ]
    audience = [
        v for v in audience if can_see(visibility=visibility, actor_seat_id=roller_id, viewer=v)
    ]
    if not audience:
        return record(data)

    def sees(viewer: Viewer) -> tuple[bool, ...]:
        return tuple(
            can_see(visibility=w.visibility, actor_seat_id=w.owner, viewer=viewer) for w in touching
        )

    first = audience[0]
    event = record({**data, **_as_seen(data, withheld_view(touching, viewer=first))})
    seats = _seats({v.seat_id for v in audience[1:] if v.seat_id is not None})
    for viewer in audience[1:]:
        if viewer.seat_id is None or sees(viewer) == sees(first):
            continue
        uow.record(
            session_id=session_id,
            kind="pool",
            actor=actor,
            visibility=Visibility.SELF,
            owner=seats[viewer.seat_id],
            data={
                "action": "counts",
                "of": event.seq,
                **_as_seen(data, withheld_view(touching, viewer=viewer)),
                "text": "Counts as you see them",
            },
        )
    return event


def tell_public(
    uow: UnitOfWork,
    *,
    session_id: int,
    actor: Seat | None,
    data: dict[str, Any],
    moved: set[tuple[Any, ...]],
    seq: int | None,
) -> Event:
    """A public event carrying counts: those this change moved keep what is withheld out;
    those it set anew (a new round's dice) are what they are for everyone, and what was
    withheld of them is no more."""
    pending = pending_withheld(session_id=session_id)
    told = _told(data, pending, moved)
    event = uow.record(session_id=session_id, kind="pool", actor=actor, data=told, seq=seq)
    taken_back = _set_anew(
        uow, session_id=session_id, data=data, moved=moved, of=event.seq, pending=pending
    )
    if told is not data:
        record_counts(
            uow,
            session_id=session_id,
            actor=actor,
            data=data,
            of=event.seq,
            pending=taken_back,
        )
    return event


def _set_anew(
    uow: UnitOfWork,
    *,
    session_id: int,
    data: dict[str, Any],
    moved: set[Any],
    of: int,
    pending: list[Withheld],
) -> list[Withheld]:
    """Counts a public change set anew (not moved): what hidden rolls had moved of them is
    withheld no more. Each such note is answered by one as hidden, taking its moves back.
    Returns what is still withheld then."""
    keys = {count_key(k, item) for k in COUNTS for item in data.get(k) or ()} - moved
    if not keys:
        return pending
    # Per roll and audience, what is still withheld of these counts (earlier notes may have
    # taken some back already).
    held: dict[tuple[Any, ...], dict[tuple[Any, ...], int]] = {}
    for note in pending:
        group = (note.roll, note.visibility, note.noted_for, note.actor)
        for count, delta in note.moves:
            if count in keys:
                sums = held.setdefault(group, {})
                sums[count] = sums.get(count, 0) + delta
    backs = {g: [(k, -d) for k, d in sums.items() if d] for g, sums in held.items()}
    backs = {g: back for g, back in backs.items() if back}
    if not backs:
        return pending
    seats = _seats({s for g in backs for s in (g[2], g[3]) if s is not None})
    after = list(pending)
    for (roll, visibility, owner, actor), back in backs.items():
        uow.record(
            session_id=session_id,
            kind="pool",
            actor=seats.get(actor) if actor is not None else None,
            visibility=visibility,
            owner=seats.get(owner) if owner is not None else None,
            data={
                "action": "counts",
                "of": of,
                "roll": roll,
                "withheld": [{"count": list(k), "moved": d} for k, d in back],
                "text": "Counts set anew for the whole table",
            },
        )
        after.append(
            Withheld(
                visibility=visibility,
                owner=owner if owner is not None else actor,
                roll=roll,
                moves=tuple(back),
                actor=actor,
                noted_for=owner,
            )
        )
    return after


def withhold_moves(uow: UnitOfWork, *, note: dict[str, Any]) -> None:
    """Store a note of moves withheld (``note``: the event's fields), or, paid before the roll
    being made has its seq, keep it until it does (``tie_notes_to_roll``)."""
    if note["data"]["roll"] is None and uow.untied is not None:
        uow.untied.append(note)
    else:
        uow.record(**note)


def tie_notes_to_roll(uow: UnitOfWork, seq: int) -> None:
    """The roll being made has its seq: what was paid before it and what follows it in this
    change are about it (their notes wait for its reveal)."""
    uow.roll = seq
    for note in uow.untied or ():
        uow.record(**{**note, "data": {**note["data"], "roll": seq}})
    uow.untied = None


def _current(keys: set[tuple[Any, ...]]) -> dict[str, Any]:
    """The counts of ``keys`` as they are now."""
    out: dict[str, Any] = {}
    pool_ids = sorted(k[1] for k in keys if k[0] == "pools")
    if pool_ids:
        out["pools"] = [
            pool_snapshot(p) for p in Pool.objects.filter(pk__in=pool_ids).order_by("pk")
        ]
    rows = [k for k in keys if k[0] == "resources"]
    if rows:
        found = CharacterResource.objects.filter(
            character_id__in={k[1] for k in rows}, name__in={k[2] for k in rows}
        ).order_by("character_id", "name")
        out["resources"] = [
            resource_snapshot(r) for r in found if ("resources", r.character_id, r.name) in rows
        ]
    return out


def record_reveal(
    uow: UnitOfWork, *, session_id: int, roll: int, record: Callable[[dict[str, Any]], Event]
) -> Event:
    """Store a roll's reveal (``record(counts)``) with the counts its spends moved, as the room
    sees them once it is revealed (other rolls' moves may still be withheld)."""
    pending = pending_withheld(session_id=session_id)
    keys = {key for w in pending if w.roll == roll for key, _ in w.moves}
    if not keys:
        return record({})
    current = _current(keys)
    # Another hidden roll's moves may touch the same counts: the reveal carries what the room
    # sees; seats that see more are told theirs after it.
    others = [w for w in pending if w.roll != roll]
    told = _told(current, others, None)
    event = record({k: told[k] for k in COUNTS if k in told})
    if told is not current:
        record_counts(
            uow,
            session_id=session_id,
            actor=event.actor,
            data=current,
            of=event.seq,
            pending=others,
        )
    return event


def withheld_counts(*, session_id: int) -> Callable[[], dict[str, Any]]:
    """At the session's end: a function giving every count ever withheld, as it is then (for
    the session.end event), read after whatever else the end changes."""
    keys = {
        key
        for w in _notes([session_id], live=False, revealed_too=True)[session_id]
        for key, _ in w.moves
    }
    return lambda: _current(keys) if keys else {}
