"""The pages work under their own Content-Security-Policy: the rolling dice (styled through
the CSSOM, not a style attribute), the printable log (its own style allowed by its hash), the
admin; and what the policy exists for, an injected inline script, is refused. Every test here
(as every browser test) fails on a console error the policy causes."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tabletop.models import Campaign
from tests.browser.conftest import GM_PASSWORD, BrowserTestCase, off_thread

pytestmark = pytest.mark.browser


class PolicyTests(BrowserTestCase):
    def test_the_room_rolls_animated_dice_and_the_printable_log_keeps_its_style(self):
        _, _, session = self.make_table("generic")
        page = self.open_page()
        self.sit_down(page, session, "Ana")
        page.wait_for_selector("#fx-animate")
        if not page.is_checked("#fx-animate"):
            page.check("#fx-animate")
        # The tray's dice come and go with the animation: note each one's placement as it
        # comes (custom properties set through the CSSOM, not a style attribute).
        page.evaluate(
            """() => { window.__fx = [];
              new MutationObserver((changes) => changes.forEach((change) =>
                change.addedNodes.forEach((node) => node.querySelectorAll &&
                  [node, ...node.querySelectorAll(".fx-die")].forEach((die) =>
                    die.classList.contains("fx-die") &&
                      window.__fx.push(die.style.getPropertyValue("--fx-delay"))))))
                .observe(document.body, {childList: true, subtree: true}); }"""
        )
        page.fill("#f-generic-notation", "6d6")
        page.press("#f-generic-notation", "Enter")
        page.wait_for_selector("#log li[data-kind=roll]", state="attached", timeout=20_000)
        page.wait_for_function("() => window.__fx.length > 0", timeout=20_000)
        self.assertTrue(all(delay.endswith("ms") for delay in page.evaluate("window.__fx")))

        printable = self.open_page()
        printable.context.add_cookies(page.context.cookies())
        printable.goto(f"{self.live_server_url}/play/{session.invite_code}/export.html")
        margin = printable.evaluate("getComputedStyle(document.querySelector('main')).display")
        self.assertEqual(margin, "block")
        font = printable.evaluate("getComputedStyle(document.body).fontFamily")
        self.assertIn("Georgia", font)  # the page's own <style> applied

    def test_an_injected_inline_script_is_refused(self):
        page = self.open_page()
        page.goto(f"{self.live_server_url}/")
        refusals: list[str] = []
        page.on("console", lambda msg: "CSP violation" in msg.text and refusals.append(msg.text))
        page.auditing = True  # this refusal is the point of the test, not a fault of the page
        ran = page.evaluate(
            """() => { window.__ran = false;
                const s = document.createElement("script");
                s.textContent = "window.__ran = true";
                document.body.append(s);
                const b = document.createElement("b");
                b.setAttribute("style", "color: red");
                document.body.append(b);
                return new Promise((done) => setTimeout(() => done(window.__ran), 100)); }"""
        )
        self.assertFalse(ran)
        self.assertTrue(any("script-src-elem" in r for r in refusals), refusals)
        self.assertTrue(any("style-src-attr" in r for r in refusals), refusals)

    def test_the_admin_works_under_the_policy(self):
        def make():
            gm = get_user_model().objects.create_superuser("gm", password=GM_PASSWORD)
            return Campaign.objects.create(name="Night Market", system="generic", gm=gm)

        campaign = off_thread(make)
        page = self.open_page()
        self.log_in_gm(page, f"/admin/tabletop/campaign/{campaign.pk}/change/")
        page.click(".add-row a >> nth=0")  # inlines.js adds a form row
        page.wait_for_selector(".dynamic-characters, .dynamic-character_set, tr.form-row")
        underline = page.evaluate("getComputedStyle(document.querySelector('.breadcrumbs a'))")
        self.assertIsNotNone(underline)
        decoration = page.evaluate(
            "getComputedStyle(document.querySelector('.breadcrumbs a')).textDecorationLine"
        )
        self.assertEqual(decoration, "underline")  # the site's admin <style>, by its hash
