"""Shared fixtures, and the rule that tests needing PostgreSQL, Redis, Chromium or nginx skip with
a reason where those are absent, but fail where ``TABLETOP_REQUIRE`` says they must run (CI)."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

# The test process imports the ASGI application without serving it: it sends no webhooks
# unless a test starts its senders (``sender.start()``, ``sender.wait_idle``), so no sender
# thread outlives a test's database. The servers the tests start send (tests/servers.py).
os.environ["TABLETOP_WEBHOOK_SENDERS_AT_START"] = "0"
# Nor does it checkpoint SQLite's write-ahead log on a thread of its own (the servers do).
os.environ["TABLETOP_WAL_CHECKPOINT_SECONDS"] = "0"

REQUIRED = {
    part.strip() for part in os.environ.get("TABLETOP_REQUIRE", "").split(",") if part.strip()
}
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


MOST_WORKERS = 4


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """How many workers ``-n auto`` starts: one per core this process may use, at most
    ``MOST_WORKERS`` (each runs its own Chromium, daphne and nginx beside the tests), and none
    on a single core, where the tests run in this process. PYTEST_XDIST_AUTO_NUM_WORKERS, when
    set, is xdist's own to read."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count() or 1
    return min(cores, MOST_WORKERS) if cores > 1 else 0


def _reachable(url: str, default_port: int) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection(
            (parsed.hostname or "127.0.0.1", parsed.port or default_port), 1
        ):
            return True
    except OSError:
        return False


def _missing(what: str) -> str | None:
    if what == "postgres":
        url = os.environ.get("DATABASE_URL", "")
        if not url.startswith(("postgres://", "postgresql://")):
            return "needs PostgreSQL: set DATABASE_URL=postgres://postgres@127.0.0.1:5432/test"
        return None
    if what == "redis":
        url = os.environ.get("REDIS_URL", "")
        if not url:
            return "needs Redis: set REDIS_URL=redis://127.0.0.1:6379/0"
        if not _reachable(url, 6379):
            return f"needs Redis: nothing answers at {url}"
        return None
    if what == "browser":
        if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
            return "needs Debian's Chromium: apt-get install chromium"
        try:
            import playwright  # noqa: F401
        except ImportError:
            return "needs Playwright for Python: pip install -e '.[test]'"
        return None
    if what == "node":
        if shutil.which("node") is None:
            return "needs Node.js to run the browser's modules: apt-get install nodejs"
        return None
    if what == "gettext":
        if shutil.which("xgettext") is None or shutil.which("msgfmt") is None:
            return "needs GNU gettext to extract the texts: apt-get install gettext"
        return None
    if what == "nginx":
        from bench.harness import nginx_binary

        if nginx_binary() is None:
            return "needs nginx (the proxy of the deployed setup): apt-get install nginx"
        return None
    raise AssertionError(what)


MISSING = pytest.StashKey[str]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for what in ("postgres", "redis", "browser", "nginx", "node", "gettext"):
            if item.get_closest_marker(what) is None:
                continue
            reason = _missing(what)
            if reason is None:
                continue
            if what in REQUIRED:
                item.stash[MISSING] = reason
            else:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def _required_services(request: pytest.FixtureRequest) -> None:
    reason = request.node.stash.get(MISSING, None)
    if reason is not None:
        pytest.fail(f"TABLETOP_REQUIRE says this must run, but it {reason}")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    # Socket tests run the ORM on Channels' worker thread; closing its connection after each
    # call lets the test database be dropped at the end.
    from django.conf import settings

    settings.DATABASES["default"]["CONN_MAX_AGE"] = 0


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashing() -> Iterator[None]:
    # Real hashers are slow by design; tests make many users and log them in.
    from django.test.utils import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True)
def _every_event_matches_the_catalogue(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every event a test stores is checked against the event catalogue, as a client reads it
    (tabletop/protocol/events.py), the way every event is checked against its schema."""
    if request.node.get_closest_marker("any_event") or (
        "django_db_setup" not in request.fixturenames
        and not request.node.get_closest_marker("django_db")
    ):
        yield
        return
    import json

    from django.db.models.signals import post_save

    from tabletop.models import Event
    from tabletop.protocol.events import EventShapeError, check_event

    wrong: list[str] = []

    def check(sender: type, instance: Event, created: bool, **kwargs: object) -> None:
        try:
            check_event(
                kind=instance.kind,
                visibility=instance.visibility,
                data=json.loads(json.dumps(instance.data)),
            )
        except EventShapeError as exc:
            wrong.append(f"#{instance.seq} {exc}")

    post_save.connect(check, sender=Event, weak=False, dispatch_uid="event-catalogue")
    try:
        yield
    finally:
        post_save.disconnect(sender=Event, dispatch_uid="event-catalogue")
    assert not wrong, (
        "events the catalogue (tabletop/protocol/events.py) does not describe:\n" + "\n".join(wrong)
    )
