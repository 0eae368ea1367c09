"""The GM dashboard: every seat's pools, awards, open rolls, the system's own tools, start, end."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import select_template
from django.urls import reverse

from rules.engines import get_system

from ..language import translated_schema
from ..models import GameSession
from ..selectors.campaign_link import campaign_link
from ..selectors.campaigns import sheet_of, with_sheets
from ..selectors.room import fairness, seat_summary, session_summary
from ..services.errors import ServiceError
from ..services.pools import resource_names
from ..services.seats import gm_seat
from . import gm_features
from .room import request_schema
from .seating import room_socket


@login_required
def dashboard(request: HttpRequest, session_id: int) -> HttpResponse:
    session = get_object_or_404(GameSession.objects.select_related("campaign"), pk=session_id)
    try:
        seat = gm_seat(session=session, user=request.user)
    except ServiceError as exc:
        return render(request, "tabletop/forbidden.html", {"message": exc.message}, status=403)
    invite = request.build_absolute_uri(reverse("room", args=[session.invite_code]))
    lasting = request.build_absolute_uri(campaign_link(session.campaign))
    system = get_system(session.campaign.system)
    schema = translated_schema(system.schema())
    awardable = set(resource_names(system.id))
    page = {
        "session": session_summary(session),
        "seat": seat_summary(seat),
        "role": "gm",
        "socket": room_socket(session.invite_code),
        # What the dashboard draws of the system: its name, flags and the resources a GM awards.
        "system": {
            "id": schema["id"],
            "title": schema["title"],
            "flags": schema["flags"],
            "resources": [
                {"name": f["name"], "label": f.get("label", f["name"])}
                for f in schema["resources"]
                if f["name"] in awardable
            ],
        },
        "invite": invite,
        "campaign_link": lasting,
        "fairness": fairness(session),
        "characters": [
            sheet_of(c) for c in with_sheets(session.campaign.characters.order_by("name"))
        ],
        "settings": session.campaign.settings,
        # The roll panel's fields: the same panel as the room's, for the GM's own rolls.
        "panel_system": request_schema(system),
        "generic": request_schema(get_system("generic")),
        "odds_url": reverse("odds", args=[session.invite_code]),
        # Sheets and settings are edited as forms built from the system's own schema.
        "sheet_schema": schema["sheet"],
        "settings_schema": schema["settings"],
        "code": session.invite_code,
    }
    return render(
        request,
        "tabletop/dashboard.html",
        {
            "session": session,
            "page": page,
            "invite": invite,
            "campaign_link": lasting,
            "system": system,
            # The system's own sections (templates/tabletop/systems/<engine id>_dashboard.html);
            # a system with none of its own gets the plain table's.
            "system_sections": select_template(
                [
                    f"tabletop/systems/{system.id}_dashboard.html",
                    "tabletop/systems/generic_dashboard.html",
                ]
            ),
            **gm_features.context(request, session),
        },
    )
