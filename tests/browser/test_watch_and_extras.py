"""The table's extras in a real browser: the spectator's page and the stream overlay (live and on
replay, never a hidden roll), the rolling dice and their switches, the statistics panel, the
export links, the GM's watch-link form, and the room page's weight."""

from __future__ import annotations

import contextlib

import pytest

from tabletop.models import WatchLink
from tabletop.services.watch import create_watch_link
from tests.browser.conftest import PHONE, BrowserTestCase, off_thread
from tests.tabletop.test_room_views import PAGE_BUDGET

pytestmark = pytest.mark.browser
SECRET = "blind-secret-seed"


class WatchAndExtrasTests(BrowserTestCase):
    def test_spectators_and_the_overlay_see_public_rolls_live_and_on_replay_never_hidden_ones(self):
        gm, _, session = self.make_table("generic")
        link = off_thread(lambda: create_watch_link(session=session, user=gm, label="Stream"))
        watch = self.open_page(viewport=PHONE)
        watch.goto(f"{self.live_server_url}/watch/{link.code}/")
        watch.wait_for_selector("#conn[data-state=live]")
        overlay = self.open_page()
        overlay.goto(f"{self.live_server_url}/watch/{link.code}/overlay")

        public = self.send_as_gm(session, {"type": "roll", "request": {"notation": "3d6"}})
        hidden = self.send_as_gm(
            session,
            {
                "type": "roll",
                "request": {"notation": "d20"},
                "visibility": "blind",
                "client_seed": SECRET,
            },
        )
        watch.wait_for_selector(f"#ev-{hidden['seq']}")
        roll = watch.locator(f"#ev-{public['seq']}")
        self.assertEqual(roll.locator(".die").count(), 3)
        locked = watch.locator(f"#ev-{hidden['seq']}")
        self.assertEqual(locked.locator(".die").count(), 0)
        self.assertIn("hidden roll", locked.inner_text())
        overlay.wait_for_selector(f".rolls li[data-seq='{public['seq']}']")
        self.assertEqual(overlay.locator(".rolls li").count(), 1)
        self.assertIn(str(public["data"]["total"]), overlay.inner_text(".rolls .total"))
        background = overlay.evaluate("getComputedStyle(document.body).backgroundColor")
        self.assertEqual(background, "rgba(0, 0, 0, 0)")
        for page in (watch, overlay):
            self.assertNotIn(SECRET, page.content())
        self.assertEqual(self.axe(watch, "watch-phone"), [])
        self.assertEqual(self.axe(overlay, "overlay"), [])

        # On replay (a fresh page) the same: the public dice, the hidden roll still hidden.
        watch.reload()
        watch.wait_for_selector(f"#ev-{hidden['seq']}")
        self.assertEqual(watch.locator(f"#ev-{public['seq']} .die").count(), 3)
        self.assertEqual(watch.locator(f"#ev-{hidden['seq']} .die").count(), 0)
        self.assertNotIn(SECRET, watch.content())
        overlay.reload()
        overlay.wait_for_selector(".rolls li")
        self.assertEqual(overlay.locator(".rolls li").count(), 1)

        # The GM revokes the link on the dashboard: both pages say so or go blank.
        dashboard = self.open_page()
        self.log_in_gm(dashboard, f"/gm/{session.pk}/")
        dashboard.click("#watch button:has-text('Revoke')")
        dashboard.wait_for_selector("#watch li.revoked")
        watch.wait_for_selector("#revoked:has-text('This watch link was revoked.')")
        overlay.wait_for_selector(".rolls li", state="detached")

    def test_dice_roll_on_screen_without_holding_up_the_log_and_the_switches_are_remembered(self):
        _, _, session = self.make_table("generic")
        ana = self.open_page()
        self.sit_down(ana, session, "Ana")
        ana.wait_for_selector("#fx-animate")
        self.assertTrue(ana.is_checked("#fx-animate"))
        self.assertFalse(ana.is_checked("#fx-sound"))
        ana.fill("#f-generic-notation", "8d20+d6")
        ana.press("#f-generic-notation", "Enter")
        ana.wait_for_selector("#log li[data-kind=roll] .die")
        ana.wait_for_selector(".fx-tray .fx-die")
        self.shot(ana, "room-dice-rolling", full_page=False)
        self.assertEqual(ana.locator(".fx-tray .fx-die").count(), 9)
        self.assertEqual(ana.locator(".fx-tray .fx-d20").count(), 8)
        self.assertEqual(
            ana.evaluate("getComputedStyle(document.querySelector('.fx-tray')).pointerEvents"),
            "none",
        )
        # Every die has landed within 0.8 s of the roll: its delay plus its tumble.
        longest = ana.evaluate(
            """Math.max(...[...document.querySelectorAll('.fx-die')].map(d => {
                 const s = getComputedStyle(d);
                 return parseFloat(s.animationDelay) + parseFloat(s.animationDuration); }))"""
        )
        self.assertLessEqual(longest, 0.8)
        # The next roll goes at once; the tray shows it instead.
        ana.fill("#f-generic-notation", "d4")
        ana.press("#f-generic-notation", "Enter")
        ana.wait_for_selector(".fx-tray .fx-d4")
        self.assertEqual(ana.locator("#log li[data-kind=roll]").count(), 2)

        ana.uncheck("#fx-animate")
        ana.check("#fx-sound")  # generated WebAudio: no file is fetched
        ana.reload()
        self.wait_live(ana)
        ana.wait_for_selector("#fx-animate")
        self.assertFalse(ana.is_checked("#fx-animate"))
        self.assertTrue(ana.is_checked("#fx-sound"))
        ana.fill("#f-generic-notation", "d8")
        ana.press("#f-generic-notation", "Enter")
        ana.wait_for_selector("#log li[data-kind=roll] >> nth=2")
        self.assertEqual(ana.locator(".fx-tray .fx-die").count(), 0)

    def test_reduced_motion_turns_the_animation_off(self):
        _, _, session = self.make_table("generic")
        context = self.browser.new_context(reduced_motion="reduce")
        self.addCleanup(context.close)
        page = context.new_page()
        self.watch_errors(page)
        self.sit_down(page, session, "Ana")
        page.wait_for_selector("#fx-animate")
        self.assertTrue(page.is_disabled("#fx-animate"))
        page.fill("#f-generic-notation", "d20")
        page.press("#f-generic-notation", "Enter")
        page.wait_for_selector("#log li[data-kind=roll] .die")
        self.assertEqual(page.locator(".fx-tray .fx-die").count(), 0)

    def test_the_statistics_panel_and_the_export_links_in_the_room(self):
        _, _, session = self.make_table("generic")
        ana = self.open_page()
        self.sit_down(ana, session, "Ana")
        ana.fill("#f-generic-notation", "10d6")
        ana.press("#f-generic-notation", "Enter")
        ana.wait_for_selector("#log li[data-kind=roll] .die")
        ana.click("#stats-details summary")
        ana.wait_for_selector(".stats-die")
        self.assertIn("10 d6s", ana.inner_text(".stats-die .stats-sentence"))
        self.assertEqual(ana.locator(".stats-die svg.stats-chart rect").count(), 6)
        # A later roll updates the panel by itself.
        ana.fill("#f-generic-notation", "5d6")
        ana.press("#f-generic-notation", "Enter")
        ana.wait_for_function(
            "document.querySelector('.stats-sentence').textContent.startsWith('15 d6s')"
        )
        self.assertEqual(self.axe(ana, "room-stats"), [])
        with ana.expect_download() as download:
            ana.click(".export-links a:has-text('JSON')")
        self.assertTrue(download.value.suggested_filename.endswith(".json"))

    def test_the_gm_makes_a_watch_link_on_the_dashboard(self):
        _, _, session = self.make_table("generic")
        page = self.open_page()
        self.log_in_gm(page, f"/gm/{session.pk}/")
        page.fill("#watch-label", "Stream")
        page.click("#watch button[type=submit]:has-text('Make a watch link')")
        page.wait_for_selector("#watch .link-list input")
        link = WatchLink.objects.get(session=session)
        self.assertIn(f"/watch/{link.code}/overlay", page.input_value(f"#overlay-{link.pk}"))
        page.wait_for_selector("#stats .stats-body")
        self.assertEqual(self.axe(page, "dashboard-extras"), [])
        page.click("#watch button:has-text('Revoke')")
        page.wait_for_selector("#watch li.revoked")

    def test_the_room_page_stays_light(self):
        _, _, session = self.make_table("generic")
        page = self.open_page()
        sizes: dict[str, int] = {}

        def count(response):
            with contextlib.suppress(Exception):  # a redirect has no body
                sizes[response.url] = len(response.body())

        page.on("response", count)
        self.sit_down(page, session, "Ana")
        page.wait_for_selector("#fx-animate")
        page.wait_for_load_state("networkidle")
        total = sum(size for url, size in sizes.items() if "/join" not in url)
        # The same budget as the page's own weight test (which counts every module it names).
        self.assertLess(total, PAGE_BUDGET, sorted(sizes.items(), key=lambda kv: -kv[1]))
