"""The player's room: the join form for visitors without a seat, the room for those with one."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from rules.engines import GameSystem, OddsTooLarge, RuleError, get_system

from ..language import translated_schema
from ..limits import Buckets
from ..models import Character, GameSession, Player, Seat, SessionStatus
from ..protocol.bodies import OddsQuery, join_body, odds_query
from ..selectors.campaign_link import campaign_link, following_session, onward
from ..selectors.campaigns import quick_rolls_of, sheet_of, with_sheets
from ..selectors.odds import OddsBusy, OddsFailed, odds_for
from ..selectors.room import fairness, seat_summary, session_summary
from ..services.access import Access, player_cookie_name, resolve_access, seat_cookie_name
from ..services.errors import ServiceError, human_field, invalid
from ..services.seats import join_session, seat_for_token
from .answers import STATUS_FOR, error_answer, json_object, nothing_here, wants_json
from .seating import not_seated, room_socket, seat_access

COOKIE_AGE = 60 * 60 * 24 * 60

SEATS_ON_PAGE = 40  # names drawn with the room page; hello brings them all
# The modules room.js imports through its own imports (a test keeps the list whole): the page
# asks for them with room.js, not an import level later (room -> panel -> tray).
ROOM_MODULES = ("tray", "state")


def _set_seat_cookie(response: HttpResponse, session: GameSession, token: str) -> None:
    """The seat's token for this session's room and, as the player's, for the campaign's later
    sessions (the browser sits down once per campaign)."""
    for name in (
        seat_cookie_name(session.invite_code),
        player_cookie_name(session.campaign.link_code),
    ):
        response.set_cookie(
            name,
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
        # A seat link opened on another device: keep the token in a cookie, not in the address
        # bar. A browser that already sits at this table is asked first: a link must never
        # silently swap its seat (whoever made the link would then read its own rolls).
        linked = seat_for_token(session=session, token=token)
        current = seat_access(request, code)
        if linked is not None and current is not None and current.seat.pk != linked.pk:
            return _ask_to_switch(request, session, current, linked, token)
        response: HttpResponse = redirect("room", code=code)
        if linked is not None:
            _set_seat_cookie(response, session, token)
        return response
    access = seat_access(request, code)
    if access is None:
        if session.status == SessionStatus.ENDED and following_session(session) is not None:
            # An old invite leads on to the campaign's current session.
            return redirect(campaign_link(session.campaign))
        return _join_form(request, session)
    response = render(request, "tabletop/room.html", room_context(access))
    if access.via == "campaign":
        # Sat down at an earlier session: this room's socket and pages read its own cookie.
        _set_seat_cookie(
            response, session, request.COOKIES[player_cookie_name(session.campaign.link_code)]
        )
    return response


def _ask_to_switch(
    request: HttpRequest, session: GameSession, current: Access, linked: Seat, token: str
) -> HttpResponse:
    response = render(
        request,
        "tabletop/switch_seat.html",
        {"session": session, "current": current.seat, "linked": linked, "token": token},
    )
    response["Cache-Control"] = "no-store"
    return response


@require_POST
def switch_seat(request: HttpRequest, code: str) -> HttpResponse:
    """Take the seat of a seat link in this browser, once its holder said yes (a form post with
    its CSRF token: another site cannot make the choice for them)."""
    session = get_object_or_404(GameSession.objects.select_related("campaign"), invite_code=code)
    token = request.POST.get("token", "")
    response = redirect("room", code=code)
    if token and seat_for_token(session=session, token=token) is not None:
        _set_seat_cookie(response, session, token)
    return response


# What the room page may spend building its characters' quick rolls (selectors/campaigns.py).
QUICK_ROLLS_SECONDS = 1.0


def room_context(access: Access) -> dict[str, Any]:
    session, seat = access.session, access.seat
    system = get_system(session.campaign.system)
    characters = with_sheets(
        seat.characters.all() if not seat.is_gm else session.campaign.characters.all()
    )
    quick = quick_rolls_of(
        campaign=session.campaign, characters=characters, seconds=QUICK_ROLLS_SECONDS
    )
    page = {
        "session": session_summary(session),
        "seat": seat_summary(seat),
        "role": seat.role,
        "socket": room_socket(session.invite_code),
        "system": request_schema(system),
        "generic": request_schema(get_system("generic")),
        "quick_rolls": quick,
        "fairness": fairness(session),
        "odds_url": reverse("odds", args=[session.invite_code]),
        # The player's own characters' sheets, edited as forms built from the system's schema.
        "sheet_schema": translated_schema(system.schema())["sheet"],
        "sheets": [sheet_of(c) for c in characters] if not seat.is_gm else [],
        # Where an ended session's room points on to (null while it is not over).
        "onward": onward(session),
        "campaign_link": campaign_link(session.campaign),
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
        "room_modules": room_modules(system.id),
    }


@cache
def room_modules(system_id: str) -> tuple[str, ...]:
    """The room's deeper modules and its system's own (where it has one) as static paths."""
    own = f"tabletop/systems/{system_id}.js"
    mine = (own,) if finders.find(own) else ()
    return tuple(f"tabletop/{name}.js" for name in ROOM_MODULES) + mine


def request_schema(system: GameSystem) -> dict[str, Any]:
    """What the roll panel needs of a system's schema: its request fields, not its sheet."""
    schema = translated_schema(system.schema())
    return {key: schema[key] for key in ("id", "title", "summary", "outcome", "flags", "request")}


