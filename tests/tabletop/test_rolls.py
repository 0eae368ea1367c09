"""A roll's way through the database: the fewest statements that keep its promises."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tabletop.models import Event, GameSession
from tabletop.protocol.wire import Decoded, decode, perform
from tabletop.services.errors import ServiceError
from tabletop.services.seats import join_session
from tabletop.services.sessions import end_session

# (a unit of work is a transaction of its own, as on the socket)
pytestmark = pytest.mark.django_db(transaction=True)

ROLL = decode(
    '{"type": "roll", "system": "generic", "request": {"notation": "3d6"}}',
    system="generic",
    is_gm=False,
)
assert isinstance(ROLL, Decoded)


def roll(seat_id: int) -> int | None:
    """A roll as the socket makes it: the checked message, one unit of work."""
    return perform(ROLL, seat_id=seat_id, deadline=float("inf")).seq


def statements(queries) -> list[str]:
    """The statement kinds, without transaction control (drivers differ in what they log)."""
    kinds = [q["sql"].split(None, 1)[0].upper() for q in queries]
    return [k for k in kinds if k not in {"BEGIN", "COMMIT", "SAVEPOINT", "RELEASE"}]


def test_a_roll_reads_its_seat_and_locks_its_session_in_one_statement(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    roll(seat.pk)  # warm
    with CaptureQueriesContext(connection) as queries:
        seq = roll(seat.pk)
    # the seat with its session (locked) and campaign; the next seq; the event
    assert statements(queries.captured_queries) == ["SELECT", "UPDATE", "INSERT"]
    event = Event.objects.get(session=live_session, seq=seq)
    assert event.actor_id == seat.pk and event.kind == "roll"
    if connection.vendor == "postgresql":
        (select,) = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
        assert select.endswith('FOR UPDATE OF "tabletop_gamesession"')


def test_a_roll_at_an_ended_session_is_refused_and_records_nothing(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    end_session(session_id=live_session.pk)
    last = GameSession.objects.get(pk=live_session.pk).last_seq
    with pytest.raises(ServiceError) as err:
        roll(seat.pk)
    assert err.value.code == "conflict"
    assert GameSession.objects.get(pk=live_session.pk).last_seq == last
