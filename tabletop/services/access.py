"""Who is at the other end of a socket or a page: a seat, or nobody (an outsider).

One rule, for a page's request and for a burst of sockets alike: ``resolve_accesses`` reads the
rooms in one query and the seats their tokens and seat cookies open in one more; what those miss
(a player's first visit to a later session, the campaign cookie, a login) is looked up one by
one. ``resolve_access`` is the same rule for one visitor."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..models import GameSession, Seat
from ..models.sessions import carried_token_hash, hash_token
from . import Visitor
from .errors import ServiceError
from .seats import MAX_TOKEN, seat_for_token, seat_user


@dataclass(frozen=True)
class Access:
    session: GameSession
    seat: Seat
    # "token" (query parameter, bots), "cookie" (a browser's seat cookie), "campaign" (the
    # browser's campaign cookie, from a sit-down at an earlier session) or "login" (Django auth).
    via: str


@dataclass(frozen=True)
class Arrival:
    """A visitor at a room's ``code``, with what they carry: a seat token, a seat cookie's
    token, the logged-in user, and the browser's cookies (for the campaign cookie)."""

    code: str
    token: str | None
    cookie_token: str | None
    user: Visitor
    cookies: Mapping[str, str] | None = None


# Seats already read, by (session id, token hash).
Sitting = dict[tuple[int, str], Seat]


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
    user: Visitor,
    cookies: Mapping[str, str] | None = None,
) -> Access | None:
    """The seat behind a token, a seat cookie, the campaign cookie among ``cookies`` or a login,
    in that order; None for outsiders."""
    (found,) = resolve_accesses([Arrival(code, token, cookie_token, user, cookies)])
    if isinstance(found, BaseException):
        raise found
    return found


def resolve_accesses(
    arrivals: Sequence[Arrival], *, characters: bool = True
) -> list[Access | BaseException | None]:
    """``resolve_access`` for each arrival, in order, with shared queries; an arrival whose
    lookup failed gets its exception (the others still get their answers). ``characters``:
    the seats' characters read with them (a page shows them); a socket's hello takes them from
    the room's state instead (``selectors.room.seat_in_room``), and reading them per seat was
    a third of a burst's token lookups on the database thread."""
    sessions = {
        s.invite_code: s
        for s in GameSession.objects.select_related("campaign").filter(
            invite_code__in={a.code for a in arrivals}
        )
    }
    known = _seats_sitting(sessions, arrivals, characters=characters)
    out: list[Access | BaseException | None] = []
    for a in arrivals:
        session = sessions.get(a.code)
        if session is None:
            out.append(None)
            continue
        try:
            # Each visitor gets its own copy: a socket's hello refreshes the row in place.
            out.append(_access(copy.copy(session), a, known))
        except Exception as exc:
            out.append(exc)
    return out


def _usable(token: str | None) -> bool:
    return bool(token) and len(token or "") <= MAX_TOKEN


def _seats_sitting(
    sessions: Mapping[str, GameSession], arrivals: Sequence[Arrival], *, characters: bool
) -> Sitting:
    """The seats the arrivals' tokens and seat cookies open, by (session, token hash): the
    seat a token was made for, or its player's seat carried into that session."""
    hashes: set[str] = set()
    for a in arrivals:
        session = sessions.get(a.code)
        for token in (a.token, a.cookie_token):
            if session is not None and token and _usable(token):
                hashes.add(hash_token(token))
                hashes.add(carried_token_hash(hash_token(token), session.pk))
    if not (sessions and hashes):
        return {}
    seats = Seat.objects.filter(
        session__in=list(sessions.values()),
        token_hash__in=hashes,
        # The GM's removal holds for the campaign, an ended session's seat (kept as it was) too.
        player__removed_at__isnull=True,
    ).select_related("player")  # (read with the seat: the write services ask it again)
    if characters:
        seats = seats.prefetch_related("characters")
    return {
        (seat.session_id, seat.token_hash): seat for seat in seats if seat.token_hash is not None
    }


def _seat(session: GameSession, token: str | None, known: Sitting) -> Seat | None:
    """The seat ``token`` opens at ``session``: one already read with the others, else what
    ``seat_for_token`` finds (a player's seat, carried into this session on their first visit)."""
    if not token or not _usable(token):
        return None
    token_hash = hash_token(token)
    found = known.get((session.pk, token_hash)) or known.get(
        (session.pk, carried_token_hash(token_hash, session.pk))
    )
    return found if found is not None else seat_for_token(session=session, token=token)


def _access(session: GameSession, a: Arrival, known: Sitting) -> Access | None:
    if a.token:
        seat = _seat(session, a.token, known)
        # A wrong token is an outsider, even if a cookie would have let them in.
        return Access(session, seat, "token") if seat is not None else None
    seat = _seat(session, a.cookie_token, known)
    if seat is not None:
        return Access(session, seat, "cookie")
    if a.cookies:
        seat = seat_for_token(
            session=session, token=a.cookies.get(player_cookie_name(session.campaign.link_code))
        )
        if seat is not None:
            return Access(session, seat, "campaign")
    try:
        seat = seat_user(session=session, user=a.user)
    except ServiceError:
        return None
    return Access(session, seat, "login") if seat is not None else None
