"""Recording events: the next ``seq`` and the row in the caller's transaction, published once
it commits, by one route.

Every service that records is handed the ``UnitOfWork`` it records in. A unit of work the
room socket runs (``unit_of_work``) hands the events it stored back to its caller, which
publishes them from its own event loop at once; a change called alone (views, the admin,
commands) opens a unit of its own (``change(None)``), published when its transaction
commits."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection, transaction
from django.utils.translation import gettext as _

from ..models import Event, GameSession, Seat, Visibility
from ..protocol.events import with_log_line
from ..selectors.events import dumps, event_message, for_everyone, redacted
from . import round_trips, store
from .errors import ServiceError, invalid
from .store import Locked, take_seq

log = logging.getLogger(__name__)


# An event's data, as JSON, is at most this big: well under the 1 MiB a socket can send, with
# room for the envelope and the redacted copies.
MAX_EVENT_BYTES = 256 * 1024
# The most dice one roll at the table lists: a listed die takes 46 to 90 bytes of an event, so
# more could not be kept. A request expected to list more is refused before a die is drawn,
# and a roll whose dice happen to draw more stops there: a refused roll costs at most this many
# draws, never the engines' 10,000.
MAX_ROLL_DICE = MAX_EVENT_BYTES // 64


def too_large(size: int, *, kind: str) -> ServiceError:
    sizes = {"size": size // 1024, "most": MAX_EVENT_BYTES // 1024}
    if kind == "roll":
        message = (
            _(
                "this roll would make an event of %(size)d KiB; the table keeps events under "
                "%(most)d KiB so every screen can show them. Nothing was stored. The dice are "
                "drawn for the next seq with your client seed, so the same request with the same "
                "client seed is refused again: roll fewer dice."
            )
            % sizes
        )
    else:
        message = (
            _(
                "this change would make an event of %(size)d KiB; the table keeps events under "
                "%(most)d KiB so every screen can show them. Nothing was stored."
            )
            % sizes
        )
    error = ServiceError("too-large", message)
    # The work was done (the dice drawn) though nothing is kept: it counts against the budgets.
    error.cost = size
    return error


def room_group(session_id: int) -> str:
    return f"room.{session_id}"


def next_seq(*, session_id: int, sent: round_trips.Unit | None = None) -> int:
    """Take the session's next sequence number. Holds the session row's write lock until commit,
    so events of one session are numbered in commit order, across processes."""
    return take_seq(session_id=session_id, sent=sent).seq


def lock_session(*, session_id: int) -> Locked:
    """Lock the session row without taking a seq (a change whose first events are not its
    own: a roll's payments come before it), reading its status and table state fresh."""
    status, table_state = (
        GameSession.objects.select_for_update()
        .values_list("status", "table_state")
        .get(pk=session_id)
    )
    return Locked(0, status, table_state)


class UnitOfWork:
    """The events one unit of work stores, and what its current change has moved of the counts.

    Passed to every service that records (``uow.record(...)``); its caller publishes
    ``events`` once the unit's transaction commits (``unit_of_work`` hands them back,
    ``change`` publishes those of a unit it opened itself). A change begins with ``begin``:
    nothing of an earlier change in the unit carries over."""

    def __init__(self, *, joined: bool, sent: round_trips.Unit | None = None) -> None:
        self.events: list[Event] = []
        # How the unit's statements of ``store`` go to the database (on PostgreSQL, its BEGIN
        # with the first and its event's INSERT with its COMMIT: ``round_trips``); None: each
        # as it comes. The services that read the seat or take a seq pass it on.
        self.sent = sent
        # Whether the unit runs in a transaction of its own (the socket's): its changes then
        # take no savepoint (a refusal ends the whole unit, and a savepoint's two statements
        # would be two more round trips with the session locked).
        self.joined = joined
        # What the change has moved so far, count by count (``count_key``); the seq of the roll
        # it made; the notes of what a roll's payments moved, waiting for the roll's seq.
        self.moves: dict[tuple[Any, ...], int] = {}
        self.roll: int | None = None
        self.untied: list[dict[str, Any]] | None = None

    def begin(self, *, roll_being_made: bool = False) -> None:
        """A change begins (its session locked from here): nothing of one before it carries
        over. While a roll is being made, notes of what its payments moved wait for its seq
        (``tie_notes_to_roll``)."""
        self.moves = {}
        self.roll = None
        self.untied = [] if roll_being_made else None

    def record(
        self,
        *,
        session_id: int,
        kind: str,
        actor: Seat | None,
        data: dict[str, Any],
        visibility: str = Visibility.PUBLIC,
        seq: int | None = None,
        owner: Seat | None = None,
    ) -> Event:
        """Store one event (taking the next seq unless the caller already took it for the
        dice), to be published once the unit's transaction commits."""
        # The line people read in the log is the catalogue's, in the players' words.
        data = with_log_line(kind=kind, data=data, actor=actor.name if actor else "")
        text = dumps(data)
        if "\\u0000" in text:
            # Text with NUL characters cannot be stored (PostgreSQL refuses it): refuse it.
            raise invalid(_("text may not contain NUL characters"), field="text")
        if len(text) > MAX_EVENT_BYTES:
            # Every stored event must reach every socket (a frame is at most 1 MiB): refuse it
            # before anything is stored. Nothing is kept, not even its seq.
            raise too_large(len(text), kind=kind)
        if seq is None:
            seq = next_seq(session_id=session_id, sent=self.sent)
        event = store.save_event(
            session_id=session_id,
            seq=seq,
            kind=kind,
            actor=actor,
            visibility=visibility,
            data=data,
            text=text,
            owner=owner if owner is not None and owner != actor else None,
            sent=self.sent,
        )
        self.events.append(event)
        return event

    def moved(self, key: tuple[Any, ...], delta: int) -> None:
        self.moves[key] = self.moves.get(key, 0) + delta

    def published(self) -> list[Event]:
        """The unit's events, in seq order, for its caller to publish once committed."""
        return sorted(self.events, key=lambda e: e.seq)


def sent_by(unit: UnitOfWork | None) -> round_trips.Unit | None:
    """How a service's reads before its change go to the database: its unit's way (``sent``)
    when it runs in one. (A read of the unit, not a change.)"""
    return unit.sent if unit is not None else None


T = TypeVar("T")


@contextmanager
def change(uow: UnitOfWork | None, *, roll_being_made: bool = False) -> Iterator[UnitOfWork]:
    """One change, begun afresh in the caller's unit of work (no savepoint in a unit of its
    own transaction), or, called alone (a view, the admin, a command), in a unit of its own:
    a transaction, or a savepoint of the caller's, whose events are published when it
    commits."""
    if uow is not None and uow.joined:
        uow.begin(roll_being_made=roll_being_made)
        yield uow
        return
    own = uow or UnitOfWork(joined=False)
    kept = len(own.events)
    try:
        with transaction.atomic():
            own.begin(roll_being_made=roll_being_made)
            yield own
            if uow is None:
                transaction.on_commit(partial(publish_on_commit, own.published()))
    except BaseException:
        del own.events[kept:]  # rolled back with its savepoint: never to be published
        raise


def unit_of_work(work: Callable[[UnitOfWork], T]) -> tuple[T, list[Event]]:
    """Run ``work`` as one transaction (the services lock the session and take seqs in it) and
    hand back what it returned and every event it stored, committed, in seq order, for the
    caller to publish."""
    if connection.in_atomic_block:
        raise RuntimeError("a unit of work is a transaction of its own")
    # On PostgreSQL its BEGIN goes with its first statement and its COMMIT with its last event.
    with transaction.atomic(), round_trips.sent_together() as sent:
        uow = UnitOfWork(joined=True, sent=sent)
        result = work(uow)
    return result, uow.published()


_sending: set[asyncio.Task[None]] = set()  # keeps scheduled sends alive until done


def room_payload(event: Event) -> dict[str, Any]:
    """The channel-layer message for an event: the full event for redaction, and its JSON as
    every socket that may see it sends it (and, for hidden events, the redacted JSON), so a room
    of 200 serialises an event once, not 200 times."""
    return message_payload(event_message(event))


def message_payload(message: dict[str, Any]) -> dict[str, Any]:
    """``room_payload`` for an event already read as a message (a gap filled from the store)."""
    public = for_everyone(message)
    payload: dict[str, Any] = {"type": "room.event", "event": message, "text": dumps(public)}
    if public["visibility"] != Visibility.PUBLIC:
        payload["hidden_text"] = dumps(redacted(public))
    return payload


def notice_on_commit(*, session_id: int, notice: dict[str, Any], seats: list[int]) -> None:
    """Once the change commits, tell the room's sockets that ask for notices (``notices=1``):
    the GM's and those of ``seats``. Nothing is stored: a notice lost (Redis away) is a screen
    that shows the change on its next load."""

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        message = {"type": "room.notice", "notice": notice, "seats": seats}
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            try:
                async_to_sync(layer.group_send)(room_group(session_id), message)
            except Exception:
                log.exception("telling the room a notice failed")
        else:  # called on an event loop's own thread (a test's): don't block it
            task = loop.create_task(layer.group_send(room_group(session_id), message))
            _sending.add(task)
            task.add_done_callback(_sending.discard)

    transaction.on_commit(send)


def publish_on_commit(events: list[Event]) -> None:
    """Send committed events to their rooms from synchronous code (a view, the admin, a
    command). The room socket publishes its own units of work with ``hub.publish`` instead."""
    layer = get_channel_layer()
    if layer is None:
        return
    for event in events:
        group, payload = room_group(event.session_id), room_payload(event)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            try:
                async_to_sync(layer.group_send)(group, payload)
            except Exception:
                # The change is committed; a lost publish (Redis away) is filled from the store
                # by every process's room watch (tabletop/hub.py), so the caller still succeeds.
                log.exception("publishing an event to the room failed")
        else:  # called on an event loop's own thread (a test's): don't block it
            task = loop.create_task(layer.group_send(group, payload))
            _sending.add(task)
            task.add_done_callback(_sending.discard)
