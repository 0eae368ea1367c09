"""Download a session's record: ``/play/<code>/export.<json|md|html>`` for a seat (the events it
may see), ``/watch/<code>/export.<fmt>`` for a spectator (the public ones)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from ..services.export import (
    FORMATS,
    Record,
    filename,
    render,
    session_record,
    spectator_record,
    viewer_for_seat,
)
from ..services.watch import watched_session
from .seating import not_seated, seat_access
from .watch import gone


def _download(request: HttpRequest, record: Record, fmt: str) -> HttpResponse:
    response = HttpResponse(render(record, fmt), content_type=f"{FORMATS[fmt]}; charset=utf-8")
    # The printable page opens in the browser (to print); the others are saved as files.
    if fmt != "html" or request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{filename(record, fmt)}"'
    response["Cache-Control"] = "private, no-store"
    return response


@require_GET
def seat_export(request: HttpRequest, code: str, fmt: str) -> HttpResponse:
    if fmt not in FORMATS:
        raise Http404("no such format")
    access = seat_access(request, code, token=True)
    if access is None:
        return not_seated()
    seat = access.seat
    label = f"{seat.name} (GM)" if seat.is_gm and seat.name != "GM" else seat.name
    record = session_record(
        session=access.session, viewer=viewer_for_seat(seat), viewer_label=label
    )
    return _download(request, record, fmt)


@require_GET
def watch_export(request: HttpRequest, code: str, fmt: str) -> HttpResponse:
    if fmt not in FORMATS:
        raise Http404("no such format")
    found = watched_session(code=code)
    if found is None:
        return gone(request)
    return _download(request, spectator_record(found[1]), fmt)
