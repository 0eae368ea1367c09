"""What every browser test shares: Debian's Chromium through Playwright's sync API, against
daphne serving the test database in a forked child (ChannelsLiveServerTestCase).

Two things make that work after async tests ran in the same process:

- the forked daphne child starts clean (``FreshDaphneProcess``): asgiref's one-thread executor
  an earlier async test created has no thread after the fork, so every database call would
  wait forever, a channel layer bound to another event loop is dropped, and so is the odds'
  worker pool;
- service calls that broadcast (starting a session...) run on a worker thread
  (``off_thread``): ``async_to_sync`` cannot run on the thread where Playwright's event loop
  lives, and neither can a socket client's own loop.

The channel layer is in memory, so an event made in this process reaches no browser: what the
pages must see happen goes through the live server (``join``, ``send_as_gm``) or a page.

Use it as ``from tests.browser.conftest import BrowserTestCase, off_thread``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import axe_playwright_python
import pytest
from asgiref.sync import SyncToAsync
from channels.layers import channel_layers
from channels.testing import ChannelsLiveServerTestCase
from daphne.testing import DaphneProcess
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.db import connections
from django.test import Client

from tabletop.models import Campaign, Character, GameSession
from tabletop.services.sessions import create_session, start_session
from tests.process_state import start_afresh

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# Screenshots of the pages as the tests leave them, for a person to look at: taken only when
# asked for (TABLETOP_SCREENSHOTS=1) or when axe-core found something; each costs a render.
SCREENSHOTS = os.environ.get("TABLETOP_SCREENSHOTS", "") not in {"", "0"}
DESKTOP = {"width": 1200, "height": 900}
PHONE = {"width": 375, "height": 740}
GM_PASSWORD = "pw-for-tests-only"
AXE_SOURCE = Path(axe_playwright_python.__file__).with_name("axe.min.js")

# Keep every socket a page opens reachable, so a test can cut one like a flaky network would.
TRACK_SOCKETS = """
(() => {
  const Native = window.WebSocket;
  window.__sockets = [];
  window.WebSocket = class extends Native {
    constructor(...args) { super(...args); window.__sockets.push(this); }
  };
})();
"""

# Every refusal of the page's Content-Security-Policy reaches the console as an error, with
# what was refused (Chromium logs its own line too; this one names the directive).
REPORT_CSP = """
document.addEventListener("securitypolicyviolation", (e) =>
  console.error(`CSP violation: ${e.effectiveDirective} refused ${e.blockedURI || "inline"}` +
    ` (${e.sample}) at ${e.sourceFile || e.documentURI}:${e.lineNumber}`));
"""
# Console errors that mean the page breaks its own security headers.
POLICY_ERRORS = ("Content Security Policy", "CSP violation", "Permissions-Policy")

T = TypeVar("T")


def off_thread(fn: Callable[[], T]) -> T:
    """Run ``fn`` on a worker thread (see the module's docstring) and return its result."""

    def run() -> T:
        try:
            return fn()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


def _waits_without_eval(page) -> None:
    """Playwright evaluates a ``wait_for_function`` expression with the page's own ``eval``,
    which the page's Content-Security-Policy refuses; as a function it is compiled through
    the browser's devtools instead. Expressions are wrapped in one."""
    native = page.wait_for_function

    def wait_for_function(expression: str, *args: Any, **kwargs: Any) -> Any:
        if not re.match(r"\s*(async\s+)?(function\b|\([^)]*\)\s*=>|\w+\s*=>)", expression):
            expression = f"() => ({expression})"
        return native(expression, *args, **kwargs)

    page.wait_for_function = wait_for_function


class FreshDaphneProcess(DaphneProcess):
    """Daphne in a forked child that starts clean (see the module's docstring)."""

    def run(self) -> None:
        # The parent's Playwright marks its event loop running on the thread this child came
        # from (between its sync calls); the child's reactor runs a loop of its own.
        asyncio._set_running_loop(None)
        SyncToAsync.single_thread_executor = ThreadPoolExecutor(max_workers=1)
        channel_layers.backends = {}
        _fresh_odds_workers()
        fresh_thread_pools()
        _fresh_database_connections()
        # Full budgets and nothing kept, as a new server's: the parent's buckets came across the
        # fork, drained by the tests it ran before (by address, and by seat and room numbers
        # the test database hands out again), and a page's join or roll would wait on them.
        start_afresh()
        super().run()


def _fresh_database_connections() -> None:
    """Database connections as in a new process. The parent's connections (and PostgreSQL's
    per-process connection pool) came across the fork as shared sockets: used from both sides
    they interleave one protocol stream and both sides read each other's answers. The child
    drops its references without closing them (closing would end the parent's sessions)."""
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        conn.connection = None
        pools = getattr(type(conn), "_connection_pools", None)
        if pools is not None:
            pools.clear()


def fresh_thread_pools() -> None:
    """The table's own thread pools (prechecks of long messages, exports, long replays) as in a
    new process: a pool that ran work before the fork counts threads the child does not have,
    and would queue the child's work for them forever (a page opening a long session waited
    for its replay). Each is made anew in place, where the code that uses it holds it."""
    from tabletop import consumers, replays
    from tabletop.views import export

    for pool in (consumers._prechecks, export._writers, replays._readers):
        pool.__init__(max_workers=pool._max_workers, thread_name_prefix=pool._thread_name_prefix)


def _fresh_odds_workers() -> None:
    """The odds' worker pool (and the fork server its workers come from) as in a new process:
    a pool an earlier test made in this process has no threads after the fork, and the fork
    server belongs to the parent, so odds would wait until their budget and fail."""
    from multiprocessing import forkserver

    from tabletop.selectors import odds

    server = forkserver.ForkServer()
    forkserver._forkserver = server
    forkserver.ensure_running = server.ensure_running
    forkserver.get_inherited_fds = server.get_inherited_fds
    forkserver.connect_to_new_process = server.connect_to_new_process
    forkserver.set_forkserver_preload = server.set_forkserver_preload
    odds._workers = odds._Workers()


def _wait_for_other_connections(timeout: float = 5.0) -> None:
    """Wait until no other connection to the test database is in a query or a transaction
    (PostgreSQL only: SQLite's writers wait for each other)."""
    connection = connections["default"]
    if connection.vendor != "postgresql":
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND state IS NOT NULL AND state <> 'idle'"
            )
            (busy,) = cursor.fetchone()
        if not busy:
            return
        time.sleep(0.05)


