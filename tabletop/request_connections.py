"""A page request's database connections end with the request.

Under ASGI, Django runs each request's synchronous parts in a thread of its own (asgiref's
``ThreadSensitiveContext``), and that thread ends with the request. On SQLite, connections are
kept between uses (``CONN_MAX_AGE``: the sockets' one database thread reuses its connection for
every roll), so each request's thread opened a connection and left it open when it ended: the
connection waited, with its files, for the garbage collector, which closed it among the
request's other leftovers while the event loop and every room on it waited. Seating 200 players
left 300 objects a request in reference cycles, and collecting them took 18-112 ms at a time,
once a second (docs/benchmarks.md, "Joins").

So a request's connections are closed when it finishes, in its own thread, as Django closes
them at the end of a request whenever connections are not kept. A thread that outlives its
requests (the test client's, a WSGI worker's) keeps its connection as before. With PostgreSQL
the pool already takes a connection back at the end of each request; closing hands it back.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import SyncToAsync
from django.core.signals import request_finished
from django.db import connections


def close_with_the_request(**kwargs: Any) -> None:
    # Set only inside Django's ASGI handler, whose request thread ends with the request.
    if SyncToAsync.thread_sensitive_context.get(None) is None:
        return
    connections.close_all()


def close_connections_with_requests() -> None:
    """Connect the receiver (the app's ``ready``)."""
    request_finished.connect(
        close_with_the_request, dispatch_uid="tabletop.request_connections.close"
    )
