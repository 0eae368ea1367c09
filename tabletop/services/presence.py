"""Who is at the table now: a seat is here while at least one of its sockets is open, in any
server process. The sockets keep the count; screens ask for it (``here``) now and then, so
coming and going writes nothing to the session's log."""

from __future__ import annotations

from django.db.models import F
from django.db.models.functions import Greatest

from ..models import GameSession, Seat


def arrived(*, seat_id: int) -> None:
    """A socket of the seat opened."""
    Seat.objects.filter(pk=seat_id).update(sockets=F("sockets") + 1)


def left(*, seat_id: int) -> None:
    """A socket of the seat closed."""
    Seat.objects.filter(pk=seat_id).update(sockets=Greatest(F("sockets") - 1, 0))


def here(*, session: GameSession) -> list[int]:
    """The seats of the session with a socket open now (removed seats are gone)."""
    seats = Seat.objects.filter(session=session, sockets__gt=0, removed_at__isnull=True)
    return list(seats.order_by("pk").values_list("pk", flat=True))
