"""Defects a new group met in its first session, each checked in a real browser: what a roll was
for and its character wherever the roll shows, the live statistics summary, presence pushed live,
readable help, dice marks, live quick rolls, quiet checking as one types, the odds chart, saved
rolls without a character and the hidden-roll icon."""

from __future__ import annotations

import pytest

from tabletop.services.watch import create_watch_link
from tests.browser.conftest import PHONE, BrowserTestCase, off_thread

pytestmark = pytest.mark.browser


class FirstSessionTests(BrowserTestCase):
    def test_a_rolls_character_and_what_it_was_for_show_in_the_overlay_and_its_reveal(self):
        gm, _, session = self.make_table("generic", characters={"Kael": {}})
        link = off_thread(lambda: create_watch_link(session=session, user=gm, label="Stream"))
        overlay = self.open_page()
        overlay.goto(f"{self.live_server_url}/watch/{link.code}/overlay")
        page = self.open_page(viewport=PHONE)
        self.sit_down(page, session, "Ana", character="Kael")
        page.fill("#f-generic-notation", "2d6+3")
        page.fill("#roll-label", "Attack")
        page.click(".roll-button")
        shown = overlay.locator(".rolls li").first
        shown.wait_for()
        self.assertIn("Ana as Kael Attack", " ".join(shown.locator(".who").inner_text().split()))

        page.fill("#f-generic-notation", "1d20")
        page.fill("#roll-label", "Sneak")
        page.select_option("#roll-visibility", "gm")
        page.click(".roll-button")
        page.wait_for_selector("#log li.vis-gm[data-kind=roll]")
        seq = int(page.get_attribute("#log li.vis-gm[data-kind=roll]", "data-seq"))
        self.send_as_gm(session, {"type": "reveal", "seq": seq})
        reveal = page.locator("#log li[data-kind='roll.reveal']")
        reveal.wait_for()
        self.assertIn("a roll by Ana as Kael Sneak", " ".join(reveal.inner_text().split()))
        overlay.wait_for_selector(".rolls li:has-text('Sneak')")
        self.assertIn(
            "Ana as Kael Sneak", " ".join(overlay.locator(".rolls li").first.inner_text().split())
        )
        self.shot(page, "first-session-reveal-phone", full_page=False)
        self.shot(overlay, "first-session-overlay", full_page=False)
