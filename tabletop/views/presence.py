"""Who is here now, for the room's seat list: the seats with a socket open."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from ..services.presence import here
from .seating import not_seated, seat_access


@require_GET
def seats_here(request: HttpRequest, code: str) -> HttpResponse:
    access = seat_access(request, code)
    if access is None:
        return not_seated()
    response = JsonResponse({"here": here(session=access.session)})
    response["Cache-Control"] = "no-store"
    return response
