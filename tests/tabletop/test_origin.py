"""Which pages may open a socket that rides on browser credentials: host and scheme."""

from __future__ import annotations

import pytest
from django.test import override_settings

from tabletop.origin import origin_allowed


def scope(origin: str | None, scheme: str = "ws") -> dict:
    headers = [(b"origin", origin.encode())] if origin else []
    return {"type": "websocket", "scheme": scheme, "headers": headers}


@pytest.mark.parametrize(
    ("origin", "scheme", "allowed"),
    [
        ("http://localhost", "ws", True),
        ("https://localhost", "wss", True),
        ("http://localhost", "wss", False),  # a plain-http page driving the TLS socket
        ("https://localhost", "ws", False),
        ("http://evil.example", "ws", False),
        ("ftp://localhost", "ws", False),
        (None, "wss", True),  # not a browser: it holds its own credentials
    ],
)
def test_origin_host_and_scheme(origin, scheme, allowed):
    assert origin_allowed(scope(origin, scheme)) is allowed


def test_in_production_only_https_pages_are_allowed_even_behind_a_tls_proxy():
    with override_settings(SESSION_COOKIE_SECURE=True):
        assert not origin_allowed(scope("http://localhost", "ws"))
        assert origin_allowed(scope("https://localhost", "ws"))
