"""The floor for the room benchmarks: a bare ``websockets`` asyncio broadcast server.

It speaks just enough of the room protocol for the benchmark clients: ``hello`` first, ``ping``
answered by ``pong``, and every ``roll`` broadcast to every socket of the same path as an event of
the same shape and size as the table's (``seq`` per room, the sender's copy carries its ``ref``).
No database, no channel layer, no per-socket redaction: the event is serialised once for the room.
What a socket is answered is ``hello_frame`` and ``answer``, which ``bench/servers/bare_asgi.py``
(the same floor as an ASGI application, served by daphne or uvicorn) answers too.

    .venv/bin/python -m bench.servers.bare --port 18700
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import random
import signal
from typing import Any, Generic, TypeVar

from websockets.asyncio.server import ServerConnection, broadcast, serve

Socket = TypeVar("Socket")


class Room(Generic[Socket]):
    def __init__(self) -> None:
        self.sockets: set[Socket] = set()
        self.seq = 0


ROOMS: dict[str, Room[ServerConnection]] = {}


def roll_event(seq: int, message: dict[str, Any]) -> dict[str, Any]:
    values = [random.randint(1, 6) for _ in range(3)]
    text = f"3d6 ({', '.join(map(str, values))}) = {sum(values)}"
    return {
        "type": "event",
        "seq": seq,
        "kind": "roll",
        "at": dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z"),
        "actor": {"seat": 1, "name": "Bench"},
        "visibility": "public",
        "data": {
            "system": "generic",
            "request": {"notation": "3d6", "difficulty": None},
            "notation": "3d6",
            "dice": [{"die": "d6", "sides": 6, "value": v, "role": "base"} for v in values],
            "total": sum(values),
            "successes": None,
            "outcome": None,
            "flags": [],
            "capped": False,
            "breakdown": text,
            "text": text,
            "client_seed": message.get("client_seed", ""),
            "character": None,
        },
    }


def hello_frame(room: Room[Any]) -> str:
    return json.dumps({"type": "hello", "role": "player", "last_seq": room.seq, "state": {}})


def answer(room: Room[Any], raw: str | bytes) -> tuple[str | None, str | None]:
    """The frames one message from a socket of ``room`` is answered with: (for the sender, for
    every other socket of the room), None for none. A roll takes the room's next seq."""
    try:
        message = json.loads(raw)
    except ValueError:
        return None, None
    if not isinstance(message, dict):
        return None, None
    kind = message.get("type")
    if kind == "ping":
        return json.dumps({"type": "pong", "ref": message.get("ref"), "last_seq": room.seq}), None
    if kind == "roll":
        room.seq += 1
        event = roll_event(room.seq, message)
        own = json.dumps({**event, "ref": message.get("ref")}, separators=(",", ":"))
        return own, json.dumps(event, separators=(",", ":"))
    return None, None


async def handler(ws: ServerConnection) -> None:
    path = ws.request.path.split("?", 1)[0] if ws.request else "/"
    room = ROOMS.setdefault(path, Room())
    room.sockets.add(ws)
    try:
        await ws.send(hello_frame(room))
        async for raw in ws:
            own, others = answer(room, raw)
            if others is not None:
                broadcast([s for s in room.sockets if s is not ws], others)
            if own is not None:
                await ws.send(own)
    finally:
        room.sockets.discard(ws)


async def main(host: str, port: int) -> None:
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set_result, None)
    async with serve(handler, host, port, compression=None, ping_interval=None, max_size=2**16):
        await stop


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18700)
    args = parser.parse_args()
    asyncio.run(main(args.host, args.port))
