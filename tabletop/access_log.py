"""Seat tokens never reach a log.

Bots may authenticate with ``?token=`` (docs/protocol.md, "The socket") and a seat link carries
one once, so request lines can hold secrets. A parameter's name counts as the server reads it:
``?%74oken=`` and ``?tok%65n=`` are ``token`` to Django and to the socket, so they are hidden
too. ``redact`` hides the value of every parameter whose name, decoded, is a secret's.

Where a URL is written down:
- daphne's access log (``daphne tabletop.asgi:...``, ``manage.py play``) and the development
  server's request log (``manage.py runserver``): ``install`` (run when the ASGI application
  loads) makes them print each request line redacted;
- Django's error reports (the debug page, error mails, and any reporting hook built on them):
  ``RedactingExceptionReporter`` (``DEFAULT_EXCEPTION_REPORTER``) reports a copy of the request
  with its query, its GET parameters and its referrer redacted, and ``RedactingReporterFilter``
  (``DEFAULT_EXCEPTION_REPORTER_FILTER``) hides the traceback's variables that hold a secret
  (a ``token`` variable, a request, a URL);
- Django's own warnings name the path only, never the query.
"""

from __future__ import annotations

import copy
import re
from typing import Any
from urllib.parse import unquote_plus

from django.http import HttpRequest, QueryDict
from django.template.defaultfilters import pprint
from django.views.debug import ExceptionReporter, SafeExceptionReporterFilter

from .adapters import redact_daphne_logs

# A parameter whose name holds one of these carries a secret: seat tokens (``token``), and
# what a form or a client could ever put in a query by mistake (CSRF tokens, passwords, seeds,
# signatures, session keys).
SECRET_NAME = re.compile(r"token|secret|passw|seed|signature|session|csrf", re.IGNORECASE)
HIDDEN = "[redacted]"
# URL-bearing request headers an error report shows (the query string is redacted on its own).
URL_META = ("REQUEST_URI", "RAW_URI", "HTTP_REFERER", "HTTP_ORIGIN")


def is_secret(name: str) -> bool:
    """Whether a raw parameter name is a secret's, as the server decodes it (once), or as a
    client or proxy that decodes again would read it."""
    for _ in range(4):
        if SECRET_NAME.search(name):
            return True
        decoded = unquote_plus(name)
        if decoded == name:
            return False
        name = decoded
    return True  # names still encoded four levels down are nobody's honest parameter


# A parameter in any text (a URL, a request line, the repr of an object holding a request): its
# separator, its raw name, and its value up to the next separator, space, quote or bracket.
PARAMETER = re.compile(r"(?P<start>[?&;])(?P<name>[^=&;#?\s'\"<>]+)=(?P<value>[^&;#\s'\"<>]*)")


def redact(text: str) -> str:
    """``text`` (a URL, a path with its query, a request line such as ``GET /x?token=y``, or
    any text holding them) with every secret parameter's value hidden."""

    def hide(match: re.Match[str]) -> str:
        if not match["value"] or not is_secret(match["name"]):
            return match[0]
        return f"{match['start']}{match['name']}={HIDDEN}"

    return PARAMETER.sub(hide, text)


def redact_query(query: str) -> str:
    """A query string (no ``?``) with every secret parameter's value hidden."""
    return redact(f"?{query}")[1:]


def install() -> None:
    redact_daphne_logs(redact)


class RedactingExceptionReporter(ExceptionReporter):
    """Django's error report (debug page, error mail) of a copy of the request whose query,
    GET parameters and URL-bearing headers have their secrets hidden."""

    def __init__(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        super().__init__(None if request is None else redacted_request(request), *args, **kwargs)


class RedactingReporterFilter(SafeExceptionReporterFilter):
    """Django's filter of error reports, also in debug mode, and for every frame: a variable
    named like a secret is starred out (as Django stars settings), a request is shown redacted,
    and text holding a URL has its secret parameters hidden."""

    hidden_settings = re.compile(
        r"API|AUTH|KEY|PASS|SIGNATURE|HTTP_COOKIE|" + SECRET_NAME.pattern, re.IGNORECASE
    )

    def get_traceback_frame_variables(self, request: Any, tb_frame: Any) -> Any:
        return [
            (name, self.cleanse_variable(name, value))
            for name, value in super().get_traceback_frame_variables(request, tb_frame)
        ]

    def cleanse_variable(self, name: str, value: Any) -> Any:
        if isinstance(value, HttpRequest):
            value = redacted_request(value)
        cleansed = self.cleanse_setting(name, value)
        if cleansed is self.cleansed_substitute:
            return cleansed
        shown = pprint(cleansed)  # as the report shows it, with what it holds (a request in a
        hidden = redact(shown)  # partial, a URL in a list) redacted
        return cleansed if hidden == shown else Shown(hidden)


class Shown:
    """A variable as an error report shows it, once redacted."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def redacted_request(request: HttpRequest) -> HttpRequest:
    clean = copy.copy(request)
    meta = dict(request.META)
    meta["QUERY_STRING"] = redact_query(str(meta.get("QUERY_STRING", "")))
    for key in URL_META:
        if isinstance(meta.get(key), str):
            meta[key] = redact(meta[key])
    clean.META = meta
    clean.GET = QueryDict(meta["QUERY_STRING"], encoding=request.encoding)
    return clean
