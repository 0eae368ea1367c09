"""The GM dashboard in a real browser, at a Zoria table: the GM awards a die and the player's
pool grows, the player's open roll updates live on the GM's screen as a die is used on it, the
GM declares it, and ends the session (pools expire, the seed is revealed).

Daphne serves the pages and the socket in another process (ChannelsLiveServerTestCase);
Playwright drives Debian's Chromium.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlparse

import pytest
from django.contrib.auth import get_user_model

from tabletop.models import Campaign, Character, Event, GameSession
from tests.browser.conftest import DESKTOP, GM_PASSWORD, PHONE, BrowserTestCase, off_thread

pytestmark = pytest.mark.browser


class DashboardTests(BrowserTestCase):
    # -- helpers ------------------------------------------------------------------------------

    def make_zoria_table(self) -> GameSession:
        """A Zoria campaign with a level-7 character and a planned session."""
        from tabletop.services.sessions import create_session

        def make():
            gm = get_user_model().objects.create_user("gm", password=GM_PASSWORD)
            campaign = Campaign.objects.create(name="The Sunken Crown", system="zoria", gm=gm)
            Character.objects.create(
                campaign=campaign, name="Kael", sheet={"level": 7, "class": "Warrior"}
            )
            return create_session(campaign=campaign, title="Into the Deeps")

        return off_thread(make)

    def socket_as(self, page, session, messages: list[dict]) -> tuple[dict, list[dict]]:
        """Open the room socket with the seat token the browser holds (its cookie), and send
        ``messages``: returns hello and, for each message, its event or its error."""
        from websockets.sync.client import connect

        cookie = next(
            c for c in page.context.cookies() if c["name"] == f"seat_{session.invite_code}"
        )
        host = urlparse(self.live_server_url).netloc
        url = f"ws://{host}/ws/play/{session.invite_code}/?token={cookie['value']}"

        def talk():
            answers = []
            with connect(url, open_timeout=5) as ws:
                hello = json.loads(ws.recv(timeout=5))
                for message in messages:
                    ws.send(json.dumps(message))
                    while True:
                        reply = json.loads(ws.recv(timeout=5))
                        if reply.get("ref") == message.get("ref"):
                            answers.append(reply)
                            break
            return hello, answers

        return off_thread(talk)

    # -- the test -----------------------------------------------------------------------------

    def test_award_use_declare_and_end_at_a_zoria_table(self):
        session = self.make_zoria_table()
        code = session.invite_code
        dashboard = f"/gm/{session.pk}/"

        # The GM logs in with Django's form and lands on the dashboard.
        gm = self.open_page()
        gm.goto(f"{self.live_server_url}/accounts/login/?next={dashboard}")
        gm.fill("input[name=username]", "gm")
        gm.fill("input[name=password]", "pw-for-tests-only")
        gm.click("form [type=submit]")
        gm.wait_for_url(re.compile(rf"{re.escape(dashboard)}$"))
        self.wait_live(gm)
        self.assertEqual(gm.inner_text("#session-status"), "planned")
        self.assertEqual(gm.input_value("#invite"), f"{self.live_server_url}/play/{code}/")
        self.assertTrue(gm.locator("#commitment-row").is_hidden())
        self.assertTrue(gm.locator("#end-session").is_hidden())

        # A player sits down with Kael (level 7) before the start; the GM's screen shows her.
        ana = self.open_page(viewport=PHONE)
        ana.goto(f"{self.live_server_url}/play/{code}/")
        ana.fill("#name", "Ana")
        ana.select_option("#character", label="Kael")
        ana.click("button[type=submit]")
        self.wait_live(ana)
        card = gm.locator(".seat-card", has_text="Ana")
        card.wait_for()
        self.assertIn("Kael", card.inner_text())
        self.assertIn("level 7", card.inner_text())
        self.assertIn("dealt when the session starts", card.inner_text())
        self.shot(gm, "dashboard-zoria-planned")

        # The GM starts the session: the commitment is published, pools are dealt (4 d6).
        gm.click("#start-session")
        gm.wait_for_selector("#session-status:has-text('live')")
        session.refresh_from_db()
        gm.wait_for_selector("#commitment-row:not([hidden])")
        self.assertEqual(gm.inner_text("#commitment"), session.commitment)
        self.assertTrue(gm.locator("#seed-row").is_hidden())
        self.assertTrue(gm.locator("#start-session").is_hidden())
        card.locator(".pool").first.wait_for()
        pool = card.locator(".pool[data-kind=session-dice] .pool-count")
        self.assertEqual(pool.get_attribute("aria-label"), "4 d6 left (started with 4)")
        self.assertEqual(card.locator(".pip.on").count(), 4)
        gm_pool = gm.locator(".seat-card.gm .pool[data-kind=session-dice] .pool-count")
        self.assertEqual(
            gm_pool.get_attribute("aria-label"), "5 d10 left (started with 5)", "1 player + 4 dice"
        )
        self.assertEqual(gm.locator(".seat-card").first.get_attribute("class"), "seat-card gm")

        # The GM awards a die: Ana's pool and the GM's grow.
        card.get_by_role("button", name="Award die to Ana").click()
        gm.wait_for_function(
            "document.querySelector('.seat-card:not(.gm) .pool-count').getAttribute('aria-label')"
            " === '5 d6 left (started with 4)'"
        )
        self.assertEqual(gm_pool.get_attribute("aria-label"), "6 d10 left (started with 5)")
        self.assertEqual(card.locator(".pip.on").count(), 5)
        # The player's side: the award in the room's log, and the pool in the socket's state.
        ana.wait_for_selector("#log li:has-text('GM awards Ana 1d6')")
        hello, _ = self.socket_as(ana, session, [])
        mine = [p for p in hello["state"]["pools"] if p["seat"] == hello["seat"]["id"]]
        self.assertEqual([(p["die"], p["remaining"]) for p in mine], [("d6", 5)])
        self.shot(gm, "dashboard-zoria-award")

        # Undo takes it back; a second undo has nothing to undo, said next to the button.
        gm.click("#undo-award")
        gm.wait_for_function(
            "document.querySelector('.seat-card:not(.gm) .pool-count').getAttribute('aria-label')"
            " === '4 d6 left (started with 4)'"
        )
        gm.click("#undo-award")
        gm.wait_for_selector("#undo-error:has-text('no award to undo')")
        card.get_by_role("button", name="Award die to Ana").click()
        gm.wait_for_function(
            "document.querySelector('.seat-card:not(.gm) .pool-count').getAttribute('aria-label')"
            " === '5 d6 left (started with 4)'"
        )

        # Ana rolls a Zoria check in the room; the GM sees it open.
        ana.fill("#f-zoria-check", "1d20+7")
        ana.fill("#f-zoria-dc", "15")
        ana.click(".roll-button")
        ana.wait_for_selector("#last-roll .die")
        roll = Event.objects.filter(session=session, kind="roll").latest("seq")
        open_roll = gm.locator(f".open-roll[data-seq='{roll.seq}']")
        open_roll.wait_for()
        self.assertIn("Ana", open_roll.inner_text())
        self.assertIn("as Kael", open_roll.inner_text())
        self.assertEqual(int(open_roll.locator(".open-total").inner_text()), roll.data["total"])
        self.assertRegex(open_roll.locator(".tally").inner_text(), r"DC\s+15")
        self.assertTrue(
            open_roll.get_by_role("button", name=f"Use a GM die on roll #{roll.seq}").is_hidden()
        )

        # She uses a die from her pool on it (over the socket, with her seat's token).
        _, [used] = self.socket_as(
            ana, session, [{"type": "pool.use", "ref": "u1", "roll": roll.seq}]
        )
        self.assertEqual(used["kind"], "pool", used)
        added = used["data"]["added"]
        self.assertGreaterEqual(added, 1)
        total = f".open-roll[data-seq='{roll.seq}'] .open-total"
        grown = roll.data["total"] + added
        gm.wait_for_function(f'Number(document.querySelector("{total}").textContent) === {grown}')
        self.assertIn(f"+{added} from action dice", open_roll.inner_text())
        self.assertEqual(pool.get_attribute("aria-label"), "4 d6 left (started with 4)")
        self.shot(gm, "dashboard-zoria-open-roll")

        # Phone width and dark mode: everything still there and readable.
        gm.set_viewport_size(PHONE)
        gm.emulate_media(color_scheme="dark")
        self.assertLessEqual(gm.evaluate("document.documentElement.scrollWidth"), PHONE["width"])
        self.shot(gm, "dashboard-zoria-phone-dark")
        gm.set_viewport_size(DESKTOP)
        gm.emulate_media(color_scheme="light")

        # The GM declares it from the keyboard: the roll leaves the list, the room hears it.
        open_roll.get_by_label("Result").fill("the portcullis rises")
        open_roll.get_by_label("Result").press("Enter")
        open_roll.wait_for(state="detached")
        self.assertTrue(gm.locator("#no-open").is_visible())
        ana.wait_for_selector("#log li:has-text('the portcullis rises')")
        _, [late] = self.socket_as(
            ana, session, [{"type": "pool.use", "ref": "u2", "roll": roll.seq}]
        )
        self.assertEqual(late["code"], "conflict")

        # The GM ends the session (after confirming): pools expire, the seed is revealed.
        gm.once("dialog", lambda dialog: dialog.accept())
        gm.click("#end-session")
        gm.wait_for_selector("#seed-row:not([hidden])")
        session.refresh_from_db()
        seed = bytes(session.server_seed).hex()
        self.assertEqual(gm.inner_text("#server-seed").strip(), seed)
        self.assertEqual(gm.inner_text("#session-status"), "ended")
        gm.wait_for_function(
            "document.querySelector('.seat-card:not(.gm) .pool-count').getAttribute('aria-label')"
            " === '0 d6 left (started with 4)'"
        )
        self.assertTrue(card.get_by_role("button", name="Award die to Ana").is_disabled())
        self.assertTrue(gm.locator("#end-session").is_hidden())
        ana.wait_for_selector("#seed-row:not([hidden])")
        self.shot(gm, "dashboard-zoria-ended")
        ana.evaluate("window.scrollTo(0, 0)")
        self.shot(ana, "dashboard-zoria-player-room", full_page=False)

    def test_the_gm_refunds_dice_spent_on_a_critical_to_their_spender(self):
        from rules.engines import FairStream
        from tabletop.services.sessions import start_session

        session = self.make_zoria_table()
        off_thread(lambda: start_session(session_id=session.pk))
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana", character="Kael")
        gm = self.open_page()
        self.log_in_gm(gm, f"/gm/{session.pk}/")
        self.wait_live(gm)

        def natural_20() -> str:
            live = GameSession.objects.get(pk=session.pk)
            seq, seed = live.last_seq + 1, bytes(live.server_seed)
            return next(
                f"c{i}" for i in range(3000) if FairStream(seed, f"c{i}", seq).roll(20) == 20
            )

        kael = off_thread(lambda: Character.objects.get(name="Kael").pk)
        _, [roll] = self.socket_as(ana, session, [
            {"type": "roll", "ref": "r", "character": kael, "client_seed": off_thread(natural_20),
             "request": {"check": "1d20+3"}},
        ])  # fmt: skip
        _, [spent] = self.socket_as(ana, session, [
            {"type": "pool.spend", "ref": "s", "effect": "activate-critical", "roll": roll["seq"],
             "count": 2},
        ])  # fmt: skip
        self.assertEqual(spent["data"]["open_roll"]["critical_dice"], 2)
        open_roll = gm.locator(f".open-roll[data-seq='{roll['seq']}']")
        open_roll.wait_for()
        refund = open_roll.get_by_role(
            "button", name=f"Refund critical dice spent on roll #{roll['seq']}"
        )
        open_roll.locator("input.count").fill("2")
        refund.click()
        card = gm.locator(".seat-card", has_text="Ana")
        gm.wait_for_function(
            "document.querySelector('.seat-card:not(.gm) .pool-count').getAttribute('aria-label')"
            " === '4 d6 left (started with 4)'"
        )
        self.assertTrue(refund.is_hidden(), "nothing left to refund on it")
        ana.wait_for_selector('#log li:has-text("spent on roll")')
        self.assertIn("Kael", card.inner_text())
        self.shot(gm, "dashboard-zoria-refund")
