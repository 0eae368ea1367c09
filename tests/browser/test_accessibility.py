"""axe-core on every page a player or GM uses, with a real log in it (kept and dropped dice,
hidden rolls, revealed rolls, the end of the session): no serious or critical violation, on a
phone and on a desktop. Reports land in test-artifacts/axe-* (with a screenshot of a page where
axe-core found something; TABLETOP_SCREENSHOTS=1 keeps every page's).
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from rules.engines import get_system, system_ids
from tabletop.models import Character, GameSession, Seat
from tabletop.services.demo import ensure_demo_tables
from tabletop.services.sessions import end_session
from tests.browser.conftest import DESKTOP, GM_PASSWORD, PHONE, BrowserTestCase, off_thread
from tests.tabletop.commands import rolled

pytestmark = pytest.mark.browser

PHONE_390 = {"width": 390, "height": 844}
VISIBILITIES = ("public", "public", "gm", "blind", "public", "self")


def fill_log(session: GameSession, player: Seat) -> None:
    """Rolls from every character's sheet (the table's own system), public and hidden, by the
    player and the GM, plain notation with dropped dice, and one revealed roll."""
    from tabletop.services.rolls import reveal_roll

    system = get_system(session.campaign.system)
    gm = Seat.objects.get(session=session, role="gm")
    made = 0
    for character in Character.objects.filter(campaign=session.campaign).order_by("pk"):
        for quick in system.quick_rolls(character.sheet or {}, session.campaign.settings or {})[:2]:
            seat = player if player.characters.filter(pk=character.pk).exists() else gm
            rolled(
                seat_id=seat.pk,
                request=quick["request"],
                character=character.pk,
                visibility=VISIBILITIES[made % len(VISIBILITIES)],
            )
            made += 1
    for notation, seat in (("4d6kh3+2", player), ("2d20kl1+5", gm), ("6d10>7", player)):
        rolled(seat_id=seat.pk, request={"notation": notation}, system="generic")
    hidden = rolled(seat_id=gm.pk, request={"notation": "1d20"}, system="generic", visibility="gm")
    reveal_roll(seat=gm, seq=hidden.seq)
    rolled(seat_id=player.pk, request={"notation": "3d6"}, system="generic", visibility="blind")


class AccessibilityTests(BrowserTestCase):
    def setUp(self) -> None:
        def make():
            gm = get_user_model().objects.create_user(
                "gm", password=GM_PASSWORD, is_staff=True, is_superuser=True
            )
            return ensure_demo_tables(gm=gm)

        self.tables = off_thread(make)

    def seated_player(self, session: GameSession) -> Seat:
        character = off_thread(
            lambda: Character.objects.filter(campaign=session.campaign).order_by("pk").first()
        )
        body = self.join(session, "Ana", character=character.pk if character else None)
        return off_thread(lambda: Seat.objects.get(pk=body["seat"]["id"]))

    def check(self, page, name: str) -> None:
        self.checked += 1
        for violation in self.axe(page, name):
            self.found.append({"page": name, **violation})

    def test_every_room_join_dashboard_verify_and_admin_page(self):
        self.found: list[dict] = []
        self.checked = 0
        self.assertEqual(sorted(t.system for t in self.tables), sorted(system_ids()))
        gm_page = self.open_page(viewport=DESKTOP)
        first = self.tables[0].session
        self.log_in_gm(gm_page, f"/play/{first.invite_code}/")

        # The join page, on a phone.
        joiner = self.open_page(viewport=PHONE)
        joiner.goto(f"{self.live_server_url}/play/{first.invite_code}/")
        joiner.wait_for_selector("#name")
        self.check(joiner, "join-phone")

        for table in self.tables:
            session = table.session
            player = self.seated_player(session)
            off_thread(lambda session=session, player=player: fill_log(session, player))
            token = self.join(session, "Bea")["token"]

            # A player's room on a phone, with the log drawn.
            phone = self.open_page(viewport=PHONE_390)
            phone.goto(f"{self.live_server_url}/play/{session.invite_code}/?token={token}")
            self.wait_live(phone)
            phone.wait_for_selector("#log li[data-kind='roll.reveal']")
            self.check(phone, f"room-{table.system}-phone")

            # The GM's room and dashboard on a desktop.
            gm_page.goto(f"{self.live_server_url}/play/{session.invite_code}/")
            self.wait_live(gm_page)
            gm_page.wait_for_selector("#log li[data-kind='roll.reveal']")
            self.check(gm_page, f"room-{table.system}-gm-desktop")
            gm_page.goto(f"{self.live_server_url}/gm/{session.pk}/")
            gm_page.wait_for_selector("#log li[data-kind='roll.reveal']")
            self.check(gm_page, f"dashboard-{table.system}")
            # Hidden rolls show the GM their numbers and line, in every system.
            hidden = gm_page.locator("#hidden-rolls li")
            self.assertGreater(hidden.count(), 0, table.system)
            for i in range(hidden.count()):
                self.assertGreater(hidden.nth(i).locator(".num b").count(), 0, table.system)
                self.assertTrue(hidden.nth(i).locator(".hr-text").inner_text().strip())

            # After the end: the verify page (and, at one table, the ended room).
            off_thread(lambda session=session: end_session(session_id=session.pk))
            phone.goto(f"{self.live_server_url}/play/{session.invite_code}/verify")
            phone.wait_for_selector("table, .verify-table, #verify")
            self.check(phone, f"verify-{table.system}-phone")
            if session == first:
                phone.goto(f"{self.live_server_url}/play/{session.invite_code}/")
                phone.wait_for_selector("#log li[data-kind='session.end']")
                self.check(phone, f"room-{table.system}-ended-phone")

        # The admin pages a GM uses.
        campaign = self.tables[0].campaign
        character = off_thread(lambda: Character.objects.filter(campaign=campaign).first())
        for name, path in (
            ("admin-index", "/admin/"),
            ("admin-campaigns", "/admin/tabletop/campaign/"),
            ("admin-campaign", f"/admin/tabletop/campaign/{campaign.pk}/change/"),
            ("admin-character", f"/admin/tabletop/character/{character.pk}/change/"),
            ("admin-session", f"/admin/tabletop/gamesession/{first.pk}/change/"),
        ):
            gm_page.goto(f"{self.live_server_url}{path}")
            gm_page.wait_for_selector("#content")
            self.check(gm_page, name)
        self.assertGreater(self.checked, 25)
        self.assertEqual(self.found, [], "serious or critical axe violations")


# What a finger can hit (WCAG's enhanced target size): every control's box, or a check box's
# whole label, at least this tall and wide.
TARGET = 44

MEASURE = """() => {
  const seen = new Set();
  const out = [];
  for (const el of document.querySelectorAll("button, input, select, textarea, summary")) {
    const check = el.matches("input[type=checkbox], input[type=radio]");
    const box = check ? el.closest("label") || el : el;
    if (seen.has(box)) continue;
    seen.add(box);
    const style = getComputedStyle(box);
    const r = box.getBoundingClientRect();
    if (!r.width || !r.height || style.visibility === "hidden") continue;
    if (el.closest("[hidden], .visually-hidden")) continue;
    const name = (box.getAttribute("aria-label") || box.textContent || el.id || el.tagName)
      .trim().slice(0, 40);
    const round = (n) => Math.round(n * 10) / 10;
    out.push({name, height: round(r.height), width: round(r.width)});
  }
  return out;
}"""


NAMED_AS_SHOWN = """() => {
  // Words only (as axe-core compares them): the shown words must stand whole in the name.
  const words = (text) => ` ${text.toLowerCase().replace(/[^\\p{L}\\p{N}]+/gu, " ").trim()} `;
  return [...document.querySelectorAll("button[aria-label]")]
    .filter((b) => b.getClientRects().length && words(b.textContent).trim())
    .filter((b) => !words(b.getAttribute("aria-label")).includes(words(b.textContent)))
    .map((b) => `${b.textContent.trim()} / ${b.getAttribute("aria-label")}`);
}"""


class PhoneTargetTests(BrowserTestCase):
    def setUp(self) -> None:
        def make():
            gm = get_user_model().objects.create_user(
                "gm", password=GM_PASSWORD, is_staff=True, is_superuser=True
            )
            return ensure_demo_tables(gm=gm)

        self.tables = off_thread(make)

    def test_every_control_in_every_phone_room_is_a_44px_target_and_axe_finds_nothing(self):
        """Each system's room as a player with a character sees it (their own tools, a real
        log), on a phone and a desktop, and once the session ended on a phone: every control at
        least 44 px on the phone, and no serious or critical axe violation anywhere."""
        small: list[tuple[str, dict]] = []
        found: list[dict] = []
        measured = 0
        for table in self.tables:
            session = table.session
            character = off_thread(
                lambda session=session: (
                    Character.objects.filter(campaign=session.campaign).order_by("pk").first()
                )
            )
            body = self.join(session, "Ana", character=character.pk if character else None)
            player = off_thread(lambda body=body: Seat.objects.get(pk=body["seat"]["id"]))
            for name in ("Bartholomew", "Cunegonde", "Dagobert", "Ermengarde"):
                self.join(session, name)  # more seats than one row of a phone holds
            off_thread(lambda session=session, player=player: fill_log(session, player))
            url = f"{self.live_server_url}/play/{session.invite_code}/?token={body['token']}"
            for viewport, name in ((PHONE_390, "phone"), (DESKTOP, "desktop")):
                page = self.open_page(viewport=viewport)
                page.goto(url)
                self.wait_live(page)
                page.wait_for_selector("#log li[data-kind='roll.reveal']")
                for violation in self.axe(page, f"room-{table.system}-player-{name}"):
                    found.append({"page": f"{table.system}-{name}", **violation})
                # A control's name starts with the words it shows (speech input says those).
                mismatched = page.evaluate(NAMED_AS_SHOWN)
                found += [{"page": f"{table.system}-{name}", "name": m} for m in mismatched]
                if name == "phone":
                    controls = page.evaluate(MEASURE)
                    measured += len(controls)
                    small += [
                        (table.system, c)
                        for c in controls
                        if c["height"] < TARGET or c["width"] < TARGET
                    ]
                    self.shot(page, f"room-{table.system}-player-phone-targets")
                page.close()
            off_thread(lambda session=session: end_session(session_id=session.pk))
            ended = self.open_page(viewport=PHONE_390)
            ended.goto(url)
            ended.wait_for_selector("#log li[data-kind='session.end']")
            for violation in self.axe(ended, f"room-{table.system}-ended-phone"):
                found.append({"page": f"{table.system}-ended-phone", **violation})
            ended.close()
        self.assertGreater(measured, 100)
        self.maxDiff = None
        self.assertEqual(small, [], f"controls under {TARGET} px on a phone")
        self.assertEqual(found, [], "serious or critical axe violations")
