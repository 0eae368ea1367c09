"""The roll box always in reach: on a phone a bar fixed at the foot of the screen with the log
above it scrolling on its own, a focused field never under the bar or the on-screen keyboard;
the notation field's keys (Up and Down walk the room's earlier rolls, Enter rolls, Escape
clears); a natural 20 or 1 on a d20 marked in the log in words as well as colour. Each on a
phone with touch and on a desktop."""

from __future__ import annotations

import pytest
from django.db.models import Max

from rules.engines.fair import FairStream
from rules.engines.registry import get_system
from tabletop.models import Event, GameSession, Seat
from tabletop.services.sessions import create_session, start_session
from tests.browser.conftest import BrowserTestCase, off_thread
from tests.tabletop.commands import rolled

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1440, "height": 900}}
SIZES = {"phone": PHONE, "desktop": DESKTOP}

# A stand-in for the on-screen keyboard: the visual viewport shrinks to ``height`` while the
# layout viewport keeps its size (as Chromium on Android and Safari do), then says so.
KEYBOARD = """height => {
  const real = window.visualViewport;
  const fake = {width: innerWidth, offsetTop: 0, offsetLeft: 0, scale: 1,
                addEventListener: real.addEventListener.bind(real),
                removeEventListener: real.removeEventListener.bind(real)};
  Object.defineProperty(window, "visualViewport", {configurable: true, get: () => fake});
  window.__keyboard = (h) => {
    fake.height = h;
    real.dispatchEvent(new Event("resize"));  // what the page listens to
  };
  window.__keyboard(height);
}"""


# The Dice field is on screen: below ``top`` (the bar's top, or 0), above the bar's sticky Roll
# row and above ``floor`` (the visible screen's foot).
DICE_CLEAR = """([top, floor]) => {
  const rect = (s) => document.querySelector(s).getBoundingClientRect();
  const f = rect('#f-generic-notation');
  const row = rect('.roll-form .actions');
  const over = top === 'bar' ? rect('.room > .panel').top : top;
  return f.top >= over - 1 && f.bottom <= Math.min(floor ?? innerHeight, row.top) + 1;
}"""


# Scrolls the bar so that an element's ``edge`` ("top" or "bottom") comes ``by`` px from the top
# of ``mark`` ("row": the Roll row) or from the foot of the bar ("bar").
SCROLL_TO = """(el, [edge, mark, by]) => {
  const bar = el.closest('.room > .panel');
  const at = mark === 'row' ? bar.querySelector('.roll-form .actions').getBoundingClientRect().top
    : bar.getBoundingClientRect().bottom;
  bar.scrollTop += el.getBoundingClientRect()[edge] - (at + by);
}"""


def frames(page, count: int = 2) -> None:
    """Let the page draw ``count`` frames (what it does on focus runs in the next one)."""
    page.evaluate(
        "n => new Promise(done => { const next = k => k ? requestAnimationFrame(() => next(k - 1))"
        " : done(); next(n); })",
        count,
    )


def press(page, locator) -> None:
    """A press and a release a few pixels into ``locator``'s head, frames apart, as a finger's."""
    head = locator.bounding_box()
    page.mouse.move(head["x"] + head["width"] / 2, head["y"] + 3)
    page.mouse.down()
    frames(page)
    page.mouse.up()


def box(page, selector: str) -> dict:
    return page.eval_on_selector(
        selector,
        """el => { const r = el.getBoundingClientRect();
                   return {top: r.top, bottom: r.bottom, height: r.height}; }""",
    )


def newest_seq(page, session) -> int:
    """The session's newest seq, once the page has drawn it (the replay may still be arriving
    when the page turns live)."""
    newest = off_thread(
        lambda: Event.objects.filter(session=session).aggregate(newest=Max("seq"))["newest"]
    )
    page.wait_for_selector(f"#ev-{newest}", state="attached")
    return newest


def shown_above_bar(page, selector: str) -> bool:
    """The element is on screen inside the log's box and above the roll bar (if fixed)."""
    return page.eval_on_selector(
        selector,
        """el => {
          const r = el.getBoundingClientRect();
          const log = el.closest('.log').getBoundingClientRect();
          const bar = document.querySelector('.room > .panel');
          const fixed = getComputedStyle(bar).position === 'fixed';
          const barTop = fixed ? bar.getBoundingClientRect().top : Infinity;
          const floor = Math.min(log.bottom, innerHeight, barTop);
          return r.bottom > Math.max(log.top, 0) + 4 && r.bottom <= floor + 1;
        }""",
    )


