"""Who is at the table now: a seat is here while at least one of its sockets is open, in any
server process. The sockets keep the count; when it changes the room's screens are told who is
here (``hub.presence_changed``, pushed over the socket), and ``here`` answers whoever asks.
Coming and going writes nothing to the session's log."""

from __future__ import annotations

from collections import Counter

from django.db.models import F
from django.db.models.functions import Greatest

from ..models import GameSession, Seat


def count_arrivals(*, seat_ids: list[int]) -> None:
    """Sockets of these seats opened (a seat once per socket): one statement for sockets that
    arrive together, rather than one trip each."""
    _add(seat_ids, 1)


def count_departures(*, seat_ids: list[int]) -> None:
    """Sockets of these seats closed (a seat once per socket)."""
    _add(seat_ids, -1)


def _add(seat_ids: list[int], sign: int) -> None:
    by_count: dict[int, list[int]] = {}
    for seat_id, count in Counter(seat_ids).items():
        by_count.setdefault(count, []).append(seat_id)
    for count, seats in by_count.items():
        Seat.objects.filter(pk__in=seats).update(sockets=Greatest(F("sockets") + sign * count, 0))


def here(*, session: GameSession) -> list[int]:
    """The seats of the session with a socket open now (removed seats are gone)."""
    return seats_here(session_id=session.pk)


def seats_here(*, session_id: int) -> list[int]:
    seats = Seat.objects.filter(session_id=session_id, sockets__gt=0, removed_at__isnull=True)
    return list(seats.order_by("pk").values_list("pk", flat=True))
