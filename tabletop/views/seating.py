"""Who is asking: the seat behind a page or JSON request, and the one answer for visitors who
have none. Pages and the room's own JSON endpoints read the seat cookie or the login; read-only
endpoints a bot may call (verify, export, statistics) take its seat token in the query too."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext as _

from ..services.access import Access, resolve_access, seat_cookie_name


def seat_access(request: HttpRequest, code: str, *, token: bool = False) -> Access | None:
    """The seat behind ``request`` at table ``code``: its seat cookie or login, and with
    ``token`` a ``?token=`` first. None for outsiders."""
    return resolve_access(
        code=code,
        token=request.GET.get("token") if token else None,
        cookie_token=request.COOKIES.get(seat_cookie_name(code)),
        user=request.user,
        cookies=request.COOKIES,
    )


# The sockets' paths (asgi.py routes them, past Django's URLconf).
def room_socket(code: str) -> str:
    return f"/ws/play/{code}/"


def watch_socket(code: str) -> str:
    return f"/ws/watch/{code}/"


def not_seated() -> JsonResponse:
    """The JSON endpoints' answer to a visitor with no seat at the table."""
    return JsonResponse(
        {"error": {"code": "forbidden", "message": _("join the table first")}}, status=403
    )
