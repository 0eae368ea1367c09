"""Seat tokens never reach a log: the access logs and error reports hide every secret
parameter, however its name is spelled."""

from __future__ import annotations

import functools
import io

import pytest
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
    assert redact("/play/x/?after=5&rolls=3&token") == "/play/x/?after=5&rolls=3&token"
    assert redact("WSCONNECT /ws/play/x/") == "WSCONNECT /ws/play/x/"


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


# Names as the server reads them: Django's query parsing and the socket's decode them first.
SPELLINGS = (
    "token",
    "%74oken",
    "tok%65n",
    "%74%6F%6B%65%6E",
    "%74%6f%6b%65%6e",
    "TOKEN",
    "%2574oken",  # decoded twice by a client or proxy
    "csrfmiddlewaretoken",
    "client_seed",
)


@pytest.mark.parametrize("name", SPELLINGS)
def test_a_token_is_hidden_however_its_name_is_spelled(name):
    for line in (
        f"GET /play/abc/odds?request=%7B%7D&{name}=SECRET-4&system=generic",
        f"GET /play/abc/?{name}=SECRET-4",
        f"/play/abc/stats?{name}=SECRET-4#top",
        f"https://dice.example/play/abc/export.json?a=1;{name}=SECRET-4",
    ):
        redacted = redact(line)
        assert "SECRET" not in redacted, redacted
        assert f"{name}=[redacted]" in redacted


def test_the_spellings_a_server_reads_as_token_are_the_ones_hidden():
    from urllib.parse import parse_qs

    from django.http import QueryDict

    for name in ("%74oken", "tok%65n", "%74%6F%6B%65%6E"):
        assert QueryDict(f"{name}=x")["token"] == "x"  # what the views read
        assert parse_qs(f"{name}=x")["token"] == ["x"]  # what the sockets read
    assert (
        redact("GET /play/x/?tokenish=1&after=5&rolls=3")
        == "GET /play/x/?tokenish=[redacted]&after=5&rolls=3"
    )
    assert redact("/watch/x/overlay?rolls=5&download=1") == "/watch/x/overlay?rolls=5&download=1"


def test_the_access_log_hides_an_encoded_token():
    out = io.StringIO()
    log = AccessLogGenerator(out)
    for path in ("/play/abc/?%74oken=SECRET-5", "/play/abc/stats?tok%65n=SECRET-6&scope=session"):
        log(
            "http",
            "complete",
            {"client": "1.2.3.4:5", "method": "GET", "path": path, "status": 200, "size": 10},
        )
    written = out.getvalue()
    assert "SECRET" not in written and "%74oken=[redacted]" in written, written


def failing_view(request):
    token = request.GET["token"]
    url = request.build_absolute_uri()
    later = functools.partial(print, request, [url])  # a request and a URL inside other values
    raise RuntimeError(f"{later.func.__name__} {len(token)} characters at {url.split('?')[0]}")


@pytest.mark.parametrize("debug", [True, False])
def test_an_error_report_hides_the_token_in_the_url_the_query_the_referrer_and_the_traceback(
    rf, settings, debug
):
    import sys

    from django.views.debug import get_exception_reporter_class

    settings.DEBUG = debug
    secret = "q7Zx" + "9WvK"  # (spelled apart: the report shows this file's lines by a frame)
    request = rf.get(
        f"/play/abc/odds?%74oken={secret}-7&system=generic",
        HTTP_REFERER=f"https://dice.example/play/abc/?tok%65n={secret}-8",
    )
    try:
        failing_view(request)
    except RuntimeError:
        reporter = get_exception_reporter_class(request)(request, *sys.exc_info())
        text, html = reporter.get_traceback_text(), reporter.get_traceback_html()
    for report in (text, html):
        assert secret not in report
        assert "generic" in report and "/play/abc/odds" in report  # the rest is still there
    assert request.GET["token"] == f"{secret}-7"  # the request itself is left as it was
