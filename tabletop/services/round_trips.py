"""A socket's unit of work on PostgreSQL in as few round trips as its statements allow.

On PostgreSQL every statement is a round trip, and a room's changes wait for each other from the
session row's lock to the commit. Left to psycopg and Django's ``atomic``, a roll was four:
``BEGIN``, the statement that reads the seat and takes the seq, the event's ``INSERT`` and
``COMMIT``. Here the ``BEGIN`` goes with the unit's first statement of ``store``'s, and the
event's ``INSERT`` with the ``COMMIT``, each pair as one simple query (Django's cursors on
psycopg bind client-side: a query goes with its values written in, and a simple query may hold
several statements). A roll is two round trips, the fewest there can be: its dice are drawn
from the seq, so the seq must come back before the event can be written.

Django's ``atomic`` still owns the transaction (its savepoints, its ``on_commit``, its rollback):

- The ``BEGIN``: psycopg sends one of its own before a transaction's first statement unless the
  connection is in autocommit. For the first statement the driver's connection is put in
  autocommit (allowed while no transaction is open; no round trip) and the statement goes as
  ``BEGIN; ...``. From there the server is in the transaction and psycopg sends each statement
  as it comes; ``atomic``'s commit or rollback ends it (psycopg sends them by the server's
  state, not by its own autocommit), and ``atomic`` puts autocommit back as it always does.
- The ``INSERT``: the event's id is taken with its seq (``nextval`` in the same statement), so
  its row is whole without an answer from the server. The ``INSERT`` is parked and goes with the
  ``COMMIT``; any other statement of the unit sends it first (an execute wrapper), so every
  statement sees the event stored, as before.

Each of ``store``'s statements is prepared on the server once per connection and run by name
(``EXECUTE``), in every transaction, the socket's or not. The seat read that takes the seq joins
three tables, and the server planned it for every roll: 0.3 of the 0.5 ms it spent on the
statement. A prepared statement is planned once (for good after five runs, when PostgreSQL
settles on a plan for any seat). Its ``PREPARE`` goes in front of its first ``EXECUTE`` on a
connection, in the same query, so it costs no round trip either. A prepared statement belongs to
the server's session, which is the psycopg connection's, and outlives a rollback; so the names
prepared are kept with the connection object and go with it. ``TABLETOP["DB_PREPARED"]`` off
(``TABLETOP_DB_PREPARED=0``, for a pooler that hands a connection's transactions to other server
sessions) sends them as they are.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any
from weakref import WeakKeyDictionary

from django.conf import settings
from django.db import connection, transaction
from psycopg.pq import TransactionStatus


class Unit:
    """What one unit of work has still to send, and the event id it took with a seq. Made by
    ``sent_together`` and carried by the unit of work (``UnitOfWork.sent``) to the statements
    of ``store`` that take it."""

    def __init__(self) -> None:
        # No statement sent yet: the first of store's takes the BEGIN along.
        self.begin_waiting = True
        self.event_id: int | None = None  # taken with a seq, for the event stored with it
        self.parked: tuple[str, Sequence[Any]] | None = None
        self.sending = False  # (store's own statements pass the execute wrapper as they are)

    def before_statement(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        """Any other statement of the unit (the ORM's): psycopg's own ``BEGIN`` goes before it
        if none was sent, and a parked ``INSERT`` is sent before it."""
        if not self.sending:
            self.begin_waiting = False
            if self.parked is not None:
                self.send_parked(context["cursor"], commit=False)
        return execute(sql, params, many, context)

    def execute(self, cursor: Any, sql: str, params: Sequence[Any]) -> None:
        """Run one of store's statements on ``cursor``: with the ``BEGIN`` in front of it when
        it is the unit's first, after a parked ``INSERT`` when there is one."""
        if self.parked is not None:
            self.send_parked(cursor, commit=False)
        self.sending = True
        try:
            raw = connection.connection
            if self.begin_waiting and raw.info.transaction_status == TransactionStatus.IDLE:
                raw.autocommit = True  # psycopg sends no BEGIN of its own: it goes with this
                _execute_prepared(cursor, sql, params, first=["BEGIN"])
            else:
                _execute_prepared(cursor, sql, params)
        finally:
            self.sending = False
            self.begin_waiting = False

    def park(self, sql: str, params: Sequence[Any]) -> None:
        """Keep an ``INSERT`` whose row is whole (its id known) to go with the unit's next
        statement, or with its ``COMMIT``."""
        if self.parked is not None:
            with connection.cursor() as cursor:
                self.send_parked(cursor, commit=False)
        self.parked = (sql, list(params))

    def send_parked(self, cursor: Any, *, commit: bool) -> None:
        assert self.parked is not None
        sql, params = self.parked
        self.parked = None
        self.sending = True
        try:
            _execute_prepared(cursor, sql, params, then=["COMMIT"] if commit else [])
        finally:
            self.sending = False


def execute(cursor: Any, sql: str, params: Sequence[Any], sent: Unit | None) -> None:
    """Run one of store's statements: in ``sent``'s way when its unit sends them together;
    prepared on PostgreSQL."""
    if sent is not None:
        sent.execute(cursor, sql, params)
    elif connection.vendor == "postgresql":
        _execute_prepared(cursor, sql, params)
    else:
        cursor.execute(sql, params)


# Per PostgreSQL connection (psycopg's, kept as long as the connection object is), each of
# store's statements by name: True, prepared there; False, not known to be (a query that
# prepared it failed after the PREPARE, or the server did not know it: a pooler in front that
# hands out other sessions), so it is sent as it is on that connection from then on.
_prepared: WeakKeyDictionary[Any, dict[str, bool]] = WeakKeyDictionary()
_PLACEHOLDER = re.compile(r"%s")
# The server does not hold the statement (invalid_sql_statement_name), or cannot run it as
# prepared since a column it hands back changed type (a migration run under a serving process:
# "cached plan must not change result type", feature_not_supported).
NOT_AS_PREPARED = {"26000", "0A000"}


def _execute_prepared(
    cursor: Any,
    sql: str,
    params: Sequence[Any],
    *,
    first: Sequence[str] = (),
    then: Sequence[str] = (),
) -> None:
    """Run ``sql`` (its values marked ``%s``) as ``EXECUTE`` of a statement prepared on this
    connection, preparing it in the same query the first time; ``first`` and ``then``: plain
    statements sent before and after it in that query. The cursor is left on the statement's
    own answer."""
    known = _prepared.setdefault(connection.connection, {})
    name = _name(sql)
    prepared = known.get(name) if settings.TABLETOP["DB_PREPARED"] else False
    before = list(first)
    if prepared is False:
        run = sql
    else:
        if prepared is None:
            if "%" in _PLACEHOLDER.sub("", sql):
                raise ValueError("a statement to prepare has a % other than its values' marks")
            numbers = iter(range(1, len(params) + 1))
            marked = _PLACEHOLDER.sub(lambda _: f"${next(numbers)}", sql)
            before.append(f"PREPARE {name} AS {marked}")
        run = f"EXECUTE {name}({', '.join(['%s'] * len(params))})" if params else f"EXECUTE {name}"
    try:
        cursor.execute("; ".join([*before, run, *then]), params)
    except Exception as exc:
        if prepared and _sqlstate(exc) in NOT_AS_PREPARED:
            # The session is not the one they were prepared in, or the tables changed under
            # them: none of them is sent by name on this connection again.
            known.update(dict.fromkeys(known, False))
        if prepared is None:
            known[name] = False
        raise
    if prepared is None:
        known[name] = True
    for _ in before:
        cursor.nextset()  # the statement's own answer, after those in front of it


@cache  # (a handful of statements, named on every roll)
def _name(sql: str) -> str:
    """A prepared statement's name, as it shows in the server's logs: what it does, a hash of
    its text, and to which table (``store_update_<hash>_tabletop_gamesession``; a long table's
    name is cut at PostgreSQL's 63 characters, never the hash)."""
    verb = sql.split(None, 1)[0].lower()
    table = re.search(r'(?:UPDATE|INTO|FROM)\s+"?(\w+)', sql)
    name = f"store_{verb}_{hashlib.sha1(sql.encode()).hexdigest()[:12]}"
    return f"{name}_{table.group(1)}"[:63] if table else name


def _sqlstate(exc: BaseException) -> str | None:
    # Django hands on psycopg's error as the cause of its own.
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    return getattr(cause, "sqlstate", None)


@contextmanager
def sent_together() -> Iterator[Unit | None]:
    """Entered as a unit of work's own transaction begins (first thing in its outermost
    ``atomic`` block, before any statement): the ``Unit`` its statements of ``store`` are sent
    with, its ``BEGIN`` with the first and its last event's ``INSERT`` with the ``COMMIT``.
    ``None`` (each statement sent as it comes) elsewhere than PostgreSQL, or for a transaction
    psycopg would begin otherwise (an isolation level or read-only set)."""
    raw = connection.connection if connection.vendor == "postgresql" else None
    if (
        raw is None
        or raw.info.transaction_status != TransactionStatus.IDLE  # (something sent already)
        or raw.isolation_level is not None
        or raw.read_only is not None
    ):
        yield None
        return
    unit = Unit()
    with connection.execute_wrapper(unit.before_statement):
        yield unit
        # Not when the transaction is to be rolled back (a block inside it failed).
        if unit.parked is not None and not transaction.get_rollback():
            with connection.cursor() as cursor:
                unit.send_parked(cursor, commit=True)
