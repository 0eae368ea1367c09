"""The campaign link: one lasting address that opens the campaign's current session."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from ..models import Campaign
from ..selectors.campaign_link import campaign_link, current_session
from ..selectors.room import session_summary
from .seating import room_socket


@require_GET
def campaign_room(request: HttpRequest, code: str) -> HttpResponse:
    """The current session's room (its own address, where the seat cookie and every link of
    the room live); JSON clients get where that is. The player's seat there is theirs already
    when they sat down at an earlier session (services/seats.py)."""
    campaign = get_object_or_404(Campaign, link_code=code)
    session = current_session(campaign_id=campaign.pk)
    if "application/json" in request.headers.get("Accept", ""):
        body = {
            "campaign": campaign.name,
            "link": campaign_link(campaign),
            "session": None if session is None else session_summary(session),
            "room": None if session is None else reverse("room", args=[session.invite_code]),
            "socket": None if session is None else room_socket(session.invite_code),
        }
        response: HttpResponse = JsonResponse(body)
    elif session is None:
        response = render(request, "tabletop/campaign_waiting.html", {"campaign": campaign})
    else:
        response = redirect("room", code=session.invite_code)
    # Where the link leads changes from week to week: never keep an old answer.
    response["Cache-Control"] = "no-store"
    return response
