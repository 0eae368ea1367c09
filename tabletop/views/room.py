"""The player's room: the join form for visitors without a seat, the room for those with one."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from rules.engines import GameSystem, OddsTooLarge, RuleError, get_system

from ..models import Character, GameSession, Seat
from ..selectors.odds import odds_for
from ..selectors.room import fairness, seat_summary, session_summary
from ..services.access import Access, resolve_access, seat_cookie_name
from ..services.errors import ServiceError
from ..services.seats import join_session, seat_for_token

COOKIE_AGE = 60 * 60 * 24 * 60

STATUS_FOR = {"invalid": 400, "forbidden": 403, "not-found": 404, "conflict": 409}


SEATS_ON_PAGE = 40  # names drawn with the room page; hello brings them all


def _access(request: HttpRequest, code: str) -> Access | None:
    return resolve_access(
        code=code,
        token=None,
        cookie_token=request.COOKIES.get(seat_cookie_name(code)),
        user=request.user,
    )


def _set_seat_cookie(response: HttpResponse, code: str, token: str) -> None:
    response.set_cookie(
        seat_cookie_name(code),
        token,
        max_age=COOKIE_AGE,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )


def room(request: HttpRequest, code: str) -> HttpResponse:
    session = get_object_or_404(GameSession.objects.select_related("campaign"), invite_code=code)
    token = request.GET.get("token")
    if token:
        # A seat link opened on another device: keep the token in a cookie, not in the address bar.
        response = redirect(f"/play/{code}/")
        if seat_for_token(session=session, token=token) is not None:
            _set_seat_cookie(response, code, token)
        return response
    access = _access(request, code)
    if access is None:
        return _join_form(request, session)
    return render(request, "tabletop/room.html", room_context(access))


def room_context(access: Access) -> dict[str, Any]:
    session, seat = access.session, access.seat
    system = get_system(session.campaign.system)
    settings_ = session.campaign.settings or {}
    characters = (
        list(seat.characters.all()) if not seat.is_gm else list(session.campaign.characters.all())
    )
    quick = []
    for character in characters:
        try:
            rolls = system.quick_rolls(character.sheet or {}, settings_)
        except RuleError:
            rolls = []
        quick.append({"character": {"id": character.pk, "name": character.name}, "rolls": rolls})
    page = {
        "session": session_summary(session),
        "seat": seat_summary(seat),
        "role": seat.role,
        "socket": f"/ws/play/{session.invite_code}/",
        "system": _request_schema(system),
        "generic": _request_schema(get_system("generic")),
        "quick_rolls": quick,
        "fairness": fairness(session),
        "odds_url": f"/play/{session.invite_code}/odds",
    }
    # The first names are drawn with the page; the socket's hello brings the whole table, so the
    # page weighs the same at a table of 5 or of 500.
    seats = Seat.objects.filter(session=session).order_by("created_at")
    shown = list(seats[:SEATS_ON_PAGE])
    count = len(shown) if len(shown) < SEATS_ON_PAGE else seats.count()
    return {
        "session": session,
        "seat": seat,
        "page": page,
        "system": system,
        "seats": shown,
        "seat_count": count,
        "seats_more": count - len(shown),
    }


def _request_schema(system: GameSystem) -> dict[str, Any]:
    """What the roll panel needs of a system's schema: its request fields, not its sheet."""
    schema = system.schema()
    return {key: schema[key] for key in ("id", "title", "summary", "outcome", "flags", "request")}


def _join_form(
    request: HttpRequest,
    session: GameSession,
    *,
    error: ServiceError | None = None,
    status: int = 200,
) -> HttpResponse:
    taken = Seat.objects.filter(session=session).values_list("characters", flat=True)
    free = Character.objects.filter(campaign_id=session.campaign_id).exclude(
        pk__in=[t for t in taken if t]
    )
    if request.user.is_authenticated:
        free = free.filter(owner__isnull=True) | free.filter(owner=request.user)
    else:
        free = free.filter(owner__isnull=True)
    context = {
        "session": session,
        "characters": free.order_by("name"),
        "error": error,
        "name": request.POST.get("name", ""),
    }
    return render(request, "tabletop/join.html", context, status=status)


