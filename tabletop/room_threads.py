"""Which database thread a room's socket actions run on.

A roll on PostgreSQL is mostly waiting: four round trips to the database (``BEGIN``, the
statement that takes its seq, the event's ``INSERT``, ``COMMIT``, the last one waiting for the
write-ahead log to reach the disk), each 0.3-0.9 ms on a busy machine, against well under a
millisecond of Python. On Channels' one database thread of a process, the rolls of every room
wait for each other's round trips: at 200 rooms a roll waits behind another's more often than
not at the 99th percentile (docs/benchmarks.md, "Many tables, and the most tables"). The rolls
of one room wait for each other on its session row's lock anyway; those of different rooms need
not. So on PostgreSQL each room's actions run on one of ``TABLETOP["ROOM_THREADS"]`` threads,
picked by the room, always the same one: a room's actions keep the order they were asked in
and are published in seq order, as on one thread. Everything else of the process (connects,
the store watch, replays) stays on Channels' database thread.

On SQLite (one writer at a time, statements that are calls in the process) a second thread
would only wait for the first one's lock: ``ROOM_THREADS`` is 1 and every action runs on
Channels' thread, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from django.conf import settings

T = TypeVar("T")

_threads: dict[int, ThreadPoolExecutor] = {}
_made = threading.Lock()


def _thread(index: int) -> ThreadPoolExecutor:
    with _made:
        found = _threads.get(index)
        if found is None:
            found = _threads[index] = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"room-db-{index}"
            )
        return found


def for_room(session_id: int, work: Callable[..., T], /, *args: Any, **kwargs: Any) -> Awaitable[T]:
    """Run ``work(*args, **kwargs)`` on the room's database thread (old connections closed
    around it, as ``database_sync_to_async`` does): Channels' thread when there is one room
    thread, else the one picked by ``session_id``."""
    count = settings.TABLETOP["ROOM_THREADS"]
    if count <= 1:
        return database_sync_to_async(work)(*args, **kwargs)
    executor = _thread(session_id % count)
    return database_sync_to_async(work, thread_sensitive=False, executor=executor)(*args, **kwargs)
