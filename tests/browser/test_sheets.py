"""Sheets as forms: a player edits their own character from the room (on a phone), the GM the
campaign's settings and any sheet from the dashboard; a bad value is named at its field."""

from __future__ import annotations

import pytest

from tabletop.models import Campaign, Character
from tests.browser.conftest import DESKTOP, PHONE, BrowserTestCase, off_thread

pytestmark = pytest.mark.browser


class SheetFormTests(BrowserTestCase):
    def test_player_and_gm_edit_sheets_and_settings(self):
        _, campaign, session = self.make_table(
            "zoria", characters={"Kael": {"level": 7, "skills": {"Swords": 6}}}
        )
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana", character="Kael")
        ana.click('details.sheet summary:has-text("Kael\'s sheet")')
        form = ana.locator("form.sheet-form")
        # Every field says how much it takes, as its schema does (the server refuses more).
        form.locator(".sheet-help:has-text('At most 200 entries.')").first.wait_for()
        self.assertEqual(form.get_by_label("Class", exact=True).get_attribute("maxlength"), "100")
        form.get_by_label("Level", exact=True).fill("-2")
        form.locator("button[type=submit]").click()
        form.locator(".field-error:not([hidden])").wait_for()
        form.get_by_label("Level", exact=True).fill("8")
        form.locator("button:text-is('Add to Skills')").click()
        form.get_by_label("Skills: name").nth(1).wait_for()  # the new row, not Swords's
        form.get_by_label("Skills: name").last.fill("Stealth")
        form.get_by_label("Skills: value").last.fill("4")
        form.locator("button[type=submit]").click()
        form.locator("[role=status]:text-is('Saved.')").wait_for()
        self.shot(ana, "room-phone-sheet-form", full_page=False)
        sheet = off_thread(lambda: Character.objects.get(name="Kael").sheet)
        self.assertEqual(sheet["level"], 8)
        self.assertEqual(sheet["skills"], {"Swords": 6, "Stealth": 4})

        gm = self.open_page(viewport=DESKTOP)
        self.log_in_gm(gm, f"/gm/{session.pk}/")
        gm.click("details.sheet summary:text-is('Campaign settings')")
        settings = gm.locator("form.sheet-form[aria-label='campaign settings']")
        settings.get_by_label("Players with several characters").select_option("divided")
        settings.locator("button[type=submit]").click()
        settings.locator("[role=status]:text-is('Saved.')").wait_for()
        saved = off_thread(lambda: Campaign.objects.get(pk=campaign.pk).settings)
        self.assertEqual(saved["multi_character"], "divided")
        self.shot(gm, "dashboard-settings-form", full_page=False)
