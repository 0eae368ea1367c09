"""One link for the whole campaign, in the browser: a player on a phone and one on a desktop sit
down once through the campaign link, the first session ends, and the ended room points them on
(live, as the next session is planned and starts); the same link seats them in the second
session without a second sit-down."""

from __future__ import annotations

import pytest

from tests.browser.conftest import DESKTOP, PHONE, BrowserTestCase, off_thread

pytestmark = pytest.mark.browser


class CampaignLinkTests(BrowserTestCase):
    def test_sit_down_once_and_be_seated_at_the_next_session(self):
        _, campaign, first = self.make_table("generic")
        link = f"{self.live_server_url}/c/{campaign.link_code}/"
        players = {"Ana": self.open_page(viewport=PHONE), "Bob": self.open_page(viewport=DESKTOP)}
        for name, page in players.items():
            page.goto(link)
            page.wait_for_url(f"**/play/{first.invite_code}/")
            page.fill("#name", name)
            page.click("button[type=submit]")
            self.wait_live(page)
        ana, bob = players["Ana"], players["Bob"]
        self.assertTrue(ana.locator("#onward").is_hidden())

        # The GM ends the session: the room says the next one starts soon, with the way on.
        gm = self.open_page(viewport=DESKTOP)
        self.log_in_gm(gm, f"/gm/{first.pk}/")
        self.wait_live(gm)
        self.assertEqual(gm.input_value("#campaign-link"), link)
        self.send_as_gm(first, {"type": "session.end"})
        ana.wait_for_selector("#onward:has-text('The next session starts soon')")
        self.assertEqual(ana.get_attribute("#onward a", "href"), f"/c/{campaign.link_code}/")

        # The GM plans and starts the next session: the ended rooms hear of it, no reload.
        gm.wait_for_selector("#next-session:not([hidden])")
        gm.click("#next-session button")
        gm.wait_for_selector("#start-session:not([hidden]):not([disabled])")
        ana.wait_for_selector("#onward:has-text('“Session two”, is planned')")
        gm.click("#start-session")
        second = off_thread(lambda: campaign.sessions.get(title="Session two"))
        for page in (ana, bob):
            page.wait_for_selector("#onward:has-text('“Session two”, is live')")
        self.shot(ana, "campaign-link-phone-ended-room", full_page=False)
        found = self.axe(ana, "campaign-link-phone-ended-room")
        self.assertEqual(found, [], "serious or critical axe violations")

        # The way on: the same seat at the second session, no join form.
        ana.click("#onward a")
        ana.wait_for_url(f"**/play/{second.invite_code}/")
        self.wait_live(ana)
        self.assertEqual(ana.inner_text(".room-title h1"), "Session two")
        self.assertEqual(ana.inner_text(".you strong"), "Ana")
        # Bob opens the campaign link again next week, as he did the first time.
        bob.goto(link)
        bob.wait_for_url(f"**/play/{second.invite_code}/")
        self.wait_live(bob)
        self.assertEqual(bob.inner_text(".you strong"), "Bob")
        ana.wait_for_selector("#seats li:has-text('Bob'):not(.away)")

        # Rolls at the second session are the second session's.
        ana.fill("#f-generic-notation", "2d6+1")
        ana.click(".roll-button")
        bob.wait_for_selector("#log li[data-kind=roll]:has-text('Ana')")
        self.shot(bob, "campaign-link-desktop-second-session")
        found = self.axe(bob, "campaign-link-desktop-second-session")
        self.assertEqual(found, [], "serious or critical axe violations")

        # The first session's invite opens its own ended room for its players, still pointing on.
        ana.goto(f"{self.live_server_url}/play/{first.invite_code}/")
        self.wait_live(ana)
        ana.wait_for_selector("#onward:has-text('“Session two”, is live')")
