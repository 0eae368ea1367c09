"""A pooled PostgreSQL connection is taken without a round trip while its server has said
nothing, and one its server ended is found when taken and replaced."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import close_old_connections, connection, transaction

from tabletop.db_pool import check_when_taken

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the connection pool is PostgreSQL's"
)


@pytest.fixture
def pool(django_db_setup, django_db_blocker) -> Iterator:
    from psycopg_pool import ConnectionPool

    with django_db_blocker.unblock():
        params = connection.get_connection_params()
    params.pop("pool", None)
    params["autocommit"] = True
    with ConnectionPool(kwargs=params, min_size=1, max_size=1, check=check_when_taken) as made:
        yield made


def asked(monkeypatch) -> list[object]:
    from psycopg_pool import ConnectionPool

    calls: list[object] = []
    real = ConnectionPool.check_connection
    monkeypatch.setattr(
        ConnectionPool, "check_connection", staticmethod(lambda c: calls.append(c) or real(c))
    )
    return calls


@pytest.mark.django_db(transaction=True)
def test_the_served_pool_checks_its_connections_this_way() -> None:
    if not settings.DATABASES["default"]["OPTIONS"].get("pool"):
        pytest.skip("the pool is turned off (TABLETOP_DB_POOL=0)")
    close_old_connections()
    connection.ensure_connection()
    assert connection.pool._check is check_when_taken


def test_a_quiet_connection_is_taken_without_asking_the_server(pool, monkeypatch) -> None:
    calls = asked(monkeypatch)
    for _ in range(5):
        with pool.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    assert calls == []


def test_a_connection_its_server_ended_is_found_when_taken_and_replaced(pool, monkeypatch) -> None:
    import psycopg

    with pool.connection() as conn:
        ended = conn.info.backend_pid
    params = {**pool.kwargs}
    with psycopg.connect(**params) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [ended])
        # (the backend gone, its goodbye and the end of the stream are on the pooled socket)
        deadline = time.monotonic() + 10
        while other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [ended]).fetchone():
            assert time.monotonic() < deadline, "the ended backend is still there"
            time.sleep(0.02)
    calls = asked(monkeypatch)
    with pool.connection() as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert conn.info.backend_pid != ended
    assert len(calls) == 1  # asked once: the one with something waiting


@pytest.mark.django_db(transaction=True)
def test_a_unit_of_work_served_from_the_pool_asks_the_server_nothing_more(monkeypatch) -> None:
    """BEGIN, the statement, COMMIT: nothing sent for the check when the connection is taken."""
    if not settings.DATABASES["default"]["OPTIONS"].get("pool"):
        pytest.skip("the pool is turned off (TABLETOP_DB_POOL=0)")
    import psycopg

    sent: list[str] = []
    real = psycopg.Connection.execute

    def execute(self, query, *args, **kwargs):
        sent.append(str(query))
        return real(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", execute)
    calls = asked(monkeypatch)
    for _ in range(3):
        close_old_connections()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        close_old_connections()
    assert calls == [] and "" not in sent
