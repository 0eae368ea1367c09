"""The player's pool and resources on the room page, in a real browser.

At a Zoria table the GM awards a die from the GM dashboard and the player sees it arrive, rolls a
check, uses a die on the open roll from the room page and sees the total grow, and sees it
declared when the GM closes it. At a Sunrider D6 table a character point doubles the base dice
and the points drop; at a discordian table the Discord Die shows by the panel and Instant Karma
pays for a luck die and protection; extended actions and rounds show their progress.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest

from tabletop.models import Event
from tests.browser.conftest import PHONE, BrowserTestCase

pytestmark = pytest.mark.browser

TIMES = "\u00d7"  # the multiplication sign in "4 (times) d6"
MINUS = "\u2212"  # the minus sign in "(minus) 3D"
CARD_ROWS = "#table-card .resrows li"


class RoomPoolsTests(BrowserTestCase):
    @staticmethod
    def number(locator) -> int:
        return int(locator.inner_text().strip())

    @staticmethod
    def wait_text(page, selector: str, text: str) -> None:
        page.locator(selector, has_text=text).first.wait_for()

    def test_zoria_award_use_a_die_on_an_open_roll_and_declare(self):
        _, campaign, session = self.make_table(
            "zoria",
            characters={
                "Kael": {"level": 7, "class": "Warrior", "class_bonus_dice": ["d4"]},
                "Ysolde": {"level": 12, "class": "Mage"},
            },
        )
        ana = self.open_page()
        self.sit_down(ana, session, "Ana", character="Kael")
        ana_seat = ana.evaluate("JSON.parse(document.getElementById('room-data').textContent)")[
            "seat"
        ]["id"]

        # A level-7 character's pool is four d6; Kael's class bonus die is labelled with him.
        card = ana.locator("#table-card")
        d6 = card.locator(".stks .action-dice b")
        self.assertEqual(self.number(d6), 4)
        self.assertIn(f"{TIMES} d6", card.locator(".stks .action-dice").inner_text())
        self.assertIn("Kael's class bonus", card.locator(".stks .bonus-dice").inner_text())

        # Another player sits down: Zoria pools are open information at the table.
        self.join(session, "Bo", campaign.characters.get(name="Ysolde").pk)
        bo = card.locator(".resrows li", has_text="Bo")
        bo.wait_for()
        self.assertIn(f"5 {TIMES} d8", bo.inner_text())
        self.assertRegex(card.locator(".resrows li", has_text="GM").inner_text(), r"\d+ \S d12")

        # The GM awards a die on the dashboard; it arrives in Ana's pool.
        boss = self.open_page()
        self.log_in_gm(boss, f"/gm/{session.pk}/")
        award = boss.locator(f"article.seat-card[data-seat='{ana_seat}'] button.award")
        award.wait_for()
        boss.wait_for_function("!document.querySelector('button.award').disabled")
        award.click()
        self.wait_text(ana, "#table-card .action-dice", f"5 {TIMES} d6")
        self.assertEqual(card.locator(".stks").get_attribute("aria-live"), "polite")

        # Ana rolls a check: it stays open, and she uses a die on it; the total grows.
        ana.fill("#f-zoria-check", "1d20+3")
        ana.fill("#f-zoria-dc", "15")
        ana.click(".roll-button")
        roll = card.locator(".oroll").first
        roll.wait_for()
        seq = int(roll.locator(".ohead a").inner_text().lstrip("#"))
        before = self.number(roll.locator(".sum b"))
        self.assertIn("open", roll.locator(".ohead").inner_text())
        self.assertIn("d6 (5 left)", roll.locator("select").first.inner_text())
        use = roll.get_by_role("button", name="Use a die")
        seed = ana.input_value("#client-seed")
        use.click()
        ana.wait_for_function(
            f"+document.querySelector('#table-card .oroll .sum b').textContent > {before}"
        )
        used = Event.objects.get(session=session, kind="pool", data__action="use")
        self.assertEqual(self.number(roll.locator(".sum b")), before + used.data["added"])
        self.assertEqual(used.data["client_seed"], seed)
        self.assertEqual(self.number(d6), 4, "the die left the pool")
        self.assertIn(f"+{used.data['added']} from pool dice", roll.inner_text())
        # A reload draws the same from hello's state and the replayed log.
        ana.reload()
        self.wait_live(ana)
        self.wait_text(ana, "#table-card .sum", f"+{used.data['added']} from pool dice")
        self.assertEqual(self.number(roll.locator(".sum b")), before + used.data["added"])
        self.assertEqual(self.number(d6), 4)
        self.assertTrue(
            card.get_by_role("button", name="Lucky break").is_disabled(),
            "no lucky break once a die was used",
        )
        self.shot(ana, "room-zoria-desktop")

        # A spend the server refuses shows its reason next to the control.
        roll.get_by_label(f"Spend dice on roll #{seq}").select_option("reroll")
        # Insight: Ana asks, the GM agrees on the dashboard, then she spends on it.
        card.locator("#insight-count").fill("9")
        card.locator("#insight-note").fill("who forged the seal?")
        card.get_by_role("button", name="Ask the GM").click()
        self.wait_text(ana, "#table-card li", "waiting for the GM")
        boss.get_by_role(
            "button", name="Agree to Ana's inspiration check on who forged the seal?"
        ).click()
        self.wait_text(boss, "#insight-asks li", "granted: waits for the spend")
        card.get_by_role("button", name="Spend dice on it").click()
        self.wait_text(ana, "#table-card .error", "left in that pool")

        # The GM declares the roll on the dashboard; Ana sees it declared, nothing more to use.
        boss.fill(f"#open-{seq}-result", "the lock gives way")
        boss.click(f"article.open-roll[data-seq='{seq}'] button:has-text('Declare')")
        self.wait_text(ana, "#table-card .ohead", "declared: the lock gives way")
        self.assertTrue(use.is_disabled())
        self.assertTrue(roll.get_by_role("button", name="Spend").is_disabled())

        # The GM's own room page shows the GM's pool as theirs, and no lucky break.
        boss.goto(f"{self.live_server_url}/play/{session.invite_code}/")
        self.wait_live(boss)
        self.wait_text(boss, "#table-card .action-dice", f"8 {TIMES} d12")
        self.assertTrue(boss.get_by_role("button", name="Lucky break").is_hidden())
        theirs = boss.locator("#table-card .resrows li", has_text="Ana").inner_text()
        self.assertIn(f"4 {TIMES} d6 + 1 {TIMES} d4 (Kael's class bonus)", theirs)

        ana.set_viewport_size(PHONE)
        self.shot(ana, "room-zoria-phone")
        card.scroll_into_view_if_needed()
        self.shot(ana, "room-zoria-phone-card", full_page=False)

    def test_d6_character_point_doubles_base_dice_and_points_drop(self):
        _, _, session = self.make_table(
            "d6-chance",
            characters={"Kira Vess": {"skills": {"Blaster": "4D"}, "character_points": 3}},
        )
        ana = self.open_page(viewport=PHONE, color_scheme="dark")
        self.sit_down(ana, session, "Ana", character="Kira Vess")
        points = ana.locator("#table-card .resrows li", has_text="Kira Vess").locator(".amt b")
        note = ana.locator(".field:has(#f-d6-chance-character_point) .cost")
        self.assertEqual(self.number(points), 3)
        self.assertEqual(
            note.inner_text(), "Kira Vess has 3 left; no round yet: a point lasts this roll"
        )

        ana.fill("#f-d6-chance-dice", "4")
        ana.check("#f-d6-chance-character_point")
        ana.click(".roll-button")
        ana.wait_for_selector("#last-roll .die")
        self.wait_text(ana, "#table-card .amt", "Character points 2")
        self.assertEqual(
            note.inner_text(), "Kira Vess has 2 left; no round yet: a point lasts this roll"
        )
        self.assertFalse(
            ana.is_checked("#f-d6-chance-character_point"), "each roll chooses its spends anew"
        )
        roll = Event.objects.get(session=session, kind="roll")
        self.assertTrue(roll.data["request"]["character_point"])
        self.assertIn("8D", roll.data["text"], "the base dice doubled")

        # Survive: a table action with no roll, after a confirmation.
        ana.once("dialog", lambda dialog: dialog.accept())
        ana.get_by_role("button", name="Survive: Kira Vess (1 character point)").click()
        self.wait_text(ana, "#table-card .amt", "Character points 1")
        self.shot(ana, "room-d6-phone-dark-points")

    def test_discordian_discord_die_instant_karma_and_luck(self):
        _, _, session = self.make_table(
            "discordian",
            characters={
                "Eris": {"hero_dice": ["d6", "d8"], "luck": 2, "instant_karma": 2, "luck_die": "d8"}
            },
        )
        ana = self.open_page()
        self.sit_down(ana, session, "Ana", character="Eris")
        self.assertIn("No Discord Die", ana.inner_text("#table-bar"))
        self.assertTrue(ana.locator("#f-discordian-discord").is_hidden())

        discord = self.send_as_gm(session, {"type": "discord.roll"})["data"]["discord"]
        value = discord["value"]
        self.wait_text(ana, "#table-bar", f"Discord Die {value}" if value else "wandered")

        # Protection and the luck die cost Instant Karma, shown as they are chosen.
        ana.click("#quick button:has-text('Hero Dice')")
        ana.fill("#f-discordian-protect", "1")
        protect = ana.inner_text(".field:has(#f-discordian-protect) .cost")
        self.assertEqual(
            protect, "costs up to 1 Instant Karma (1 a die it shields); Eris has 2 left"
        )

        # The GM's bonus die waits for Eris's next roll, shown on her row.
        eris = session.campaign.characters.get(name="Eris").pk
        self.send_as_gm(session, {"type": "bonus.award", "character": eris, "dice": ["d10"]})
        self.wait_text(ana, "#table-card .badge", "GM's bonus dice for the next roll: d10")
        # The luck die field is the sheet's (hidden); luck dice are counted, 1 Instant Karma each.
        self.assertTrue(ana.locator("#f-discordian-luck_die").is_hidden())
        self.assertTrue(ana.locator("#roll-opponent_character").is_hidden(), "no opponent yet")

        # The odds follow the dice the table will add: Eris's luck die (d8) and the GM's d10.
        def odds_pool(request) -> list[str] | None:
            if "/odds?" not in request.url:
                return None
            return json.loads(parse_qs(urlparse(request.url).query)["request"][0])["pool"]

        with ana.expect_request(lambda r: odds_pool(r) == ["d6", "d8", "d8", "d10"]):
            ana.fill("#roll-luck_dice", "1")
        self.assertEqual(
            ana.inner_text(".field:has(#roll-luck_dice) .cost"),
            "costs 1 Instant Karma; Eris has 2 left",
        )
        ana.click(".roll-button")
        ana.wait_for_selector("#last-roll .die")
        roll = Event.objects.get(session=session, kind="roll")
        # The luck die costs 1; protection only for a die it shielded.
        left = 2 - 1 - roll.data["protected"]
        self.wait_text(ana, "#table-card .amt", f"Instant Karma {left}")
        self.assertEqual(roll.data["request"]["discord"], value)
        self.assertEqual(roll.data["request"]["protect"], 1)
        self.assertEqual(
            roll.data["request"]["pool"], ["d6", "d8", "d8", "d10"], "the luck die and bonus die"
        )
        self.assertEqual(ana.locator("#table-card .badge").count(), 0, "the bonus die is used")
        self.assertEqual(ana.input_value("#roll-luck_dice"), "0", "each roll chooses anew")

        # Luck on one's own successful roll: +1 success; a costly one can be avoided.
        entry = ana.locator(f"#ev-{roll.seq}")
        extra = entry.get_by_role("button", name="+1 success (1 Luck)")
        if roll.data["outcome"] == "success":
            costly = "costly" in roll.data["flags"]
            self.assertEqual(
                entry.get_by_role("button", name="Avoid costly (1 Luck)").count(), costly
            )
            extra.click()
            self.wait_text(ana, "#table-card .amt", "Luck 1")
            # The roll's headline counts the success bought with Luck.
            bought = str(roll.data["successes"] + 1)
            self.wait_text(ana, f"#ev-{roll.seq} .num:has(small:text-is('successes')) b", bought)
        else:
            self.assertEqual(extra.count(), 0)
        self.shot(ana, "room-discordian-desktop")

    def test_roll_and_keep_extended_action_progress(self):
        _, _, session = self.make_table("roll-and-keep", characters={"Mirela": {}})
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana", character="Mirela")
        self.assertTrue(ana.locator("#roll-extended").is_hidden(), "nothing to count toward yet")
        opened = self.send_as_gm(session, {"type": "extended.open", "label": "Ritual", "target": 5})
        self.wait_text(ana, "#table-card li", "Ritual 0 / 5 successes")
        ana.select_option("#roll-extended", label="Ritual")
        ana.fill("#f-roll-and-keep-roll", "6")
        ana.fill("#f-roll-and-keep-keep", "3")
        ana.fill("#f-roll-and-keep-difficulty", "4")
        ana.click(".roll-button")
        ana.wait_for_selector("#last-roll .die")
        gained = Event.objects.get(session=session, kind="pool", data__action="extended-progress")
        self.assertEqual(gained.data["extended"]["id"], opened["data"]["extended"]["id"])
        progress = gained.data["extended"]["progress"]
        if gained.data["extended"]["open"]:
            self.wait_text(ana, "#table-card li", f"Ritual {progress} / 5")
            self.assertEqual(
                ana.locator("#table-card progress").get_attribute("value"), str(progress)
            )
        self.shot(ana, "room-roll-and-keep-phone")

    def test_action_dice_round_defense_and_dice_left(self):
        _, _, session = self.make_table(
            "action-dice",
            characters={"Tam": {"action_dice": 3, "skills": {"Brawl": "+2d6"}}},
        )
        ana = self.open_page()
        self.sit_down(ana, session, "Ana", character="Tam")
        self.assertIn("No round running", ana.inner_text("#table-card"))
        self.send_as_gm(session, {"type": "round.new"})
        self.wait_text(ana, "#table-card", "Round 1")
        self.wait_text(ana, "#table-card li", "3 of 3 action dice left")
        ana.fill("#f-action-dice-action_dice", "2")
        ana.fill("#f-action-dice-skill_dice", "2")
        ana.select_option("#roll-defense", "general")
        ana.click(".roll-button")
        self.wait_text(ana, "#table-card li", "1 of 3 action dice left")
        self.wait_text(ana, "#table-card", "Defenses this round")
        total = Event.objects.get(session=session, kind="roll").data["total"]
        self.assertIn(f"+{total // 2} against everyone else", ana.inner_text("#table-card"))
        self.shot(ana, "room-action-dice-desktop")

    def test_d6_actions_declared_for_the_round_and_taken(self):
        _, _, session = self.make_table("d6-chance", characters={"Sera": {"character_points": 1}})
        ana = self.open_page()
        self.sit_down(ana, session, "Ana", character="Sera")
        declare = ana.get_by_role("button", name="Declare Sera's actions this round")
        self.assertEqual(declare.count(), 0, "no round yet: nothing to declare")
        self.send_as_gm(session, {"type": "round.new"})
        declare.wait_for()
        ana.get_by_label("Actions Sera takes this round").fill("2")
        declare.click()
        self.wait_text(ana, CARD_ROWS, f"2 actions declared ({MINUS}3D each), 0 taken")
        self.wait_text(ana, ".field .cost", "the declaration sets this roll's penalty")
        ana.fill("#f-d6-chance-dice", "5")
        ana.check("#roll-defense")
        ana.click(".roll-button")
        ana.wait_for_selector("#last-roll .die")
        self.wait_text(ana, CARD_ROWS, f"2 actions declared ({MINUS}3D each), 1 taken")
        roll = Event.objects.get(session=session, kind="roll")
        self.assertEqual(roll.data["request"]["actions"], 2)
        self.shot(ana, "room-d6-declared-actions")
        # The GM's dashboard lists the round's declarations with the actions taken.
        boss = self.open_page()
        self.log_in_gm(boss, f"/gm/{session.pk}/")
        self.wait_text(boss, "#declared li", f"Sera 2 actions declared ({MINUS}3D each), 1 taken")
        self.shot(boss, "dashboard-d6-declared-actions")

    def test_zoria_insight_asked_granted_and_spent(self):
        _, _, session = self.make_table("zoria", characters={"Kael": {"level": 7}})
        ana = self.open_page(viewport=PHONE)
        self.sit_down(ana, session, "Ana", character="Kael")
        ana.fill("#insight-note", "Who forged the seal")
        ana.get_by_role("button", name="Ask the GM").click()
        self.wait_text(ana, "#table-card li", "waiting for the GM")
        ask = Event.objects.get(session=session, kind="pool", data__action="insight-ask")
        self.send_as_gm(session, {"type": "insight.answer", "ask": ask.seq, "grant": True})
        self.wait_text(ana, "#table-card li", "granted")
        self.shot(ana, "room-zoria-phone-insight-granted")
        ana.get_by_role("button", name="Spend dice on it").click()
        self.wait_text(ana, "#table-card .stks .action-dice", f"3 {TIMES} d6")
        self.assertEqual(ana.get_by_role("button", name="Spend dice on it").count(), 0)
        self.send_as_gm(session, {"type": "initiative.begin"})
        self.wait_text(ana, "#table-card p", "The initiative phase is under way")
