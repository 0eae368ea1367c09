"""JSON in and out of the room's endpoints: the object a request sends, and a refusal as the
clients read it (``{"error": {"code", "message", "field"}}`` with the status its code means)."""

from __future__ import annotations

import math
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views import csrf, defaults

from ..protocol.bodies import BODY_BYTES
from ..protocol.commands import parse_json
from ..services.errors import ServiceError, forbidden, invalid, not_found

STATUS_FOR = {
    "invalid": 400,
    "forbidden": 403,
    "not-found": 404,
    "conflict": 409,
    "rate-limited": 429,
    "busy": 503,
}


def wants_json(request: HttpRequest) -> bool:
    """Whether a refusal is read by a program (it sent or asks for JSON), not a browser's page."""
    return request.content_type == "application/json" or "application/json" in request.headers.get(
        "Accept", ""
    )


def error_answer(exc: ServiceError, *, retry_after: float | None = None) -> JsonResponse:
    """The refusal as clients read it; ``retry_after``: seconds until asking again is worth it
    (a budget or a turn), sent as ``Retry-After`` in whole seconds, at least one."""
    body = {"error": {"code": exc.code, "message": exc.message, "field": exc.field}}
    response = JsonResponse(body, status=STATUS_FOR.get(exc.code, 400))
    if retry_after is not None:
        response["Retry-After"] = str(max(1, math.ceil(retry_after)))
    return response


def nothing_here(request: HttpRequest, message: str) -> HttpResponse:
    """A 404 in the request's terms: ``message`` as an error a program reads, to a program;
    Django's page to a browser."""
    if wants_json(request):
        return error_answer(not_found(message))
    raise Http404(message)


def no_such_address(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """The 404 of an address no route takes (``handler404``): an error a program reads, to a
    program; Django's page to a browser."""
    if wants_json(request):
        return error_answer(not_found(_("nothing is at this address")))
    return defaults.page_not_found(request, exception)  # type: ignore[arg-type]


def no_csrf_token(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A post that carries no valid CSRF token (``CSRF_FAILURE_VIEW``): the same, so a client
    sending JSON is told in its own terms what is missing."""
    if wants_json(request):
        return error_answer(
            forbidden(
                _(
                    "this request needs the room page's CSRF token (the X-CSRFToken header "
                    "with its csrftoken cookie); nothing was changed"
                )
            )
        )
    return csrf.csrf_failure(request, reason)


def json_object(request: HttpRequest, *, max_bytes: int = BODY_BYTES) -> dict[str, Any]:
    """The JSON object a request's body holds; ServiceError ``invalid`` for anything else, or
    for a body over ``max_bytes`` (refused from its length, before it is read)."""
    if request.content_type != "application/json":
        raise invalid(_("send JSON (Content-Type: application/json)"))
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    try:
        # (a body sent without its length is read, up to the server's own cap on bodies)
        too_long = length > max_bytes or (not length and len(request.body) > max_bytes)
    except RequestDataTooBig:
        too_long = True
    if too_long:
        raise invalid(
            _("the body is %(length)s bytes; at most %(max_bytes)s are read here")
            % {"length": format(length, ","), "max_bytes": format(max_bytes, ",")}
        )
    try:
        body = parse_json(request.body or b"{}")
    except ValueError:
        raise invalid(_("the body is not JSON")) from None
    if not isinstance(body, dict):
        raise invalid(_("expected a JSON object"))
    return body