class _Chromium:
    """One Playwright and one Chromium for every browser test of the run, started by the first
    test class: a page still gets a browser context of its own (its cookies, storage and cache),
    so tests share the process and nothing else. While Playwright's sync API is started its
    event loop counts as running on this thread, where the ORM calls of the tests stay sync
    (DJANGO_ALLOW_ASYNC_UNSAFE) and which the tests of other packages must not see: it stops
    after the last browser test (``pytest_runtest_teardown``)."""

    playwright: Any = None
    browser: Any = None
    async_unsafe: str | None = None

    @classmethod
    def get(cls) -> Any:
        if cls.browser is None:
            from playwright.sync_api import sync_playwright

            cls.async_unsafe = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
            cls.playwright = sync_playwright().start()
            cls.browser = cls.playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
        return cls.browser

    @classmethod
    def stop(cls) -> None:
        if cls.browser is None:
            return
        cls.browser.close()
        cls.playwright.stop()
        cls.browser = cls.playwright = None
        if cls.async_unsafe is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = cls.async_unsafe


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """After the last browser test (its class torn down), Chromium stops."""
    torn_down = yield
    if nextitem is None or nextitem.path.parent != item.path.parent:
        _Chromium.stop()
    return torn_down


class BrowserTestCase(ChannelsLiveServerTestCase):
    """A live server with static files, the run's Chromium, helpers for the room."""

    serve_static = True
    ProtocolServerProcess = FreshDaphneProcess

    @classmethod
    def setUpClass(cls) -> None:
        # Every browser joins from 127.0.0.1: the per-address join limit would stop a test's
        # tenth seat. The served process is forked from this one and keeps this value.
        cls._joins = settings.TABLETOP["JOINS_PER_MINUTE"]
        settings.TABLETOP["JOINS_PER_MINUTE"] = 10_000
        # Ended sessions' records are kept in a folder of the class's own, never the data
        # folder, where they would outlive the test database whose next session takes the id.
        cls._kept = settings.TABLETOP["EXPORT_DIR"]
        cls._kept_here = tempfile.TemporaryDirectory(prefix="tabletop-kept-")
        settings.TABLETOP["EXPORT_DIR"] = Path(cls._kept_here.name)
        super().setUpClass()
        cls.browser = _Chromium.get()
        ARTIFACTS.mkdir(exist_ok=True)

    @classmethod
    def tearDownClass(cls) -> None:
        settings.TABLETOP["JOINS_PER_MINUTE"] = cls._joins
        settings.TABLETOP["EXPORT_DIR"] = cls._kept
        super().tearDownClass()
        cls._kept_here.cleanup()  # (once the served process, which writes there, has stopped)

    def _fixture_teardown(self) -> None:
        # The served process may still be writing what a page closed at the test's end left
        # behind (a seat going away): on PostgreSQL the flush's TRUNCATE and that write can
        # deadlock, and the flush is the one picked to fail. Wait for the other connections to
        # finish, and flush again if the flush still lost.
        for attempt in range(5):
            _wait_for_other_connections()
            try:
                return super()._fixture_teardown()
            except CommandError:
                if attempt == 4:
                    raise

    # -- tables and pages ---------------------------------------------------------------------

    def make_table(
        self, system: str, *, characters: dict[str, dict] | None = None, **campaign: Any
    ) -> tuple[Any, Campaign, GameSession]:
        """A GM (user ``gm``), a campaign of ``system`` with ``characters`` (name -> sheet) and
        a live session."""

        def make():
            gm = get_user_model().objects.create_user("gm", password=GM_PASSWORD)
            camp = Campaign.objects.create(name="Night Market", system=system, gm=gm, **campaign)
            for name, sheet in (characters or {}).items():
                Character.objects.create(campaign=camp, name=name, sheet=sheet)
            session = create_session(campaign=camp, title="Session one")
            return gm, camp, start_session(session_id=session.pk)

        return off_thread(make)

    def join(self, session, name: str, character: int | None = None) -> dict:
        """Sit a player down through the live server (JSON join), as a bot would."""
        body = json.dumps({"name": name, "character": character}).encode()
        request = urllib.request.Request(
            f"{self.live_server_url}/play/{session.invite_code}/join",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    def send_as_gm(self, session, message: dict) -> dict:
        """Send one message on the room socket with the GM's login, as the GM's browser would;
        return the event it caused (the GM's copy, with its ``ref``) or the error."""
        from websockets.sync.client import connect

        def run() -> dict:
            client = Client()
            client.force_login(session.campaign.gm)
            cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
            url = self.live_server_url.replace("http", "ws", 1) + f"/ws/play/{session.invite_code}/"
            headers = {
                "Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}",
                "Origin": self.live_server_url,
            }
            with connect(url, additional_headers=headers, open_timeout=10) as ws:
                json.loads(ws.recv(10))  # hello
                ws.send(json.dumps({**message, "ref": "from-test"}))
                while True:
                    reply = json.loads(ws.recv(10))
                    if reply["type"] == "error" or reply.get("ref") == "from-test":
                        return reply

        return off_thread(run)

    def open_page(
        self, viewport: dict | None = None, color_scheme: str = "light", locale: str = "en-US"
    ):
        """A page in a browser of its own; ``locale`` is the browser's language (its
        Accept-Language)."""
        context = self.browser.new_context(
            viewport=viewport or DESKTOP, color_scheme=color_scheme, locale=locale
        )
        context.add_init_script(TRACK_SOCKETS)
        self.addCleanup(context.close)
        page = context.new_page()
        self.watch_errors(page)
        return page

    def watch_errors(self, page) -> None:
        """Fail the test on any script error, and on anything the page's security headers
        refuse (an inline script or style, a source of another origin)."""
        page.add_init_script(REPORT_CSP)
        page.set_default_timeout(8000)
        _waits_without_eval(page)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on(
            "console",
            lambda msg: (
                msg.type == "error"
                and any(marker in msg.text for marker in POLICY_ERRORS)
                and not getattr(page, "auditing", False)
                and errors.append(msg.text)
            ),
        )
        self.addCleanup(
            lambda: self.assertEqual(
                errors, [], "no script or policy errors:\n" + "\n".join(errors)
            )
        )

    def sit_down(self, page, session, name: str, character: str | None = None) -> None:
        page.goto(f"{self.live_server_url}/play/{session.invite_code}/")
        page.fill("#name", name)
        if character:
            page.select_option("#character", label=character)
        page.click("button[type=submit]")
        self.wait_live(page)

    def log_in_gm(self, page, next_url: str) -> None:
        page.goto(f"{self.live_server_url}/accounts/login/?next={next_url}")
        page.fill("input[name=username]", "gm")
        page.fill("input[name=password]", GM_PASSWORD)
        page.click("form [type=submit]")
        page.wait_for_url(re.compile(re.escape(next_url) + "$"))

    @staticmethod
    def wait_live(page) -> None:
        page.wait_for_selector("#conn[data-state=live]")

    @staticmethod
    def seqs(page) -> list[int]:
        return page.eval_on_selector_all(
            "#log > li", "items => items.map(i => Number(i.dataset.seq))"
        )

    @staticmethod
    def shot(page, name: str, full_page: bool = True, *, found: bool = False) -> None:
        if SCREENSHOTS or found:
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)

    @staticmethod
    def axe(page, name: str) -> list[dict]:
        """Run axe-core (bundled with axe-playwright-python, never fetched) on the page as it
        stands; save its report (and a screenshot, where it found something) under ``name``;
        return the serious and critical violations, each as {id, impact, help, targets}."""
        if not page.evaluate("typeof window.axe === 'object'"):
            # Evaluated by the browser's devtools, not as an inline script the page's
            # Content-Security-Policy would (rightly) refuse.
            page.evaluate(AXE_SOURCE.read_text())
        # axe-core copies the page's style sheets into <style> elements of its own to audit
        # them (css-orientation-lock): the page's policy refuses those, which is not the page's
        # fault, so policy errors are not counted while it runs.
        page.auditing = True
        report = page.evaluate(
            """async () => {
              const result = await axe.run(document, {
                resultTypes: ["violations"],
                rules: {"label-content-name-mismatch": {enabled: true}},
              });
              return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                targets: v.nodes.map(n => n.target.join(" ")).slice(0, 5)}));
            }"""
        )
        page.evaluate("() => new Promise((done) => setTimeout(done, 50))")  # its console
        page.auditing = False
        (ARTIFACTS / f"axe-{name}.json").write_text(json.dumps(report, indent=1))
        found = [v for v in report if v["impact"] in ("serious", "critical")]
        BrowserTestCase.shot(page, f"axe-{name}", full_page=False, found=bool(found))
        return found
