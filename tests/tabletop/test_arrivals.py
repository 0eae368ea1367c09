"""Sockets arriving together share their reads: the same answers as one at a time, in a fixed
number of queries however many arrive, and a socket arriving during a read waits for the next."""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tabletop.arrivals import Coalescer, hellos
from tabletop.models import Campaign
from tabletop.selectors import room
from tabletop.services.access import Access, Arrival, resolve_access, resolve_accesses
from tabletop.services.seats import join_session
from tabletop.services.sessions import create_session, start_session


@pytest.fixture(autouse=True)
def _forget_rooms():
    room._shared.clear()
    yield
    room._shared.clear()


@pytest.mark.django_db
def test_tokens_and_cookies_resolve_as_one_at_a_time(live_session, gm):
    elsewhere_campaign = Campaign.objects.create(name="Elsewhere", system="generic", gm=gm)
    other = start_session(session_id=create_session(campaign=elsewhere_campaign, title="B").pk)
    later = start_session(session_id=create_session(campaign=live_session.campaign, title="C").pk)
    ana = join_session(session=live_session, name="Ana").token
    bo = join_session(session=other, name="Bo").token
    code, elsewhere = live_session.invite_code, other.invite_code
    join_session(session=later, name="Cy")  # Ana's seat there is made when she first arrives
    arrivals = [
        Arrival(code, ana, None, None),  # a bot's token
        Arrival(code, None, ana, None),  # a browser's seat cookie
        Arrival(code, "wrong", ana, None),  # a wrong token is an outsider, cookie or not
        Arrival(code, bo, None, None),  # a seat of another campaign's room
        Arrival(elsewhere, bo, None, None),
        Arrival("nosuchroom", ana, None, None),
        Arrival(code, "x" * 201, None, None),
        Arrival(code, None, None, None),  # nobody (no login either)
    ]
    together = resolve_accesses(arrivals)
    one_by_one = [
        resolve_access(code=a.code, token=a.token, cookie_token=a.cookie_token, user=a.user)
        for a in arrivals
    ]
    assert [(x.seat.pk, x.session.pk, x.via) if x else None for x in together] == [
        (x.seat.pk, x.session.pk, x.via) if x else None for x in one_by_one
    ]
    assert [x.via if x else None for x in together] == [
        "token", "cookie", None, None, "token", None, None, None,
    ]  # fmt: skip
    # The player's token at the campaign's other session: their seat, carried there, found
    # by the batch once made.
    carried = resolve_accesses([Arrival(later.invite_code, ana, None, None)])[0]
    again = resolve_accesses([Arrival(later.invite_code, None, ana, None)])[0]
    assert isinstance(carried, Access) and isinstance(again, Access)
    assert carried.seat.name == "Ana" and carried.seat.session_id == later.pk
    assert (again.seat.pk, again.via) == (carried.seat.pk, "cookie")


@pytest.mark.django_db
def test_twenty_arrivals_cost_the_queries_of_one(live_session):
    tokens = [join_session(session=live_session, name=f"P{i}").token for i in range(20)]
    code = live_session.invite_code
    with CaptureQueriesContext(connection) as one:
        (single,) = resolve_accesses([Arrival(code, tokens[0], None, None)])
        hellos([(single, None)])
    room._shared.clear()
    with CaptureQueriesContext(connection) as twenty:
        accesses = resolve_accesses([Arrival(code, t, None, None) for t in tokens])
        answers = hellos([(a, None) for a in accesses])
    assert len(twenty.captured_queries) == len(one.captured_queries)
    stored = type(live_session).objects.get(pk=live_session.pk).last_seq
    assert {hello["last_seq"] for hello, _ in answers} == {stored}
    assert [hello["seat"]["name"] for hello, _ in answers] == [f"P{i}" for i in range(20)]
    assert all(hello["state"]["seats"] == answers[0][0]["state"]["seats"] for hello, _ in answers)


@pytest.mark.django_db
def test_a_hello_after_a_seq_replays_what_came_since(live_session):
    ana = join_session(session=live_session, name="Ana")
    (access,) = resolve_accesses([Arrival(live_session.invite_code, ana.token, None, None)])
    join_session(session=live_session, name="Bo")  # one more event
    ((hello, replay),) = hellos([(access, hello_seq := access.session.last_seq)])
    assert hello["last_seq"] == hello_seq + 1
    assert [e["seq"] for e in replay] == [hello_seq + 1]


@pytest.mark.asyncio
async def test_calls_made_during_a_batch_go_together_in_the_next():
    batches: list[list[int]] = []
    first_running, release = threading.Event(), threading.Event()

    def work(requests: list[int]) -> list[int | BaseException]:
        batches.append(list(requests))
        if len(batches) == 1:
            first_running.set()
            release.wait(5)
        return [ValueError(r) if r == 3 else r * 10 for r in requests]

    together = Coalescer(work)
    first = asyncio.ensure_future(together(1))
    await asyncio.to_thread(first_running.wait, 5)
    rest = [asyncio.ensure_future(together(r)) for r in (2, 3, 4)]
    await asyncio.sleep(0.05)
    release.set()
    assert await first == 10
    two, three, four = await asyncio.gather(*rest, return_exceptions=True)
    assert (two, four) == (20, 40) and isinstance(three, ValueError)
    assert batches == [[1], [2, 3, 4]]


