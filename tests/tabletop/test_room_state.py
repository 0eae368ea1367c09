"""hello's state: one read of the room per last_seq for sockets connecting together."""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tabletop.arrivals import hellos
from tabletop.selectors import room
from tabletop.services.access import resolve_access
from tabletop.services.seats import join_session

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _forget_rooms():
    room._shared.clear()
    yield
    room._shared.clear()


def hello_for(session, token):
    access = resolve_access(code=session.invite_code, token=token, cookie_token=None, user=None)
    with CaptureQueriesContext(connection) as queries:
        ((hello, _),) = hellos([(access, None)])
    return hello, len(queries.captured_queries)


def test_sockets_connecting_at_the_same_seq_share_one_read_of_the_room(live_session):
    tokens = [join_session(session=live_session, name=f"P{i}").token for i in range(20)]
    first, first_queries = hello_for(live_session, tokens[0])
    second, second_queries = hello_for(live_session, tokens[1])
    assert second["last_seq"] == first["last_seq"]
    assert second["state"] == first["state"]
    assert second_queries < first_queries
    assert len(second["state"]["seats"]) == 21  # the GM's seat and 20 players


def test_a_new_seq_or_a_second_later_reads_the_room_again(live_session):
    ana = join_session(session=live_session, name="Ana")
    before, _ = hello_for(live_session, ana.token)
    bo = join_session(session=live_session, name="Bo")  # takes a seq
    after, _ = hello_for(live_session, bo.token)
    assert after["last_seq"] == before["last_seq"] + 1
    assert [s["name"] for s in after["state"]["seats"]][-1] == "Bo"
    # A change that takes no seq (an admin's edit) shows once the shared read is a second old.
    live_session.title = "Renamed"
    live_session.save(update_fields=["title"])
    with mock.patch.object(room.time, "monotonic", return_value=room.time.monotonic() + 2):
        later, _ = hello_for(live_session, bo.token)
    assert later["state"]["session"]["title"] == "Renamed"
