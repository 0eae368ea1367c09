"""Who is at the other end of a socket or a page: a seat, or nobody (an outsider)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..models import GameSession, Seat
from .errors import ServiceError
from .seats import seat_for_token, seat_for_user


@dataclass(frozen=True)
class Access:
    session: GameSession
    seat: Seat
    # "token" (query parameter, bots), "cookie" (a browser's seat cookie), "campaign" (the
    # browser's campaign cookie, from a sit-down at an earlier session) or "login" (Django auth).
    via: str


def seat_cookie_name(code: str) -> str:
    return f"seat_{code}"


def player_cookie_name(link_code: str) -> str:
    """The browser's cookie for a whole campaign (its link's code): the player's token."""
    return f"player_{link_code}"


def resolve_access(
    *,
    code: str,
    token: str | None,
    cookie_token: str | None,
    user: Any,
    cookies: Mapping[str, str] | None = None,
) -> Access | None:
    """The seat behind a token, a seat cookie, the campaign cookie among ``cookies`` or a login,
    in that order; None for outsiders."""
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
    if cookies:
        seat = seat_for_token(
            session=session, token=cookies.get(player_cookie_name(session.campaign.link_code))
        )
        if seat is not None:
            return Access(session, seat, "campaign")
    try:
        seat = seat_for_user(session=session, user=user)
    except ServiceError:
        return None
    return Access(session, seat, "login") if seat is not None else None
