"""Talk at the table and turn order, in the browser (desktop and phone, axe-core): a message with
two inline rolls that verify after the end, a whisper the third player never sees (live, on
replay, in exports, on a watch link), and a three-round initiative order seen live by everyone."""

from __future__ import annotations

import json

import pytest

from tabletop.services.watch import create_watch_link
from tests.browser.conftest import PHONE, BrowserTestCase, off_thread

pytestmark = pytest.mark.browser

SECRET = "the key is under the third stone"


def say(page, text: str) -> None:
    page.fill("#chat-text", text)
    page.press("#chat-text", "Enter")
    page.wait_for_function("!document.getElementById('chat-text').disabled")


class TalkTests(BrowserTestCase):
    def test_a_message_with_two_inline_rolls_verifies_after_the_end(self):
        _, _, session = self.make_table("generic")
        ana = self.open_page()
        bo = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana")
        self.sit_down(bo, session, "Bo")
        say(ana, "I swing [[1d20+5]] and hit for [[2d6+3]] <b>hard</b>")
        for page in (ana, bo):
            line = page.locator("#log li[data-kind=chat]").last
            line.wait_for()
            self.assertEqual(line.locator(".inline-roll").count(), 2)
            text = line.locator(".chat-text").inner_text()
            self.assertRegex(text, r"^I swing \d+ and hit for \d+ <b>hard</b>$")  # as typed
            self.assertEqual(line.locator("b").count(), 0)
        # /help is the page's own answer: nothing goes to the table.
        say(bo, "/help")
        self.assertTrue(bo.is_visible("#chat-help dl"))
        say(bo, "/me ducks")
        ana.wait_for_selector("#log li.ev-emote:has-text('* Bo ducks')")
        self.assertEqual(self.axe(ana, "talk-room-desktop"), [])
        self.assertEqual(self.axe(bo, "talk-room-phone"), [])
        self.shot(bo, "talk-inline-rolls-phone", full_page=False)

        self.assertEqual(self.send_as_gm(session, {"type": "session.end"})["kind"], "session.end")
        ana.goto(f"{self.live_server_url}/play/{session.invite_code}/verify")
        ana.wait_for_selector("#verify[data-result]")
        self.assertEqual(ana.get_attribute("#verify", "data-result"), "verified")
        self.assertEqual(ana.locator("#rows tr.ok").count(), 2)
        self.shot(ana, "talk-inline-rolls-verified")

    def test_a_whisper_the_third_player_never_sees(self):
        gm, _, session = self.make_table("generic")
        ana, bo = self.open_page(), self.open_page(viewport=PHONE)
        cy = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana")
        self.sit_down(bo, session, "Bo")
        self.sit_down(cy, session, "Cy")
        say(ana, f"/w Bo {SECRET} [[1d6]]")
        bo.wait_for_selector(f"#log li[data-kind=chat]:has-text('{SECRET}')")
        self.assertIn("whispers to Bo", bo.inner_text("#log li[data-kind=chat]"))
        say(cy, "anyone?")  # after the whisper: Cy has had every event up to here
        cy.wait_for_selector("#log li[data-kind=chat]:has-text('anyone?')")
        whisper = off_thread(
            lambda: session.events.filter(kind="chat", visibility="whisper").get().seq
        )
        self.assertEqual(cy.locator(f"#ev-{whisper}").count(), 1)
        self.assertFalse(cy.is_visible(f"#ev-{whisper}"))
        self.assertNotIn(SECRET, cy.content())
        self.assertNotIn("whisper", cy.inner_text("#log"))
        self.assertEqual(self.axe(bo, "talk-whisper-phone"), [])
        cy.reload()  # on replay
        self.wait_live(cy)
        cy.wait_for_selector("#log li[data-kind=chat]:has-text('anyone?')")
        self.assertNotIn(SECRET, cy.content())

        link = off_thread(lambda: create_watch_link(session=session, user=gm))
        watch = self.open_page()
        watch.goto(f"{self.live_server_url}/watch/{link.code}/")
        watch.wait_for_selector("#log li[data-kind=chat]:has-text('anyone?')")
        self.assertNotIn(SECRET, watch.content())

        self.assertEqual(self.send_as_gm(session, {"type": "session.end"})["kind"], "session.end")
        # Exports as each page's own browser downloads them (its seat's cookie), and the link's.
        for page, url in [
            (cy, f"/play/{session.invite_code}/export.{fmt}") for fmt in ("json", "md", "html")
        ] + [(watch, f"/watch/{link.code}/export.{fmt}") for fmt in ("json", "md", "html")]:
            answer = page.request.get(self.live_server_url + url)
            self.assertEqual(answer.status, 200, url)
            body = answer.text()
            self.assertNotIn(SECRET, body, url)
            if url.endswith("json"):
                hidden = [e for e in json.loads(body)["events"] if e["visibility"] == "whisper"]
                self.assertTrue(hidden and all(e["actor"] is None for e in hidden), url)
        # Bo, the recipient, keeps it in his own record.
        answer = bo.request.get(f"{self.live_server_url}/play/{session.invite_code}/export.md")
        self.assertIn(SECRET, answer.text())


