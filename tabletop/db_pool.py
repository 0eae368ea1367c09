"""How a pooled PostgreSQL connection is checked when it is taken from the pool.

Every unit of work on a socket's database thread takes a connection from the pool and gives it
back (``CONN_MAX_AGE`` is 0 with a pool). psycopg_pool's own check (``check_connection``, which
Django installs for ``conn_health_checks``) asks the server with an empty query each time: one
round trip more for every roll (five, not four), while the pool's connections are nearly always
fine. A server that restarted, or ended a connection, has told the connection so (its error
message, then the end of the stream) or the kernel has (a reset): either way the connection's
socket has something to read while it lies in the pool, where nothing else reads it. So a
connection whose socket is quiet is taken as it is, and only one with something waiting is asked;
a dead one fails that check and the pool makes a new one in its place, as before. What this cannot
see (a host gone without a word, no reset) the unit's first statement meets, as it would have met
it a moment later anyway; ``tabletop/outage.py`` takes it from there.
"""

from __future__ import annotations

import select
from typing import Any

from django.db.backends.signals import connection_created
from django.dispatch import receiver
from psycopg import pq
from psycopg_pool import ConnectionPool

from . import adapters


def check_when_taken(conn: Any) -> None:
    """psycopg_pool's ``check``: raise if ``conn`` cannot be used (the pool then drops it and
    makes another); ask the server only when its socket shows it has said something."""
    if conn.closed or conn.pgconn.status != pq.ConnStatus.OK or _said_something(conn):
        ConnectionPool.check_connection(conn)


@receiver(connection_created, dispatch_uid="tabletop.db_pool.quiet_check")
def _check_quietly(sender: Any, connection: Any, **kwargs: Any) -> None:
    # Django makes its pool with psycopg_pool's own check and takes no other (it passes
    # ``check`` itself): the pool is given this one as its first connection is made.
    pool = getattr(connection, "pool", None)
    if pool is not None:
        adapters.check_pooled_connections_with(pool, check_when_taken)


def _said_something(conn: Any) -> bool:
    # poll, not select: a process serving thousands of sockets has descriptors past select's 1024.
    poller = select.poll()
    poller.register(conn.pgconn.socket, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))
