"""Verify a session's dice in the player's own browser: the record, and the page that checks it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from ..models import GameSession
from .export import seat_download
from .seating import seat_access


@require_GET
def record(request: HttpRequest, code: str) -> HttpResponseBase:
    """Every event of the session as this seat may see it, with the commitment and (after the end)
    the seed: everything needed to recompute the dice without trusting the server. It is the
    seat's ``export.json``, under the same budgets (a session's whole record is streamed a page
    at a time, never held in memory), read by the page rather than saved as a file."""
    return seat_download(request, code, "json", to_read=True)


@require_GET
def verify_page(request: HttpRequest, code: str) -> HttpResponse:
    session = get_object_or_404(GameSession.objects.select_related("campaign"), invite_code=code)
    if seat_access(request, code, token=True) is None:
        return render(request, "tabletop/verify.html", {"session": None}, status=403)
    return render(request, "tabletop/verify.html", {"session": session})
