"""Seat tokens never reach the access log.

Bots may authenticate with ``?token=`` (docs/protocol.md, "The socket") and a seat link carries one
once, so request lines can hold secrets. Daphne's access log prints each request's path with its
query string; ``install`` (run when the ASGI application loads, so it holds for ``daphne
tabletop.asgi:...``, ``manage.py play`` and ``manage.py runserver``) makes them print every secret
parameter's value as ``[redacted]``.
"""

from __future__ import annotations

import re

from .adapters import redact_daphne_logs

SECRET_PARAMETERS = ("token",)
_SECRET = re.compile(r"([?&](?:" + "|".join(SECRET_PARAMETERS) + r")=)[^&#\s\"]*", re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` (a request line or URL) with every secret parameter's value hidden."""
    return _SECRET.sub(r"\1[redacted]", text)


def install() -> None:
    redact_daphne_logs(redact)
