"""Nothing one seat does breaks the room, and a lost channel layer heals: over the socket."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from unittest import mock

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from tabletop.hub import hub
from tabletop.models import Event, GameSession
from tabletop.services.events import MAX_EVENT_BYTES

from .commands import body
from .test_consumer import connect, make_table, next_event, seat_token

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

# ~3,350 dice listed: within the dice a roll may list, ~300 KB as an event (over its limit).
HEAVY = "1000d1000!>300kl1"


async def test_a_roll_too_large_to_deliver_is_refused_before_storing_and_says_why():
    table = await make_table()
    comm, hello = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    message = {"type": "roll", "ref": "big", "request": {"notation": HEAVY}, "client_seed": "s"}
    roomy = mock.patch.dict(settings.TABLETOP, {"SEAT_WORK_BURST": 10**9, "ROOM_WORK_BURST": 10**9})
    roomy.start()
    await comm.send_json_to(message)
    refusal = await comm.receive_json_from(timeout=5)
    assert refusal["type"] == "error" and refusal["code"] == "too-large", refusal
    assert refusal["ref"] == "big" and "same client seed" in refusal["message"]
    session = await database_sync_to_async(GameSession.objects.get)(pk=table["session"].pk)
    assert session.last_seq == hello["last_seq"], "no seq is used"
    # The same request with the same seed draws the same dice for the same seq: same refusal.
    await comm.send_json_to(message)
    assert (await comm.receive_json_from(timeout=5))["code"] == "too-large"
    roomy.stop()
    # The room goes on.
    await comm.send_json_to({"type": "roll", "ref": "ok", "request": {"notation": "3d6"}})
    assert (await next_event(comm))["seq"] == hello["last_seq"] + 1
    await comm.disconnect()


@database_sync_to_async
def store_undeliverable(session: GameSession) -> int:
    """An event stored before the table refused such things: ~1.6 MB, over the frame limit."""
    from tabletop.services.seats import join_session

    from .commands import rolled

    seat = join_session(session=session, name="Past").seat
    event = rolled(seat_id=seat.pk, request={"notation": "d100"})
    data = {**event.data, "dice": event.data["dice"] * 40000}
    Event.objects.filter(pk=event.pk).update(data=data)
    assert len(json.dumps(data)) > 4 * MAX_EVENT_BYTES
    return event.seq


async def test_a_session_holding_an_undeliverable_event_still_opens_with_a_stand_in():
    table = await make_table()
    token = await seat_token(table["session"], "Ana")
    seq = await store_undeliverable(table["session"])
    comm, hello = await connect(table["code"], token=token, after=0)
    replayed = [await next_event(comm) for _ in range(hello["last_seq"])]
    assert [e["seq"] for e in replayed] == list(range(1, hello["last_seq"] + 1))
    stand_in = replayed[seq - 1]
    assert stand_in["kind"] == "roll" and stand_in["data"]["too_large"] is True
    await comm.send_json_to({"type": "roll", "ref": "after", "request": {"notation": "d20"}})
    assert (await next_event(comm))["seq"] == seq + 1
    await comm.disconnect()


async def test_events_the_channel_layer_lost_reach_sockets_from_the_store():
    table = await make_table()
    comm, hello = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    with mock.patch.dict(settings.TABLETOP, {"STORE_WATCH_SECONDS": 0.1}):
        # Another process commits an event while Redis is away: its publish is lost.
        await database_sync_to_async(_roll_elsewhere)(table["session"])
        event = await comm.receive_json_from(timeout=2)
        assert event["type"] == "event" and event["seq"] == hello["last_seq"] + 1
        await comm.send_json_to({"type": "ping", "ref": "p"})
        pong = await comm.receive_json_from(timeout=2)
        assert pong == {"type": "pong", "ref": "p", "last_seq": event["seq"]}
    await comm.disconnect()


def _roll_elsewhere(session: GameSession) -> None:
    from tabletop.services.events import unit_of_work
    from tabletop.services.seats import join_session

    from .commands import rolled

    seat = join_session(session=session, name="Elsewhere").seat
    # The unit of work hands its events back to be published: here nobody publishes them.
    unit_of_work(lambda uow: rolled(uow=uow, seat_id=seat.pk, request={"notation": "d6"}))


async def test_a_room_whose_layer_is_away_opens_and_starts_once_it_returns():
    table = await make_table()
    layer = get_channel_layer()
    real_add, calls = layer.group_add, []

    async def away_then_back(group: str, channel: str) -> None:
        calls.append(group)
        if len(calls) <= 3:
            raise ConnectionError("Redis is away")
        await real_add(group, channel)

    with (
        mock.patch.object(layer, "group_add", away_then_back),
        mock.patch.dict(settings.TABLETOP, {"LAYER_WAIT_SECONDS": 0.2}),
    ):
        comm, _ = await asyncio.wait_for(
            connect(table["code"], token=await seat_token(table["session"], "Ana")), 3
        )
        for _ in range(50):
            if len(calls) > 3:
                break
            await asyncio.sleep(0.1)
    assert len(calls) == 4
    second, _ = await asyncio.wait_for(
        connect(table["code"], token=await seat_token(table["session"], "Bo")), 3
    )
    await comm.disconnect()
    await second.disconnect()
    group = f"room.{table['session'].pk}"
    assert not [key for key in hub._rooms if key[2] == group], "gone with its last socket"


async def test_heavy_rolls_spend_the_seats_work_budget_and_other_seats_go_on():
    table = await make_table()
    ana, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    bo, _ = await connect(table["code"], token=await seat_token(table["session"], "Bo"))
    await next_event(ana)  # Bo sat down
    budget = {"SEAT_WORK_PER_SECOND": 1000, "SEAT_WORK_BURST": 100_000}
    with mock.patch.dict(settings.TABLETOP, budget):
        await ana.send_json_to({"type": "roll", "ref": "h1", "request": {"notation": "1000d6"}})
        assert (await next_event(ana))["ref"] == "h1"  # ~50 KB: within the burst
        await next_event(bo)
        await ana.send_json_to({"type": "roll", "ref": "h2", "request": {"notation": "1000d6"}})
        assert (await next_event(ana))["ref"] == "h2"  # the seat is now in debt
        await next_event(bo)
        await ana.send_json_to({"type": "roll", "ref": "h3", "request": {"notation": "1d6"}})
        refusal = await ana.receive_json_from(timeout=5)
        assert refusal["code"] == "rate-limited" and refusal["ref"] == "h3"
        assert "this seat" in refusal["message"]
        await bo.send_json_to({"type": "roll", "ref": "b", "request": {"notation": "3d6"}})
        assert (await next_event(bo))["ref"] == "b"
    await ana.disconnect()
    await bo.disconnect()


async def test_a_rooms_work_budget_is_shared_by_its_seats():
    table = await make_table()
    ana, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    bo, _ = await connect(table["code"], token=await seat_token(table["session"], "Bo"))
    await next_event(ana)  # Bo sat down
    other = await make_table("d6-chance")
    cy, _ = await connect(other["code"], token=await seat_token(other["session"], "Cy"))
    budget = {"ROOM_WORK_PER_SECOND": 1000, "ROOM_WORK_BURST": 30_000}
    with mock.patch.dict(settings.TABLETOP, budget):
        await ana.send_json_to({"type": "roll", "ref": "h", "request": {"notation": "1000d6"}})
        assert (await next_event(ana))["ref"] == "h"
        await next_event(bo)
        await bo.send_json_to({"type": "roll", "ref": "b", "request": {"notation": "1d6"}})
        refusal = await bo.receive_json_from(timeout=5)
        assert refusal["code"] == "rate-limited" and "this table" in refusal["message"]
        await cy.send_json_to(
            {"type": "roll", "ref": "c", "system": "generic", "request": {"notation": "1d6"}}
        )
        assert (await next_event(cy))["ref"] == "c", "another room is not held up"
    for comm in (ana, bo, cy):
        await comm.disconnect()


async def _all_text(comm: Any, count: int) -> str:
    return "".join([await comm.receive_from(timeout=5) for _ in range(count)])


@pytest.mark.parametrize("visibility", ["gm", "blind", "self"])
async def test_a_hidden_rolls_client_seed_stays_hidden_live_on_replay_and_after_the_end(
    visibility,
):
    from django.test import Client

    from tabletop.services.sessions import end_session

    table = await make_table()
    ana_token = await seat_token(table["session"], "Ana")
    bo_token = await seat_token(table["session"], "Bo")
    ana, _ = await connect(table["code"], token=ana_token)
    bo, _ = await connect(table["code"], token=bo_token)
    secret = "my-hidden-seed-4242"
    await ana.send_json_to(
        {
            "type": "roll",
            "ref": "h",
            "request": {"notation": "d20"},
            "visibility": visibility,
            "client_seed": secret,
        }
    )
    live = await _all_text(bo, 1)
    assert '"seq"' in live and secret not in live
    await database_sync_to_async(end_session)(session_id=table["session"].pk)
    ended = await _all_text(bo, 1)
    assert "server_seed" in ended
    await ana.disconnect()
    await bo.disconnect()
    again, hello = await connect(table["code"], token=bo_token, after=0)
    replay = await _all_text(again, hello["last_seq"])
    assert secret not in replay and secret not in json.dumps(hello)
    await again.disconnect()

    def record(token: str | None, user: Any = None) -> str:
        client = Client()
        if user is not None:
            client.force_login(user)
        query = {"token": token} if token else {}
        return body(client.get(f"/play/{table['code']}/record", query)).decode()

    assert secret not in await database_sync_to_async(record)(bo_token)
    # The GM verifies every roll, hidden ones too (blind and gm rolls are the GM's to see).
    gm_record = await database_sync_to_async(record)(None, table["gm"])
    assert (secret in gm_record) is (visibility != "self")
    assert secret in await database_sync_to_async(record)(ana_token) or visibility == "blind"


async def test_rolls_refused_for_size_still_spend_the_work_budget():
    table = await make_table()
    ana, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    budget = {"SEAT_WORK_PER_SECOND": 1000, "SEAT_WORK_BURST": 500_000}
    with mock.patch.dict(settings.TABLETOP, budget):
        for ref in ("a", "b"):  # ~300 KB of dice drawn each, nothing stored
            await ana.send_json_to({"type": "roll", "ref": ref, "request": {"notation": HEAVY}})
            assert (await ana.receive_json_from(timeout=5))["code"] == "too-large"
        await ana.send_json_to({"type": "roll", "ref": "c", "request": {"notation": HEAVY}})
        refusal = await ana.receive_json_from(timeout=5)
        assert refusal["code"] == "rate-limited" and refusal["ref"] == "c"
    await ana.disconnect()


async def test_a_removed_seats_sockets_are_told_and_closed():
    from tabletop.services.seats import gm_seat, remove_seat

    table = await make_table()
    bo_token = await seat_token(table["session"], "Bo")
    bo, hello = await connect(table["code"], token=bo_token)
    gm = await database_sync_to_async(gm_seat)(session=table["session"], user=table["gm"])
    await database_sync_to_async(remove_seat)(by_seat_id=gm.pk, seat_id=hello["seat"]["id"])
    leave = await next_event(bo)
    assert leave["kind"] == "seat.leave" and leave["data"]["seat"] == hello["seat"]["id"]
    closed = await bo.receive_output(timeout=2)
    assert closed["type"] == "websocket.close" and closed["code"] == 4403


async def test_a_roll_of_too_many_dice_is_refused_without_the_database_thread():
    """150d100!>2 expects ~9,564 dice: refused from the request alone, while the process's one
    database thread is busy elsewhere (another room's action), so refusing it costs that
    thread nothing, however often it is sent."""
    import threading

    table = await make_table()
    comm, hello = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        held.set()
        release.wait(10)

    blocker = asyncio.ensure_future(database_sync_to_async(hold)())
    try:
        assert await asyncio.get_running_loop().run_in_executor(None, held.wait, 5)
        for ref in ("huge-1", "huge-2"):
            message = {"type": "roll", "ref": ref, "request": {"notation": "150d100!>2"}}
            await comm.send_json_to(message)
            refusal = await comm.receive_json_from(timeout=2)
            assert (refusal["code"], refusal["ref"]) == ("too-large", ref), refusal
            assert "9,564 dice" in refusal["message"]
    finally:
        release.set()
        await blocker
    await comm.send_json_to({"type": "roll", "ref": "ok", "request": {"notation": "3d6"}})
    assert (await next_event(comm))["seq"] == hello["last_seq"] + 1
    await comm.disconnect()
