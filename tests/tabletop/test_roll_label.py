"""What a roll is for ("Attack"): carried into the roll's data, shown as typed minus what hides
or reorders text, limited in length, absent when empty."""

from __future__ import annotations

import pytest

from tabletop.models import Seat
from tabletop.services.errors import ServiceError

from .commands import rolled

pytestmark = pytest.mark.django_db


def gm_seat(session) -> Seat:
    from tabletop.services.seats import seat_gm

    return seat_gm(session=session)


def test_a_label_goes_with_the_roll(live_session):
    seat = gm_seat(live_session)
    event = rolled(seat_id=seat.pk, request={"notation": "1d20+5"}, label=" Attack\u202e ")
    assert event.data["label"] == "Attack"
    plain = rolled(seat_id=seat.pk, request={"notation": "1d20"}, label="")
    assert "label" not in plain.data


def test_a_long_or_odd_label_is_refused_by_name(live_session):
    seat = gm_seat(live_session)
    for label in ("x" * 61, 42):
        with pytest.raises(ServiceError) as caught:
            rolled(seat_id=seat.pk, request={"notation": "1d20"}, label=label)
        assert caught.value.field == "label"
