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


def opened_on(origin: str, host: str, scheme: str = "ws") -> dict:
    """A browser's socket: its page's Origin and the Host it was opened on."""
    return {
        "type": "websocket",
        "scheme": scheme,
        "headers": [(b"host", host.encode()), (b"origin", origin.encode())],
    }


@pytest.mark.parametrize(
    ("origin", "host", "allowed"),
    [
        ("http://localhost:8000", "localhost:8000", True),
        ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
        ("http://[::1]:8000", "[::1]:8000", True),
        ("http://LOCALHOST:8000", "localhost:8000", True),
        ("http://localhost", "localhost:80", True),  # the scheme's own port, named or not
        ("http://localhost:80", "localhost", True),
        # Another service on the same machine is another origin.
        ("http://localhost:5000", "localhost:8000", False),
        ("http://127.0.0.1:8001", "127.0.0.1:8000", False),
        ("http://localhost", "localhost:8000", False),
        ("http://localhost:8000", "localhost", False),
        ("http://127.0.0.1:8000", "localhost:8000", False),  # another host, both allowed
        ("http://localhost:notaport", "localhost:8000", False),
        ("http://localhost:99999", "localhost:8000", False),
        ("http://localhost:8000/page", "localhost:8000", False),
        ("http://user@localhost:8000", "localhost:8000", False),
        ("http://evil.example:8000", "evil.example:8000", False),  # not a host the site serves
    ],
)
def test_origin_port_must_be_the_sockets_own(origin, host, allowed):
    assert origin_allowed(opened_on(origin, host)) is allowed


def test_behind_a_tls_proxy_the_https_origin_matches_the_forwarded_host():
    with override_settings(SESSION_COOKIE_SECURE=True, ALLOWED_HOSTS=["table.example"]):
        assert origin_allowed(opened_on("https://table.example", "table.example"))
        assert origin_allowed(opened_on("https://table.example:443", "table.example"))
        assert not origin_allowed(opened_on("https://table.example:8443", "table.example"))
        assert not origin_allowed(opened_on("http://table.example", "table.example"))


def test_trusted_origins_are_allowed_as_listed():
    with override_settings(CSRF_TRUSTED_ORIGINS=["https://stream.example"]):
        assert origin_allowed(opened_on("https://stream.example", "localhost:8000"))
