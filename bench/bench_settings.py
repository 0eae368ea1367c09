"""Settings for benchmark servers: the table's own settings, unchanged, except that the Redis
channel layer gets a private prefix, so a benchmark room never shares pub/sub channels with
another server (tests, a dev server) on the same Redis: pub/sub ignores the database number.

What-if experiments (``fanout.py --whatif ...``), never set by the measured setups:

- ``BENCH_CONN_MAX_AGE``: keep database connections this many seconds (the SQLite default
  opens and closes one for every ORM call);
- ``BENCH_LAYER_CAPACITY``: the in-memory channel layer's per-channel capacity (default 100);
- ``BENCH_NO_HEALTH_CHECKS``: no ``SELECT 1`` before the first statement of each ORM call
  (Django's ``CONN_HEALTH_CHECKS``);
- ``BENCH_SERVER_SIDE_BINDING``: psycopg binds parameters on the server (Django's
  ``server_side_binding``), so statements run often are prepared once per connection.
"""

import os

from tabletop.settings import *  # noqa: F403
from tabletop.settings import CHANNEL_LAYERS, DATABASES, REDIS_URL

if REDIS_URL:
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = "tabletop-bench"

if os.environ.get("BENCH_CONN_MAX_AGE"):
    DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ["BENCH_CONN_MAX_AGE"])

if os.environ.get("BENCH_LAYER_CAPACITY") and not REDIS_URL:
    CHANNEL_LAYERS["default"].setdefault("CONFIG", {})["capacity"] = int(
        os.environ["BENCH_LAYER_CAPACITY"]
    )

if os.environ.get("BENCH_SERVER_SIDE_BINDING") and "postgresql" in DATABASES["default"]["ENGINE"]:
    DATABASES["default"].setdefault("OPTIONS", {})["server_side_binding"] = True

if os.environ.get("BENCH_NO_HEALTH_CHECKS"):
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
