"""The GM's dashboard: the GM rolls with the room's panel (for any character, NPCs too), and after
the end "Next session" makes the campaign's next session (planned, a new invite) in one click."""

from __future__ import annotations

import pytest

from tests.browser.conftest import DESKTOP, PHONE, BrowserTestCase

pytestmark = pytest.mark.browser


class DashboardGmTests(BrowserTestCase):
    def test_the_gm_rolls_from_the_dashboard_for_an_npc(self):
        _, _, session = self.make_table("generic", characters={"Goblin boss": {}})
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana")
        gm = self.open_page(viewport=DESKTOP)
        self.log_in_gm(gm, f"/gm/{session.pk}/")
        gm.wait_for_selector("#conn[data-state=live]")
        gm.click(".tray-dice button:text-is('d20')")
        gm.click("button[aria-label='+1 to the modifier']")
        gm.select_option("#roll-character", label="Goblin boss")
        gm.fill("#roll-label", "Ambush")
        gm.select_option("#roll-visibility", "gm")
        gm.click(".roll-button")
        entry = gm.locator("#log li[data-kind=roll]").first
        entry.wait_for()
        self.assertIn("as Goblin boss", entry.inner_text())
        self.assertEqual(entry.locator(".roll-label").inner_text(), "Ambush")
        gm.wait_for_selector("#hidden-rolls li .num b")
        self.assertEqual(gm.input_value("#roll-visibility"), "public", "back to everyone")
        ana.wait_for_selector("#log li.ev-hidden")
        self.shot(gm, "dashboard-gm-roll", full_page=False)

    def test_next_session_in_one_click(self):
        _, _, session = self.make_table("generic")
        gm = self.open_page(viewport=DESKTOP)
        self.log_in_gm(gm, f"/gm/{session.pk}/")
        gm.wait_for_selector("#conn[data-state=live]")
        self.assertTrue(gm.locator("#next-session").is_hidden())
        old_invite = gm.input_value("#invite")
        self.send_as_gm(session, {"type": "session.end"})
        gm.wait_for_selector("#next-session:not([hidden])")
        gm.click("#next-session button")
        gm.wait_for_url(lambda url: f"/gm/{session.pk}/" not in url)
        gm.wait_for_selector("#start-session:not([hidden])")
        self.assertEqual(gm.inner_text("#session-status"), "planned")
        self.assertIn("Session two", gm.inner_text("h1"))
        self.assertNotEqual(gm.input_value("#invite"), old_invite)
        self.shot(gm, "dashboard-next-session", full_page=False)

    def test_the_gm_gives_bonus_dice_to_a_player_character_and_an_npc(self):
        _, _, session = self.make_table(
            "discordian",
            characters={"Eris": {"hero_dice": ["d6"]}, "Vizier": {"hero_dice": ["d8"]}},
        )
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana", character="Eris")
        gm = self.open_page(viewport=DESKTOP)
        self.log_in_gm(gm, f"/gm/{session.pk}/")
        gm.wait_for_selector("#conn[data-state=live]")
        tools = gm.get_by_role("group", name="Bonus dice for Eris")
        tools.get_by_label("Eris: bonus die").select_option("d10")
        tools.get_by_role("button", name="Give bonus die to Eris for the next roll").click()
        gm.wait_for_selector(".bonus:has-text('next roll: +d10')")
        ana.wait_for_selector("#table-card .badge:has-text('bonus dice for the next roll: d10')")
        # The Vizier (no player) has his on the GM's own card.
        npc = gm.locator(".seat-card.gm").get_by_role("group", name="Bonus dice for Vizier")
        npc.get_by_role("button", name="Give bonus die to Vizier for the next roll").click()
        gm.wait_for_selector(".seat-card.gm .bonus:has-text('next roll: +d6')")
        npc.get_by_role("button", name="Take back Vizier's bonus dice").click()
        gm.wait_for_function(
            "!document.querySelector('.seat-card.gm .bonus').textContent.includes('next roll')"
        )
        self.shot(gm, "dashboard-discordian-bonus", full_page=False)
