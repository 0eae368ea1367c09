"""A PostgreSQL outage heals without an operator: daphne on a PostgreSQL of the test's own (a
temporary data directory), which the test stops and starts again (never the shared one)."""

from __future__ import annotations

import asyncio
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets

from bench.harness import free_port
from tests.conftest import REQUIRED
from tests.servers import daphne_servers

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parents[2]


class OwnPostgres:
    def __init__(self) -> None:
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not bins:
            reason = "needs PostgreSQL's server binaries (initdb, pg_ctl)"
            if "postgres" in REQUIRED:
                pytest.fail(f"TABLETOP_REQUIRE says this must run, but it {reason}")
            pytest.skip(reason)
        self.bin = Path(bins[-1]).parent
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="tabletop-pg-")
        # initdb refuses to run as root: run the server as the postgres user then.
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(self.dir, "postgres")
        self._run("initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8")

    @property
    def data(self) -> str:
        return os.path.join(self.dir, "data")

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run(
            [*self.as_user, str(self.bin / tool), *args],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", self.data, "-o", options, "-l", f"{self.dir}/log", "-w", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")


@pytest.fixture
def own_postgres() -> Iterator[OwnPostgres]:
    pg = OwnPostgres()
    pg.start()
    try:
        yield pg
    finally:
        subprocess.run(
            [*pg.as_user, str(pg.bin / "pg_ctl"), "-D", pg.data, "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(pg.dir, ignore_errors=True)


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout


def json_join(port: int, code: str, name: str) -> str:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/play/{code}/join",
        data=json.dumps({"name": name}).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["token"]


async def answer(ws, ref: str, timeout: float = 15) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
        if message.get("ref") == ref:
            return message


def test_the_table_refuses_plainly_while_postgres_is_away_and_heals_after(own_postgres):
    env = {"DATABASE_URL": own_postgres.url, "TABLETOP_DATA_DIR": own_postgres.dir}
    manage(env, "migrate", "--verbosity", "0")
    lines = manage(env, "play", "--no-serve").splitlines()
    code = next(line for line in lines if line.startswith("generic invite:")).split("/")[-2]
    with daphne_servers(1, env=env) as (port,):
        token = json_join(port, code, "Ana")

        async def play() -> None:
            url = f"ws://127.0.0.1:{port}/ws/play/{code}/?token={token}"
            async with websockets.connect(url) as ws:
                await ws.recv()

                async def roll(ref: str) -> dict:
                    await ws.send(
                        json.dumps({"type": "roll", "ref": ref, "request": {"notation": "d6"}})
                    )
                    return await answer(ws, ref)

                assert (await roll("before"))["type"] == "event"
                await asyncio.to_thread(own_postgres.stop)
                refused = await roll("during")
                assert refused["type"] == "error", refused
                assert "nothing was changed" in refused["message"]
                await asyncio.to_thread(own_postgres.start)
                # The same socket works again; a stale pooled connection costs at most one try.
                for attempt in range(3):
                    reply = await roll(f"after{attempt}")
                    if reply["type"] == "event":
                        break
                assert reply["type"] == "event", reply
            async with websockets.connect(url) as again:
                assert json.loads(await again.recv())["type"] == "hello"

        asyncio.run(play())


def timed_get(url: str, accept: str = "text/html", data: bytes | None = None):
    """(status, seconds, body) of one request, whatever its status."""
    headers = {"Accept": accept}
    if data is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read()
    return status, time.monotonic() - started, body.decode()


def test_while_postgres_is_away_pages_answer_503_in_2s_sockets_refuse_at_once_and_the_next_action_after_it_returns_succeeds(  # noqa: E501
    own_postgres,
):
    env = {"DATABASE_URL": own_postgres.url, "TABLETOP_DATA_DIR": own_postgres.dir}
    manage(env, "migrate", "--verbosity", "0")
    lines = manage(env, "play", "--no-serve").splitlines()
    code = next(line for line in lines if line.startswith("generic invite:")).split("/")[-2]
    with daphne_servers(1, env=env) as (port,):
        base = f"http://127.0.0.1:{port}"
        token = json_join(port, code, "Ana")
        join_body = json.dumps({"name": "Bo"}).encode()

        async def play() -> None:
            url = f"ws://127.0.0.1:{port}/ws/play/{code}/?token={token}"
            async with websockets.connect(url) as ws:
                await ws.recv()

                async def roll(ref: str) -> tuple[dict, float]:
                    started = time.monotonic()
                    await ws.send(
                        json.dumps({"type": "roll", "ref": ref, "request": {"notation": "d6"}})
                    )
                    reply = await answer(ws, ref)
                    return reply, time.monotonic() - started

                assert (await roll("before"))[0]["type"] == "event"
                await asyncio.to_thread(own_postgres.stop)

                # Pages and joins: a plain 503 within 2 s, the first one too.
                for attempt in range(3):
                    status, took, body = await asyncio.to_thread(
                        timed_get, f"{base}/play/{code}/join", "application/json", join_body
                    )
                    assert status == 503 and took < 2.0, (attempt, status, took, body)
                    assert json.loads(body)["error"]["code"] == "unavailable"
                    status, took, body = await asyncio.to_thread(timed_get, f"{base}/play/{code}/")
                    assert status == 503 and took < 2.0 and "not answering" in body, (status, took)

                # Socket actions: refused plainly, at once; the socket stays open.
                for attempt in range(3):
                    refused, took = await roll(f"during{attempt}")
                    assert refused["type"] == "error" and refused["code"] == "busy", refused
                    assert "not answering" in refused["message"], refused
                    assert took < 2.0, took
                # A new socket is told why it cannot open now, and when to try again.
                started = time.monotonic()
                async with websockets.connect(url) as refused_socket:
                    with pytest.raises(websockets.ConnectionClosed) as closed:
                        await refused_socket.recv()
                assert closed.value.rcvd.code == 4503, closed.value
                assert "not answering" in closed.value.rcvd.reason
                assert time.monotonic() - started < 2.0

                await asyncio.to_thread(own_postgres.start)
                # The very next action works, on the same socket: no dead pooled connection,
                # no pool waiting out its back-off.
                reply, took = await roll("after")
                assert reply["type"] == "event", reply
            status, _, body = await asyncio.to_thread(
                timed_get, f"{base}/play/{code}/join", "application/json", join_body
            )
            assert status == 200 and json.loads(body)["token"], body
            async with websockets.connect(url) as again:
                assert json.loads(await again.recv())["type"] == "hello"

        asyncio.run(play())
