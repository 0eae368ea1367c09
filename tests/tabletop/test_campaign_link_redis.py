"""The next-session notice reaches an ended room's sockets on every server process: two daphne
processes sharing one Redis, the next session planned and started from a third (as the admin or
a command would)."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
import websockets
from django.db import connection

from tabletop.services.next_session import plan_next_session
from tabletop.services.seats import join_session
from tabletop.services.sessions import end_session, start_session
from tests.servers import daphne_servers

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


async def _notice(ws) -> dict:
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if message["type"] == "next-session":
            return message


async def _hear(ports: list[int], code: str, tokens: list[str], plan_and_start) -> list[list]:
    urls = [
        f"ws://127.0.0.1:{port}/ws/play/{code}/?token={token}"
        for port, token in zip(ports, tokens, strict=True)
    ]
    async with websockets.connect(urls[0]) as a, websockets.connect(urls[1]) as b:
        for ws in (a, b):
            assert json.loads(await ws.recv())["type"] == "hello"
        await asyncio.to_thread(plan_and_start)
        heard = []
        for ws in (a, b):
            heard.append([(await _notice(ws))["session"]["status"] for _ in range(2)])
        return heard


def test_the_notice_reaches_sockets_on_both_processes(live_session):
    tokens = [join_session(session=live_session, name=n).token for n in ("Ana", "Bo")]
    end_session(session_id=live_session.pk)

    def plan_and_start() -> None:
        try:
            start_session(session_id=plan_next_session(session_id=live_session.pk).pk)
        finally:
            connection.close()  # this thread's own connection, not the test's

    with daphne_servers(2, env={"REDIS_URL": os.environ["REDIS_URL"]}) as ports:
        heard = asyncio.run(_hear(ports, live_session.invite_code, tokens, plan_and_start))
    assert heard == [["planned", "live"], ["planned", "live"]]
