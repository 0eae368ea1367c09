"""The GM's dashboard after the end: "Next session" appears as the session ends and makes the
campaign's next session (planned, a new invite) in one click."""

from __future__ import annotations

import pytest

from tests.browser.conftest import DESKTOP, BrowserTestCase

pytestmark = pytest.mark.browser


class NextSessionTests(BrowserTestCase):
    def test_next_session_in_one_click(self):
        _, _, session = self.make_table("generic")
        gm = self.open_page(viewport=DESKTOP)
        self.log_in_gm(gm, f"/gm/{session.pk}/")
        gm.wait_for_selector("#conn[data-state=live]")
        self.assertTrue(gm.locator("#next-session").is_hidden())
        old_invite = gm.input_value("#invite")
        self.send_as_gm(session, {"type": "session.end"})
        gm.wait_for_selector("#next-session:not([hidden])")
        gm.click("#next-session button")
        gm.wait_for_url(lambda url: f"/gm/{session.pk}/" not in url)
        gm.wait_for_selector("#start-session:not([hidden])")
        self.assertEqual(gm.inner_text("#session-status"), "planned")
        self.assertIn("Session two", gm.inner_text("h1"))
        self.assertNotEqual(gm.input_value("#invite"), old_invite)
        self.shot(gm, "dashboard-next-session", full_page=False)
