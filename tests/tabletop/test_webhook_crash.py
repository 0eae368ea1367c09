"""A serving process killed with SIGKILL while its table rolls hard loses no webhook post: what
each hook must receive is in the store, and the next process sends it without an operator,
every repeat under the same delivery id."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import pytest
import websockets

from bench import harness
from tabletop.models import Event
from tabletop.services.seats import join_session
from tabletop.services.webhooks import add_webhook
from tabletop.webhooks import sender as sending
from tests import servers

from .receivers import Receiver

pytestmark = pytest.mark.django_db(transaction=True)

ROLLS_PER_SEAT = 40
SEATS = 3


def serve(port: int) -> harness.ServerProcess:
    env = {
        **os.environ,
        "DATABASE_URL": servers.test_database_url(),
        "DJANGO_SETTINGS_MODULE": "tabletop.settings",
        "TABLETOP_WEBHOOK_SENDERS_AT_START": "1",
        "TABLETOP_WEBHOOK_PRIVATE_ADDRESSES": "1",  # the receiver is on loopback
        "TABLETOP_WEBHOOK_SECONDS": "2",
        "TABLETOP_WEBHOOK_RETRY_SECONDS": "0.2,0.5,1",
    }
    return harness.ServerProcess("daphne", harness.daphne_command(port), env=env, port=port)


async def roll_hard(port: int, code: str, tokens: list[str]) -> int:
    """Every seat sends its rolls at once; returns once each seat has seen its own committed."""

    async def seat(token: str) -> int:
        url = f"ws://127.0.0.1:{port}/ws/play/{code}/?token={token}"
        async with websockets.connect(url) as ws:
            await ws.recv()  # hello
            for i in range(ROLLS_PER_SEAT):
                roll = {"type": "roll", "ref": i, "system": "generic"}
                await ws.send(json.dumps({**roll, "request": {"notation": "3d6"}}))
            mine = 0
            while mine < ROLLS_PER_SEAT:
                message = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if message["type"] == "error":
                    raise AssertionError(message)
                if message["type"] == "event" and message.get("ref") is not None:
                    mine += 1
            return mine

    return sum(await asyncio.gather(*(seat(t) for t in tokens)))


def test_sigkill_while_rolling_loses_no_post(live_session, monkeypatch):
    # This test process only stores things: the serving processes do all the sending.
    sending.sender.stop()
    monkeypatch.setattr(sending.Sender, "session_changed", lambda self, session_id: None)
    # Each post takes a while, so the hook is still owed posts when the rolls are all stored,
    # even while the machine is busy with other work (120 posts take 6 s at least).
    receiver = Receiver(delay=0.05)
    add_webhook(campaign=live_session.campaign, user=live_session.campaign.gm, url=receiver.url)
    tokens = [join_session(session=live_session, name=f"P{i}").token for i in range(SEATS)]
    port = harness.free_port()
    first = serve(port)
    try:
        committed = asyncio.run(roll_hard(port, live_session.invite_code, tokens))
        at_kill = len(receiver.posts)
        first.popen.send_signal(signal.SIGKILL)  # this process, by its own pid
        first.popen.wait(10)
    finally:
        first.stop()
    rolls = set(
        Event.objects.filter(session=live_session, kind="roll").values_list("seq", flat=True)
    )
    assert committed == len(rolls) == SEATS * ROLLS_PER_SEAT
    assert at_kill < len(rolls)  # the kill came with posts still owed

    restarted = serve(port)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not rolls <= posted_seqs(receiver):
            time.sleep(0.2)
    finally:
        restarted.stop()
        receiver.close()
    assert rolls <= posted_seqs(receiver), f"never posted: {sorted(rolls - posted_seqs(receiver))}"
    # A post repeated (sent, then killed before it was marked) keeps its delivery id.
    ids: dict[int, set[str]] = {}
    for post in receiver.posts:
        seq = json.loads(post["body"])["event"]["seq"]
        ids.setdefault(seq, set()).add(post["headers"]["X-Tabletop-Delivery"])
    assert all(len(d) == 1 for d in ids.values())


def posted_seqs(receiver: Receiver) -> set[int]:
    return {json.loads(p["body"])["event"]["seq"] for p in list(receiver.posts)}
