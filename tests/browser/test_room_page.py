"""The player's room in a real browser: two players at one table, odds before rolling, dice
appearing on the other screen with their roles, hidden rolls, reconnects, and the GM's controls.

Daphne serves the page and the socket in another process (ChannelsLiveServerTestCase);
Playwright drives Debian's Chromium.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from asgiref.sync import SyncToAsync
from channels.layers import channel_layers
from channels.testing import ChannelsLiveServerTestCase
from daphne.testing import DaphneProcess
from django.contrib.auth import get_user_model
from django.db import connections

from tabletop.models import Campaign, Character, Event
from tabletop.services.sessions import create_session, start_session

pytestmark = pytest.mark.browser

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
PHONE = {"width": 375, "height": 740}

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


class FreshDaphneProcess(DaphneProcess):
    """Daphne in a forked child that starts clean: an earlier async test in this process may
    have left asgiref's one-thread executor (its thread does not survive the fork, so every
    database call would wait forever) and a channel layer bound to another event loop."""

    def run(self) -> None:
        SyncToAsync.single_thread_executor = ThreadPoolExecutor(max_workers=1)
        channel_layers.backends = {}
        super().run()


class RoomPageTests(ChannelsLiveServerTestCase):
    serve_static = True
    ProtocolServerProcess = FreshDaphneProcess

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        from playwright.sync_api import sync_playwright

        # Playwright's sync API runs an event loop on this thread; the ORM calls here stay sync.
        cls._async_unsafe = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

        cls._playwright = sync_playwright().start()
        cls.browser = cls._playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        ARTIFACTS.mkdir(exist_ok=True)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.browser.close()
        cls._playwright.stop()
        if cls._async_unsafe is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = cls._async_unsafe
        super().tearDownClass()

    # -- helpers ------------------------------------------------------------------------------

    def make_table(self, system: str):
        def make():
            try:
                gm = get_user_model().objects.create_user("gm", password="pw-for-tests-only")
                campaign = Campaign.objects.create(name="Night Market", system=system, gm=gm)
                session = create_session(campaign=campaign, title="Session one")
                return gm, campaign, start_session(session_id=session.pk)
            finally:
                connections.close_all()

        # Starting a session broadcasts with async_to_sync, which cannot run on this thread
        # while Playwright's event loop lives here.
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(make).result()

    def open_page(self, viewport=None):
        context = self.browser.new_context(viewport=viewport or {"width": 1200, "height": 900})
        context.add_init_script(TRACK_SOCKETS)
        self.addCleanup(context.close)
        page = context.new_page()
        page.set_default_timeout(8000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        self.addCleanup(lambda: self.assertEqual(errors, [], "no script errors on the page"))
        return page

    def sit_down(self, page, session, name: str, character: str | None = None) -> None:
        page.goto(f"{self.live_server_url}/play/{session.invite_code}/")
        page.fill("#name", name)
        if character:
            page.select_option("#character", label=character)
        page.click("button[type=submit]")
        self.wait_live(page)

    @staticmethod
    def wait_live(page) -> None:
        page.wait_for_selector("#conn[data-state=live]")

    @staticmethod
    def seqs(page) -> list[int]:
        return page.eval_on_selector_all(
            "#log > li", "items => items.map(i => Number(i.dataset.seq))"
        )

    @staticmethod
    def shot(page, name: str, full_page: bool = True) -> None:
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)

    # -- tests --------------------------------------------------------------------------------

    def test_two_players_odds_rolls_hidden_rolls_and_reconnects(self):
        _, _, session = self.make_table("generic")
        ana = self.open_page()
        bob = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana")
        self.sit_down(bob, session, "Bob")
        ana.wait_for_selector("#seats li:has-text('Bob')")

        # Exact odds before rolling, from the engine.
        ana.fill("#f-generic-notation", "4d6kh3+2")
        ana.fill("#f-generic-difficulty", "12")
        ana.wait_for_selector(".p-success")
        self.assertRegex(ana.inner_text(".p-success"), r"^\d+(\.\d)?%$")
        self.assertGreater(ana.locator(".chart rect").count(), 5)
        self.assertEqual(ana.locator("#log li[data-kind=roll]").count(), 0, "odds roll nothing")

        # Enter rolls; the other player sees every die with its role.
        ana.press("#f-generic-notation", "Enter")
        roll = bob.locator("#log li[data-kind=roll]").first
        roll.wait_for()
        self.assertEqual(roll.locator(".die").count(), 4)
        self.assertEqual(roll.locator(".die.role-kept").count(), 3)
        self.assertEqual(roll.locator(".die.role-dropped").count(), 1)
        self.assertIn("Ana", roll.locator(".who").inner_text())
        self.assertIn(roll.locator(".badge").first.inner_text().strip(), {"success", "failure"})
        ana.wait_for_selector("#last-roll .die")
        event = Event.objects.get(session=session, kind="roll")
        self.assertEqual(event.data["client_seed"], ana.input_value("#client-seed"))
        self.assertRegex(event.data["client_seed"], r"^[0-9a-f]{32}$")
        self.shot(ana, "room-generic-desktop")

        # A roll for the roller alone is a locked line for everyone else.
        ana.select_option("#roll-visibility", "self")
        ana.fill("#f-generic-notation", "1d20")
        ana.click(".roll-button")
        hidden = bob.locator("#log li.ev-hidden")
        hidden.wait_for()
        self.assertIn("🔒 a hidden roll by Ana", hidden.inner_text())
        self.assertEqual(hidden.locator(".die").count(), 0)
        mine = ana.locator("#log li[data-kind=roll]").last
        mine.locator(".reveal").wait_for()
        self.assertEqual(mine.locator(".die").count(), 1)

        # Bob's network drops; Ana rolls meanwhile; Bob comes back and misses nothing.
        bob.context.set_offline(True)
        bob.wait_for_function("document.getElementById('conn').dataset.state !== 'live'")
        ana.select_option("#roll-visibility", "public")
        ana.fill("#f-generic-notation", "2d6")
        ana.click(".roll-button")
        ana.wait_for_function("document.querySelectorAll('#log li[data-kind=roll]').length === 3")
        bob.context.set_offline(False)
        self.wait_live(bob)
        bob.wait_for_function("document.querySelectorAll('#log li[data-kind=roll]').length === 3")

        # The socket is cut under Bob's feet; he resumes from the last seq he saw.
        bob.evaluate("window.__sockets.at(-1).close()")
        ana.fill("#f-generic-notation", "3d8")
        ana.click(".roll-button")
        bob.wait_for_function("document.querySelectorAll('#log li[data-kind=roll]').length === 4")
        self.wait_live(bob)
        self.assertIn("after=", bob.evaluate("window.__sockets.at(-1).url"))
        expected = list(range(1, max(self.seqs(ana)) + 1))
        self.assertEqual(self.seqs(bob), expected, "every seq once, in order")
        self.assertEqual(self.seqs(ana), expected)
        last = bob.locator("#log li[data-kind=roll]").last
        self.assertEqual(last.locator(".die").count(), 3)
        self.shot(bob, "room-generic-phone")
        self.shot(bob, "room-generic-phone-top", full_page=False)

    def test_a_seed_system_panel_quick_rolls_reveal_and_end(self):
        _, campaign, session = self.make_table("d6-chance")
        Character.objects.create(
            campaign=campaign,
            name="Kira Vess",
            sheet={"attributes": {"Dexterity": "3D+1"}, "skills": {"Blaster": "5D"}},
        )
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana", character="Kira Vess")

        # The GM logs in and opens the same room.
        boss = self.open_page()
        boss.goto(f"{self.live_server_url}/accounts/login/?next=/play/{session.invite_code}/")
        boss.fill("input[name=username]", "gm")
        boss.fill("input[name=password]", "pw-for-tests-only")
        boss.click("form [type=submit]")
        boss.wait_for_url(re.compile(rf"/play/{re.escape(session.invite_code)}/$"))
        self.wait_live(boss)

        # A quick roll from the sheet fills the panel; odds follow.
        ana.click("#quick button:has-text('Blaster 5D')")
        self.assertEqual(ana.input_value("#f-d6-chance-dice"), "5")
        ana.fill("#f-d6-chance-difficulty", "15")
        ana.wait_for_selector(".p-success")
        ana.wait_for_selector("#odds .events li:has-text('complication')")
        self.shot(ana, "room-d6-phone-panel", full_page=False)

        ana.select_option("#roll-visibility", "blind")
        ana.click(".roll-button")
        blind = boss.locator("#log li[data-kind=roll]").first
        blind.wait_for()
        self.assertGreaterEqual(blind.locator(".die.role-chance").count(), 1, "the Chance Die")
        self.assertIn("as Kira Vess", blind.inner_text())
        ana.wait_for_selector("#log li.ev-hidden:has-text('only the GM sees the dice')")

        # The GM reveals it: the room sees the dice.
        blind.locator("button.reveal").click()
        revealed = ana.locator("#log li[data-kind='roll.reveal']")
        revealed.wait_for()
        self.assertGreaterEqual(revealed.locator(".die.role-chance").count(), 1)
        boss.wait_for_selector("#log li[data-kind=roll] .revealed-note")
        self.shot(boss, "room-d6-gm-desktop")

        # The GM ends the session: the seed is revealed, rolling stops.
        boss.once("dialog", lambda dialog: dialog.accept())
        boss.click("#end-session")
        ana.wait_for_selector("#seed-row:not([hidden])")
        seed = ana.inner_text("#server-seed").strip()
        self.assertRegex(seed, r"^[0-9a-f]{64}$")
        self.assertTrue(ana.locator(".roll-button").is_disabled())
        self.assertIn(seed, ana.locator("#log li[data-kind='session.end']").inner_text())
        self.shot(ana, "room-d6-phone-ended")