def _join_form(
    request: HttpRequest,
    session: GameSession,
    *,
    error: ServiceError | None = None,
    status: int = 200,
) -> HttpResponse:
    taken = Seat.objects.filter(session=session).values_list("characters", flat=True)
    free = (
        Character.objects.filter(campaign_id=session.campaign_id)
        .exclude(pk__in=[t for t in taken if t])
        # Characters the campaign's players play stay theirs at every session.
        .exclude(
            pk__in=Player.characters.through.objects.filter(player__removed_at__isnull=True).values(
                "character_id"
            )
        )
    )
    if request.user.is_authenticated:
        free = free.filter(owner__isnull=True) | free.filter(owner=request.user)
    else:
        free = free.filter(owner__isnull=True)
    context = {
        "session": session,
        "campaign_link": campaign_link(session.campaign),
        "characters": free.order_by("name"),
        "error": error,
        "name": request.POST.get("name", ""),
    }
    return render(request, "tabletop/join.html", context, status=status)


@csrf_exempt  # JSON clients (bots) have no CSRF cookie; form posts are checked below
@require_POST
def join(request: HttpRequest, code: str) -> HttpResponse:
    as_json = wants_json(request)
    session = GameSession.objects.select_related("campaign").filter(invite_code=code).first()
    if session is None:
        return nothing_here(request, _("no table has that code"))
    if request.content_type == "application/json":
        try:
            body = json_object(request)
        except ServiceError as exc:
            return error_answer(exc)
    else:
        rejected = CsrfViewMiddleware(lambda r: HttpResponse()).process_view(
            request, lambda r: HttpResponse(), (), {}
        )
        if rejected is not None:
            if as_json:
                return error_answer(
                    ServiceError(
                        "forbidden", _("a form post needs its CSRF token; send JSON instead")
                    )
                )
            return rejected
        body = request.POST
    existing = seat_access(request, code)
    if existing is not None:
        # Rejoining from the same browser keeps the seat.
        cookie = {
            "cookie": seat_cookie_name(code),
            "campaign": player_cookie_name(session.campaign.link_code),
        }.get(existing.via)
        token = request.COOKIES.get(cookie) if cookie else None
        return _joined(request, session, existing.seat, token, as_json)
    if not _join_allowed(request):
        refused = ServiceError(
            "rate-limited", _("too many seats taken from this address; wait a minute")
        )
        if as_json:
            return error_answer(refused)
        return _join_form(request, session, error=refused, status=429)
    try:
        # Checked against its declaration before the service sees it (docs/protocol.md).
        checked = join_body(
            {key: body.get(key) for key in body}, form=request.content_type != "application/json"
        )
        joined = join_session(
            session=session, name=checked.name, character_id=checked.character, user=request.user
        )
    except ServiceError as exc:
        if as_json:
            return error_answer(exc)
        return _join_form(request, session, error=exc, status=STATUS_FOR.get(exc.code, 400))
    return _joined(request, session, joined.seat, joined.token, as_json)


