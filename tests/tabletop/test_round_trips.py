"""A socket's unit of work on PostgreSQL: its BEGIN goes with its first statement and its event's
INSERT with its COMMIT, and nothing else about the transaction changes (what a statement of
the unit sees, a refusal, a rollback Django decides, on_commit, the connection afterwards)."""

from __future__ import annotations

import pytest
from django.db import DataError, NotSupportedError, ProgrammingError, connection, transaction

from tabletop.models import Event, GameSession
from tabletop.protocol.wire import Decoded, decode, precheck
from tabletop.services import round_trips
from tabletop.services.chat import check_line, send_message
from tabletop.services.errors import ServiceError, conflict
from tabletop.services.events import unit_of_work
from tabletop.services.seats import join_session

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="round trips are PostgreSQL's"),
]


def _traced(tmp_path, work) -> list[str]:
    """libpq's trace of the connection while ``work`` runs on it."""
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    trace = tmp_path / "trace"
    with trace.open("w") as out:
        pgconn.trace(out.fileno())
        try:
            work()
        finally:
            pgconn.untrace()
    return trace.read_text().splitlines()


def _answers(lines: list[str]) -> int:
    return sum("ReadyForQuery" in line for line in lines)


ROLL = precheck(
    decode(
        '{"type": "roll", "system": "generic", "request": {"notation": "2d6"}}',
        system="generic",
        is_gm=False,
    ),
    system="generic",
)
assert isinstance(ROLL, Decoded)


def _assert_turning_off_answers(tmp_path, setting, trips: int) -> None:
    """A GM's setting turned on, then the round trips of turning it off (a change, not a no-op)."""
    setting(True)
    lines = _traced(tmp_path, lambda: setting(False))
    assert _answers(lines) == trips, "\n".join(line[:120] for line in lines if "Query" in line)


def _roll(uow, seat):
    """A roll as the socket makes it (checked at the edge), in ``uow``."""
    return ROLL.command.handler(uow=uow, seat_id=seat.pk, **ROLL.values)


def test_a_roll_is_two_round_trips(live_session, tmp_path):
    """BEGIN with the statement that reads the seat and takes the seq, the event with COMMIT:
    each pair answered by one ReadyForQuery in libpq's trace of the connection."""
    seat = join_session(session=live_session, name="Ana").seat
    unit_of_work(lambda uow: _roll(uow, seat))  # warm
    lines = _traced(tmp_path, lambda: unit_of_work(lambda uow: _roll(uow, seat)))
    assert _answers(lines) == 2, "\n".join(lines)


