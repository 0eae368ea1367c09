"""Real daphne processes for tests, serving the test database on free ports (the benchmarks'
harness, ``bench/harness.py``, starts and stops them)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection

from bench import harness


def test_database_url() -> str:
    """A DATABASE_URL for the database the tests are using right now."""
    conf = connection.settings_dict
    if conf["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(conf['NAME']).resolve()}"
    user = conf.get("USER") or "postgres"
    password = f":{conf['PASSWORD']}" if conf.get("PASSWORD") else ""
    host, port = conf.get("HOST") or "127.0.0.1", conf.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{conf['NAME']}"


@contextmanager
def daphne_servers(
    count: int, *, env: dict[str, str] | None = None, proxy_headers: bool = False
) -> Iterator[list[int]]:
    """``count`` daphne processes serving the test database; yields their ports.
    ``proxy_headers``: as behind the proxy, the client's address from ``X-Forwarded-For``."""
    base = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "DJANGO_SETTINGS_MODULE": "tabletop.settings",
        "TABLETOP_WEBHOOK_SENDERS_AT_START": "1",
        "TABLETOP_WAL_CHECKPOINT_SECONDS": "1",
        **(env or {}),
    }
    with harness.daphne_servers(count, env=base, proxy_headers=proxy_headers) as ports:
        yield ports
