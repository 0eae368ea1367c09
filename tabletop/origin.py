"""Origin checks for sockets that ride on browser credentials (seat cookie, login session)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from django.conf import settings
from django.http.request import split_domain_port, validate_host


def origin_allowed(scope: dict[str, Any]) -> bool:
    origin = None
    for name, value in scope.get("headers", []):
        if name == b"origin":
            origin = value.decode("latin1")
            break
    if not origin:
        # Browsers always send Origin with a websocket; its absence means a non-browser client,
        # which holds its own credentials and is no cross-site hijacking risk.
        return True
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    parsed = urlparse(origin)
    if parsed.scheme != _page_scheme(scope) or not parsed.hostname:
        # A page served over plain http (which anyone on the network can forge) must not
        # drive a socket of the https site, whatever its host.
        return False
    host, _port = split_domain_port(parsed.netloc)
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return validate_host(host, allowed)


def _page_scheme(scope: dict[str, Any]) -> str:
    """The scheme of the pages allowed to open this socket: https for a wss socket, and always
    in production (TLS ends at the proxy, so the socket itself may arrive as ws)."""
    if scope.get("scheme") == "wss" or settings.SESSION_COOKIE_SECURE:
        return "https"
    return "http"
