"""A roll's way through the database: the fewest statements that keep its promises."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

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


def test_a_roll_locks_its_session_only_to_take_its_seq_and_store_its_event(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    roll(seat.pk)  # warm
    with CaptureQueriesContext(connection) as queries:
        seq = roll(seat.pk)
    # the seat with its session and campaign, not locked; the seq, which locks the session and
    # reads its status and table state again; the event. No savepoint in the unit of work.
    assert statements(queries.captured_queries) == ["SELECT", "UPDATE", "INSERT"]
    sql = [q["sql"] for q in queries.captured_queries]
    assert not [q for q in sql if q.upper().startswith(("SAVEPOINT", "RELEASE"))]
    (select,) = [q for q in sql if q.startswith("SELECT")]
    (update,) = [q for q in sql if q.startswith("UPDATE")]
    assert "FOR UPDATE" not in select
    assert "RETURNING last_seq, status" in update
    event = Event.objects.get(session=live_session, seq=seq)
    assert event.actor_id == seat.pk and event.kind == "roll"


def test_a_session_that_ends_before_the_roll_locks_it_refuses_the_roll(live_session, monkeypatch):
    """The roll reads the session before its lock: what it checked then is checked again with
    the lock, so a roll overtaken by the session's end stores nothing."""
    from tabletop.services import rolls

    seat = join_session(session=live_session, name="Ana").seat
    last = GameSession.objects.get(pk=live_session.pk).last_seq
    take_seq = rolls.take_seq

    def ended_meanwhile(*, session_id: int):
        GameSession.objects.filter(pk=session_id).update(status="ended", ended_at=timezone.now())
        return take_seq(session_id=session_id)

    monkeypatch.setattr(rolls, "take_seq", ended_meanwhile)
    with pytest.raises(ServiceError) as err:
        roll(seat.pk)
    assert err.value.code == "conflict"
    stored = GameSession.objects.get(pk=live_session.pk)
    assert stored.last_seq == last and stored.status == "live"  # the whole change undone


def test_a_roll_at_an_ended_session_is_refused_and_records_nothing(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    end_session(session_id=live_session.pk)
    last = GameSession.objects.get(pk=live_session.pk).last_seq
    with pytest.raises(ServiceError) as err:
        roll(seat.pk)
    assert err.value.code == "conflict"
    assert GameSession.objects.get(pk=live_session.pk).last_seq == last


def test_a_socket_change_is_one_transaction_without_savepoints(live_session):
    """Every service a socket command runs takes the unit of work's transaction as its own
    (``services.events.change``): a savepoint would be two more round trips with the session
    locked."""
    seat = join_session(session=live_session, name="Ana").seat
    hidden = decode(
        json.dumps(
            {
                "type": "roll",
                "system": "generic",
                "request": {"notation": "d6"},
                "visibility": "self",
            }
        ),
        system="generic",
        is_gm=False,
    )
    seq = perform(hidden, seat_id=seat.pk, deadline=float("inf")).seq
    reveal = decode(json.dumps({"type": "reveal", "seq": seq}), system="generic", is_gm=False)
    with CaptureQueriesContext(connection) as queries:
        assert perform(reveal, seat_id=seat.pk, deadline=float("inf")).seq == seq + 1
    assert not [q for q in queries.captured_queries if "SAVEPOINT" in q["sql"].upper()]


def decoded_roll(notation: str, client_seed: str = "") -> Decoded:
    message = {"type": "roll", "request": {"notation": notation}, "client_seed": client_seed}
    checked = decode(json.dumps(message), system="generic", is_gm=False)
    assert isinstance(checked, Decoded)
    return checked


def test_a_roll_expected_to_list_too_many_dice_is_refused_before_the_lock_and_any_draw(
    live_session, monkeypatch
):
    from tabletop.services import rolls

    seat = join_session(session=live_session, name="Ana").seat
    before = GameSession.objects.get(pk=live_session.pk).last_seq
    streams = []
    real = rolls.fair_stream
    monkeypatch.setattr(rolls, "fair_stream", lambda **kw: streams.append(kw) or real(**kw))
    with CaptureQueriesContext(connection) as queries, pytest.raises(ServiceError) as caught:
        # ~9,564 dice: within the engines' limit, more than an event at the table can hold.
        perform(decoded_roll("150d100!>2"), seat_id=seat.pk, deadline=float("inf"))
    assert caught.value.code == "too-large" and caught.value.field == "request.notation"
    assert f"at most {rolls.MAX_ROLL_DICE:,}" in caught.value.message
    assert getattr(caught.value, "cost", 0) == 0  # no work was done
    assert streams == []  # no stream opened, no die drawn
    kinds = statements(queries.captured_queries)
    assert [k for k in kinds if k != "ROLLBACK"] == ["SELECT"]  # the seat; no lock, no seq
    assert GameSession.objects.get(pk=live_session.pk).last_seq == before


def test_a_roll_that_draws_past_the_limit_by_bad_luck_stops_there_and_counts_as_work(
    live_session, monkeypatch
):
    from rules.engines import FairStream, get_system
    from tabletop.services import rolls

    seat = join_session(session=live_session, name="Ana").seat
    seq = GameSession.objects.get(pk=live_session.pk).last_seq + 1
    seed = bytes(live_session.server_seed)
    generic = get_system("generic")
    request = generic.normalise({"notation": "20d6!"})  # expects 24 dice

    def listed(client_seed: str) -> int:
        return len(generic.roll(request, FairStream(seed, client_seed, seq))["dice"])

    unlucky = next(f"u{i}" for i in range(5000) if listed(f"u{i}") > 30)
    monkeypatch.setattr(rolls, "MAX_ROLL_DICE", 30)
    with pytest.raises(ServiceError) as caught:
        perform(decoded_roll("20d6!", unlucky), seat_id=seat.pk, deadline=float("inf"))
    assert caught.value.code == "too-large" and "more than 30 dice" in caught.value.message
    assert caught.value.cost == 30 * 64  # the draws made count against the work budgets
    assert GameSession.objects.get(pk=live_session.pk).last_seq == seq - 1
