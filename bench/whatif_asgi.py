"""The table's ASGI application with one or more changes, for what-if benchmarks only
(``fanout.py``/``saturation.py --whatif ...``): each measures what a design change would give
before anyone makes it in the table. ``BENCH_WHATIF`` lists the changes:

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

if "orm-pool" in CHANGES:

    def pooled(func: Any) -> Any:
        return DatabaseSyncToAsync(func, thread_sensitive=False)

    consumers.database_sync_to_async = pooled
