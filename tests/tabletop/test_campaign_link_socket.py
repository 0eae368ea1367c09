"""The campaign link on the socket: a bot's token opens its seat at the campaign's next
session, a removed player's does not, and players still in an ended session's room are told of
the next session as it is planned and as it starts."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from tabletop.models import Event, GameSession, Seat
from tabletop.services.next_session import plan_next_session
from tabletop.services.seats import gm_seat, remove_seat
from tabletop.services.sessions import create_session, end_session, start_session

from .test_consumer import (
    ORIGIN,
    connect,
    login_cookie,
    make_table,
    next_event,
    refused,
    seat_token,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def end_and_plan(session: GameSession) -> GameSession:
    end_session(session_id=session.pk)
    return plan_next_session(session_id=session.pk)


@database_sync_to_async
def start(session: GameSession) -> GameSession:
    return start_session(session_id=session.pk)


async def next_notice(comm, timeout: float = 5) -> dict:
    while True:
        message = await comm.receive_json_from(timeout=timeout)
        if message["type"] != "event":
            return message


async def test_a_bots_token_opens_its_seat_at_the_next_session():
    table = await make_table()
    token = await seat_token(table["session"], "Dicebot")
    second = await start(await end_and_plan(table["session"]))
    comm, hello = await connect(second.invite_code, token=token, headers=[])
    assert hello["seat"]["name"] == "Dicebot" and hello["role"] == "player"
    assert [s["name"] for s in hello["state"]["seats"]] == ["GM", "Dicebot"]
    assert hello["state"]["session"]["code"] == second.invite_code
    await comm.send_json_to({"type": "roll", "ref": "r", "request": {"notation": "d20"}})
    rolled = await next_event(comm)
    assert rolled["kind"] == "roll" and rolled["actor"]["name"] == "Dicebot"
    await comm.disconnect()
    # A second socket with the same token: the same seat.
    again, hello_again = await connect(second.invite_code, token=token, headers=[])
    assert hello_again["seat"]["id"] == hello["seat"]["id"]
    await again.disconnect()
    count = await database_sync_to_async(
        Seat.objects.filter(session=second, name="Dicebot").count
    )()
    assert count == 1


async def test_a_removed_players_token_opens_no_later_session():
    table = await make_table()
    token = await seat_token(table["session"], "Ana")

    @database_sync_to_async
    def remove_ana() -> None:
        session = table["session"]
        seat = Seat.objects.get(session=session, name="Ana")
        remove_seat(by_seat_id=gm_seat(session=session, user=table["gm"]).pk, seat_id=seat.pk)

    await remove_ana()
    second = await start(await end_and_plan(table["session"]))
    assert await refused(second.invite_code, f"?token={token}", headers=[(b"x", b"y")])
    assert await refused(table["code"], f"?token={token}", headers=[(b"x", b"y")])


async def test_a_removal_at_one_table_closes_the_players_socket_at_another():
    table = await make_table()
    token = await seat_token(table["session"], "Ana")

    @database_sync_to_async
    def side_table() -> GameSession:
        campaign = table["session"].campaign
        return start_session(session_id=create_session(campaign=campaign, title="Side").pk)

    side = await side_table()
    ana_aside, hello = await connect(side.invite_code, token=token)
    ana_here, ana = await connect(table["code"], token=token)
    gm, _ = await connect(
        table["code"], headers=[ORIGIN, (b"cookie", await login_cookie(table["gm"]))]
    )
    await gm.send_json_to({"type": "seat.remove", "ref": "rm", "seat": ana["seat"]["id"]})
    leave = await next_event(gm)
    assert leave["kind"] == "seat.leave" and leave["data"]["seat"] == ana["seat"]["id"]
    # The side table's own log tells its screens, and the player's socket there is closed.
    leave_aside = await next_event(ana_aside)
    assert (
        leave_aside["kind"] == "seat.leave" and leave_aside["data"]["seat"] == hello["seat"]["id"]
    )
    closed = await ana_aside.receive_output(timeout=2)
    assert closed["type"] == "websocket.close" and closed["code"] == 4403
    # Each room hears its own event only.
    heard = []
    while not await gm.receive_nothing(timeout=0.3):
        heard.append(await gm.receive_json_from())
    assert [m for m in heard if m["type"] == "event"] == []
    for comm in (gm, ana_here):
        await comm.disconnect()
    assert await refused(side.invite_code, f"?token={token}")


async def test_an_ended_rooms_players_hear_of_the_next_session():
    table = await make_table()
    token = await seat_token(table["session"], "Ana")
    comm, _ = await connect(table["code"], token=token, headers=[])

    @database_sync_to_async
    def end() -> None:
        end_session(session_id=table["session"].pk)

    await end()
    assert (await next_event(comm))["kind"] == "session.end"
    last_seq = await database_sync_to_async(
        lambda: GameSession.objects.get(pk=table["session"].pk).last_seq
    )()

    @database_sync_to_async
    def plan() -> GameSession:
        return plan_next_session(session_id=table["session"].pk)

    planned = await plan()
    notice = await next_notice(comm)
    link = f"/c/{planned.campaign.link_code}/"
    assert notice == {
        "type": "next-session",
        "session": {"title": "Tonight (next)", "status": "planned", "code": planned.invite_code},
        "link": link,
    }
    await start(planned)
    notice = await next_notice(comm)
    assert notice["session"]["status"] == "live" and notice["link"] == link
    # A notice, not an event: the ended session's log did not change.
    after = await database_sync_to_async(
        lambda: (
            GameSession.objects.get(pk=table["session"].pk).last_seq,
            Event.objects.filter(session_id=table["session"].pk).count(),
        )
    )()
    assert after == (last_seq, last_seq)
    # The socket is still a working socket of the ended room.
    await comm.send_json_to({"type": "ping", "ref": "p"})
    pong = await next_notice(comm)
    assert pong == {"type": "pong", "ref": "p", "last_seq": last_seq}
    await comm.disconnect()
