"""Seat tokens never reach the access log."""

from __future__ import annotations

import io

from daphne.access import AccessLogGenerator

import tabletop.asgi  # noqa: F401  (loading the application installs the redaction)
from tabletop.access_log import redact


def test_the_access_log_hides_seat_tokens():
    out = io.StringIO()
    log = AccessLogGenerator(out)
    for path in (
        "/play/abc/?token=SECRET-1",
        "/play/abc/odds?request=%7B%7D&token=SECRET-2&system=generic",
    ):
        log(
            "http",
            "complete",
            {"client": "1.2.3.4:5", "method": "GET", "path": path, "status": 200, "size": 10},
        )
    written = out.getvalue()
    assert "SECRET" not in written
    assert "token=[redacted]" in written and "system=generic" in written


def test_redact_leaves_other_parameters_alone():
    assert redact("/ws/play/x/?after=5&token=abc") == "/ws/play/x/?after=5&token=[redacted]"
    assert redact("/play/x/?tokens=1") == "/play/x/?tokens=1"
