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


def test_the_development_servers_log_hides_seat_tokens_too(caplog):
    from daphne.management.commands import runserver

    from tabletop.access_log import install

    install()
    details = {
        "method": "GET",
        "path": "/play/abc/?token=SECRET-3",
        "status": 200,
        "time_taken": 0.01,
        "client": "1.2.3.4:5",
    }
    with caplog.at_level("INFO", logger="django.channels.server"):
        runserver.Command().log_action("http", "complete", details)
    assert "SECRET" not in caplog.text and "token=[redacted]" in caplog.text