class TurnOrderTests(BrowserTestCase):
    def test_a_three_round_initiative_order_live_on_every_screen(self):
        _, _, session = self.make_table("generic")
        dashboard = self.open_page()
        self.log_in_gm(dashboard, f"/gm/{session.pk}/")
        self.wait_live_dashboard(dashboard)
        ana = self.open_page(viewport=PHONE)
        bo = self.open_page()
        self.sit_down(ana, session, "Ana")
        self.sit_down(bo, session, "Bo")
        self.assertTrue(ana.is_hidden("#turns-card"))  # no fight yet: no card on a phone

        dashboard.fill("#npc-name", "Goblin")
        dashboard.fill("#npc-value", "12")
        dashboard.click(".turns-npc button[type=submit]")
        ana.wait_for_selector("#turns-card .turn:has-text('Goblin')")
        ana.fill("#init-notation", "1d2*0+15")
        ana.click("#turns-card button:has-text('Roll initiative')")
        say(bo, "/r 1d2*0+9 #init")
        for page in (dashboard, ana, bo):
            page.wait_for_function("document.querySelectorAll('#turns-card .turn').length === 3")
            names = page.locator("#turns-card .turn-name").all_inner_texts()
            self.assertEqual(names, ["Ana", "Goblin", "Bo"])

        seen = []
        for step in range(9):
            if step % 3 == 0:  # the GM moves the order on
                dashboard.click("#turns-card .turns-bar button:has-text('Next turn')")
            else:  # ... and whoever has the turn ends it on their own screen
                holder = ana if seen[-1][1] == "Ana" else bo if seen[-1][1] == "Bo" else None
                if holder is None:
                    dashboard.click("#turns-card .turns-bar button:has-text('Next turn')")
                else:
                    holder.click("#turns-card button:has-text('End my turn')")
            expected_round = step // 3 + 1
            expected = ["Ana", "Goblin", "Bo"][step % 3]
            for page in (dashboard, ana, bo):
                page.wait_for_selector(
                    f"#turns-card .turns-round:has-text('Round {expected_round}: {expected}')"
                )
                current = page.locator("#turns-card .turn[aria-current=true] .turn-name")
                self.assertEqual(current.inner_text(), expected)
            seen.append((expected_round, expected))
        self.assertEqual(len(seen), 9)
        self.shot(ana, "turn-order-phone", full_page=False)
        self.shot(dashboard, "turn-order-dashboard")
        self.assertEqual(self.axe(ana, "turn-order-phone"), [])
        self.assertEqual(self.axe(dashboard, "turn-order-dashboard"), [])
        # It replays: a fresh page shows the same order and turn.
        ana.reload()
        self.wait_live(ana)
        ana.wait_for_selector("#turns-card .turns-round:has-text('Round 3: Bo')")

    @staticmethod
    def wait_live_dashboard(page) -> None:
        page.wait_for_selector("#conn[data-state=live]")
