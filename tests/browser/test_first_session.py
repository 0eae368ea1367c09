"""Defects a new group met in its first session, each checked in a real browser: what a roll was
for and its character wherever the roll shows, the live statistics summary, presence pushed live,
readable help, dice marks, live quick rolls, quiet checking as one types, the odds chart, saved
rolls without a character and the hidden-roll icon."""

from __future__ import annotations

import pytest

from tabletop.services.watch import create_watch_link
from tests.browser.conftest import PHONE, BrowserTestCase, off_thread

pytestmark = pytest.mark.browser


class FirstSessionTests(BrowserTestCase):
    def test_a_rolls_character_and_what_it_was_for_show_in_the_overlay_and_its_reveal(self):
        gm, _, session = self.make_table("generic", characters={"Kael": {}})
        link = off_thread(lambda: create_watch_link(session=session, user=gm, label="Stream"))
        overlay = self.open_page()
        overlay.goto(f"{self.live_server_url}/watch/{link.code}/overlay")
        page = self.open_page(viewport=PHONE)
        self.sit_down(page, session, "Ana", character="Kael")
        page.fill("#f-generic-notation", "2d6+3")
        page.fill("#roll-label", "Attack")
        page.click(".roll-button")
        shown = overlay.locator(".rolls li").first
        shown.wait_for()
        self.assertIn("Ana as Kael Attack", " ".join(shown.locator(".who").inner_text().split()))

        page.fill("#f-generic-notation", "1d20")
        page.fill("#roll-label", "Sneak")
        page.select_option("#roll-visibility", "gm")
        page.click(".roll-button")
        page.wait_for_selector("#log li.vis-gm[data-kind=roll]")
        seq = int(page.get_attribute("#log li.vis-gm[data-kind=roll]", "data-seq"))
        self.send_as_gm(session, {"type": "reveal", "seq": seq})
        reveal = page.locator("#log li[data-kind='roll.reveal']")
        reveal.wait_for()
        self.assertIn("a roll by Ana as Kael Sneak", " ".join(reveal.inner_text().split()))
        overlay.wait_for_selector(".rolls li:has-text('Sneak')")
        self.assertIn(
            "Ana as Kael Sneak", " ".join(overlay.locator(".rolls li").first.inner_text().split())
        )
        self.shot(page, "first-session-reveal-phone", full_page=False)
        self.shot(overlay, "first-session-overlay", full_page=False)

    def test_the_exploded_mark_sits_on_the_die_that_exploded_and_compounded_dice_keep_three(self):
        from rules.engines.fair import ScriptedSource
        from rules.engines.notation import evaluate, parse

        def records(text: str, script: list[int]) -> list[dict]:
            return evaluate(parse(text), ScriptedSource(script)).dice

        _, _, session = self.make_table("generic")
        page = self.open_page(viewport=PHONE)
        self.sit_down(page, session, "Ana")
        drawn = page.evaluate(
            """async ([exploding, compounded]) => {
              const {renderRoll} = await import("/static/tabletop/dice.js");
              const chips = (dice) => {
                const roll = renderRoll({dice});
                document.querySelector("#log").append(roll);
                return [...roll.querySelectorAll(".die")].map((die) => ({
                  face: die.querySelector(".face").textContent,
                  mark: Boolean(die.querySelector(".mark")),
                  caption: die.querySelector(".cap") ? die.querySelector(".cap").textContent : "",
                }));
              };
              return [chips(exploding), chips(compounded)];
            }""",
            [
                records("8d6!", [6, 2, 1, 1, 1, 1, 1, 1, 1]),
                records("6d10!!k3", [10, 4, 7, 2, 9, 1, 3]),
            ],
        )
        exploding, compounded = drawn
        self.assertEqual([(d["face"], d["mark"]) for d in exploding if d["mark"]], [("6", True)])
        self.assertEqual([d["caption"] for d in compounded].count("kept"), 3)
        self.shot(page, "first-session-dice-marks", full_page=False)

    def test_a_flat_odds_chart_has_no_most_likely_and_shades_what_beats_the_difficulty(self):
        _, _, session = self.make_table("generic")
        page = self.open_page(viewport=PHONE)
        self.sit_down(page, session, "Ana")
        page.fill("#f-generic-notation", "1d20")
        page.fill("#f-generic-difficulty", "15")
        page.wait_for_selector(".chart svg[aria-label*='15 or more']")
        chart = page.locator(".chart")
        self.assertEqual(chart.locator(".bar").count(), 20)
        self.assertEqual(chart.locator(".bar.mode").count(), 0)
        self.assertNotIn("most likely", chart.inner_text())
        self.assertIn("every result equally likely", chart.inner_text())
        beats = chart.locator(".bar.beats").evaluate_all(
            "bars => bars.map(b => b.querySelector('title').textContent.split(':')[0])"
        )
        self.assertEqual(beats, [str(v) for v in range(15, 21)])
        chart.scroll_into_view_if_needed()
        self.shot(page, "first-session-flat-odds-phone", full_page=False)

        page.fill("#f-generic-notation", "2d6")
        page.wait_for_selector(".chart .bar.mode")
        self.assertIn("most likely 7", page.locator(".chart").inner_text())

    def test_the_statistics_summary_follows_whose_dice_are_shown(self):
        from tabletop.models import Seat
        from tests.tabletop.commands import rolled

        _, _, session = self.make_table("generic")
        self.join(session, "Bo")

        def bo_rolls() -> None:
            bo = Seat.objects.get(session=session, name="Bo")
            for _ in range(2):
                rolled(seat_id=bo.pk, request={"notation": "2d6"})

        off_thread(bo_rolls)
        page = self.open_page(viewport=PHONE)
        self.sit_down(page, session, "Ana")
        page.fill("#f-generic-notation", "1d20")
        page.click(".roll-button")
        page.wait_for_selector("#log li[data-kind=roll].mine")
        page.click("#stats-details summary")
        page.wait_for_selector(".stats-die")
        summary = page.locator("#stats-summary")
        self.assertTrue(summary.inner_text().startswith("3 rolls counted"))
        page.select_option("#stats-who", "Bo")
        self.assertTrue(summary.inner_text().startswith("2 rolls by Bo counted"))
        page.select_option("#stats-who", "Ana")
        self.assertTrue(summary.inner_text().startswith("1 roll by Ana counted"))

    def test_a_die_used_on_an_open_zoria_roll_shows_in_the_statistics_live(self):
        _, _, session = self.make_table("zoria", characters={"Kael": {"level": 7}})
        page = self.open_page()
        self.sit_down(page, session, "Ana", character="Kael")
        page.click("#stats-details summary")
        page.fill("#f-zoria-check", "1d20+3")
        page.fill("#f-zoria-dc", "15")
        page.click(".roll-button")
        roll = page.locator("#table-card .oroll").first
        roll.wait_for()
        page.wait_for_selector(".stats-die h3:has-text('d20')")
        roll.get_by_role("button", name="Use a die").click()
        page.wait_for_selector(".stats-die h3:has-text('d6')")

    def test_a_player_with_no_character_saves_a_roll_on_the_seat(self):
        _, _, session = self.make_table("generic")
        page = self.open_page(viewport=PHONE)
        self.sit_down(page, session, "Cy")
        page.fill("#f-generic-notation", "8d6")
        page.fill("#roll-label", "Fireball")
        page.click("button.save-roll")
        saved = page.locator("button.saved-roll:text-is('Fireball')")
        saved.wait_for()
        page.reload()
        self.wait_live(page)
        saved.click()
        page.wait_for_selector("#log li[data-kind=roll] .roll-label:text-is('Fireball')")
        self.assertEqual(page.locator("#log li[data-kind=roll] .die").count(), 8)

    def test_a_player_who_connects_shows_as_here_without_waiting_for_a_poll(self):
        _, _, session = self.make_table("generic")
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana")
        bo = self.open_page()
        bo.goto(f"{self.live_server_url}/play/{session.invite_code}/")
        bo.fill("#name", "Bo")
        bo.click("button[type=submit]")
        self.wait_live(bo)
        ana.wait_for_selector("#seats li:not(.away):has-text('Bo')")
        bo.close()
        ana.wait_for_selector("#seats li.away:has-text('Bo')")
        self.shot(ana, "first-session-presence-phone", full_page=False)

    def test_the_gm_edits_a_sheet_and_the_players_quick_rolls_follow_live(self):
        from tests.browser.conftest import DESKTOP

        _, _, session = self.make_table(
            "zoria", characters={"Kael": {"level": 7, "skills": {"Swords": 6}}}
        )
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana", character="Kael")
        quick = ana.locator("#quick .quick-rolls[data-character]")
        quick.locator("button:text-is('Swords')").wait_for()
        self.assertEqual(quick.locator("button:text-is('Stealth')").count(), 0)
        gm = self.open_page(viewport=DESKTOP)
        self.log_in_gm(gm, f"/gm/{session.pk}/")
        gm.click('details.sheet summary:has-text("Kael\'s sheet")')
        form = gm.locator('form.sheet-form[aria-label="Kael\'s sheet"]')
        form.locator("button:text-is('Add to Skills')").click()
        form.get_by_label("Skills: name").last.fill("Stealth")
        form.get_by_label("Skills: value").last.fill("4")
        form.locator("button[type=submit]").click()
        form.locator("[role=status]:text-is('Saved.')").wait_for()
        quick.locator("button:text-is('Stealth')").wait_for()
        quick.locator("button:text-is('Stealth')").click()
        self.assertEqual(ana.input_value("#roll-label"), "Stealth")

    def test_checking_as_one_types_says_what_is_wrong_and_logs_no_failed_request(self):
        _, _, session = self.make_table("generic")
        page = self.open_page(viewport=PHONE)
        failed: list[str] = []
        page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
        page.on("console", lambda m: m.type == "error" and failed.append(m.text))
        self.sit_down(page, session, "Ana")
        field = page.locator("#f-generic-notation")
        field.press_sequentially("2d", delay=60)
        error = page.locator(".odds .error")
        error.wait_for()
        self.assertEqual(
            error.inner_text(), "The die size after 'd' (like 2d6) is missing at the end."
        )
        field.press_sequentially("6+", delay=60)
        page.wait_for_selector(".odds .error:has-text('is missing at the end')")
        field.press("Backspace")
        page.wait_for_selector(".odds .chart")
        self.assertEqual(failed, [])

    def test_nothing_spills_out_of_its_box_on_a_narrow_phone(self):
        from tabletop.models import Seat
        from tests.tabletop.commands import rolled

        _, _, session = self.make_table("generic")
        page = self.open_page(viewport={"width": 320, "height": 640})
        self.sit_down(page, session, "Ana")
        d100 = page.locator(".tray-dice button:text-is('d100')")
        fits = d100.evaluate("b => b.scrollWidth <= b.clientWidth")
        self.assertTrue(fits, "d100 fits its button")

        def roll_d100() -> None:
            ana = Seat.objects.get(session=session, name="Ana")
            rolled(seat_id=ana.pk, request={"notation": "20d100"})

        off_thread(roll_d100)
        page.click("#stats-details summary")
        chart = page.locator(".stats-die:has(h3:has-text('d100')) svg.stats-chart")
        chart.wait_for()
        inside = chart.evaluate(
            """svg => [...svg.querySelectorAll('text.axis')].every((t) => {
                 const box = t.getBBox();
                 return box.x >= 0 && box.x + box.width <= svg.viewBox.baseVal.width + 0.5;
               })"""
        )
        self.assertTrue(inside, "every axis label of the d100 chart is inside the chart")
        self.assertEqual(chart.locator("text.axis").last.text_content(), "100")
        self.shot(page, "first-session-320", full_page=True)

    def test_the_webhook_remove_buttons_stay_inside_their_card(self):
        from tabletop.models import Webhook

        _, campaign, session = self.make_table("generic")
        url = "https://chat.example/hooks/" + "a" * 90
        off_thread(lambda: Webhook.objects.create(campaign=campaign, url=url))
        page = self.open_page(viewport={"width": 390, "height": 844})
        self.log_in_gm(page, f"/gm/{session.pk}/")
        button = page.locator("button:has-text('Remove this webhook')")
        button.scroll_into_view_if_needed()
        page.locator("details:has(summary:text-is('Signing secret'))").first.evaluate(
            "d => { d.open = true; }"
        )
        card = page.locator("section.card:has(#hook-url)")
        right = card.evaluate("c => c.getBoundingClientRect().right")
        for remove in button.all() + page.locator("button:has-text('New secret')").all():
            self.assertLessEqual(remove.evaluate("b => b.getBoundingClientRect().right"), right)
        self.shot(page, "first-session-webhooks-phone", full_page=False)
