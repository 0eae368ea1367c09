"""The roll's own statements, written once: the seat read, the seq's lock and the event's
``INSERT``.

A roll at a busy table is a handful of statements on the one database thread of a process,
and the ORM's building of them (a queryset cloned, its joins resolved, its SQL compiled, every
time) cost as much as the statements themselves: half the database thread's time in a roll
(docs/benchmarks.md, "Many tables, and the most tables"). Here they are made once per
database from the models' own declarations (their tables, columns and converters) and run as
parameterised statements on Django's connection (its cursor, its transaction, its query log;
SQLite's statement cache keeps them prepared). The event's data is stored as the JSON text the
unit of work wrote to check its size, not encoded again. The transaction is the unit of
work's; the rest of the product reads and writes through the ORM.

On PostgreSQL every statement is a round trip, and a room's rolls wait for each other from the
session row's lock to the commit. A roll there reads its seat and takes its seq in one statement
(``seated_taking_seq``); in a socket's unit of work that statement carries the ``BEGIN`` and
takes the event's id as well, and the event's ``INSERT`` goes with the ``COMMIT``
(``round_trips``): two round trips a roll, where Django's ``atomic`` alone made it four. The dice
are drawn from the seq, so the seq comes back before the event can be written: two is the least.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import Field, Model
from django.db.models.expressions import Col
from django.db.models.signals import post_save
from django.utils import timezone
from django.utils.translation import gettext as _

from ..models import Campaign, Event, GameSession, Seat
from . import round_trips
from .errors import forbidden
from .round_trips import Unit

Converter = Callable[[Any, Any, Any], Any]


class _Columns:
    """One model's columns in a statement: what is selected, and how each value read back
    becomes the field's Python value (the converters the ORM would apply)."""

    def __init__(self, model: type[Model], alias: str) -> None:
        self.model = model
        self.fields: list[Field[Any, Any]] = list(model._meta.concrete_fields)
        self.names = [field.attname for field in self.fields]
        quote = connection.ops.quote_name
        self.select = [f"{alias}.{quote(field.column)}" for field in self.fields]
        self.converters: list[tuple[int, Col, list[Converter]]] = []
        for i, field in enumerate(self.fields):
            col = field.get_col(alias)
            found = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
            if found:
                self.converters.append((i, col, found))

    def instance(self, values: Sequence[Any]) -> Any:
        row = list(values)
        for i, col, converters in self.converters:
            for convert in converters:
                row[i] = convert(row[i], col, connection)
        return self.model.from_db(connection.alias, self.names, row)


class _SeatRead:
    """A seat, its session and the session's campaign, in one statement by the seat's id."""

    def __init__(self) -> None:
        quote = connection.ops.quote_name
        self.seat = _Columns(Seat, "s")
        self.session = _Columns(GameSession, "g")
        self.campaign = _Columns(Campaign, "c")
        columns = self.seat.select + self.session.select + self.campaign.select
        self.sql = (
            f"SELECT {', '.join(columns)} FROM {quote(Seat._meta.db_table)} s "
            f"INNER JOIN {quote(GameSession._meta.db_table)} g "
            f"ON g.{quote(GameSession._meta.pk.column)} = s.{quote(_column(Seat, 'session'))} "
            f"INNER JOIN {quote(Campaign._meta.db_table)} c "
            f"ON c.{quote(Campaign._meta.pk.column)} = g.{quote(_column(GameSession, 'campaign'))} "
            f"WHERE s.{quote(Seat._meta.pk.column)} = %s"
        )
        self.split = (len(self.seat.names), len(self.seat.names) + len(self.session.names))


class _SeatTakingSeq(_SeatRead):
    """PostgreSQL's: the seat read of ``_SeatRead`` as the ``UPDATE`` that takes the session's
    next seq (and so locks its row; the seat's and the campaign's rows are only read), every
    column handed back as it is after the update; with ``event_id``, the id of the event to be
    stored with the seq after them."""

    def __init__(self, *, event_id: bool) -> None:
        super().__init__()
        quote = connection.ops.quote_name
        columns = self.seat.select + self.session.select + self.campaign.select
        last_seq = quote(_column(GameSession, "last_seq"))
        session_of_seat = quote(_column(Seat, "session"))
        campaign_of_session = quote(_column(GameSession, "campaign"))
        self.sql = (
            f"UPDATE {quote(GameSession._meta.db_table)} g SET {last_seq} = g.{last_seq} + 1 "
            f"FROM {quote(Seat._meta.db_table)} s, {quote(Campaign._meta.db_table)} c "
            f"WHERE s.{quote(Seat._meta.pk.column)} = %s "
            f"AND g.{quote(GameSession._meta.pk.column)} = s.{session_of_seat} "
            f"AND c.{quote(Campaign._meta.pk.column)} = g.{campaign_of_session} "
            f"RETURNING {', '.join(columns + ([_next_event_id()] if event_id else []))}"
        )


