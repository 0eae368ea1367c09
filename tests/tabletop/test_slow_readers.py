"""A client that stops reading is let go with a reason instead of growing the server, and
resumes from the store when it reconnects (a real daphne, real sockets)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import time

import pytest
import websockets

from tabletop.services.seats import join_session
from tests.servers import daphne_servers

pytestmark = pytest.mark.django_db(transaction=True)

BUFFER = 256 * 1024
LET_GO = "too far behind: reconnect with after=<last seq> to catch up"
SERVER_ENV = {
    "TABLETOP_SEND_BUFFER_BYTES": str(BUFFER),
    "TABLETOP_SEND_STALL_SECONDS": "1",
    "TABLETOP_SEAT_WORK_BURST": str(64 * 1024 * 1024),
    "TABLETOP_ROOM_WORK_BURST": str(64 * 1024 * 1024),
}


def never_reading_socket(port: int, code: str, token: str, *, path: str = "") -> socket.socket:
    """A websocket client that does the handshake, then never reads another byte."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    path = path or f"/ws/play/{code}/?token={token}"
    sock.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = b""
    while not head.endswith(b"\r\n\r\n"):  # the handshake's answer, to its last byte
        head += sock.recv(1)
    assert b" 101 " in head.split(b"\r\n")[0]
    return sock


def close_frame(sock: socket.socket, within: float) -> tuple[int, str] | None:
    """Read frames (the server's are unmasked) until a close frame: its code and reason; None
    if the connection ends or ``within`` runs out first."""
    sock.settimeout(0.5)
    deadline = time.monotonic() + within
    buffer = b""

    def take(n: int) -> bytes | None:
        nonlocal buffer
        while len(buffer) < n:
            if time.monotonic() > deadline:
                return None
            try:
                chunk = sock.recv(1 << 20)
            except TimeoutError:
                continue
            except (ConnectionResetError, BrokenPipeError):
                return None
            if not chunk:
                return None
            buffer += chunk
        out, buffer = buffer[:n], buffer[n:]
        return out

    while True:
        head = take(2)
        if head is None:
            return None
        size = head[1] & 0x7F
        if size >= 126:
            extra = take(2 if size == 126 else 8)
            if extra is None:
                return None
            size = int.from_bytes(extra, "big")
        payload = take(size)
        if payload is None:
            return None
        if head[0] & 0x0F == 0x8:
            return int.from_bytes(payload[:2], "big"), payload[2:].decode()


def closed_by_server(sock: socket.socket, within: float) -> bool:
    """Read what the server sent until it hangs up (True) or ``within`` runs out (False)."""
    sock.settimeout(0.5)
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if not sock.recv(1 << 20):
                return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            continue
    return False


async def roll_heavy(port: int, code: str, token: str, count: int) -> int:
    url = f"ws://127.0.0.1:{port}/ws/play/{code}/?token={token}"
    async with websockets.connect(url, max_size=None) as ws:
        json.loads(await ws.recv())
        last = 0
        for i in range(count):
            # (heavy events, well inside the 256 KiB an event may take)
            message = {"type": "roll", "ref": i, "request": {"notation": "400d6!>2"}}
            await ws.send(json.dumps(message))
            while True:
                reply = json.loads(await asyncio.wait_for(ws.recv(), 20))
                if reply.get("ref") == i:
                    assert reply["type"] == "event", reply
                    last = reply["seq"]
                    break
        return last


def test_a_socket_that_stops_reading_is_closed_and_resumes_from_the_store(live_session):
    code = live_session.invite_code
    slow_token = join_session(session=live_session, name="Sleepy").token
    roller = join_session(session=live_session, name="Roller").token
    with daphne_servers(1, env=SERVER_ENV) as (port,):
        slow = never_reading_socket(port, code, slow_token)
        # ~200 KB an event: far more than the kernel's buffers and the allowance together.
        last = asyncio.run(roll_heavy(port, code, roller, 40))
        # Still not reading: the server must give up on its own (reading now would let it go on).
        time.sleep(3)
        # Reading again, the client finds the close and its reason right after what it had.
        assert close_frame(slow, within=30) == (4408, LET_GO), "no close frame with a reason"
        assert closed_by_server(slow, within=15), "the server kept the connection"
        slow.close()

        async def resume() -> list[int]:
            url = f"ws://127.0.0.1:{port}/ws/play/{code}/?token={slow_token}&after={last - 3}"
            async with websockets.connect(url, max_size=None) as ws:
                json.loads(await ws.recv())
                return [json.loads(await ws.recv())["seq"] for _ in range(3)]

        assert asyncio.run(resume()) == [last - 2, last - 1, last]


def test_a_spectator_that_stops_reading_a_replay_is_closed_4408_with_its_reason(live_session):
    from tabletop.services.watch import create_watch_link

    from .bulk import add_rolls

    # ~9 MB of history: far more than the allowance and the kernel's buffers together.
    last = add_rolls(live_session, 60, pad=150_000)
    link = create_watch_link(session=live_session, user=live_session.campaign.gm, label="tv")
    with daphne_servers(1, env=SERVER_ENV) as (port,):
        slow = never_reading_socket(port, "", "", path=f"/ws/watch/{link.code}/?after=0")
        time.sleep(3)  # not reading while the replay fills the buffer
        assert close_frame(slow, within=30) == (4408, LET_GO), "no close frame with a reason"
        slow.close()

        async def resume() -> list[int]:
            url = f"ws://127.0.0.1:{port}/ws/watch/{link.code}/?after={last - 2}"
            async with websockets.connect(url, max_size=None) as ws:
                json.loads(await ws.recv())
                return [json.loads(await ws.recv())["seq"] for _ in range(2)]

        assert asyncio.run(resume()) == [last - 1, last]


def test_a_frame_over_the_servers_limit_gets_a_close_frame_saying_so(live_session):
    token = join_session(session=live_session, name="Loud").token

    async def shout() -> websockets.frames.Close | None:
        url = f"ws://127.0.0.1:{port}/ws/play/{live_session.invite_code}/?token={token}"
        async with websockets.connect(url, max_size=None) as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "ping", "pad": "x" * (1024 * 1024 + 10)}))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(ws.recv(), 10)
            return closed.value.rcvd

    with daphne_servers(1) as (port,):
        close = asyncio.run(shout())
    assert close is not None, "the connection was dropped without a close frame"
    assert close.code == 1009 and "exceeds payload limit" in close.reason
