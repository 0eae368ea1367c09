"""Dice statistics as JSON: for a seat (``/play/<code>/stats``), a spectator
(``/watch/<code>/stats``) and the GM (``/gm/<session id>/stats?scope=session|campaign``).

Working them out takes the process's time (a test per die size; a simulated one for dice rolled
too few times for the chi-square approximation), which the rooms on the process share: each
viewer and each watch link has a budget of seconds a minute, charged with what its requests
took, and a process works out a few at once."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from ..limits import Buckets, Slots
from ..models import GameSession
from ..services.errors import ServiceError, forbidden, not_found
from ..services.export import viewer_for_seat
from ..services.seats import gm_seat
from ..services.stats import campaign_stats, session_stats
from ..services.watch import SPECTATOR, watched_session
from .answers import error_answer
from .seating import seat_access

_per_viewer = Buckets(0, 0)
_per_link = Buckets(0, 0)
_working = Slots(0)


def _configure() -> None:
    conf = settings.TABLETOP
    _per_viewer.keep_to_per_minute(conf["STATS_SECONDS_PER_MINUTE"])
    _per_link.keep_to_per_minute(conf["LINK_STATS_SECONDS_PER_MINUTE"])
    _working.size = conf["STATS_IN_FLIGHT"]


def _answer(viewer: Any, link: Any | None, work: Callable[[], dict[str, Any]]) -> JsonResponse:
    """``work``'s report, if the viewer's (and the watch link's) budget has time left; what it
    took is charged to both."""
    _configure()
    conf = settings.TABLETOP
    buckets = [(_per_viewer(viewer), _("one viewer"), conf["STATS_SECONDS_PER_MINUTE"])]
    if link is not None:
        buckets.append(
            (_per_link(link), _("one watch link"), conf["LINK_STATS_SECONDS_PER_MINUTE"])
        )
    for bucket, whose, per_minute in buckets:
        if not bucket.has_credit():
            wait = bucket.wait()
            message = _(
                "The statistics have taken much of the server's time just now: %(whose)s may "
                "use %(seconds)s s of it a minute. Try again in %(wait)s s."
            ) % {
                "whose": whose,
                "seconds": format(per_minute, "g"),
                "wait": max(1, math.ceil(wait)),
            }
            return error_answer(ServiceError("rate-limited", message), retry_after=wait)
    if not _working.try_take():
        message = _(
            "The server is working out other statistics just now. Try again in a few seconds."
        )
        return error_answer(ServiceError("busy", message), retry_after=2)
    began = time.thread_time()  # (the request's own thread does all of it, reading included)
    try:
        report = work()
    finally:
        _working.give_back()
        spent = time.thread_time() - began
        for bucket, _whose, _per_minute in buckets:
            bucket.charge(spent)
    response = JsonResponse(report)
    response["Cache-Control"] = "private, no-store"
    return response


@require_GET
def seat_stats(request: HttpRequest, code: str) -> HttpResponse:
    access = seat_access(request, code, token=True)
    if access is None:
        return error_answer(forbidden(_("join the table first")))
    viewer = viewer_for_seat(access.seat)
    return _answer(
        ("seat", access.seat.pk), None, lambda: session_stats(session=access.session, viewer=viewer)
    )


@require_GET
def watch_stats(request: HttpRequest, code: str) -> HttpResponse:
    found = watched_session(code=code)
    if found is None:
        return error_answer(not_found(_("no such watch link (revoked?)")))
    link, session = found
    address = request.META.get("REMOTE_ADDR", "")
    return _answer(
        ("spectator", link.pk, address),
        link.pk,
        lambda: session_stats(session=session, viewer=SPECTATOR),
    )


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
            return _answer(
                ("gm", request.user.pk),
                None,
                lambda: campaign_stats(campaign=session.campaign, user=request.user),
            )
        seat = gm_seat(session=session, user=request.user)
    except ServiceError as exc:
        return error_answer(exc)
    viewer = viewer_for_seat(seat)
    return _answer(
        ("gm", request.user.pk), None, lambda: session_stats(session=session, viewer=viewer)
    )
