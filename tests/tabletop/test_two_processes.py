"""Two daphne processes sharing one Redis serve one room together (docs/protocol.md, "Promises")."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
import websockets

from tabletop.services.seats import join_session
from tests.servers import daphne_servers

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


async def _recv_event(ws) -> dict:
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if message["type"] == "event":
            return message


async def _play(ports: list[int], code: str, tokens: list[str]) -> list[list[int]]:
    urls = [
        f"ws://127.0.0.1:{port}/ws/play/{code}/?token={token}"
        for port, token in zip(ports, tokens, strict=True)
    ]
    async with websockets.connect(urls[0]) as a, websockets.connect(urls[1]) as b:
        hello_a, hello_b = json.loads(await a.recv()), json.loads(await b.recv())
        start = hello_a["last_seq"]
        assert hello_b["last_seq"] == start
        seen: list[list[int]] = [[], []]
        for i in range(10):
            sender = (a, b)[i % 2]
            await sender.send(
                json.dumps(
                    {"type": "roll", "ref": i, "system": "generic", "request": {"notation": "3d6"}}
                )
            )
        for idx, ws in enumerate((a, b)):
            while len(seen[idx]) < 10:
                event = await _recv_event(ws)
                assert event["kind"] == "roll"
                seen[idx].append(event["seq"])
        return [[s - start for s in lst] for lst in seen]


def test_rolls_on_either_process_reach_sockets_on_both(live_session):
    tokens = [join_session(session=live_session, name=n).token for n in ("Ana", "Bo")]
    with daphne_servers(2, env={"REDIS_URL": os.environ["REDIS_URL"]}) as ports:
        seen = asyncio.run(_play(ports, live_session.invite_code, tokens))
    # every socket saw every roll, in seq order, without gaps or duplicates
    assert seen == [list(range(1, 11)), list(range(1, 11))]
