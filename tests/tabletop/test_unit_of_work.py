"""The write path in plain sight: the unit of work a change records in is passed to it, its
events come back to its caller, and what is withheld from the room is read in one query."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tabletop.models import Event
from tabletop.services.errors import ServiceError, conflict
from tabletop.services.events import UnitOfWork, change, unit_of_work
from tabletop.services.seats import join_session
from tabletop.services.withheld import pending_withheld_of

from .commands import rolled


def _leave(uow: UnitOfWork, seat) -> Event:
    return uow.record(
        session_id=seat.session_id,
        kind="seat.leave",
        actor=seat,
        data={"seat": seat.pk, "name": seat.name},
    )


@pytest.mark.django_db
def test_a_change_refused_inside_a_callers_unit_leaves_nothing_to_publish(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    with change(None) as outer:
        kept = _leave(outer, seat)
        with pytest.raises(ServiceError), change(outer) as uow:
            _leave(uow, seat)
            raise conflict("refused after it recorded")
        # The refused change's event went with its savepoint: only the first is the unit's.
        assert outer.events == [kept]
    assert list(Event.objects.filter(kind="seat.leave").values_list("seq", flat=True)) == [kept.seq]


@pytest.mark.django_db
def test_each_change_begins_with_nothing_moved(live_session):
    uow = UnitOfWork(joined=False)
    uow.moved(("pools", 1), -1)
    with change(uow) as same:
        assert same is uow and uow.moves == {}


@pytest.mark.django_db(transaction=True)
def test_the_sockets_unit_hands_its_events_back_in_seq_order(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    roll, events = unit_of_work(
        lambda uow: rolled(uow=uow, seat_id=seat.pk, request={"notation": "2d6"})
    )
    assert events == [roll] and events[0].kind == "roll"
    # Nothing is left behind for the next unit on this thread.
    _, none = unit_of_work(lambda uow: None)
    assert none == []


@pytest.mark.django_db
def test_what_is_withheld_is_read_in_one_query_however_many_rooms(live_session):
    with CaptureQueriesContext(connection) as read:
        pending_withheld_of([live_session.pk, live_session.pk + 1, live_session.pk + 2])
    assert len(read.captured_queries) == 1
