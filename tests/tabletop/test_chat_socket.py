"""Whispers on the room socket: the sender and the recipient get the whisper and its inline
roll live; a third seat gets each seq alone, with no data and no sender, live and on replay."""

from __future__ import annotations

import json

import pytest

from .test_consumer import connect, make_table, next_event, seat_token

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]
SECRET = "meet me behind the inn"


async def test_a_whisper_reaches_its_two_seats_and_only_its_seq_reaches_a_third():
    table = await make_table()
    ana, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    bo_token = await seat_token(table["session"], "Bo")
    bo, _ = await connect(table["code"], token=bo_token)
    cy_token = await seat_token(table["session"], "Cy")
    cy, _ = await connect(table["code"], token=cy_token)
    for comm, joins in ((ana, 2), (bo, 1)):
        for _ in range(joins):
            await next_event(comm)
    await ana.send_json_to({"type": "chat", "ref": "w", "text": f"/w Bo {SECRET} [[1d6]]"})
    for comm in (ana, bo):
        roll, said = await next_event(comm), await next_event(comm)
        assert (roll["kind"], said["kind"]) == ("roll", "chat")
        assert SECRET in said["data"]["message"] and said["data"]["rolls"][0]["seq"] == roll["seq"]
    third = [await next_event(cy), await next_event(cy)]
    assert [e["data"] for e in third] == [{"hidden": True}, {"hidden": True}]
    assert [e["actor"] for e in third] == [None, None]
    assert SECRET not in json.dumps(third) and "Ana" not in json.dumps(third)
    await cy.disconnect()
    replayed, _ = await connect(table["code"], token=cy_token, after=0)
    events = [await next_event(replayed) for _ in range(6)]  # start, 3 joins, roll, whisper
    assert SECRET not in json.dumps(events)
    assert [e["actor"] for e in events[-2:]] == [None, None]
    for comm in (ana, bo, replayed):
        await comm.disconnect()
