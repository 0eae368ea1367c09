"""Who is at the other end of a socket or a page: a seat, or nobody (an outsider)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..models import GameSession, Seat
from .errors import ServiceError
from .seats import seat_for_token, seat_for_user


@dataclass(frozen=True)
class Access:
    session: GameSession
    seat: Seat
    # "token" (query parameter, bots), "cookie" (a browser's seat cookie) or "login" (Django auth).
    via: str


def seat_cookie_name(code: str) -> str:
    return f"seat_{code}"


def resolve_access(
    *, code: str, token: str | None, cookie_token: str | None, user: Any
) -> Access | None:
    """The seat behind a token, a seat cookie or a login, in that order; None for outsiders."""
    session = GameSession.objects.select_related("campaign").filter(invite_code=code).first()
    if session is None:
        return None
    if token:
        seat = seat_for_token(session=session, token=token)
        # A wrong token is an outsider, even if a cookie would have let them in.
        return Access(session, seat, "token") if seat is not None else None
    seat = seat_for_token(session=session, token=cookie_token)
    if seat is not None:
        return Access(session, seat, "cookie")
    try:
        seat = seat_for_user(session=session, user=user)
    except ServiceError:
        return None
    return Access(session, seat, "login") if seat is not None else None
