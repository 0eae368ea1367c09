"""Rolling without knowing notation: the dice tray types the notation for the player, the field
remembers the last rolls, and any roll in the log can be rolled again with one tap."""

from __future__ import annotations

import pytest

from tabletop.models import Event, SavedRoll
from tests.browser.conftest import BrowserTestCase, off_thread

pytestmark = pytest.mark.browser

PHONE_390 = {"width": 390, "height": 844}


class RollPanelTests(BrowserTestCase):
    def test_dice_tray_history_and_roll_again(self):
        _, _, session = self.make_table("generic")
        page = self.open_page(viewport=PHONE_390)
        self.sit_down(page, session, "Ana")
        field = "#f-generic-notation"
        for die in ("d6", "d6", "d8"):
            page.click(f".tray-dice button:text-is('{die}')")
        page.click("button[aria-label='+1 to the modifier']")
        page.click("button[aria-label='+1 to the modifier']")
        page.click(".tray-mod button >> nth=0")  # minus one
        self.assertEqual(page.input_value(field), "2d6+1d8+1")

        page.click("button.edge:text-is('Advantage')")
        self.assertEqual(page.input_value(field), "2d20kh1+2d6+1d8+1")
        self.assertEqual(
            page.get_attribute("button.edge:text-is('Advantage')", "aria-pressed"), "true"
        )
        page.click("button.edge:text-is('Disadvantage')")
        self.assertEqual(page.input_value(field), "2d20kl1+2d6+1d8+1")
        page.click("button.edge:text-is('Disadvantage')")
        self.assertEqual(page.input_value(field), "1d20+2d6+1d8+1")
        page.click(".tray button:text-is('Clear')")
        page.click(".tray-dice button:text-is('d20')")
        page.click("button.edge:text-is('Advantage')")
        self.assertEqual(page.input_value(field), "2d20kh1")
        page.fill("#roll-label", "Attack\u202e")
        page.click(".roll-button")
        page.wait_for_selector("#log li[data-kind=roll] .roll-label:text-is('Attack')")
        self.assertEqual(page.input_value("#roll-label"), "", "a label is for one roll")
        self.shot(page, "room-phone-tray", full_page=False)

        # The field remembers: the last roll is one tap away, after a reload too.
        page.fill(field, "3d4")
        page.click(".roll-button")
        page.wait_for_function("document.querySelectorAll('#log li[data-kind=roll]').length === 2")
        page.reload()
        self.wait_live(page)
        recent = page.locator(".recent-roll")
        self.assertEqual(recent.all_inner_texts(), ["3d4", "2d20kh1"])
        recent.nth(1).click()
        self.assertEqual(page.input_value(field), "2d20kh1")

        # Roll again on the first roll in the log: the same request, rolled at once.
        page.fill(field, "")
        page.locator("#log li[data-kind=roll]").first.locator("button.again").click()
        page.wait_for_function("document.querySelectorAll('#log li[data-kind=roll]').length === 3")
        notations = off_thread(
            lambda: [
                e.data["request"]["notation"]
                for e in Event.objects.filter(session=session, kind="roll").order_by("seq")
            ]
        )
        self.assertEqual(notations, ["2d20kh1", "3d4", "2d20kh1"])
        again = page.locator("#log li[data-kind=roll]").nth(2)
        self.assertEqual(
            again.locator(".roll-label").inner_text(), "Attack", "the label comes along"
        )

    def test_saved_rolls_are_one_tap_kept_on_the_server_and_editable(self):
        _, _, session = self.make_table("generic", characters={"Wren": {}})
        page = self.open_page(viewport=PHONE_390)
        self.sit_down(page, session, "Ana", character="Wren")
        page.fill("#f-generic-notation", "1d20+5")
        page.fill("#roll-label", "Longsword")
        page.click("button.save-roll")
        chip = page.locator("button.saved-roll:text-is('Longsword')")
        chip.wait_for()

        # Kept on the server: there after a reload; one tap rolls it with its name.
        page.reload()
        self.wait_live(page)
        chip.click()
        entry = page.locator("#log li[data-kind=roll]").first
        entry.wait_for()
        self.assertEqual(entry.locator(".roll-label").inner_text(), "Longsword")
        self.assertIn("as Wren", entry.inner_text())
        self.shot(page, "room-phone-saved-rolls", full_page=False)

        # Renamed, then forgotten.
        page.click("button:text-is('Edit saved rolls')")
        page.once("dialog", lambda dialog: dialog.accept("Longsword attack"))
        page.click("button:text-is('Rename Longsword')")
        page.wait_for_selector("button:text-is('Remove Longsword attack')")
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("button:text-is('Remove Longsword attack')")
        page.wait_for_selector("button:text-is('Remove Longsword attack')", state="detached")
        self.assertEqual(off_thread(lambda: SavedRoll.objects.count()), 0)
