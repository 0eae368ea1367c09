"""Dice statistics as JSON: for a seat (``/play/<code>/stats``), a spectator
(``/watch/<code>/stats``) and the GM (``/gm/<session id>/stats?scope=session|campaign``)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from ..models import GameSession
from ..services.errors import ServiceError
from ..services.export import viewer_for_seat
from ..services.seats import gm_seat
from ..services.stats import campaign_stats, session_stats
from ..services.watch import SPECTATOR, watched_session
from .seating import seat_access


def _answer(report: dict) -> JsonResponse:
    response = JsonResponse(report)
    response["Cache-Control"] = "private, no-store"
    return response


def _forbidden(message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": "forbidden", "message": message}}, status=403)


@require_GET
def seat_stats(request: HttpRequest, code: str) -> HttpResponse:
    access = seat_access(request, code, token=True)
    if access is None:
        return _forbidden(_("join the table first"))
    return _answer(session_stats(session=access.session, viewer=viewer_for_seat(access.seat)))


@require_GET
def watch_stats(request: HttpRequest, code: str) -> HttpResponse:
    found = watched_session(code=code)
    if found is None:
        return JsonResponse(
            {"error": {"code": "not-found", "message": _("no such watch link (revoked?)")}},
            status=404,
        )
    return _answer(session_stats(session=found[1], viewer=SPECTATOR))


@login_required
@require_GET
def gm_stats(request: HttpRequest, session_id: int) -> HttpResponse:
    session = get_object_or_404(GameSession.objects.select_related("campaign"), pk=session_id)
    scope = request.GET.get("scope", "session")
    if scope not in ("session", "campaign"):
        body = {
            "error": {"code": "invalid", "message": "scope: session or campaign", "field": "scope"}
        }
        return JsonResponse(body, status=400)
    try:
        if scope == "campaign":
            return _answer(campaign_stats(campaign=session.campaign, user=request.user))
        seat = gm_seat(session=session, user=request.user)
    except ServiceError as exc:
        return _forbidden(exc.message)
    return _answer(session_stats(session=session, viewer=viewer_for_seat(seat)))
