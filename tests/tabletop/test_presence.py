"""Who is here: a seat is here while one of its sockets is open (any number of tabs); the GM
takes a seat away from the table, and its link stops working at once."""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client

from tabletop.models import Event, Seat
from tabletop.services.errors import ServiceError
from tabletop.services.presence import here
from tabletop.services.seats import join_session, remove_seat, seat_gm
from tests.tabletop.test_consumer import connect, make_table, next_event, refused, seat_token

from .commands import rolled

pytestmark = [pytest.mark.django_db(transaction=True)]


@database_sync_to_async
def seats_here(session):
    return here(session=session)


@database_sync_to_async
def seat_named(session, name):
    return Seat.objects.get(session=session, name=name)


async def eventually(check, expected):
    for _ in range(50):
        if await check() == expected:
            return
        await asyncio.sleep(0.05)
    assert await check() == expected


@pytest.mark.asyncio
async def test_a_seat_is_here_while_one_of_its_sockets_is_open():
    table = await make_table()
    session = table["session"]
    token = await seat_token(session, "Ana")
    ana = await seat_named(session, "Ana")
    assert await seats_here(session) == []
    first, _ = await connect(table["code"], token=token)
    second, _ = await connect(table["code"], token=token)
    await eventually(lambda: seats_here(session), [ana.pk])
    await first.disconnect()
    await asyncio.sleep(0.1)
    assert await seats_here(session) == [ana.pk], "another tab is still open"
    await second.disconnect()
    await eventually(lambda: seats_here(session), [])


@pytest.mark.asyncio
async def test_the_gm_removes_a_seat_and_its_link_stops_working():
    table = await make_table()
    session = table["session"]
    token = await seat_token(session, "Bob")
    bob = await seat_named(session, "Bob")
    gm_login = Client()
    await database_sync_to_async(gm_login.force_login)(table["gm"])
    cookie = f"sessionid={gm_login.cookies['sessionid'].value}".encode()
    gm, _ = await connect(
        table["code"], headers=[(b"origin", b"http://localhost"), (b"cookie", cookie)]
    )
    await gm.send_json_to({"type": "seat.remove", "ref": "rm", "seat": bob.pk})
    event = await next_event(gm)
    assert event["kind"] == "seat.leave"
    assert event["data"] == {"seat": bob.pk, "name": "Bob", "removed": True}
    await gm.disconnect()

    assert await refused(table["code"], f"?token={token}")

    @database_sync_to_async
    def after():
        with pytest.raises(ServiceError):
            rolled(seat_id=bob.pk, request={"notation": "1d6"})
        from tabletop.selectors.events import Viewer
        from tabletop.selectors.room import room_state

        state = room_state(session=session, viewer=Viewer(seat_id=bob.pk, is_gm=False))
        return [s["name"] for s in state["seats"]]

    assert "Bob" not in await after()


def test_only_the_gm_removes_and_not_the_gms_own_seat(live_session):
    ana = join_session(session=live_session, name="Ana").seat
    bob = join_session(session=live_session, name="Bob").seat
    gm = seat_gm(session=live_session)
    with pytest.raises(ServiceError) as caught:
        remove_seat(by_seat_id=ana.pk, seat_id=bob.pk)
    assert caught.value.code == "forbidden"
    with pytest.raises(ServiceError) as caught:
        remove_seat(by_seat_id=gm.pk, seat_id=gm.pk)
    assert caught.value.field == "seat"
    remove_seat(by_seat_id=gm.pk, seat_id=bob.pk)
    with pytest.raises(ServiceError):
        remove_seat(by_seat_id=gm.pk, seat_id=bob.pk)  # gone already
    assert Event.objects.filter(kind="seat.leave").count() == 1
    # The name is free again; a removed seat's name is not "at the table".
    assert join_session(session=live_session, name="Bob").seat.pk != bob.pk


def test_a_removed_logged_in_player_cannot_sit_down_again(live_session):
    user = get_user_model().objects.create_user("bea", password="pw-for-tests-only")
    seat = join_session(session=live_session, name="Bea", user=user).seat
    remove_seat(by_seat_id=seat_gm(session=live_session).pk, seat_id=seat.pk)
    with pytest.raises(ServiceError) as caught:
        join_session(session=live_session, name="Bea", user=user)
    assert caught.value.code == "forbidden"


def test_a_removed_character_owner_gets_no_new_seat_by_logging_in(live_session):
    """The room (page or socket) finds a logged-in player's seat by their login: once the GM
    removed it, owning a character of the campaign must not sit them down again."""
    from tabletop.models import Character
    from tabletop.services.access import resolve_access

    user = get_user_model().objects.create_user("cid", password="pw-for-tests-only")
    Character.objects.create(campaign=live_session.campaign, owner=user, name="Cid")
    access = resolve_access(code=live_session.invite_code, token=None, cookie_token=None, user=user)
    assert access is not None and access.via == "login"
    remove_seat(by_seat_id=seat_gm(session=live_session).pk, seat_id=access.seat.pk)
    seats = Seat.objects.filter(session=live_session, user=user).count()
    again = resolve_access(code=live_session.invite_code, token=None, cookie_token=None, user=user)
    assert again is None
    assert Seat.objects.filter(session=live_session, user=user).count() == seats


def test_here_is_answered_to_seated_visitors_only(client, live_session):
    assert client.get(f"/play/{live_session.invite_code}/here").status_code == 403
    body = json.dumps({"name": "Ana"})
    client.post(f"/play/{live_session.invite_code}/join", body, content_type="application/json")
    answer = client.get(f"/play/{live_session.invite_code}/here")
    assert answer.status_code == 200 and answer.json() == {"here": []}


@pytest.mark.asyncio
async def test_who_is_here_is_pushed_to_the_sockets_that_ask_never_stored():
    from channels.testing import WebsocketCommunicator

    from tabletop.asgi import application
    from tests.tabletop.test_consumer import ORIGIN

    table = await make_table()
    session = table["session"]
    ana_token = await seat_token(session, "Ana")
    bo_token = await seat_token(session, "Bo")
    ana, bo = await seat_named(session, "Ana"), await seat_named(session, "Bo")
    before = await database_sync_to_async(Event.objects.filter(session=session).count)()
    watching = WebsocketCommunicator(
        application, f"/ws/play/{table['code']}/?token={ana_token}&notices=1", headers=[ORIGIN]
    )
    assert (await watching.connect())[0]
    assert (await watching.receive_json_from(timeout=5))["type"] == "hello"
    assert await watching.receive_json_from(timeout=5) == {"type": "here", "here": [ana.pk]}
    plain, _ = await connect(table["code"], token=ana_token)  # a second tab, not asking
    bo_socket, _ = await connect(table["code"], token=bo_token)
    told = await watching.receive_json_from(timeout=5)
    while told["here"] != [ana.pk, bo.pk]:  # (Ana's second tab may be told first)
        told = await watching.receive_json_from(timeout=5)
    await bo_socket.disconnect()
    assert await watching.receive_json_from(timeout=5) == {"type": "here", "here": [ana.pk]}
    assert await plain.receive_nothing(timeout=0.5)  # a socket that did not ask is not told
    after = await database_sync_to_async(Event.objects.filter(session=session).count)()
    assert after == before  # coming and going is not in the log
    await plain.disconnect()
    await watching.disconnect()