@pytest.mark.django_db
def test_sockets_counted_together_count_each_socket(live_session):
    from tabletop.models import Seat
    from tabletop.services import presence

    ana = join_session(session=live_session, name="Ana").seat
    bo = join_session(session=live_session, name="Bo").seat
    with CaptureQueriesContext(connection) as queries:
        presence.count_arrivals(seat_ids=[ana.pk, ana.pk, bo.pk])  # Ana on two devices
    assert len(queries.captured_queries) == 2  # one statement per distinct count
    assert presence.here(session=live_session) == [ana.pk, bo.pk]
    presence.count_departures(seat_ids=[ana.pk, bo.pk, bo.pk])  # one too many for Bo: never below 0
    counts = dict(Seat.objects.filter(pk__in=[ana.pk, bo.pk]).values_list("pk", "sockets"))
    assert counts == {ana.pk: 1, bo.pk: 0}
    assert presence.here(session=live_session) == [ana.pk]


@pytest.mark.django_db
def test_hellos_into_many_rooms_read_them_together_with_the_same_answers(gm):
    """A burst into many rooms (an evening's tables starting) reads every room's state in a
    fixed number of queries, and each room's hello is what that room read alone gives."""
    from tabletop.services.demo import ensure_demo_tables

    from .commands import send

    tables = ensure_demo_tables(gm=gm)
    arrivals, discordian = [], []
    for table in tables:
        session = table.session
        free = session.campaign.characters.exclude(seats__session=session).order_by("pk")
        for name, character in zip(("Ana", "Bo"), free, strict=False):
            joined = join_session(session=session, name=name, character_id=character.pk)
            arrivals.append(Arrival(session.invite_code, joined.token, None, None))
        if table.system == "discordian":  # Bo's hidden roll with his luck die: counts withheld
            send(joined.seat, "roll", request={"pool": ["d6"], "tn": 5}, visibility="self",
                 character=character.pk, luck_dice=1)  # fmt: skip
            discordian = arrivals[-2:]
    assert len(tables) >= 6 and discordian

    room._shared.clear()
    with CaptureQueriesContext(connection) as one_room:
        hellos([(a, None) for a in resolve_accesses(discordian)])
    alone = []
    for arrival in arrivals:
        room._shared.clear()
        ((hello, _),) = hellos([(resolve_accesses([arrival])[0], None)])
        alone.append(hello)
    room._shared.clear()
    with CaptureQueriesContext(connection) as every_room:
        together = [hello for hello, _ in hellos([(a, None) for a in resolve_accesses(arrivals)])]
    assert together == alone
    assert len(every_room.captured_queries) == len(one_room.captured_queries)
    withheld = [h for h in together if h["state"]["session"]["system"] == "discordian"]
    assert withheld[0]["state"]["resources"] != withheld[1]["state"]["resources"]


@pytest.mark.django_db
def test_a_room_every_seat_sees_alike_is_encoded_once_and_reads_the_same(gm):
    """The hellos of a room every seat sees alike share one state, encoded once; a room with a
    count withheld from some seats gives each seat its own, as before."""
    import json

    from tabletop.arrivals import hello_text
    from tabletop.selectors.events import dumps
    from tabletop.services.demo import ensure_demo_tables

    from .commands import send

    tables = {t.system: t.session for t in ensure_demo_tables(gm=gm)}
    for system in ("generic", "discordian"):
        session = tables[system]
        free = session.campaign.characters.exclude(seats__session=session).order_by("pk")
        joined = [
            join_session(session=session, name=name, character_id=c.pk)
            for name, c in zip(("Ana", "Bo"), free, strict=False)
        ]
        if system == "discordian":  # Bo's hidden roll with his luck die: a count withheld
            send(joined[1].seat, "roll", request={"pool": ["d6"], "tn": 5}, visibility="self",
                 character=free[1].pk, luck_dice=1)  # fmt: skip
        room._shared.clear()
        answers = hellos(
            [
                (a, None)
                for a in resolve_accesses(
                    [Arrival(session.invite_code, j.token, None, None) for j in joined]
                )
            ]
        )
        (ana, _), (bo, _) = answers
        for hello in (ana, bo):
            assert json.loads(hello_text(hello)) == json.loads(dumps(dict(hello)))
        if system == "generic":
            assert ana["state"] is bo["state"] and isinstance(ana["state"], room.SharedState)
        else:
            assert not isinstance(ana["state"], room.SharedState)
            assert ana["state"]["resources"] != bo["state"]["resources"]


