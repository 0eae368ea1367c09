"""A spectator on one process watches rolls made on another, both behind one Redis; revoking the
link elsewhere closes it (docs/protocol.md, "Promises": several processes serve one room
together)."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
import websockets
from django.db import connections

from tabletop.services.seats import join_session
from tabletop.services.watch import create_watch_link, revoke_watch_link
from tests.servers import daphne_servers

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


async def _recv_event(ws) -> dict:
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if message["type"] == "event":
            return message


async def _watch(ports: list[int], code: str, token: str, watch: str, revoke) -> list[dict]:
    player = f"ws://127.0.0.1:{ports[0]}/ws/play/{code}/?token={token}"
    spectator = f"ws://127.0.0.1:{ports[1]}/ws/watch/{watch}/"
    async with websockets.connect(player) as a, websockets.connect(spectator) as s:
        json.loads(await a.recv())
        json.loads(await s.recv())
        for i, visibility in enumerate(["public", "self", "public"]):
            await a.send(
                json.dumps(
                    {
                        "type": "roll",
                        "ref": i,
                        "request": {"notation": "2d6"},
                        "visibility": visibility,
                        "client_seed": f"seed-{visibility}",
                    }
                )
            )
        seen: list[dict] = []
        while len([e for e in seen if e["kind"] == "roll"]) < 3:
            seen.append(await _recv_event(s))
        # Revoked here (this process, through Redis): the socket on the other process closes.
        await asyncio.to_thread(revoke)
        while True:
            message = json.loads(await asyncio.wait_for(s.recv(), 10))
            if message["type"] == "error":
                assert message["code"] == "forbidden" and "revoked" in message["message"]
                break
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(s.recv(), 10)
        assert closed.value.rcvd.code == 4403
        return [e for e in seen if e["kind"] == "roll"]


def test_a_spectator_on_another_process_sees_public_rolls_and_never_hidden_ones(live_session, gm):
    token = join_session(session=live_session, name="Ana").token
    link = create_watch_link(session=live_session, user=gm)

    def revoke() -> None:
        try:
            revoke_watch_link(session=live_session, user=gm, link_id=link.pk)
        finally:
            connections.close_all()

    with daphne_servers(2, env={"REDIS_URL": os.environ["REDIS_URL"]}) as ports:
        rolls = asyncio.run(
            _watch(ports, live_session.invite_code, token, link.code, revoke=revoke)
        )
    assert [r["visibility"] for r in rolls] == ["public", "self", "public"]
    assert rolls[1]["data"] == {"hidden": True}
    assert rolls[0]["data"]["client_seed"] == "seed-public"
    assert "seed-self" not in json.dumps(rolls)
