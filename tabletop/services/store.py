"""The roll's own statements, written once: the seat read and the event's ``INSERT``.

A roll at a busy table is a handful of statements on the one database thread of a process,
and the ORM's building of them (a queryset cloned, its joins resolved, its SQL compiled, every
time) cost as much as the statements themselves: half the database thread's time in a roll
(docs/benchmarks.md, "Many tables, and the most tables"). Here they are made once per
database from the models' own declarations (their tables, columns and converters) and run as
parameterised statements on Django's connection (its cursor, its transaction, its query log;
SQLite's statement cache keeps them prepared). The event's data is stored as the JSON text the
unit of work wrote to check its size, not encoded again. The seq's ``UPDATE ... RETURNING`` is
``events.take_seq``'s, the transaction is the unit of work's; the rest of the product reads and
writes through the ORM.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Field, Model
from django.db.models.expressions import Col
from django.db.models.signals import post_save
from django.utils import timezone
from django.utils.translation import gettext as _

from ..models import Campaign, Event, GameSession, Seat
from .errors import forbidden

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


class _EventInsert:
    """The event's ``INSERT``, handing back the new row's id."""

    def __init__(self) -> None:
        quote = connection.ops.quote_name
        self.fields = [f for f in Event._meta.concrete_fields if not f.primary_key]
        self.all_names = [f.attname for f in Event._meta.concrete_fields]
        self.data = Event._meta.get_field("data")
        # The data arrives as the JSON text the unit of work already wrote (to check its size):
        # PostgreSQL reads it as jsonb, SQLite keeps the text as it is.
        cast = "::jsonb" if connection.vendor == "postgresql" else ""
        marks = [f"%s{cast}" if f is self.data else "%s" for f in self.fields]
        self.returning = connection.features.can_return_columns_from_insert
        self.sql = (
            f"INSERT INTO {quote(Event._meta.db_table)} "
            f"({', '.join(quote(f.column) for f in self.fields)}) VALUES ({', '.join(marks)})"
            + (f" RETURNING {quote(Event._meta.pk.column)}" if self.returning else "")
        )


def _column(model: type[Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, Field)
    return field.column


@cache
def _seat_read(vendor: str) -> _SeatRead:
    return _SeatRead()


@cache
def _event_insert(vendor: str) -> _EventInsert:
    return _EventInsert()


def seat_at_table(seat_id: int) -> Seat:
    """The seat with its session and the session's campaign (``seat.session.campaign`` read
    with it, as ``select_related`` would). ``Seat.DoesNotExist`` if there is none."""
    read = _seat_read(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(read.sql, [seat_id])
        row = cursor.fetchone()
    if row is None:
        raise Seat.DoesNotExist(f"no seat {seat_id}")
    first, second = read.split
    seat = read.seat.instance(row[:first])
    session = read.session.instance(row[first:second])
    session.campaign = read.campaign.instance(row[second:])
    seat.session = session
    return seat


def seated(seat_id: int) -> Seat:
    """``seat_at_table`` for a seat that acts: one the GM removed from the table is refused."""
    seat = seat_at_table(seat_id)
    if seat.removed_at is not None:
        raise forbidden(_("the GM removed this seat from the table"))
    return seat


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
) -> Event:
    """Store one event whose ``data`` is written as ``text`` (its JSON); the saved ``Event``,
    as ``Event.objects.create`` would hand it back (and tell its ``post_save`` receivers)."""
    insert = _event_insert(connection.vendor)
    values: dict[str, Any] = {
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
    with connection.cursor() as cursor:
        cursor.execute(insert.sql, params)
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