_join_buckets = Buckets(0, 0)


def _join_allowed(request: HttpRequest) -> bool:
    """Seats per client address (the proxy's, if one sits in front: set it up to pass the
    client's address as REMOTE_ADDR), so one person cannot multiply their budgets."""
    _join_buckets.keep_to_per_minute(settings.TABLETOP["JOINS_PER_MINUTE"])
    return _join_buckets(request.META.get("REMOTE_ADDR", "")).take()


def _joined(
    request: HttpRequest, session: GameSession, seat: Seat, token: str | None, as_json: bool
) -> HttpResponse:
    code = session.invite_code
    if as_json:
        response: HttpResponse = JsonResponse(
            {"seat": seat_summary(seat), "token": token, "socket": room_socket(code)}
        )
    else:
        response = redirect("room", code=code)
    if token:
        _set_seat_cookie(response, session, token)
    return response


def _odds_access(request: HttpRequest, code: str) -> tuple[Access, str] | None:
    access = resolve_access(
        code=code,
        token=request.GET.get("token"),
        cookie_token=request.COOKIES.get(seat_cookie_name(code)),
        user=request.user,
    )
    return None if access is None else (access, access.session.campaign.system)


_odds_buckets = Buckets(0, 0)


def _odds_allowed(seat_id: int) -> bool:
    conf = settings.TABLETOP
    _odds_buckets.keep_to(conf["ODDS_PER_SECOND"], conf["ODDS_BURST"])
    return _odds_buckets(seat_id).take()


@require_GET
async def odds(request: HttpRequest, code: str) -> HttpResponse:
    """Exact odds for a request, before it is rolled. Seated visitors only, a few a second;
    computed in the odds workers, never on the ORM thread (tabletop/selectors/odds.py)."""
    found = await sync_to_async(_odds_access)(request, code)
    if found is None:
        return not_seated()
    access, table_system = found
    if not _odds_allowed(access.seat.pk):
        return error_answer(
            ServiceError(
                "rate-limited", _("too many odds requests just now; try again in a moment")
            )
        )
    try:
        query = odds_query({key: request.GET.get(key) for key in request.GET})
    except ServiceError as exc:
        return error_answer(exc)
    answer = await _odds_answer(query, table_system)
    if query.check and answer.status_code in (400, 422):
        # Checking as one types: a request not finished yet is an answer, not a failed call
        # (the browser would log every keystroke's 400 as an error).
        refusal = json.loads(answer.content)
        return JsonResponse({"ok": False, "status": answer.status_code, **refusal})
    return answer


async def _odds_answer(query: OddsQuery, table_system: str) -> HttpResponse:
    system_id = query.system or table_system
    if system_id not in {table_system, "generic"}:
        return error_answer(invalid(_("not played at this table"), field="system"))
    try:
        answer = await odds_for(system_id=system_id, request=query.request)
    except OddsTooLarge as exc:
        return JsonResponse(
            {
                "error": {
                    "code": "too-large",
                    "message": f"{human_field(exc.field)}: {exc.reason}",
                    "field": f"request.{exc.field}",
                }
            },
            status=422,
        )
    except RuleError as exc:
        return error_answer(ServiceError.from_rule(exc))
    except OddsBusy:
        return error_answer(
            ServiceError(
                "busy", _("the odds are busy for everyone just now; try again in a moment")
            )
        )
    except OddsFailed as exc:
        return JsonResponse(
            {"error": {"code": "odds-unavailable", "message": str(exc), "field": "request"}},
            status=422,
        )
    response = JsonResponse(answer)
    response["Cache-Control"] = "private, max-age=3600"
    return response
