"""The player's room in a real browser: two players at one table, odds before rolling, dice
appearing on the other screen with their roles, hidden rolls, reconnects, and the GM's controls.

Daphne serves the page and the socket in another process (ChannelsLiveServerTestCase);
Playwright drives Debian's Chromium.
"""

from __future__ import annotations

import pytest

from tabletop.models import Event
from tests.browser.conftest import PHONE, BrowserTestCase

pytestmark = pytest.mark.browser


class RoomPageTests(BrowserTestCase):
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
        seed = ana.input_value("#client-seed")
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
        # The roll took the field's seed; the next roll gets a fresh one (no seed is shared).
        self.assertEqual(event.data["client_seed"], seed)
        self.assertRegex(event.data["client_seed"], r"^[0-9a-f]{32}$")
        self.assertRegex(ana.input_value("#client-seed"), r"^[0-9a-f]{32}$")
        self.assertNotEqual(ana.input_value("#client-seed"), seed)
        self.shot(ana, "room-generic-desktop")

        # A roll for the roller alone is a locked line for everyone else.
        ana.select_option("#roll-visibility", "self")
        ana.fill("#f-generic-notation", "1d20")
        ana.click(".roll-button")
        hidden = bob.locator("#log li.ev-hidden")
        hidden.wait_for()
        self.assertIn("a hidden roll by Ana", hidden.inner_text())
        # The page's own padlock (SVG), not an emoji that shows as a box without an emoji font.
        self.assertGreaterEqual(hidden.locator("svg.icon-lock").count(), 1)
        self.assertNotIn("\U0001f512", hidden.inner_text())
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
        _, _, session = self.make_table(
            "d6-chance",
            characters={
                "Kira Vess": {"attributes": {"Dexterity": "3D+1"}, "skills": {"Blaster": "5D"}}
            },
        )
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana", character="Kira Vess")

        # The GM logs in and opens the same room.
        boss = self.open_page()
        self.log_in_gm(boss, f"/play/{session.invite_code}/")
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
        # Its caption, spoken words and style are the system's own module's, through the seam.
        chance = revealed.locator(".die.role-chance").first
        self.assertIn("chance die", chance.get_attribute("title") or "")
        base = revealed.locator(".die.role-base").first
        colour = "(d) => getComputedStyle(d).borderTopColor"
        self.assertNotEqual(chance.evaluate(colour), base.evaluate(colour), "d6-chance.css applies")
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
