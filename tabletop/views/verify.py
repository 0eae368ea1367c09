"""Verify a session's dice in the player's own browser: the record, and the page that checks it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from ..models import GameSession
from ..selectors.events import Viewer, events_after, for_viewer
from ..selectors.room import fairness, session_summary
from .seating import not_seated, seat_access


@require_GET
def record(request: HttpRequest, code: str) -> HttpResponse:
    """Every event of the session as this seat may see it, with the commitment and (after the end)
    the seed: everything needed to recompute the dice without trusting the server."""
    access = seat_access(request, code, token=True)
    if access is None:
        return not_seated()
    viewer = Viewer(seat_id=access.seat.pk, is_gm=access.seat.is_gm)
    session = access.session
    events = [for_viewer(e, viewer) for e in events_after(session_id=session.pk, after=0)]
    return JsonResponse(
        {"session": session_summary(session), "fairness": fairness(session), "events": events},
        json_dumps_params={"separators": (",", ":")},
    )


@require_GET
def verify_page(request: HttpRequest, code: str) -> HttpResponse:
    session = get_object_or_404(GameSession.objects.select_related("campaign"), invite_code=code)
    if seat_access(request, code, token=True) is None:
        return render(request, "tabletop/verify.html", {"session": None}, status=403)
    return render(request, "tabletop/verify.html", {"session": session})