class _EventInsert:
    """The event's ``INSERT``, handing back the new row's id; with ``event_id``, of a row whose
    id was taken with its seq, handing back nothing."""

    def __init__(self, *, event_id: bool) -> None:
        quote = connection.ops.quote_name
        self.fields = [f for f in Event._meta.concrete_fields if event_id or not f.primary_key]
        self.all_names = [f.attname for f in Event._meta.concrete_fields]
        self.data = Event._meta.get_field("data")
        # The data arrives as the JSON text the unit of work already wrote (to check its size):
        # PostgreSQL reads it as jsonb, SQLite keeps the text as it is.
        cast = "::jsonb" if connection.vendor == "postgresql" else ""
        marks = [f"%s{cast}" if f is self.data else "%s" for f in self.fields]
        self.returning = connection.features.can_return_columns_from_insert and not event_id
        self.sql = (
            f"INSERT INTO {quote(Event._meta.db_table)} "
            f"({', '.join(quote(f.column) for f in self.fields)}) VALUES ({', '.join(marks)})"
            + (f" RETURNING {quote(Event._meta.pk.column)}" if self.returning else "")
        )


def _next_event_id() -> str:
    """PostgreSQL's expression taking the next event's id (its column's sequence)."""
    table = connection.ops.quote_name(Event._meta.db_table)
    return f"nextval(pg_get_serial_sequence('{table}', '{Event._meta.pk.column}'))"


