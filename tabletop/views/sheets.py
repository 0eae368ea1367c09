"""Sheets and settings from the forms of the room and the dashboard (JSON, with the page's CSRF
token): a player's own characters, the GM's whole campaign."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_POST

from ..protocol.bodies import SHEET_BYTES, settings_body, sheet_body
from ..services.errors import ServiceError
from ..services.sheets import update_settings, update_sheet
from .answers import error_answer, json_object
from .seating import not_seated, seat_access
from .writes import write_refused


@require_POST
def character_sheet(request: HttpRequest, code: str, character_id: int) -> HttpResponse:
    access = seat_access(request, code)
    if access is None:
        return not_seated()
    refused = write_refused(request, access.seat.pk, max_bytes=SHEET_BYTES)
    if refused is not None:
        return refused
    try:
        sheet = sheet_body(json_object(request, max_bytes=SHEET_BYTES))
        character = update_sheet(seat=access.seat, character_id=character_id, sheet=sheet)
    except ServiceError as exc:
        return error_answer(exc)
    return JsonResponse({"id": character.pk, "name": character.name, "sheet": character.sheet})


@require_POST
def campaign_settings(request: HttpRequest, code: str) -> HttpResponse:
    access = seat_access(request, code)
    if access is None:
        return not_seated()
    refused = write_refused(request, access.seat.pk, max_bytes=SHEET_BYTES)
    if refused is not None:
        return refused
    try:
        settings = settings_body(json_object(request, max_bytes=SHEET_BYTES))
        campaign = update_settings(seat=access.seat, settings=settings)
    except ServiceError as exc:
        return error_answer(exc)
    return JsonResponse({"settings": campaign.settings})
