"""Seat tokens never reach the access log.

Bots may authenticate with ``?token=`` (docs/protocol.md, "The socket") and a seat link carries one
once, so request lines can hold secrets. Daphne's access log prints each request's path with its
query string; ``install`` (run when the ASGI application loads, so it holds for ``daphne
tabletop.asgi:...``, ``manage.py play`` and ``manage.py runserver``) makes them print every secret
parameter's value as ``[redacted]``.
"""

from __future__ import annotations

import re
import sys
from typing import Any

SECRET_PARAMETERS = ("token",)
_SECRET = re.compile(r"([?&](?:" + "|".join(SECRET_PARAMETERS) + r")=)[^&#\s\"]*", re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` (a request line or URL) with every secret parameter's value hidden."""
    return _SECRET.sub(r"\1[redacted]", text)


def install() -> None:
    _redact_runserver()
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


def _redact_runserver() -> None:
    """``manage.py runserver`` (daphne's) logs each request through its command's own
    ``log_action``; it is loaded before the application when it runs at all."""
    module = sys.modules.get("daphne.management.commands.runserver")
    command = getattr(module, "Command", None)
    if command is None or getattr(command.log_action, "redacts", False):
        return
    original = command.log_action

    def log_action(self: Any, protocol: str, action: str, details: dict[str, Any]) -> None:
        if isinstance(details.get("path"), str):
            details = {**details, "path": redact(details["path"])}
        original(self, protocol, action, details)

    log_action.redacts = True  # type: ignore[attr-defined]
    command.log_action = log_action
