"""Who is here, in the browser: seats that are not connected fade, the GM removes a seat (its
screen says so and its link stops working), and the join form refuses the GM's name and a name
already at the table in a sentence."""

from __future__ import annotations

import pytest

from tests.browser.conftest import DESKTOP, PHONE, BrowserTestCase

pytestmark = pytest.mark.browser


class SeatsTests(BrowserTestCase):
    def test_presence_removal_and_names(self):
        _, _, session = self.make_table("generic")
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana")
        bob = self.open_page(viewport=DESKTOP)
        self.sit_down(bob, session, "Bob")
        ana.wait_for_selector("#seats li:has-text('Bob'):not(.away)")

        # Bob closes his tab: once Ana's page asks again, Bob is shown as away.
        bob.context.close()
        ana.reload()
        self.wait_live(ana)
        ana.wait_for_selector("#seats li.away:has-text('Bob')")
        self.assertIn("away", ana.inner_text("#seats li.away"))
        self.shot(ana, "room-phone-seat-away", full_page=False)

        # The join form refuses the GM's title and a name at the table, in sentences.
        carl = self.open_page(viewport=PHONE)
        for taken in ("gm", "ANA"):
            carl.goto(f"{self.live_server_url}/play/{session.invite_code}/")
            carl.fill("#name", taken)
            carl.click("button[type=submit]")
            carl.wait_for_selector(".error")
            message = carl.inner_text(".error")
            self.assertRegex(message, r"^Name: .+; pick another name\.?$")
        self.shot(carl, "join-phone-name-taken", full_page=False)

        # The GM removes Carl, who sat down meanwhile under a free name.
        self.sit_down(carl, session, "Carl")
        boss = self.open_page(viewport=DESKTOP)
        self.log_in_gm(boss, f"/play/{session.invite_code}/")
        self.wait_live(boss)
        boss.click("#manage-seats")
        boss.once("dialog", lambda dialog: dialog.accept())
        boss.click("button.remove-seat:text-is('Remove Carl')")
        carl.wait_for_selector("#removed-note:not([hidden])")
        self.assertEqual(carl.inner_text("#conn"), "removed")
        self.assertTrue(carl.locator(".roll-button").is_disabled())
        ana.wait_for_selector("#seats li:has-text('Carl')", state="detached")
        self.shot(carl, "room-phone-removed", full_page=False)
        carl.reload()
        carl.wait_for_selector("#name")  # the link opens the join form, not the room
