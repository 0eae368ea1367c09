"""The table's ASGI application with one or more changes, for what-if benchmarks only
(``fanout.py``/``saturation.py --whatif ...``): each measures what a design change would give
before anyone makes it in the table. ``BENCH_WHATIF`` lists the changes:

- ``no-aclose``: events taking a socket's ordered path (its own channel) skip Channels'
  per-message ``aclose_old_connections()``. ``AsyncConsumer.dispatch`` runs it before every
  handler: a ``sync_to_async`` call, so a hop onto the process's one ORM thread per message.
  ``room_event`` reaches the database only through ``database_sync_to_async``, which closes
  stale connections itself.
- ``orm-pool``: the socket's database calls run on a pool of threads
  (``thread_sensitive=False``) instead of the process's one ORM thread, so one room's roll no
  longer waits behind every other socket's database work in the process.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.bench_settings")

import django

django.setup()  # before any model import

from channels.db import DatabaseSyncToAsync  # noqa: E402

from tabletop import consumers  # noqa: E402
from tabletop.asgi import application  # noqa: E402

__all__ = ["application"]

CHANGES = {c for c in os.environ.get("BENCH_WHATIF", "").split(",") if c}
RoomConsumer = consumers.RoomConsumer

if "no-aclose" in CHANGES:
    _dispatch = RoomConsumer.dispatch

    async def dispatch(self: Any, message: dict[str, Any]) -> None:
        if message.get("type") == "room.event":
            await self.room_event(message)
            return
        await _dispatch(self, message)

    RoomConsumer.dispatch = dispatch

if "orm-pool" in CHANGES:

    def pooled(func: Any) -> Any:
        return DatabaseSyncToAsync(func, thread_sensitive=False)

    consumers.database_sync_to_async = pooled
