"""Seat tokens never reach the access log.

Bots may authenticate with ``?token=`` (TABLE.md) and a seat link carries one once, so request
lines can hold secrets. Daphne's access log prints each request's path with its query string;
``install`` (run when the ASGI application loads, so it holds for ``daphne tabletop.asgi:...``
as for ``manage.py play``) makes it print every secret parameter's value as ``[redacted]``.
"""

from __future__ import annotations

import re
from typing import Any

SECRET_PARAMETERS = ("token",)
_SECRET = re.compile(r"([?&](?:" + "|".join(SECRET_PARAMETERS) + r")=)[^&#\s\"]*", re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` (a request line or URL) with every secret parameter's value hidden."""
    return _SECRET.sub(r"\1[redacted]", text)


def install() -> None:
    try:
        from daphne.access import AccessLogGenerator
    except ImportError:  # another server: it has its own access log to configure
        return
    if getattr(AccessLogGenerator.write_entry, "redacts", False):
        return
    original = AccessLogGenerator.write_entry

    def write_entry(self: Any, host: Any, date: Any, request: str, *args: Any, **kw: Any) -> None:
        original(self, host, date, redact(request), *args, **kw)

    write_entry.redacts = True  # type: ignore[attr-defined]
    AccessLogGenerator.write_entry = write_entry  # type: ignore[method-assign]
