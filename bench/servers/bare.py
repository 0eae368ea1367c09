"""The floor for the room benchmarks: a bare ``websockets`` asyncio broadcast server.

It speaks just enough of the room protocol for the benchmark clients: ``hello`` first, ``ping``
answered by ``pong``, and every ``roll`` broadcast to every socket of the same path as an event of
the same shape and size as the table's (``seq`` per room, the sender's copy carries its ``ref``).
No database, no channel layer, no per-socket redaction: the event is serialised once for the room.

    .venv/bin/python -m bench.servers.bare --port 18700
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import random
import signal
from typing import Any

from websockets.asyncio.server import ServerConnection, broadcast, serve


class Room:
    def __init__(self) -> None:
        self.sockets: set[ServerConnection] = set()
        self.seq = 0


ROOMS: dict[str, Room] = {}


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


async def handler(ws: ServerConnection) -> None:
    path = ws.request.path.split("?", 1)[0] if ws.request else "/"
    room = ROOMS.setdefault(path, Room())
    room.sockets.add(ws)
    try:
        await ws.send(
            json.dumps({"type": "hello", "role": "player", "last_seq": room.seq, "state": {}})
        )
        async for raw in ws:
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            kind = message.get("type")
            if kind == "ping":
                await ws.send(
                    json.dumps({"type": "pong", "ref": message.get("ref"), "last_seq": room.seq})
                )
            elif kind == "roll":
                room.seq += 1
                event = roll_event(room.seq, message)
                others = [s for s in room.sockets if s is not ws]
                broadcast(others, json.dumps(event, separators=(",", ":")))
                await ws.send(
                    json.dumps({**event, "ref": message.get("ref")}, separators=(",", ":"))
                )
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
