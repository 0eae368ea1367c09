"""The extras seen from the socket: the exported record is the socket's replay, message for
message; statistics count what the socket showed; a roll made on the socket reaches a webhook."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from tabletop.services.webhooks import add_webhook
from tabletop.webhooks.sender import sender

from .receivers import Receiver
from .test_consumer import connect, make_table, next_event, roll, seat_token

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def http_get(path: str, token: str) -> dict:
    return json.loads(b"".join(Client().get(path, {"token": token})))  # (exports stream)


async def play(table, ana_token: str) -> None:
    ana, _ = await connect(table["code"], token=ana_token)
    for ref, visibility in [("a", "public"), ("b", "self"), ("c", "gm"), ("d", "public")]:
        await roll(ana, ref=ref, visibility=visibility, request={"notation": "3d6"})
        await next_event(ana)
    await ana.disconnect()


async def test_an_exported_record_is_the_sockets_replay():
    table = await make_table()
    ana_token = await seat_token(table["session"], "Ana")
    bo_token = await seat_token(table["session"], "Bo")
    await play(table, ana_token)
    for token in (ana_token, bo_token):
        comm, hello = await connect(table["code"], token=token, after=0)
        replay = [await next_event(comm) for _ in range(hello["last_seq"])]
        await comm.disconnect()
        record = await http_get(f"/play/{table['code']}/export.json", token)
        assert record["events"] == replay


async def test_statistics_count_what_the_socket_showed():
    table = await make_table()
    ana_token = await seat_token(table["session"], "Ana")
    bo_token = await seat_token(table["session"], "Bo")
    await play(table, ana_token)
    for token in (ana_token, bo_token):
        comm, hello = await connect(table["code"], token=token, after=0)
        shown = [await next_event(comm) for _ in range(hello["last_seq"])]
        await comm.disconnect()
        dice = sum(
            len(e["data"]["dice"]) for e in shown if e["kind"] == "roll" and "dice" in e["data"]
        )
        stats = await http_get(f"/play/{table['code']}/stats", token)
        assert sum(d["n"] for d in stats["seats"][0]["dice"]) == dice
    assert dice == 6  # Bo saw the two public rolls


async def test_a_roll_on_the_socket_reaches_a_webhook(settings):
    settings.TABLETOP = {
        **settings.TABLETOP,
        "WEBHOOK_RETRY_SECONDS": [0.05],
        "WEBHOOK_PRIVATE_ADDRESSES": True,
    }
    receiver = Receiver()
    try:
        table = await make_table()
        await database_sync_to_async(add_webhook)(
            campaign=table["session"].campaign, user=table["gm"], url=receiver.url
        )
        ana, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
        await roll(ana, request={"notation": "d20"})
        event = await next_event(ana)
        await ana.disconnect()
        assert await database_sync_to_async(sender.wait_idle)(15)
    finally:
        receiver.close()
    posted = [json.loads(p["body"])["event"] for p in receiver.posts]
    assert [e["seq"] for e in posted] == [event["seq"]]
    assert posted[0]["data"]["dice"] == event["data"]["dice"]
