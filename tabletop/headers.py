"""The headers every response carries so a browser holds the site's pages to what they are.

- ``Content-Security-Policy``: scripts from the site itself only (ES modules under /static/, no
  inline script, no inline event handler, no ``eval``); styles from the site itself, plus the
  few ``<style>`` blocks the site's own templates carry, each allowed by its SHA-256 (never a
  ``style`` attribute: text a player typed cannot style a page); the room's socket on the
  site's own host (``ws:``/``wss:``); no plugins, no ``<base>``; forms post to the site only.
  A page is framed by no other site (``frame-ancestors 'none'``, with ``X-Frame-Options: DENY``
  for older browsers), except the stream overlay: streaming software shows it as a page of its
  own (OBS, Streamlabs Desktop), and web-based overlay editors put it in a frame; it is
  read-only and holds nothing a click could misuse, so any site may frame it unless
  ``TABLETOP_OVERLAY_FRAME_ANCESTORS`` says otherwise.
- ``Permissions-Policy``: no camera, microphone, location, payment or device access, for the
  page or anything it frames.
- ``Referrer-Policy``, ``X-Content-Type-Options``, ``Cross-Origin-Opener-Policy``: Django's
  ``SecurityMiddleware``, from the settings.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from functools import cache, wraps
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse
from django.utils.deprecation import MiddlewareMixin

PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "camera",
        "microphone",
        "geolocation",
        "payment",
        "usb",
        "serial",
        "hid",
        "bluetooth",
        "midi",
        "display-capture",
    )
)

_STYLE_BLOCK = re.compile(r"<style>(.*?)</style>", re.S)


@cache
def template_style_hashes() -> tuple[str, ...]:
    """The CSP sources of every ``<style>`` block in the site's own templates, by hash: the
    printable session log (a page that must stay whole when saved to a file) and the admin's
    one rule."""
    hashes = set()
    for directory in settings.TEMPLATES[0]["DIRS"]:
        for template in sorted(Path(directory).rglob("*.html")):
            for block in _STYLE_BLOCK.findall(template.read_text(encoding="utf-8")):
                digest = hashlib.sha256(block.encode()).digest()
                hashes.add(f"'sha256-{base64.b64encode(digest).decode()}'")
    return tuple(sorted(hashes))


def content_security_policy(request: HttpRequest, *, frame_ancestors: str = "'none'") -> str:
    try:
        # The room's socket, named for browsers that do not count ws: as 'self' yet.
        socket = f" {'wss' if request.is_secure() else 'ws'}://{request.get_host()}"
    except DisallowedHost:  # the answer to a request for a host the site does not serve
        socket = ""
    directives = {
        "default-src": "'self'",
        "script-src": "'self' 'report-sample'",
        "style-src": " ".join(("'self'", "'report-sample'", *template_style_hashes())),
        "img-src": "'self' data:",
        "font-src": "'self'",
        "connect-src": f"'self'{socket}",
        "object-src": "'none'",
        "base-uri": "'none'",
        "form-action": "'self'",
        "frame-ancestors": frame_ancestors,
    }
    return "; ".join(f"{name} {value}" for name, value in directives.items())


def embeddable(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page other sites may frame (the stream overlay), as far as
    ``TABLETOP_OVERLAY_FRAME_ANCESTORS`` allows."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        ancestors = settings.TABLETOP["OVERLAY_FRAME_ANCESTORS"]
        # Read back by the middleware below, as Django's own xframe_options_exempt is; an
        # attribute of this product's, so the stubs do not know it.
        response.frame_ancestors = ancestors  # type: ignore[attr-defined]
        # Framing is the policy's to say: X-Frame-Options cannot name who may frame a page.
        response.xframe_options_exempt = ancestors != "'none'"
        return response

    return wrapped


class SecurityHeadersMiddleware(MiddlewareMixin):
    """Adds the Content-Security-Policy and Permissions-Policy to every response."""

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if "Content-Security-Policy" not in response:
            ancestors = getattr(response, "frame_ancestors", "'none'")
            response["Content-Security-Policy"] = content_security_policy(
                request, frame_ancestors=ancestors
            )
        response.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response