def _wants_json(request: HttpRequest) -> bool:
    return request.content_type == "application/json" or "application/json" in request.headers.get(
        "Accept", ""
    )


@csrf_exempt  # JSON clients (bots) have no CSRF cookie; form posts are checked below
@require_POST
def join(request: HttpRequest, code: str) -> HttpResponse:
    session = get_object_or_404(GameSession.objects.select_related("campaign"), invite_code=code)
    as_json = _wants_json(request)
    if request.content_type == "application/json":
        try:
            body = json.loads(request.body or b"{}")
        except (ValueError, RecursionError):
            return _json_error(ServiceError("invalid", "the body is not JSON"))
        if not isinstance(body, dict):
            return _json_error(ServiceError("invalid", "expected a JSON object"))
    else:
        rejected = CsrfViewMiddleware(lambda r: HttpResponse()).process_view(request, None, (), {})
        if rejected is not None:
            if as_json:
                return _json_error(
                    ServiceError("forbidden", "a form post needs its CSRF token; send JSON instead")
                )
            return rejected
        body = request.POST
    existing = _access(request, code)
    if existing is not None:
        # Rejoining from the same browser keeps the seat.
        token = request.COOKIES.get(seat_cookie_name(code)) if existing.via == "cookie" else None
        return _joined(request, code, existing.seat, token, as_json)
    try:
        joined = join_session(
            session=session,
            name=body.get("name"),
            character_id=body.get("character") or None,
            user=request.user,
        )
    except ServiceError as exc:
        if as_json:
            return _json_error(exc)
        return _join_form(request, session, error=exc, status=STATUS_FOR.get(exc.code, 400))
    return _joined(request, code, joined.seat, joined.token, as_json)


def _joined(
    request: HttpRequest, code: str, seat: Seat, token: str | None, as_json: bool
) -> HttpResponse:
    if as_json:
        response: HttpResponse = JsonResponse(
            {"seat": seat_summary(seat), "token": token, "socket": f"/ws/play/{code}/"}
        )
    else:
        response = redirect(f"/play/{code}/")
    if token:
        _set_seat_cookie(response, code, token)
    return response


def _json_error(exc: ServiceError) -> JsonResponse:
    body = {"error": {"code": exc.code, "message": exc.message, "field": exc.field}}
    return JsonResponse(body, status=STATUS_FOR.get(exc.code, 400))


@require_GET
def odds(request: HttpRequest, code: str) -> HttpResponse:
    """Exact odds for a request, before it is rolled. Seated visitors only."""
    access = resolve_access(
        code=code,
        token=request.GET.get("token"),
        cookie_token=request.COOKIES.get(seat_cookie_name(code)),
        user=request.user,
    )
    if access is None:
        return JsonResponse(
            {"error": {"code": "forbidden", "message": "join the table first"}}, status=403
        )
    system_id = request.GET.get("system") or access.session.campaign.system
    if system_id not in {access.session.campaign.system, "generic"}:
        return _json_error(
            ServiceError("invalid", "system: not played at this table", field="system")
        )
    try:
        payload = json.loads(request.GET.get("request", "{}"))
    except (ValueError, RecursionError):
        return _json_error(ServiceError("invalid", "request: not JSON", field="request"))
    try:
        answer = odds_for(system_id=system_id, request=payload)
    except OddsTooLarge as exc:
        return JsonResponse(
            {
                "error": {
                    "code": "too-large",
                    "message": f"{exc.field}: {exc.reason}",
                    "field": f"request.{exc.field}",
                }
            },
            status=422,
        )
    except RuleError as exc:
        return _json_error(ServiceError.from_rule(exc))
    response = JsonResponse(answer)
    response["Cache-Control"] = "private, max-age=3600"
    return response