def test_a_roll_stores_its_event_under_the_id_taken_with_its_seq(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    roll, events = unit_of_work(lambda uow: _roll(uow, seat))
    stored = Event.objects.get(session=live_session, seq=roll.seq)
    assert events == [roll] and stored.pk == roll.pk and stored.data == roll.data


def test_a_statement_after_the_event_sees_it_stored(live_session, tmp_path):
    """The parked INSERT goes before any other statement of the unit."""
    seat = join_session(session=live_session, name="Ana").seat

    def roll_then_count(uow):
        roll = _roll(uow, seat)
        return roll, Event.objects.filter(session=live_session, seq=roll.seq).count()

    done = []
    lines = _traced(tmp_path, lambda: done.append(unit_of_work(roll_then_count)))
    [((_, seen), _)] = done
    assert seen == 1
    # BEGIN with the seq; the INSERT; the count; COMMIT (nothing left to send with it).
    assert _answers(lines) == 4


def test_a_refusal_after_the_event_stores_nothing_and_leaves_the_connection_as_it_was(
    live_session,
):
    seat = join_session(session=live_session, name="Ana").seat
    before = GameSession.objects.get(pk=live_session.pk).last_seq

    def refused(uow):
        _roll(uow, seat)
        raise conflict("refused after the roll was recorded")

    with pytest.raises(ServiceError):
        unit_of_work(refused)
    assert GameSession.objects.get(pk=live_session.pk).last_seq == before
    assert not Event.objects.filter(session=live_session, kind="roll").exists()
    assert connection.get_autocommit() and connection.connection.autocommit
    assert connection.connection.info.transaction_status == 0  # idle, nothing left open
    roll, _ = unit_of_work(lambda uow: _roll(uow, seat))  # and the next unit is whole
    assert roll.seq == before + 1


def test_a_rollback_django_decides_is_not_overtaken_by_the_commit(live_session):
    """An inner block without a savepoint that fails marks the whole transaction for rollback:
    the parked INSERT is not sent with a COMMIT then."""
    seat = join_session(session=live_session, name="Ana").seat
    before = GameSession.objects.get(pk=live_session.pk).last_seq

    def failed_inside(uow):
        _roll(uow, seat)
        try:
            with transaction.atomic(savepoint=False):
                raise conflict("failed inside")
        except ServiceError:
            pass

    unit_of_work(failed_inside)
    assert GameSession.objects.get(pk=live_session.pk).last_seq == before
    assert not Event.objects.filter(session=live_session, kind="roll").exists()


def test_on_commit_runs_after_the_commit_sent_with_the_event(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    seen: list[int] = []

    def roll_and_wait(uow):
        roll = _roll(uow, seat)
        transaction.on_commit(
            lambda: seen.append(Event.objects.filter(session=live_session, seq=roll.seq).count())
        )
        assert not seen  # not before the commit
        return roll

    unit_of_work(roll_and_wait)
    assert seen == [1]


def test_a_unit_whose_first_statement_is_the_orms_begins_as_psycopg_would(live_session, tmp_path):
    seat = join_session(session=live_session, name="Ana").seat

    def read_then_roll(uow):
        GameSession.objects.get(pk=live_session.pk)
        return _roll(uow, seat)

    lines = _traced(tmp_path, lambda: unit_of_work(read_then_roll))
    # BEGIN; the read; the seq (no BEGIN to carry); the event with COMMIT.
    assert _answers(lines) == 4
    assert Event.objects.filter(session=live_session, kind="roll").count() == 1


def test_a_chat_line_is_three_round_trips(live_session, tmp_path):
    """BEGIN with the seat's read, the seq, the line with COMMIT (it was five)."""
    seat = join_session(session=live_session, name="Ana").seat

    def say(text: str) -> None:
        line = check_line(table=live_session.campaign.system, text=text)["line"]
        unit_of_work(lambda uow: send_message(uow=uow, seat_id=seat.pk, line=line))

    say("warm")
    lines = _traced(tmp_path, lambda: say("hello"))
    assert _answers(lines) == 3
    assert Event.objects.filter(session=live_session, kind="chat").count() == 2


def test_a_transaction_already_under_way_sends_as_it_always_did(live_session):
    """Only a unit whose transaction has sent nothing yet sends its statements together."""
    with transaction.atomic(), round_trips.sent_together() as sent:
        assert sent is not None
    with transaction.atomic():
        GameSession.objects.filter(pk=live_session.pk).exists()
        with round_trips.sent_together() as sent:
            assert sent is None


def test_a_change_of_the_turn_order_is_four_round_trips(live_session, tmp_path):
    """BEGIN with the seat's read, the seq, the order kept in the session's state, the
    change's event with COMMIT (it was six)."""
    from tabletop.services.initiative import add_npc
    from tabletop.services.seats import seat_gm

    gm = seat_gm(session=live_session)

    def add(name: str) -> None:
        unit_of_work(lambda uow: add_npc(uow=uow, seat_id=gm.pk, name=name, value=12))

    add("Goblin")
    lines = _traced(tmp_path, lambda: add("Orc"))
    assert _answers(lines) == 4
    assert Event.objects.filter(session=live_session, kind="turns").count() == 2


def test_a_systems_table_tool_sends_its_begin_and_commit_together(live_session, tmp_path):
    """The GM begins a round (the systems' shared ``begin``): BEGIN with the seat's read, the
    seq, the session read, the table's state kept, a read of the log, the event with COMMIT
    (it was eight)."""
    from tabletop.services.seats import seat_gm
    from tabletop.systems.base import begin

    gm = seat_gm(session=live_session)

    def begin_round() -> None:
        unit_of_work(lambda uow: begin(uow=uow, seat_id=gm.pk, unit="round"))

    begin_round()
    lines = _traced(tmp_path, begin_round)
    assert _answers(lines) == 6
    assert GameSession.objects.get(pk=live_session.pk).table_state["round"] == 2


def test_a_systems_gm_command_reads_its_seat_with_the_begin(gm, tmp_path):
    """Zoria's GM commands read the GM's seat first (``_gm``), as every system's command reads
    its seat: that read carries the BEGIN (psycopg's own BEGIN would be a trip of its own)."""
    from tabletop.models import Campaign
    from tabletop.services.seats import seat_gm
    from tabletop.services.sessions import create_session, start_session
    from tabletop.systems.zoria.commands import initiative_phase

    campaign = Campaign.objects.create(name="Ash Road", system="zoria", gm=gm)
    session = start_session(session_id=create_session(campaign=campaign, title="One").pk)
    at_table = seat_gm(session=session)

    def phase(on: bool) -> None:
        unit_of_work(lambda uow: initiative_phase(uow=uow, seat_id=at_table.pk, on=on))

    _assert_turning_off_answers(tmp_path, phase, 7)


def test_the_talk_settings_read_the_gms_seat_with_the_begin(live_session, tmp_path):
    from tabletop.services.chat import set_talk
    from tabletop.services.seats import seat_gm

    at_table = seat_gm(session=live_session)

    def talk(to_webhooks: bool) -> None:
        unit_of_work(lambda uow: set_talk(uow=uow, seat_id=at_table.pk, to_webhooks=to_webhooks))

    _assert_turning_off_answers(tmp_path, talk, 5)


def _held() -> set[str]:
    """The names of store's statements the connection's server session holds prepared."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements WHERE name LIKE 'store_%%'")
        return {name for (name,) in cursor.fetchall()}


def test_a_roll_on_a_new_connection_prepares_its_statements_in_its_two_round_trips(
    live_session, tmp_path
):
    """The first roll on a connection sends each statement's PREPARE in front of its EXECUTE,
    in the same query; the next one runs them by name only. Either is two round trips."""
    seat = join_session(session=live_session, name="Ana").seat
    with connection.cursor() as cursor:  # (as on a new connection: nothing prepared)
        cursor.execute("DEALLOCATE ALL")
    round_trips._prepared.pop(connection.connection, None)
    first = _traced(tmp_path, lambda: unit_of_work(lambda uow: _roll(uow, seat)))
    assert _answers(first) == 2
    assert sum("PREPARE store_" in line for line in first) == 2
    assert {n.split("_")[1] for n in _held()} == {"update", "insert"}
    second = _traced(tmp_path, lambda: unit_of_work(lambda uow: _roll(uow, seat)))
    assert _answers(second) == 2
    assert not any("PREPARE" in line for line in second)
    assert sum("EXECUTE store_" in line for line in second) == 2


def test_a_query_that_failed_after_preparing_sends_its_statement_as_it_is_from_then_on():
    """A PREPARE outlives the query's failure, so whether it took is not known: the statement
    is not prepared again (that would fail as a duplicate), it is sent as it is."""
    sql = "SELECT 10 / %s"
    with pytest.raises(DataError), transaction.atomic(), connection.cursor() as cursor:
        round_trips.execute(cursor, sql, [0], None)  # prepared, then division by zero
    for divisor in (2, 5):
        with transaction.atomic(), connection.cursor() as cursor:
            round_trips.execute(cursor, sql, [divisor], None)
            assert cursor.fetchone() == (10 // divisor,)


def test_a_statement_the_server_no_longer_holds_fails_once_then_goes_as_it_is(live_session):
    """A server session that lost the prepared statements (a pooler in front handing out
    another session, a DEALLOCATE): the roll that meets it fails and changes nothing; the
    next one sends its statements as they are, and is stored."""
    seat = join_session(session=live_session, name="Ana").seat
    unit_of_work(lambda uow: _roll(uow, seat))
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    before = Event.objects.filter(session=live_session).count()
    with pytest.raises(ProgrammingError):
        unit_of_work(lambda uow: _roll(uow, seat))
    assert Event.objects.filter(session=live_session).count() == before
    roll, _ = unit_of_work(lambda uow: _roll(uow, seat))
    assert Event.objects.filter(session=live_session, seq=roll.seq).exists()
    assert _held() == set()


def test_with_preparing_off_a_roll_sends_its_statements_as_they_are(
    live_session, tmp_path, settings
):
    """``TABLETOP_DB_PREPARED=0`` (a pooler that hands transactions to other sessions): no
    PREPARE, no EXECUTE, and still two round trips."""
    settings.TABLETOP = {**settings.TABLETOP, "DB_PREPARED": False}
    seat = join_session(session=live_session, name="Ana").seat
    lines = _traced(tmp_path, lambda: unit_of_work(lambda uow: _roll(uow, seat)))
    assert _answers(lines) == 2
    assert not any("PREPARE" in line or "EXECUTE store_" in line for line in lines)
    assert any("UPDATE" in line for line in lines) and any("INSERT" in line for line in lines)


def test_a_statement_whose_table_changed_under_it_fails_once_then_goes_as_it_is():
    """A migration run under a serving process changes a column a prepared statement hands
    back: the server will not run the statement as prepared ("cached plan must not change
    result type"). The action that meets it fails; the connection sends its statements as
    they are from then on, rather than failing every roll until the pool replaces it."""
    sql = "SELECT x FROM changing WHERE id = %s"
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE changing (id int, x int)")
        cursor.execute("INSERT INTO changing VALUES (1, 7)")
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            round_trips.execute(cursor, sql, [1], None)
            assert cursor.fetchone() == (7,)
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE changing ALTER COLUMN x TYPE text")
        with pytest.raises(NotSupportedError), transaction.atomic(), connection.cursor() as cursor:
            round_trips.execute(cursor, sql, [1], None)
        for _ in range(2):
            with transaction.atomic(), connection.cursor() as cursor:
                round_trips.execute(cursor, sql, [1], None)
                assert cursor.fetchone() == ("7",)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS changing")