def _column(model: type[Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, Field)
    return field.column


@cache
def _seat_read(vendor: str) -> _SeatRead:
    return _SeatRead()


@cache
def _seat_taking_seq(vendor: str, event_id: bool) -> _SeatTakingSeq:
    return _SeatTakingSeq(event_id=event_id)


@cache
def _event_insert(vendor: str, event_id: bool) -> _EventInsert:
    return _EventInsert(event_id=event_id)


def _read_seat(read: _SeatRead, seat_id: int, sent: Unit | None) -> Seat:
    """Run ``read`` (a seat read, or the one that also takes the seq) for one seat."""
    with connection.cursor() as cursor:
        round_trips.execute(cursor, read.sql, [seat_id], sent)
        row = cursor.fetchone()
    if row is None:
        raise Seat.DoesNotExist(f"no seat {seat_id}")
    first, second = read.split
    last = second + len(read.campaign.names)
    seat = read.seat.instance(row[:first])
    session = read.session.instance(row[first:second])
    session.campaign = read.campaign.instance(row[second:last])
    seat.session = session
    _taken_event_id(row[last:], sent)
    return seat


def _taken_event_id(rest: Sequence[Any], sent: Unit | None) -> None:
    """Keep the event id a statement took with its seq (if it took one) for the event."""
    if sent is not None:
        sent.event_id = rest[0] if rest else None


class Locked(NamedTuple):
    """What the session row said as a change locked it, and the seq it took (0: none yet;
    seqs start at 1)."""

    seq: int
    status: str
    table_state: Any


def take_seq(*, session_id: int, sent: Unit | None = None) -> Locked:
    """``next_seq``, with the session's status and table state read in the same statement, so
    a change can check and read what it depends on before the lock (one statement earlier,
    with the row not locked) and again, fresh, as it locks it. A busy room's changes wait for
    each other only from here to their commit: every statement in that span is a round trip
    the other processes' changes of the room wait through."""
    locked, _ = _taking_seq(session_id, sent, talk=False)
    return locked


def take_seq_reading_talk(*, session_id: int, sent: Unit | None = None) -> tuple[Locked, Any]:
    """``take_seq``, with the talk settings of the session's campaign read in the same
    statement, as the lock found them: the GM changes them with the session locked
    (``chat.set_talk``), so a message reads them in the order of the log, for no round trip
    more."""
    return _taking_seq(session_id, sent, talk=True)


def _taking_seq(session_id: int, sent: Unit | None, *, talk: bool) -> tuple[Locked, Any]:
    if not connection.in_atomic_block:
        raise RuntimeError("take_seq must run inside transaction.atomic()")
    quote = connection.ops.quote_name
    table = GameSession._meta.db_table
    state = GameSession._meta.get_field("table_state")
    talk_field = Campaign._meta.get_field("talk")
    talk_read = ""
    if talk:  # the session's campaign's, by a subquery (each database's RETURNING takes one)
        campaigns, campaign_id = quote(Campaign._meta.db_table), quote(Campaign._meta.pk.column)
        of_session = f"{table}.{quote(_column(GameSession, 'campaign'))}"
        talk_read = (
            f", (SELECT c.{quote(talk_field.column)} FROM {campaigns} c "
            f"WHERE c.{campaign_id} = {of_session})"
        )
    event_id = f", {_next_event_id()}" if sent is not None else ""
    with connection.cursor() as cursor:
        round_trips.execute(
            cursor,
            f"UPDATE {table} SET last_seq = last_seq + 1 WHERE id = %s "
            f"RETURNING last_seq, status, {state.column}{talk_read}{event_id}",
            [session_id],
            sent,
        )
        row = cursor.fetchone()
    if row is None:
        raise GameSession.DoesNotExist(session_id)
    rest = row[4:] if talk else row[3:]
    _taken_event_id(rest, sent)
    # Django passes no expression when it converts a raw value itself; the stubs require one.
    table_state = state.from_db_value(row[2], None, connection)  # type: ignore[arg-type]
    if not talk:
        return Locked(int(row[0]), row[1], table_state), None
    talk_value = talk_field.from_db_value(row[3], None, connection)  # type: ignore[arg-type]
    return Locked(int(row[0]), row[1], table_state), talk_value


def seat_at_table(seat_id: int, *, sent: Unit | None = None) -> Seat:
    """The seat with its session and the session's campaign (``seat.session.campaign`` read
    with it, as ``select_related`` would). ``Seat.DoesNotExist`` if there is none."""
    return _read_seat(_seat_read(connection.vendor), seat_id, sent)


def seated(seat_id: int, *, sent: Unit | None = None) -> Seat:
    """``seat_at_table`` for a seat that acts: one the GM removed from the table is refused."""
    return _acting(seat_at_table(seat_id, sent=sent))


def _acting(seat: Seat) -> Seat:
    if seat.removed_at is not None:
        raise forbidden(_("the GM removed this seat from the table"))
    return seat


def seated_taking_seq(seat_id: int, *, sent: Unit | None = None) -> Seat:
    """``seated``, with the seat's session locked and its next seq taken
    (``seat.session.last_seq``; its status and table state read as it was locked). On
    PostgreSQL one statement; elsewhere the seat read, then ``take_seq`` (SQLite's
    ``RETURNING`` cannot name the tables an ``UPDATE`` reads from, and its statements are calls
    in the process, not round trips). A refusal after it (the seat removed, the session not
    live) rolls the seq back with the transaction."""
    if connection.vendor != "postgresql":
        seat = seated(seat_id, sent=sent)
        locked = take_seq(session_id=seat.session_id, sent=sent)
        session = seat.session
        session.last_seq, session.status, session.table_state = locked
        return seat
    if not connection.in_atomic_block:
        raise RuntimeError("seated_taking_seq must run inside transaction.atomic()")
    read = _seat_taking_seq(connection.vendor, sent is not None)
    return _acting(_read_seat(read, seat_id, sent))


def save_event(
    *,
    session_id: int,
    seq: int,
    kind: str,
    actor: Seat | None,
    visibility: str,
    data: dict[str, Any],
    text: str,
    owner: Seat | None,
    sent: Unit | None = None,
) -> Event:
    """Store one event whose ``data`` is written as ``text`` (its JSON); the saved ``Event``,
    as ``Event.objects.create`` would hand it back (and tell its ``post_save`` receivers)."""
    event_id = sent.event_id if sent is not None else None
    insert = _event_insert(connection.vendor, event_id is not None)
    values: dict[str, Any] = {
        "id": event_id,
        "session_id": session_id,
        "seq": seq,
        "kind": kind,
        "actor_id": actor.pk if actor is not None else None,
        "actor_name": actor.name if actor is not None else "",
        "owner_id": owner.pk if owner is not None else None,
        "visibility": visibility,
        "data": text,
        "created_at": timezone.now(),  # auto_now_add
    }
    params = [
        text if f is insert.data else f.get_db_prep_save(values[f.attname], connection)
        for f in insert.fields
    ]
    if sent is not None and event_id is not None:
        sent.event_id = None  # (one event a seq)
        sent.park(insert.sql, params)  # sent with the next statement or the COMMIT
        pk = event_id
    else:
        with connection.cursor() as cursor:
            round_trips.execute(cursor, insert.sql, params, sent)
            pk = cursor.fetchone()[0] if insert.returning else cursor.lastrowid
    values.update(id=pk, data=data)
    event = Event.from_db(connection.alias, insert.all_names, [values[n] for n in insert.all_names])
    if actor is not None:
        event.actor = actor
    if owner is not None:
        event.owner = owner
    post_save.send(
        sender=Event, instance=event, created=True, update_fields=None, raw=False,
        using=connection.alias,
    )  # fmt: skip
    return event
