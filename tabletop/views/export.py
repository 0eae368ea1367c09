"""Download a session's record: ``/play/<code>/export.<json|md|html>`` for a seat (the events it
may see), ``/watch/<code>/export.<fmt>`` for a spectator (the public ones).

A record is streamed: read from the store a page at a time, in threads of its own (never on the
database thread other rooms' actions wait for), and sent as fast as its client reads it, never
whole in memory. An ended session's record is made once per viewer and format, kept
(``tabletop/storage.py``) and sent from the file afterwards. Each viewer and each watch link may
ask for a few a minute, and a process makes only a few at once (docs/operations.md, "Limits")."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from channels.db import DatabaseSyncToAsync
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from ..limits import Buckets, Slots
from ..models import SessionStatus
from ..services.export import (
    FORMATS,
    WRITERS,
    Record,
    Writer,
    filename,
    session_record,
    spectator_record,
    viewer_for_seat,
)
from ..services.watch import watched_session
from ..storage import KeptRecords
from ..transport import abort, unsent_bytes
from .answers import nothing_here
from .seating import not_seated, seat_access
from .watch import gone

# A download waits while its client has this much sent and not read, and is dropped if its
# client has read nothing of it for STALL_SECONDS.
UNREAD_BYTES = 1024 * 1024
STALL_SECONDS = 30.0
FILE_CHUNK = 256 * 1024

# The threads records are made in (a process makes EXPORTS_IN_FLIGHT at once, taking turns).
_writers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="export")

_per_viewer = Buckets(0, 0)
_per_link = Buckets(0, 0)
_making = Slots(0)


def _configure() -> None:
    conf = settings.TABLETOP
    _per_viewer.keep_to_per_minute(conf["EXPORTS_PER_MINUTE"])
    _per_link.keep_to_per_minute(conf["LINK_EXPORTS_PER_MINUTE"])
    _making.size = conf["EXPORTS_IN_FLIGHT"]


def _too_many(wait: float, whose: str, per_minute: float) -> HttpResponse:
    seconds = max(1, math.ceil(wait))
    response = HttpResponse(
        _(
            "Too many downloads of this record: %(whose)s may download %(count)s a minute. "
            "Try again in %(seconds)s s."
        )
        % {"whose": whose, "count": format(per_minute, "g"), "seconds": seconds}
        + "\n",
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(seconds)
    return response


def _rate_limited(viewer: Any, link: Any | None) -> HttpResponse | None:
    """429 when the viewer (or the watch link all its spectators share) is over its budget;
    nothing is taken from one budget when the other refuses."""
    _configure()
    conf = settings.TABLETOP
    checks = [(_per_viewer(viewer), _("one viewer"), conf["EXPORTS_PER_MINUTE"])]
    if link is not None:
        checks.append((_per_link(link), _("one watch link"), conf["LINK_EXPORTS_PER_MINUTE"]))
    for bucket, whose, per_minute in checks:
        wait = bucket.wait_for()
        if wait:
            return _too_many(wait, whose, per_minute)
    for bucket, _whose, _per_minute in checks:
        bucket.take()
    return None


class Download(StreamingHttpResponse):
    """A streamed record; ``done`` runs once when the response is closed, however it ended."""

    def __init__(
        self,
        content: AsyncIterator[bytes] | Iterator[bytes],
        *,
        done: Callable[[], None],
        **kw: Any,
    ) -> None:
        super().__init__(content, **kw)
        self._done: Callable[[], None] | None = done

    def close(self) -> None:
        super().close()
        done, self._done = self._done, None
        if done is not None:
            done()


async def _paced(request: HttpRequest) -> bool:
    """Wait while the client has much sent and unread. False: it stopped reading, and its
    connection was dropped (ending the body normally would pass a cut-off file for a whole
    one)."""
    scope = getattr(request, "scope", {})
    unsent = unsent_bytes(scope)
    if unsent is None:
        return True
    deadline = time.monotonic() + STALL_SECONDS
    while (unsent() or 0) > UNREAD_BYTES:
        if time.monotonic() > deadline:
            abort(scope)
            return False
        await asyncio.sleep(0.05)
    return True


class Making:
    """One record being written out, page by page, and (for an ended session) kept as a file
    once whole. ``next_page`` reads the store: on the database thread under ASGI."""

    def __init__(self, record: Record, writer: Writer, keep: Path | None) -> None:
        self.record, self.writer, self.keep = record, writer, keep
        self.kept = KeptRecords(settings.TABLETOP["EXPORT_DIR"])
        self.handle: IO[bytes] | None = self.kept.writer(keep) if keep is not None else None
        self.after = 0

    def _out(self, text: str) -> bytes:
        data = text.encode()
        if self.handle is not None:
            self.handle.write(data)
        return data

    def start(self) -> bytes:
        return self._out(self.writer.start())

    def next_page(self) -> bytes | None:
        page = self.record.page(self.after)
        if not page:
            return None
        self.after = page[-1]["seq"]
        return self._out(self.writer.page(page))

    def finish(self) -> bytes:
        data = self._out(self.writer.end())
        if self.handle is not None and self.keep is not None:
            self.kept.keep(self.handle, self.keep)
            self.handle = None
        return data

    def close(self) -> None:
        """Whatever happened: a file not made whole is not kept."""
        if self.handle is not None:
            self.kept.forget(self.handle)
            self.handle = None


async def _made(request: HttpRequest, making: Making) -> AsyncIterator[bytes]:
    # Pages are read and written in threads of their own (each with its own connection), never
    # on the database thread the rooms' actions queue for: a roll never waits behind a page.
    next_page = DatabaseSyncToAsync(making.next_page, thread_sensitive=False, executor=_writers)
    try:
        yield making.start()
        while (data := await next_page()) is not None:
            yield data
            if not await _paced(request):
                return
        yield making.finish()
    finally:
        making.close()


def _made_here(making: Making) -> Iterator[bytes]:
    """The same, served by a synchronous server (WSGI, the test client)."""
    try:
        yield making.start()
        while (data := making.next_page()) is not None:
            yield data
        yield making.finish()
    finally:
        making.close()


async def _from_file(request: HttpRequest, path: Path) -> AsyncIterator[bytes]:
    with path.open("rb") as handle:
        while chunk := await asyncio.to_thread(handle.read, FILE_CHUNK):
            yield chunk
            if not await _paced(request):
                return


def _from_file_here(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(FILE_CHUNK):
            yield chunk


def _download(
    request: HttpRequest, record: Record, fmt: str, viewer: str, *, to_read: bool = False
) -> HttpResponseBase:
    headers = {"Cache-Control": "private, no-store"}
    # The printable page opens in the browser (to print), and a record a page reads is read
    # there; the others are saved as files.
    if not to_read and (fmt != "html" or request.GET.get("download")):
        headers["Content-Disposition"] = f'attachment; filename="{filename(record, fmt)}"'
    content_type = f"{FORMATS[fmt]}; charset=utf-8"
    ended = record.session.status == SessionStatus.ENDED
    keep = (
        KeptRecords(settings.TABLETOP["EXPORT_DIR"]).path(record.session, viewer, fmt)
        if ended
        else None
    )
    asgi = isinstance(request, ASGIRequest)
    if keep is not None and keep.exists():
        return Download(
            _from_file(request, keep) if asgi else _from_file_here(keep),
            done=lambda: None,
            content_type=content_type,
            headers=headers,
        )
    _configure()
    if not _making.try_take():
        response = HttpResponse(
            _("The server is making other records just now. Try again in a few seconds.") + "\n",
            status=503,
            content_type="text/plain; charset=utf-8",
        )
        response["Retry-After"] = "5"
        return response
    making = Making(record, WRITERS[fmt](record), keep)
    return Download(
        _made(request, making) if asgi else _made_here(making),
        done=_making.give_back,
        content_type=content_type,
        headers=headers,
    )


def _no_such_format(request: HttpRequest) -> HttpResponse:
    return nothing_here(request, _("no such export: it is .json, .md or .html"))


@require_GET
def seat_export(request: HttpRequest, code: str, fmt: str) -> HttpResponseBase:
    if fmt not in FORMATS:
        return _no_such_format(request)
    return seat_download(request, code, fmt)


def seat_download(
    request: HttpRequest, code: str, fmt: str, *, to_read: bool = False
) -> HttpResponseBase:
    """The seat's record in ``fmt``, under its budgets; ``to_read``: for a page to read, not
    a file to save (the verify page's ``/record``)."""
    access = seat_access(request, code, token=True)
    if access is None:
        return not_seated()
    seat = access.seat
    refused = _rate_limited(("seat", seat.pk), None)
    if refused is not None:
        return refused
    label = f"{seat.name} (GM)" if seat.is_gm and seat.name != "GM" else seat.name
    record = session_record(
        session=access.session, viewer=viewer_for_seat(seat), viewer_label=label
    )
    return _download(request, record, fmt, f"seat-{seat.pk}", to_read=to_read)


@require_GET
def watch_export(request: HttpRequest, code: str, fmt: str) -> HttpResponseBase:
    if fmt not in FORMATS:
        return _no_such_format(request)
    found = watched_session(code=code)
    if found is None:
        return gone(request)
    link, session = found
    address = request.META.get("REMOTE_ADDR", "")
    refused = _rate_limited(("spectator", link.pk, address), link.pk)
    if refused is not None:
        return refused
    return _download(request, spectator_record(session), fmt, "spectator")
