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


def sent(queries) -> list[str]:
    """Each statement sent, one by one (on PostgreSQL a unit's BEGIN goes with its first
    statement and its COMMIT with its last, each pair logged as one query)."""
    return [part.strip() for q in queries for part in q["sql"].split("; ")]


def kind(statement: str) -> str:
    """A statement's kind; of a prepared one run by name (PostgreSQL), the kind it was prepared
    as (``EXECUTE store_update_...``)."""
    words = statement.split(None, 2)
    if words[0].upper() == "EXECUTE" and words[1].startswith("store_"):
        return words[1].split("_")[1].upper()
    return words[0].upper()


def prepared(statement: str) -> str:
    """The text a statement run by name was prepared with, as the connection's server holds it
    (a statement not run by name: itself)."""
    words = statement.split(None, 2)
    if words[0].upper() != "EXECUTE":
        return statement
    name = words[1].split("(")[0]
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE name = %s", [name])
        (text,) = cursor.fetchone()
    return text


def statements(queries) -> list[str]:
    """The statement kinds, without transaction control (drivers differ in what they log)."""
    kinds = [kind(q) for q in sent(queries)]
    return [k for k in kinds if k not in {"BEGIN", "COMMIT", "SAVEPOINT", "RELEASE"}]


def test_a_roll_locks_its_session_only_to_take_its_seq_and_store_its_event(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    roll(seat.pk)  # warm
    with CaptureQueriesContext(connection) as queries:
        seq = roll(seat.pk)
    sql = sent(queries.captured_queries)
    assert not [q for q in sql if q.upper().startswith(("SAVEPOINT", "RELEASE"))]
    if connection.vendor == "postgresql":
        # the seat with its session and campaign read by the statement that takes the seq
        # (and so locks the session, not the seat or the campaign); then the event
        # (each prepared on the connection once and run by name: what the server holds)
        assert statements(queries.captured_queries) == ["UPDATE", "INSERT"]
        (update,) = [prepared(q) for q in sql if kind(q) == "UPDATE"]
        assert '"tabletop_seat" s' in update and "FOR UPDATE" not in update
    else:
        # the seat with its session and campaign, not locked; the seq, which locks the session
        # and reads its status and table state again; the event
        assert statements(queries.captured_queries) == ["SELECT", "UPDATE", "INSERT"]
        (select,) = [q for q in sql if q.startswith("SELECT")]
        (update,) = [q for q in sql if q.startswith("UPDATE")]
        assert "FOR UPDATE" not in select
        assert "RETURNING last_seq, status" in update
    event = Event.objects.get(session=live_session, seq=seq)
    assert event.actor_id == seat.pk and event.kind == "roll" and event.actor_name == "Ana"


def test_a_session_that_ends_before_the_roll_locks_it_refuses_the_roll(live_session, monkeypatch):
    """What a roll reads before its lock is read again with it, so a roll overtaken by the
    session's end stores nothing: on SQLite the seat is read before the statement that locks;
    on PostgreSQL that statement reads it, so the session ends just before it."""
    from tabletop.services import rolls, store

    seat = join_session(session=live_session, name="Ana").seat
    last = GameSession.objects.get(pk=live_session.pk).last_seq

    def end(session_id: int) -> None:
        GameSession.objects.filter(pk=session_id).update(status="ended", ended_at=timezone.now())

    if connection.vendor == "postgresql":
        taking = rolls.seated_taking_seq

        def ended_meanwhile(seat_id: int, **sent):
            end(seat.session_id)
            return taking(seat_id, **sent)

        monkeypatch.setattr(rolls, "seated_taking_seq", ended_meanwhile)
    else:
        take_seq = store.take_seq

        def ended_before_the_lock(*, session_id: int, **sent):
            end(session_id)
            return take_seq(session_id=session_id, **sent)

        monkeypatch.setattr(store, "take_seq", ended_before_the_lock)
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
    assert [k for k in kinds if k != "ROLLBACK"] == []  # checked with no database at all
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


# --- one check per roll -----------------------------------------------------------------------


def counted(monkeypatch) -> dict[str, int]:
    """How often one roll's checks run: the roll message's fields (its table system's option
    ``long_action``, its ``system``) against the declaration, the game system it is rolled in,
    and the engine's request. (An engine's ``roll`` keeps its own guards on what it is handed,
    the request as the table's rules left it: the engines' promise to any caller, not a check
    of the message.)"""
    from rules.engines import schema
    from tabletop.services import rolls

    seen = {"long_action": 0, "system": 0, "engine": 0, "request": 0}
    rolling: list[bool] = []
    for kind in ("bool", "choice"):
        check = schema._CHECKS[kind]

        def spy(spec, value, where, check=check):
            if spec.name in seen:
                seen[spec.name] += 1
            return check(spec, value, where)

        monkeypatch.setitem(schema._CHECKS, kind, spy)
    engine = rolls._engine

    def engine_spy(table, system_id):
        seen["engine"] += 1
        found = engine(table, system_id)
        normalise = found.normalise

        def request_spy(request):
            if not rolling:
                seen["request"] += 1
            return normalise(request)

        roll = found.roll

        def roll_spy(*args, **kwargs):
            rolling.append(True)
            try:
                return roll(*args, **kwargs)
            finally:
                rolling.pop()

        monkeypatch.setattr(found, "normalise", request_spy)
        monkeypatch.setattr(found, "roll", roll_spy)
        return found

    monkeypatch.setattr(rolls, "_engine", engine_spy)
    return seen


@pytest.fixture
def d6_table(gm):
    from tabletop.models import Campaign, Character
    from tabletop.services.sessions import create_session, start_session

    campaign = Campaign.objects.create(name="Chance", system="d6-chance", gm=gm)
    sera = Character.objects.create(campaign=campaign, name="Sera", sheet={})
    session = start_session(session_id=create_session(campaign=campaign, title="Tonight").pk)
    seat = join_session(session=session, name="Ana", character_id=sera.pk).seat
    return seat, sera


@pytest.mark.parametrize("prechecked", [True, False], ids=["socket", "perform-alone"])
def test_a_roll_is_checked_once_on_its_way_from_the_socket_to_its_event(
    d6_table, monkeypatch, prechecked
):
    """The declaration checks the message's fields, ``check_roll`` its system and request
    (as the socket's precheck, or in ``perform`` when nothing prechecked it); ``make_roll``
    takes the checked roll and checks none of it again."""
    from tabletop.protocol.wire import precheck

    seat, sera = d6_table
    seen = counted(monkeypatch)
    message = {
        "type": "roll",
        "system": "d6-chance",
        "request": {"dice": 3},
        "character": sera.pk,
        "long_action": True,
    }
    decoded = decode(json.dumps(message), system="d6-chance", is_gm=False)
    assert isinstance(decoded, Decoded)
    if prechecked:
        decoded = precheck(decoded, system="d6-chance")
        assert isinstance(decoded, Decoded)
    seq = perform(decoded, seat_id=seat.pk, deadline=float("inf")).seq
    assert Event.objects.get(session=seat.session, seq=seq).kind == "roll"
    assert seen == {"long_action": 1, "system": 1, "engine": 1, "request": 1}


@pytest.mark.usefixtures("d6_table")
def test_a_prechecked_roll_is_not_checked_again_by_a_second_precheck(monkeypatch):
    from tabletop.protocol.wire import precheck

    seen = counted(monkeypatch)
    decoded = decode(
        json.dumps({"type": "roll", "request": {"dice": 2}}), system="d6-chance", is_gm=False
    )
    assert isinstance(decoded, Decoded)
    once = precheck(decoded, system="d6-chance")
    assert isinstance(once, Decoded) and precheck(once, system="d6-chance") is once
    assert seen["engine"] == seen["request"] == 1


# --- callers that are not the socket check through the same function --------------------------


@pytest.mark.parametrize(
    ("asked", "code", "field", "words"),
    [
        (
            {"request": {"notation": "2d"}, "system": "generic"},
            "invalid",
            "request.notation",
            "after 'd'",
        ),
        ({"request": {"notation": "150d100!>2"}, "system": "generic"}, "too-large", None, "most"),
        ({"request": {"dice": 2}, "system": "zoria"}, "invalid", "system", "plays d6-chance"),
        ({"request": {"dice": 0}}, "invalid", "request.dice", "at least 1"),
    ],
)
def test_check_roll_refuses_bad_rolls_clearly(asked, code, field, words):
    from tabletop.services.rolls import check_roll

    with pytest.raises(ServiceError) as caught:
        check_roll(table="d6-chance", **asked)
    assert caught.value.code == code and caught.value.message
    assert field is None or caught.value.field == field
    assert words in caught.value.message


def test_a_hidden_roll_may_not_carry_an_option_the_whole_table_sees():
    from tabletop.services.rolls import check_roll

    with pytest.raises(ServiceError) as caught:
        check_roll(
            table="action-dice",
            request={"action_dice": 2, "skill_dice": 1},
            visibility="gm",
            options={"group_extra": 2},
        )
    assert caught.value.code == "invalid" and caught.value.field == "group_extra"


def test_an_ordinary_notation_roll_takes_no_option_of_the_table():
    """The socket's declaration refuses it; a caller that is not the socket is refused too,
    not let drop the option without a word."""
    from tabletop.services.rolls import check_roll

    with pytest.raises(ServiceError) as caught:
        check_roll(
            table="roll-and-keep",
            request={"notation": "1d20"},
            system="generic",
            options={"extended": 3},
        )
    assert caught.value.code == "invalid" and caught.value.field == "extended"
    assert "extended" in caught.value.message


def test_a_roll_checked_for_another_table_is_refused_not_rolled(live_session):
    from tabletop.services.rolls import check_roll, make_roll

    seat = join_session(session=live_session, name="Ana").seat
    before = GameSession.objects.get(pk=live_session.pk).last_seq
    elsewhere = check_roll(table="zoria", request={"notation": "d6"}, system="generic")
    with pytest.raises(ServiceError) as caught:
        make_roll(seat_id=seat.pk, roll=elsewhere)
    assert caught.value.code == "conflict" and "plays generic" in caught.value.message
    assert GameSession.objects.get(pk=live_session.pk).last_seq == before