class RollBarTests(BrowserTestCase):
    def _long_session(self, rolls: int = 60):
        _, _, session = self.make_table("generic")
        gm = off_thread(lambda: Seat.objects.get(session=session, role="gm"))

        def fill() -> None:
            for i in range(rolls):
                rolled(seat_id=gm.pk, request={"notation": ("4d6kh3+2", "1d20+5")[i % 2]})

        off_thread(fill)
        return session

    def test_the_roll_box_stays_at_the_foot_and_the_log_scrolls_on_its_own(self):
        session = self._long_session()
        for name, size in SIZES.items():
            with self.subTest(name):
                page = self.open_page_with(size)
                self.sit_down(page, session, f"Ana{name}")
                newest = newest_seq(page, session)
                page.wait_for_function("document.querySelector('.log').scrollTop > 0")
                self.assertTrue(shown_above_bar(page, f"#ev-{newest}"), "the newest roll shows")
                height = size["viewport"]["height"]
                bar = box(page, ".room > .panel")
                log_list = page.locator("#log")
                self.assertGreater(
                    log_list.evaluate("el => el.scrollHeight - el.clientHeight"),
                    100,
                    "the log scrolls inside its own box",
                )
                if name == "phone":
                    self.assertAlmostEqual(bar["bottom"], height, delta=1)
                    self.assertLess(bar["height"], height * 0.5)
                    self.assertLessEqual(box(page, ".log")["bottom"], bar["top"] + 1)
                    # Scrolling the page leaves the bar where it is.
                    page.evaluate("() => scrollTo(0, document.body.scrollHeight)")
                    self.assertAlmostEqual(box(page, ".room > .panel")["bottom"], height, delta=1)
                    self.assertTrue(page.locator(".roll-button").is_visible())
                    self.assertLessEqual(box(page, ".roll-button")["bottom"], height)
                    page.evaluate("() => scrollTo(0, 0)")
                else:
                    position = page.eval_on_selector(
                        ".room > .panel", "el => getComputedStyle(el).position"
                    )
                    self.assertEqual(position, "static", "the desktop keeps its two columns")
                self.shot(page, f"room-bar-{name}", full_page=False)

                # A roll while the reader is at the newest: followed.
                self.send_as_gm(session, {"type": "roll", "request": {"notation": "1d6"}})
                page.wait_for_selector(f"#ev-{newest + 1}")
                page.wait_for_function(
                    f"document.querySelector('#ev-{newest + 1}').getBoundingClientRect().bottom"
                    " <= document.querySelector('.log').getBoundingClientRect().bottom + 1"
                )
                self.assertTrue(shown_above_bar(page, f"#ev-{newest + 1}"))
                self.assertTrue(page.locator("button.fresh").is_hidden())

                # The reader scrolled up: the next roll does not pull the log down; a pill says
                # it came, above the bar, and one tap brings the log to it.
                up = log_list.evaluate(
                    "el => { el.scrollTop = el.scrollHeight / 2; return el.scrollTop; }"
                )
                page.wait_for_timeout(100)
                self.send_as_gm(session, {"type": "roll", "request": {"notation": "1d8"}})
                page.wait_for_selector(f"#ev-{newest + 2}", state="attached")
                page.wait_for_selector("button.fresh:has-text('1 new event')")
                self.assertAlmostEqual(
                    log_list.evaluate("el => el.scrollTop"), up, delta=2, msg="left where it was"
                )
                self.assertFalse(shown_above_bar(page, f"#ev-{newest + 2}"))
                pill = box(page, "button.fresh")
                self.assertGreaterEqual(pill["height"], 44)
                if name == "phone":
                    self.assertLessEqual(pill["bottom"], box(page, ".room > .panel")["top"])
                self.shot(page, f"room-bar-{name}-new-rolls", full_page=False)
                page.click("button.fresh")
                page.wait_for_selector("button.fresh", state="hidden")
                self.assertTrue(shown_above_bar(page, f"#ev-{newest + 2}"))
                self.assertEqual(self.axe(page, f"room-bar-{name}"), [])

                # Scrolled up to the oldest drawn entry: the earlier ones come, the place kept.
                first = page.eval_on_selector("#log > li.ev", "el => Number(el.dataset.seq)")
                self.assertGreater(first, 1)
                log_list.evaluate("el => { el.scrollTop = 0; }")
                page.wait_for_selector("#ev-1", state="attached")
                self.assertEqual(page.locator("#log > li.earlier").count(), 0)
                page.wait_for_function(
                    """first => {
                      const r = document.getElementById(`ev-${first}`).getBoundingClientRect();
                      const box = document.querySelector('.log').getBoundingClientRect();
                      return r.bottom > box.top && r.top < box.bottom;
                    }""",
                    arg=first,
                )
                newest += 2

    def open_page_with(self, size: dict):
        context = self.browser.new_context(**size)
        self.addCleanup(context.close)
        page = context.new_page()
        self.watch_errors(page)
        return page

    def test_a_focused_field_is_never_under_the_bar_or_the_keyboard(self):
        session = self._long_session(20)
        page = self.open_page_with(PHONE)
        self.sit_down(page, session, "Ana")
        bar = page.locator(".room > .panel")
        dice = page.locator("#f-generic-notation")

        # The bar scrolled to its foot (odds, options): tabbing back to Dice brings it up, clear
        # of the sticky Roll row.
        bar.evaluate("el => { el.scrollTop = el.scrollHeight; }")
        page.focus("#roll-label")
        page.keyboard.press("Shift+Tab")  # the tray's last control
        dice.focus()
        page.wait_for_function(DICE_CLEAR, arg=["bar", None])

        # The on-screen keyboard opens (the visual viewport shrinks to 420 px): the bar rides
        # above it and the field stays in what is left of the screen.
        bar.evaluate("el => { el.scrollTop = el.scrollHeight; }")
        page.evaluate(KEYBOARD, 420)
        page.wait_for_function(
            "Math.abs(document.querySelector('.room > .panel').getBoundingClientRect().bottom"
            " - 420) <= 1"
        )
        page.wait_for_function(DICE_CLEAR, arg=[0, 420])
        page.keyboard.type("2d6")
        self.assertEqual(dice.input_value(), "2d6")
        self.assertLessEqual(box(page, ".room > .panel")["height"], 420 * 0.55 + 1)
        self.shot(page, "room-bar-phone-keyboard", full_page=False)

        # A field on the page (the client seed) focused with the keyboard open: the page
        # scrolls it above the bar.
        page.focus("#client-seed")
        page.wait_for_function(
            """() => { const f = document.getElementById('client-seed').getBoundingClientRect();
                       const bar = document.querySelector('.room > .panel').getBoundingClientRect();
                       return f.top >= 0 && f.bottom <= bar.top + 1; }"""
        )
        # The keyboard closes: the bar goes back to the foot.
        page.evaluate("() => window.__keyboard(innerHeight)")
        page.wait_for_function(
            "Math.abs(document.querySelector('.room > .panel').getBoundingClientRect().bottom"
            " - innerHeight) <= 1"
        )

        # A smaller screen (the layout viewport itself shrinks, as with a resizing keyboard).
        page.set_viewport_size({"width": 390, "height": 480})
        bar.evaluate("el => { el.scrollTop = el.scrollHeight; }")
        page.focus("#roll-label")
        dice.focus()
        page.wait_for_function(DICE_CLEAR, arg=[0, None])
        self.shot(page, "room-bar-phone-480", full_page=False)

        # The desktop: focusing Dice shows it (nothing is fixed over it).
        desk = self.open_page_with(DESKTOP)
        self.sit_down(desk, session, "Bo")
        desk.evaluate("() => scrollTo(0, document.body.scrollHeight)")
        desk.focus("#f-generic-notation")
        field = box(desk, "#f-generic-notation")
        self.assertGreaterEqual(field["top"], 0)
        self.assertLessEqual(field["bottom"], 900)

    def test_a_press_in_the_bar_is_not_lost_and_a_field_after_the_roll_row_stays_put(self):
        # The bar once scrolled whatever was focused clear of the Roll row, even a button just
        # pressed, and even under the sheets, after the row had scrolled away above them: the
        # release then came on whatever moved under the finger, and the click was lost.
        _, _, session = self.make_table("zoria", characters={"Kael": {"skills": {"Swords": 6}}})
        page = self.open_page_with(PHONE)
        self.sit_down(page, session, "Ana", character="Kael")
        page.click('details.sheet summary:has-text("Kael\'s sheet")')
        add = page.locator("button:text-is('Add to Skills')")
        # The sheet's Add button at the bar's foot, the Roll row scrolled away above.
        add.evaluate(SCROLL_TO, ["bottom", "bar", -10])
        row, seen = box(page, ".roll-form .actions"), box(page, ".room > .panel")
        self.assertLess(row["bottom"], seen["top"])
        press(page, add)
        page.get_by_label("Skills: name").nth(1).wait_for()  # the row the click added
        page.wait_for_function("document.activeElement.matches('.sheet-table input')")
        frames(page)
        field, seen = box(page, ".sheet-table .row:last-child input"), box(page, ".room > .panel")
        self.assertGreaterEqual(field["top"], seen["top"] - 1, "the new row is in the bar's view")
        self.assertLessEqual(field["bottom"], seen["bottom"] + 1)
        # The sheet's first field at the bar's foot, focused: it comes up just enough to show,
        # not as far as a Roll row that is not there.
        level = page.get_by_label("Level", exact=True)
        level.evaluate(SCROLL_TO, ["top", "bar", -20])
        level.focus()
        frames(page)
        field, seen = level.bounding_box(), box(page, ".room > .panel")
        self.assertGreaterEqual(field["y"], seen["top"] - 1, "the field is in the bar's view")
        self.assertLessEqual(field["y"] + field["height"], seen["bottom"] + 1)

    def test_a_press_on_a_button_half_under_the_roll_row_is_not_lost(self):
        _, _, session = self.make_table("zoria")
        page = self.open_page_with(PHONE)
        self.sit_down(page, session, "Ana")
        d20 = page.locator(".roll-form button:text-is('+d20')")
        d20.evaluate(
            "b => { window.clicks = 0; b.addEventListener('click', () => window.clicks++); }"
        )
        # All but the button's head (6 px) under the sticky Roll row.
        d20.evaluate(SCROLL_TO, ["top", "row", -6])
        row = box(page, ".roll-form .actions")
        self.assertAlmostEqual(row["top"], d20.bounding_box()["y"] + 6, delta=1)
        press(page, d20)
        frames(page)
        self.assertEqual(page.evaluate("window.clicks"), 1)
        # Another control focused by the page (as a quick roll focuses Roll) is brought clear.
        d3 = page.locator(".roll-form button:text-is('+d3')")
        d3.evaluate(SCROLL_TO, ["top", "row", -6])
        d3.evaluate("b => b.focus()")
        frames(page)
        self.assertLessEqual(
            d3.bounding_box()["y"] + 44, box(page, ".roll-form .actions")["top"] + 1
        )
        # The pressed button, half under the row again, reached with the keyboard: it is
        # :focus-visible, and brought clear.
        d20.focus()
        page.keyboard.press("Shift+Tab")
        frames(page)
        d20.evaluate(SCROLL_TO, ["top", "row", -6])
        page.keyboard.press("Tab")
        self.assertTrue(d20.evaluate("b => b === document.activeElement"))
        frames(page)
        self.assertLessEqual(
            d20.bounding_box()["y"] + 44, box(page, ".roll-form .actions")["top"] + 1
        )

    def test_up_and_down_walk_the_rooms_rolls_enter_rolls_escape_clears(self):
        _, _, session = self.make_table("generic")
        other = off_thread(
            lambda: start_session(
                session_id=create_session(campaign=session.campaign, title="Session two").pk
            )
        )
        for name, size in SIZES.items():
            with self.subTest(name):
                page = self.open_page_with(size)
                self.sit_down(page, session, f"Cy{name}")
                dice = page.locator("#f-generic-notation")
                # The rolls of the sizes before, counted in the store and drawn before counting
                # on (the page draws them from its hello, which may come after the sit-down).
                before = off_thread(
                    lambda: Event.objects.filter(session=session, kind="roll").count()
                )
                page.wait_for_function(
                    "n => document.querySelectorAll('#log li[data-kind=roll]').length === n",
                    arg=before,
                )
                for i, notation in enumerate(("1d20+2", "2d6", "3d8")):
                    dice.fill(notation)
                    dice.press("Enter")  # Enter rolls
                    page.wait_for_function(
                        "n => document.querySelectorAll('#log li[data-kind=roll]').length === n",
                        arg=before + i + 1,
                    )
                    page.wait_for_selector(".roll-button:not([disabled])")
                dice.fill("4d4")  # typed, not rolled yet
                steps = []
                for key in (
                    "ArrowUp",
                    "ArrowUp",
                    "ArrowUp",
                    "ArrowUp",
                    "ArrowDown",
                    "ArrowDown",
                    "ArrowDown",
                    "ArrowDown",
                ):
                    dice.press(key)
                    steps.append(dice.input_value())
                self.assertEqual(
                    steps, ["3d8", "2d6", "1d20+2", "1d20+2", "2d6", "3d8", "4d4", "4d4"]
                )
                dice.press("Escape")
                self.assertEqual(dice.input_value(), "")
                self.assertTrue(dice.evaluate("el => el === document.activeElement"))
                # Kept in the browser: after a reload the memory is still there.
                page.reload()
                self.wait_live(page)
                dice.press("ArrowUp")
                self.assertEqual(dice.input_value(), "3d8")
                # Typing starts the walk over from the newest.
                dice.fill("5d")
                dice.press("ArrowUp")
                self.assertEqual(dice.input_value(), "3d8")
                dice.press("ArrowDown")
                self.assertEqual(dice.input_value(), "5d")
                # Another room has its own memory.
                page.goto(f"{self.live_server_url}/play/{other.invite_code}/")
                if page.locator("#name").count():  # (a seat of the campaign may sit at once)
                    page.fill("#name", f"Cy{name}")
                    page.click("button[type=submit]")
                page.wait_for_selector("#f-generic-notation")
                page.locator("#f-generic-notation").press("ArrowUp")
                self.assertEqual(page.locator("#f-generic-notation").input_value(), "")

    def test_a_natural_20_and_a_natural_1_are_marked_in_words_and_colour(self):
        _, _, session = self.make_table("generic")
        gm = off_thread(lambda: Seat.objects.get(session=session, role="gm"))

        def roll_showing(face: int, notation: str) -> int:
            """Roll ``notation`` with a client seed found to bring ``face`` on its first d20."""
            fresh = GameSession.objects.get(pk=session.pk)
            seq = (Event.objects.filter(session=fresh).aggregate(m=Max("seq"))["m"] or 0) + 1
            engine = get_system("generic")
            for n in range(5000):
                seed = f"nat-{face}-{n}"
                result = engine.roll(
                    {"notation": notation}, FairStream(bytes(fresh.server_seed), seed, seq)
                )
                if result["dice"][0]["value"] == face:
                    break
            event = rolled(seat_id=gm.pk, request={"notation": notation}, client_seed=seed)
            assert event.seq == seq
            return seq

        crit = off_thread(lambda: roll_showing(20, "1d20+5"))
        fumble = off_thread(lambda: roll_showing(1, "1d20+5"))
        # A natural 20 that does not count (disadvantage dropped it) is not a critical.
        dropped = off_thread(lambda: roll_showing(20, "2d20kl1"))
        for name, size in SIZES.items():
            with self.subTest(name):
                page = self.open_page_with(size)
                self.sit_down(page, session, f"Di{name}")
                page.wait_for_selector(f"#ev-{dropped}")
                self.assertIn("natural 20", page.inner_text(f"#ev-{crit} .tally"))
                self.assertIn("NAT 20", page.inner_text(f"#ev-{crit} .die.nat-max .cap"))
                self.assertIn(
                    "natural 20, the highest face",
                    page.eval_on_selector(f"#ev-{crit} .die.nat-max", "el => el.textContent"),
                )
                self.assertIn("natural 1", page.inner_text(f"#ev-{fumble} .tally"))
                self.assertIn("NAT 1", page.inner_text(f"#ev-{fumble} .die.nat-min .cap"))
                self.assertEqual(
                    page.locator(f"#ev-{dropped} .die.role-dropped.nat-max").count(), 0
                )
                page.locator(f"#ev-{crit}").scroll_into_view_if_needed()
                self.shot(page, f"room-natural-{name}", full_page=False)
                self.assertEqual(self.axe(page, f"room-natural-{name}"), [])