@pytest.mark.asyncio
async def test_the_socket_stack_reads_the_session_and_leaves_every_send_alone():
    """The sockets read who is logged in; nothing saves the session, so no wrapper looks at it
    on every frame sent (Channels' session middleware wraps ``send`` to do that)."""
    from tabletop.arrivals import lazy_user_stack

    seen = {}

    async def inner(scope, receive, send):
        seen.update(send=send, session=scope["session"], user=scope["user"])

    async def receive():
        return {}

    async def send(message):
        return None

    key = "k" * 32
    scope = {"type": "websocket", "headers": [(b"cookie", f"sessionid={key}".encode())]}
    await lazy_user_stack(inner)(scope, receive, send)
    assert seen["send"] is send
    assert seen["session"].session_key == key
    assert "session" not in scope  # the outer scope is not changed


@pytest.mark.django_db
def test_a_burst_reads_the_seats_characters_once_with_the_room(live_session):
    """Each socket's ``hello.seat`` is the room's entry for its seat (characters included), the
    summary a seat read alone gives; the sockets' token lookups leave the characters to the
    room's read, so a burst reads each seat's characters once, not again per socket."""
    from copy import copy
    from unittest import mock

    from tabletop.models import Character, Seat
    from tabletop.selectors.room import seat_summary

    vex = Character.objects.create(campaign=live_session.campaign, name="Vex")
    ana = join_session(session=live_session, name="Ana", character_id=vex.pk).token
    tokens = [ana] + [join_session(session=live_session, name=f"P{i}").token for i in range(19)]
    arrivals = [Arrival(live_session.invite_code, t, None, None) for t in tokens]
    with CaptureQueriesContext(connection) as lookups:
        accesses = resolve_accesses(arrivals, characters=False)
    assert len(lookups.captured_queries) == 2  # the rooms, the seats
    assert len(resolve_accesses(arrivals[:1])) == 1  # (a page's lookup reads the characters too)
    gm_seat = Seat.objects.get(session=live_session, role="gm")
    sockets = [a for a in accesses if isinstance(a, Access)]
    sockets.append(Access(copy(sockets[0].session), gm_seat, "login"))
    room._shared.clear()
    with mock.patch.object(room, "seat_summary", wraps=room.seat_summary) as summaries:
        answers = hellos([(a, None) for a in sockets])
    assert summaries.call_count == 0  # (the room's read lists its seats from rows)
    alone = Seat.objects.prefetch_related("characters")
    assert [hello["seat"] for hello, _ in answers] == [
        seat_summary(alone.get(pk=a.seat.pk)) for a in sockets
    ]
    assert answers[0][0]["seat"]["characters"] == [{"id": vex.pk, "name": "Vex"}]
    assert answers[-1][0]["seat"]["role"] == "gm"


@pytest.mark.django_db
def test_a_seat_the_rooms_list_lacks_is_summarised_from_itself(live_session):
    from tabletop.selectors.room import seat_in_room, seat_summary, table_states

    ana = join_session(session=live_session, name="Ana").seat
    table = table_states([live_session])[live_session.pk]
    table["seats"] = [s for s in table["seats"] if s["id"] != ana.pk]  # (removed meanwhile)
    assert seat_in_room(table, ana) == seat_summary(ana)


@pytest.mark.django_db
def test_the_rooms_seats_read_as_rows_are_what_their_models_summarise(live_session):
    """``hello.state.seats`` from rows, without a seat or a character made as a model: the
    same entries, in the same order, characters in ``seat.characters.all()``'s order."""
    from unittest import mock

    from tabletop.models import Character, Seat
    from tabletop.selectors.room import seat_entry, seat_summary, seats_of

    campaign = live_session.campaign
    zed, vex = (Character.objects.create(campaign=campaign, name=n) for n in ("Zed", "Vex"))
    ana = join_session(session=live_session, name="Ana", character_id=zed.pk).seat
    ana.characters.add(vex)
    join_session(session=live_session, name="Bo")
    gone = join_session(session=live_session, name="Cy").seat
    Seat.objects.filter(pk=gone.pk).update(removed_at=live_session.started_at)
    other = join_session(
        session=start_session(session_id=create_session(campaign=campaign, title="B").pk),
        name="Di",
    )
    seated = (
        Seat.objects.filter(removed_at__isnull=True)
        .prefetch_related("characters")
        .order_by("created_at")
    )
    expected = {
        pk: [seat_entry(seat_summary(s)) for s in seated.filter(session_id=pk)]
        for pk in (live_session.pk, other.seat.session_id)
    }
    with (
        mock.patch.object(Seat, "from_db", wraps=Seat.from_db) as seats_made,
        mock.patch.object(Character, "from_db", wraps=Character.from_db) as characters_made,
        CaptureQueriesContext(connection) as queries,
    ):
        read = seats_of(list(expected))
    assert dict(read) == expected
    assert [s["name"] for s in read[live_session.pk]] == ["GM", "Ana", "Bo"]
    assert read[live_session.pk][1]["characters"] == [
        {"id": vex.pk, "name": "Vex"},
        {"id": zed.pk, "name": "Zed"},
    ]
    assert (seats_made.call_count, characters_made.call_count, len(queries)) == (0, 0, 2)
