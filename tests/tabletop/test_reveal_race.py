"""Concurrent reveals of one hidden roll: exactly one reveal event, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from tabletop.models import Event
from tabletop.services.rolls import reveal_roll
from tabletop.services.seats import gm_seat, join_session

from .commands import rolled
from .test_pool_concurrency import race

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_reveals_of_one_roll_make_exactly_one_reveal_event(live_session, gm):
    ana = join_session(session=live_session, name="Ana").seat
    gm_at_table = gm_seat(session=live_session, user=gm)
    # The GM and the roller, several times each, at the same moment.
    seats = [gm_at_table, ana] * 3
    for _ in range(3):
        roll = rolled(seat_id=ana.pk, request={"notation": "d20"}, visibility="gm")
        results = race(len(seats), lambda i, seq=roll.seq: reveal_roll(seat=seats[i], seq=seq))
        assert sorted(results) == ["conflict"] * (len(seats) - 1) + ["ok"]
        reveals = Event.objects.filter(session=live_session, kind="roll.reveal", data__seq=roll.seq)
        assert reveals.count() == 1
