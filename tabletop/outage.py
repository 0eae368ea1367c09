"""A server process while its database is away, and as it comes back.

The first request or socket action that meets the outage finds out (its connection fails, or
the pool gives up waiting for one: ``TABLETOP_DB_POOL_TIMEOUT``) and asks the database
directly, once, whether it answers at all. If not, the process remembers that it is away:
every page answers 503 and every socket action ``busy`` without waiting for a connection;
each asks the database again directly first (a refused connection takes a millisecond; one
caller at a time, as a host that does not answer at all takes ``connect_timeout``, 2 s, to
give up on). The first answer after the outage starts the connection pool afresh, so that
action gets a new connection at once, not a dead one, nor one the pool would try to make
only after its back-off.

SQLite is a file: it is never away.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.db import InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
# In English here; readers get them through gettext (a socket's close reason stays English: it
# is short by rule, and a translation may not fit).
MESSAGE = gettext_noop(
    "the table's database is not answering just now; nothing was changed. Try again soon."
)
BUSY_MESSAGE = gettext_noop(
    "the table's database is too busy just now; nothing was changed. Try again soon."
)


class DatabaseAway(Exception):
    """The database is known to be away: refuse at once."""


class Outage:
    """What this process knows of its database: answering, or away since when."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.since: float | None = None
        self._asking = False

    def check(self) -> None:
        """Before database work: while the database is known to be away, ask it directly
        whether it is back (a refused connection takes a millisecond); DatabaseAway if not.
        One caller asks at a time: the others are refused at once meanwhile (a host that does
        not answer at all takes ``connect_timeout`` to give up on)."""
        if self.since is None:
            return
        with self._lock:
            if self.since is None:
                return
            if self._asking:
                raise DatabaseAway()
            self._asking = True
        try:
            back = answering()
        finally:
            self._asking = False
        if not back:
            raise DatabaseAway()
        self.back()

    def failed(self) -> bool:
        """After a connection or database fault: whether the database is away (asked
        directly; then remembered), or this was a fault of one connection or of a busy pool."""
        if answering():
            if self.since is not None:
                self.back()
            return False
        with self._lock:
            if self.since is None:
                self.since = time.monotonic()
                log.warning("the database is not answering: refusing at once until it does")
        return True

    def back(self) -> None:
        with self._lock:
            since, self.since = self.since, None
        if since is not None:
            log.warning("the database answers again after %.1f s", time.monotonic() - since)
            fresh_pools()


outage = Outage()


def answering() -> bool:
    """Whether the default database takes a new connection now (a direct one, never from the
    pool, at most the connection timeout)."""
    conn = connections["default"]
    if conn.vendor != "postgresql":
        return True
    params = conn.get_connection_params()
    params["autocommit"] = True
    try:
        # Every Django backend names its DB-API module ``Database``; the stubs leave it out.
        with conn.Database.connect(**params) as raw:  # type: ignore[attr-defined]
            raw.execute("SELECT 1")
    except Exception:
        return False
    return True


def fresh_pools() -> None:
    """Start every connection pool afresh: connections made before the outage are dead, and a
    pool that kept failing to connect waits longer and longer before it tries again."""
    for conn in connections.all(initialized_only=True):
        close_pool = getattr(conn, "close_pool", None)
        if close_pool is not None and getattr(conn, "pool", None) is not None:
            try:
                close_pool()
            except Exception:  # a pool another thread closed a moment ago
                log.debug("closing a pool failed", exc_info=True)


def after_fault() -> bool:
    """After a connection fault: whether the database is away. When it is not, the next
    connection is a new one all the same: a pool that could not connect (and so waits longer
    and longer before it tries again) starts afresh; a pool that was only full is left alone."""
    if outage.failed():
        return True
    conn = connections["default"]
    pool = getattr(conn, "pool", None)
    if pool is not None and pool.get_stats().get("pool_size", 0) < pool.max_size:
        fresh_pools()
    return False


def run_with_database(work: Callable[[], Any]) -> Any:
    """Run ``work`` (the database work of one unit, on the thread that serves it) unless the
    database is known to be away. A connection that fails before any statement ran (the
    database restarted since it was made, or the pool kept failing to connect) is replaced
    once. DatabaseAway when the database is away."""
    outage.check()
    conn = connections["default"]
    try:
        conn.ensure_connection()
    except (OperationalError, InterfaceError):
        conn.close()
        if after_fault():
            raise DatabaseAway() from None
        conn.ensure_connection()  # once more on a new connection: nothing has run yet
    try:
        return work()
    except (OperationalError, InterfaceError):
        conn.close()  # whatever it was, the next unit starts on a new connection
        if after_fault():
            raise DatabaseAway() from None
        raise


def unavailable(request: HttpRequest, *, away: bool = True) -> HttpResponse:
    """The 503 a page or a JSON endpoint answers while the database is away (or too busy)."""
    message = _(MESSAGE) if away else _(BUSY_MESSAGE)
    accept = request.headers.get("Accept", "")
    if "json" in accept or "json" in (request.content_type or ""):
        response: HttpResponse = JsonResponse(
            {"error": {"code": "unavailable", "message": message}}, status=503
        )
    else:
        text = message[0].upper() + message[1:]
        response = HttpResponse(
            "<!doctype html><html lang=en><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width, initial-scale=1'>"
            f"<title>Back in a moment</title><h1>Back in a moment</h1><p>{text}</p>",
            status=503,
        )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


class DatabaseOutageMiddleware:
    """Pages answer 503 at once while the database is known to be away, and a request that
    meets a database fault answers 503 too (never a 500 or a hang)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self._async = iscoroutinefunction(get_response)
        if self._async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self._async:
            return self.__acall__(request)
        try:
            outage.check()
        except DatabaseAway:
            return unavailable(request)
        return self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        if outage.since is not None:  # only then can the check take time (it may ask)
            try:
                await sync_to_async(outage.check, thread_sensitive=False)()
            except DatabaseAway:
                return unavailable(request)
        return await self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> Any:
        if isinstance(exception, DatabaseAway):
            return unavailable(request)
        if isinstance(exception, (OperationalError, InterfaceError)):
            # a lost connection, a pool that gave up waiting, a statement past its time
            return unavailable(request, away=after_fault())
        return None
