"""Watch links: the spectator's page, the stream overlay, and the GM's forms to make and revoke
links. A link that is unknown or revoked answers 404 with a page that says so."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from ..headers import embeddable
from ..models import GameSession
from ..selectors.room import fairness, session_summary
from ..services.errors import ServiceError, not_found
from ..services.watch import (
    create_watch_link,
    revoke_watch_link,
    watched_session,
    without_invite,
)
from .answers import error_answer, wants_json
from .seating import watch_socket

OVERLAY_ROLLS = 5  # the last few public rolls an overlay shows, unless ?rolls= says otherwise
OVERLAY_REPLAY = 200  # events an overlay replays on opening


def gone(request: HttpRequest) -> HttpResponse:
    """An unknown or revoked watch link: the page says so, and a program asking for JSON (an
    export, the statistics) is told in JSON."""
    if wants_json(request):
        return error_answer(not_found(_("no such watch link (revoked?)")))
    return render(
        request,
        "tabletop/forbidden.html",
        {"message": _("This watch link does not exist or was revoked. Ask the GM for a new one.")},
        status=404,
    )


@require_GET
def watch_page(request: HttpRequest, code: str) -> HttpResponse:
    found = watched_session(code=code)
    if found is None:
        return gone(request)
    _, session = found
    page = {
        "session": without_invite(session_summary(session)),
        "role": "spectator",
        "socket": watch_socket(code),
        "fairness": fairness(session),
        "stats_url": reverse("watch-stats", args=[code]),
        "export_url": reverse("watch-export", args=[code, "json"]).removesuffix(".json"),
    }
    return render(request, "tabletop/watch.html", {"session": session, "page": page, "code": code})


@require_GET
@embeddable
def overlay(request: HttpRequest, code: str) -> HttpResponse:
    found = watched_session(code=code)
    if found is None:
        return gone(request)
    _, session = found
    try:
        rolls = min(max(int(request.GET.get("rolls", OVERLAY_ROLLS)), 1), 20)
    except ValueError:
        rolls = OVERLAY_ROLLS
    # The overlay shows the last few rolls: its replay starts a little before the end, not at
    # the session's first event.
    after = max(0, session.last_seq - OVERLAY_REPLAY)
    page = {"socket": watch_socket(code), "rolls": rolls, "title": session.title, "after": after}
    return render(request, "tabletop/overlay.html", {"session": session, "page": page})


def _gm_session(session_id: int) -> GameSession:
    return get_object_or_404(GameSession.objects.select_related("campaign"), pk=session_id)


def _back(session_id: int, error: ServiceError | None = None) -> HttpResponse:
    # The dashboard shows the outcome in its watch section; errors come back in the address.
    suffix = "" if error is None else "?" + urlencode({"watch_error": error.message})
    return redirect(reverse("dashboard", args=[session_id]) + f"{suffix}#watch")


@login_required
@require_POST
def create_link(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _gm_session(session_id)
    try:
        create_watch_link(session=session, user=request.user, label=request.POST.get("label", ""))
    except ServiceError as exc:
        if exc.code == "forbidden":
            return render(request, "tabletop/forbidden.html", {"message": exc.message}, status=403)
        return _back(session_id, exc)
    return _back(session_id)


@login_required
@require_POST
def revoke_link(request: HttpRequest, session_id: int, link_id: int) -> HttpResponse:
    session = _gm_session(session_id)
    try:
        revoke_watch_link(session=session, user=request.user, link_id=link_id)
    except ServiceError as exc:
        if exc.code == "forbidden":
            return render(request, "tabletop/forbidden.html", {"message": exc.message}, status=403)
        return _back(session_id, exc)
    return _back(session_id)
