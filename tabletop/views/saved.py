"""Saved rolls over HTTP, for the seat behind the room's cookie (or the GM's login): list, keep,
rename or change, forget. JSON in and out; the page sends its CSRF token."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_http_methods

from ..protocol.bodies import saved_roll_body
from ..services.errors import ServiceError
from ..services.saved import change_roll, delete_roll, save_roll, saved_for
from .answers import error_answer, json_object
from .seating import not_seated, seat_access
from .writes import write_refused


@require_http_methods(["GET", "POST"])
def saved_rolls(request: HttpRequest, code: str) -> HttpResponse:
    access = seat_access(request, code)
    if access is None:
        return not_seated()
    seat = access.seat
    if request.method == "POST":
        refused = write_refused(request, seat.pk)
        if refused is not None:
            return refused
        try:
            body = saved_roll_body(json_object(request))
            assert body.request is not None  # (required in a new one)
            save_roll(
                seat=seat,
                character_id=body.character,
                label=body.label,
                system=body.system,
                request=body.request,
            )
        except ServiceError as exc:
            return error_answer(exc)
    return JsonResponse({"characters": saved_for(seat=seat)})


@require_http_methods(["POST", "DELETE"])
def saved_roll(request: HttpRequest, code: str, roll_id: int) -> HttpResponse:
    access = seat_access(request, code)
    if access is None:
        return not_seated()
    seat = access.seat
    refused = write_refused(request, seat.pk)
    if refused is not None:
        return refused
    try:
        if request.method == "DELETE":
            delete_roll(seat=seat, roll_id=roll_id)
        else:
            body = saved_roll_body(json_object(request), change=True)
            change_roll(
                seat=seat,
                roll_id=roll_id,
                label=body.label,
                system=body.system,
                request=body.request,
            )
    except ServiceError as exc:
        return error_answer(exc)
    return JsonResponse({"characters": saved_for(seat=seat)})
