"""Origin checks for sockets that ride on browser credentials (seat cookie, login session).

A page may drive such a socket only if it is a page of the site itself: the same scheme, host
and port as the socket's own address (the ``Host`` it was opened on), with that host one the
site serves. Another service on the same machine (``http://localhost:5000`` next to the table
on port 8000) is another origin, as browsers and Django's CSRF check count them; origins listed
in ``CSRF_TRUSTED_ORIGINS`` are allowed as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_allowed(scope: Mapping[str, Any]) -> bool:
    origin = _header(scope, b"origin")
    if not origin:
        # Browsers always send Origin with a websocket; its absence means a non-browser client,
        # which holds its own credentials and is no cross-site hijacking risk.
        return True
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    scheme = _page_scheme(scope)
    try:
        parsed = urlsplit(origin)
        port = parsed.port or DEFAULT_PORTS.get(parsed.scheme)
    except ValueError:  # a port that is not a number, or out of range
        return False
    if parsed.scheme != scheme or not parsed.hostname:
        # A page served over plain http (which anyone on the network can forge) must not
        # drive a socket of the https site, whatever its host.
        return False
    if parsed.path or parsed.query or parsed.fragment or parsed.username or parsed.password:
        return False  # an Origin is scheme://host[:port], nothing more
    host, _ = split_domain_port(parsed.netloc)
    if not validate_host(host, _allowed_hosts()):
        return False
    site = _site(scope, scheme)
    return site is None or site == (host, port)


def _header(scope: Mapping[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin1")
    return None


def _allowed_hosts() -> list[str]:
    if settings.DEBUG and not settings.ALLOWED_HOSTS:
        return [".localhost", "127.0.0.1", "[::1]"]
    return settings.ALLOWED_HOSTS


def _site(scope: Mapping[str, Any], scheme: str) -> tuple[str, int | None] | None:
    """The host and port the socket was opened on, as its pages' origin would name them (the
    port of the pages' scheme when the Host names none). None when the request named no Host
    (not a browser: HTTP/1.1 clients always send one)."""
    host_header = _header(scope, b"host")
    if not host_header:
        return None
    host, port = split_domain_port(host_header.lower())
    if not host:
        return ("", -1)  # a malformed Host matches no origin
    try:
        return host, int(port) if port else DEFAULT_PORTS[scheme]
    except ValueError:
        return ("", -1)


def _page_scheme(scope: Mapping[str, Any]) -> str:
    """The scheme of the pages allowed to open this socket: https for a wss socket, and always
    in production (TLS ends at the proxy, so the socket itself may arrive as ws)."""
    if scope.get("scheme") == "wss" or settings.SESSION_COOKIE_SECURE:
        return "https"
    return "http"
