"""A Redis outage heals without an operator: two daphne processes on a Redis of the test's own,
which the test stops and starts again (never the shared one)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator

import pytest
import websockets

from bench.harness import free_port
from tabletop.services.seats import join_session
from tabletop.services.sessions import create_session, start_session
from tests.conftest import REQUIRED
from tests.servers import daphne_servers

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


class OwnRedis:
    def __init__(self) -> None:
        if shutil.which("redis-server") is None:
            reason = "needs redis-server (apt-get install redis-server)"
            if "redis" in REQUIRED:
                pytest.fail(f"TABLETOP_REQUIRE says this must run, but it {reason}")
            pytest.skip(reason)
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="tabletop-redis-")
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                __import__("socket").create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    redis = OwnRedis()
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()
        shutil.rmtree(redis.dir, ignore_errors=True)


async def next_event(ws, timeout: float = 4) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        message = json.loads(await asyncio.wait_for(ws.recv(), max(left, 0.01)))
        if message["type"] == "event":
            return message


def url(port: int, code: str, token: str) -> str:
    return f"ws://127.0.0.1:{port}/ws/play/{code}/?token={token}"


ROLL = json.dumps({"type": "roll", "ref": "r", "request": {"notation": "d20"}})


def test_rooms_open_and_events_arrive_through_a_redis_outage(own_redis, live_session, campaign):
    other_session = start_session(session_id=create_session(campaign=campaign, title="Two").pk)
    code, code2 = live_session.invite_code, other_session.invite_code
    ana, bo = (join_session(session=live_session, name=n).token for n in ("Ana", "Bo"))
    cy, di = (join_session(session=other_session, name=n).token for n in ("Cy", "Di"))
    env = {"REDIS_URL": own_redis.url, "TABLETOP_STORE_WATCH_SECONDS": "0.3"}
    with daphne_servers(2, env=env) as (one, two):

        async def play() -> None:
            async with (
                websockets.connect(url(one, code, ana)) as a,
                websockets.connect(url(two, code, bo)) as b,
            ):
                await a.recv(), await b.recv()
                own_redis.stop()  # Redis goes away
                await a.send(ROLL)
                made = await next_event(a)
                # The other process hears of it from the store, not from Redis.
                assert (await next_event(b, timeout=3))["seq"] == made["seq"]
                # A room whose first socket on a process arrives while Redis is down opens.
                started = time.monotonic()
                async with websockets.connect(url(one, code2, cy)) as c:
                    assert json.loads(await c.recv())["type"] == "hello"
                    assert time.monotonic() - started < 3
                    # A JSON join while Redis is away succeeds fully (the seat needs no Redis).
                    joined = await asyncio.to_thread(json_join, two, code2, "Ed")
                    assert joined["token"]
                    own_redis.start()  # Redis is back
                    # The room subscribes by itself; events from the other process arrive.
                    async with websockets.connect(url(two, code2, di)) as d:
                        await d.recv()
                        await asyncio.sleep(1.5)
                        for _ in range(2):
                            await d.send(ROLL)
                            seq = (await next_event(d))["seq"]
                            while (seen := await next_event(c, timeout=3))["seq"] < seq:
                                pass
                            assert seen["seq"] == seq
                    # Sockets opened on either process after Redis returned open at once.
                    for port in (one, two):
                        started = time.monotonic()
                        async with websockets.connect(url(port, code, ana)) as again:
                            assert json.loads(await again.recv())["type"] == "hello"
                        assert time.monotonic() - started < 2

        asyncio.run(play())


def json_join(port: int, code: str, name: str) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/play/{code}/join",
        data=json.dumps({"name": name}).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())
