"""The verify page recomputes every die in the player's own browser (WebCrypto) and agrees
with ``manage.py verify``: an honest session verifies, a tampered die is caught and named."""

from __future__ import annotations

import io
import json
import shutil

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from tabletop.models import Event, GameSession
from tabletop.storage import KeptRecords
from tests.browser.conftest import PHONE, BrowserTestCase, off_thread

pytestmark = pytest.mark.browser


def run_verify(code: str) -> tuple[bool, str]:
    out = io.StringIO()
    try:
        call_command("verify", code, stdout=out)
    except CommandError as exc:
        return False, out.getvalue() + str(exc)
    return True, out.getvalue()


class VerifyPageTests(BrowserTestCase):
    def test_the_browser_and_the_command_agree_on_honest_and_tampered_dice(self):
        _, _, session = self.make_table("generic")
        code = session.invite_code
        ana = self.open_page()
        self.sit_down(ana, session, "Ana")
        # d1000 draws four bytes per die; dF is drawn as a d3: both must verify in the browser.
        for n, notation in enumerate(("4d6kh3+2", "3dF", "2d1000", "6d10!>9")):
            if n == 0:
                ana.fill("#client-seed", "my-own-seed")  # a seed of one's own, for one roll
            ana.fill("#f-generic-notation", notation)
            ana.press("#f-generic-notation", "Enter")
            ana.wait_for_selector(f"#log li[data-kind=roll] >> nth={n}")
        self.assertEqual(self.send_as_gm(session, {"type": "session.end"})["kind"], "session.end")

        ana.goto(f"{self.live_server_url}/play/{code}/verify")
        ana.wait_for_selector("#verify[data-result]")
        self.assertEqual(ana.get_attribute("#verify", "data-result"), "verified")
        self.assertIn("yes", ana.inner_text("#commitment-check"))
        self.assertEqual(ana.locator("#rows tr.ok").count(), 4)
        self.shot(ana, "verify-honest")
        ok, text = off_thread(lambda: run_verify(code))
        self.assertTrue(ok, text)

        # On a phone: the seed reads in a few lines and nothing runs off the side.
        ana.set_viewport_size(PHONE)
        ana.wait_for_timeout(50)
        width = ana.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        self.assertLessEqual(width[0], width[1], "no sideways scrolling")
        lines = ana.eval_on_selector(
            "#seed",
            """el => Math.round(el.getBoundingClientRect().height
                               / (parseFloat(getComputedStyle(el).lineHeight) || 20))""",
        )
        self.assertLessEqual(lines, 4, "the 64-character seed takes a few lines")
        self.shot(ana, "verify-honest-phone", full_page=False)
        self.assertIn("4 of 4 events with dice verified", text)
        rolls = Event.objects.filter(kind="roll")
        seeds = off_thread(lambda: set(rolls.values_list("data__client_seed", flat=True)))
        # One seed per roll: the player's own for the first, fresh random ones after it.
        self.assertEqual(len(seeds), 4)
        self.assertIn("my-own-seed", seeds)

        # A cheating server changes one die after the fact, in its store and in the records it
        # keeps of the ended session: both checks name that roll.
        def tamper() -> int:
            event = Event.objects.filter(session=session, kind="roll").order_by("seq")[2]
            data = json.loads(json.dumps(event.data))
            data["dice"][0]["value"] = data["dice"][0]["value"] % 1000 + 1
            Event.objects.filter(pk=event.pk).update(data=data)
            ended = GameSession.objects.get(pk=session.pk)
            kept = KeptRecords(settings.TABLETOP["EXPORT_DIR"]).folder(ended)
            shutil.rmtree(kept, ignore_errors=True)
            return event.seq

        seq = off_thread(tamper)
        ana.reload()
        ana.wait_for_selector("#verify[data-result]")
        self.assertEqual(ana.get_attribute("#verify", "data-result"), "failed")
        bad = ana.locator("#rows tr.bad")
        self.assertEqual(bad.count(), 1)
        self.assertEqual(bad.locator("td").first.inner_text(), str(seq))
        self.shot(ana, "verify-tampered")
        ok, text = off_thread(lambda: run_verify(code))
        self.assertFalse(ok)
        self.assertIn(f"MISMATCH event #{seq}", text)
