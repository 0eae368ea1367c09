"""The table in German: a browser that asks for German gets the room and the GM dashboard in
German (the pages, the modules' words and the server's refusals), on a phone and a desktop,
with no serious accessibility violation; the switch in the page brings English back."""

from __future__ import annotations

import pytest

from tests.browser.conftest import DESKTOP, PHONE, BrowserTestCase

pytestmark = pytest.mark.browser


class GermanTableTests(BrowserTestCase):
    def check_room(self, viewport: dict, name: str) -> None:
        _, _, session = self.make_table("generic")
        page = self.open_page(viewport=viewport, locale="de-DE")
        page.goto(f"{self.live_server_url}/play/{session.invite_code}/")
        self.assertEqual(page.get_attribute("html", "lang"), "de")
        self.assertEqual(page.inner_text("#main h1"), "„Session one“ beitreten")
        page.fill("#name", "Ana")
        page.click("button[type=submit]")
        self.wait_live(page)
        # Words from the template, from the modules' catalogue and from the server.
        self.assertEqual(page.inner_text("#roll-h"), "Würfeln")
        self.assertEqual(page.inner_text("#conn"), "verbunden")
        self.assertEqual(page.inner_text("label[for=roll-visibility]"), "Wer sieht es")
        page.fill("#f-generic-notation", "2d6+1")
        page.click(".roll-button")
        page.wait_for_selector("#log li.ev-roll")
        page.wait_for_selector("#last-roll:not([hidden])")
        self.assertIn("Dein Wurf", page.inner_text("#last-roll"))
        # A refusal from the server, in German; its code is the protocol's.
        page.fill("#f-generic-notation", "2d6")
        page.evaluate(
            """() => { const socket = window.__sockets.at(-1);
              socket.addEventListener("message", (e) => {
                const m = JSON.parse(e.data);
                if (m.type === "error" && m.ref === "probe") window.__refusal = m;
              });
              socket.send(JSON.stringify({type: "reveal", seq: 999999, ref: "probe"})); }"""
        )
        page.wait_for_function("() => window.__refusal")
        refusal = page.evaluate("() => window.__refusal")
        self.assertEqual(refusal["code"], "not-found")
        self.assertEqual(refusal["message"], "kein Wurf #999999 in dieser Sitzung")
        # The dice animation over, so axe reads the page and not dice in flight.
        page.wait_for_function("() => !document.querySelector('.fx-tray .fx-die')")
        self.assertEqual(page.inner_text("label[for=f-generic-notation]").strip(" *"), "Würfel")
        self.assertEqual(self.axe(page, f"room-de-{name}"), [])

        # The switch: English again, and it stays English though the browser asks for German.
        page.click(".language-switch button[lang=en]")
        page.wait_for_selector("html[lang=en]")
        self.wait_live(page)
        self.assertEqual(page.inner_text("#roll-h"), "Roll the dice")
        self.assertEqual(page.inner_text("#conn"), "live")
        self.assertEqual(page.inner_text("label[for=roll-visibility]"), "Who sees it")
        self.assertEqual(page.inner_text(".language-switch button"), "Deutsch")
        page.reload()
        self.wait_live(page)
        self.assertEqual(page.inner_text("#roll-h"), "Roll the dice")
        self.assertEqual(self.axe(page, f"room-en-after-switch-{name}"), [])

    def check_dashboard(self, viewport: dict, name: str) -> None:
        _, _, session = self.make_table("discordian")
        page = self.open_page(viewport=viewport, locale="de-DE")
        self.log_in_gm(page, f"/gm/{session.pk}/")
        page.wait_for_selector("#conn[data-state=live]")
        self.assertEqual(page.get_attribute("html", "lang"), "de")
        self.assertEqual(page.inner_text("#seats-h"), "Plätze (0 Personen)")
        self.assertEqual(page.inner_text("#session-status"), "läuft")
        self.assertEqual(page.inner_text("#conn"), "verbunden")
        self.assertEqual(page.inner_text("#discord-roll"), "Discord Die würfeln")
        self.assertIn("Rundenmodus", page.inner_text("#discord-mode"))
        self.assertEqual(self.axe(page, f"dashboard-de-{name}"), [])
        page.click(".language-switch button[lang=en]")
        page.wait_for_selector("html[lang=en]")
        page.wait_for_selector("#conn[data-state=live]")
        self.assertEqual(page.inner_text("#session-status"), "live")
        self.assertEqual(page.inner_text("#discord-roll"), "Roll the Discord Die")
        self.assertEqual(self.axe(page, f"dashboard-en-after-switch-{name}"), [])

    def test_a_room_in_german_on_a_desktop(self):
        self.check_room(DESKTOP, "desktop")

    def test_a_room_in_german_on_a_phone(self):
        self.check_room(PHONE, "phone")

    def test_the_gm_dashboard_in_german_on_a_desktop(self):
        self.check_dashboard(DESKTOP, "desktop")

    def test_the_gm_dashboard_in_german_on_a_phone(self):
        self.check_dashboard(PHONE, "phone")
