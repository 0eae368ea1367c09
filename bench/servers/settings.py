"""Settings for benchmark servers: the table's own settings, unchanged, except that

- the Redis channel layer gets a private prefix (with the database's name), so a benchmark room
  never shares pub/sub channels with another server (tests, a dev server, another benchmark) on
  the same Redis: pub/sub ignores the database number;
- with ``BENCH_PROFILE_OUT`` set, the table's timing hook (``tabletop/timing.py``) records into
  ``bench.servers.recorder``, which writes what it measured to that file;
- ``BENCH_WHATIF`` (comma-separated, see ``bench.harness.WHATIF``) changes one setting each, to
  measure what a change would give before the table makes it.
"""

import os

from tabletop.settings import *  # noqa: F403
from tabletop.settings import CHANNEL_LAYERS, DATABASES, REDIS_URL, TABLETOP

if REDIS_URL:
    # (per database too: two benchmarks at once have rooms with the same session ids)
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = f"tabletop-bench-{DATABASES['default']['NAME']}"

if os.environ.get("BENCH_PROFILE_OUT"):
    # Imported here, on the main thread and before any connection, rather than at first use.
    import bench.servers.recorder  # noqa: F401

    TABLETOP["TIMING"] = "bench.servers.recorder.record"

WHATIF = {w for w in os.environ.get("BENCH_WHATIF", "").split(",") if w}
POSTGRES = "postgresql" in DATABASES["default"]["ENGINE"]

if "server-binding" in WHATIF and POSTGRES:
    DATABASES["default"].setdefault("OPTIONS", {})["server_side_binding"] = True

if "no-db-pool" in WHATIF and POSTGRES:  # as before the pool: kept connections, one per thread
    DATABASES["default"].get("OPTIONS", {}).pop("pool", None)
    DATABASES["default"]["CONN_MAX_AGE"] = 60

if "no-gc-tuning" in WHATIF:
    TABLETOP["GC_FREEZE"], TABLETOP["GC_THRESHOLD"] = False, 0

# Every benchmark client joins from 127.0.0.1: the per-address join budget (against one address
# making seats without end) would refuse the seating of a benchmark's hundreds of players.
TABLETOP["JOINS_PER_MINUTE"] = 1e9
