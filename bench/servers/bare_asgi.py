"""The floor of the socket stack: the bare server's room protocol as a plain ASGI application.

It answers what ``bench/servers/bare.py`` answers (``hello`` first, ``ping`` answered by
``pong``, every ``roll`` broadcast to every socket of the same path as an event of the table's
shape and size, ``seq`` per room, the sender's copy carrying its ``ref``), with no Django, no
Channels, no database and no channel layer, so that what it costs served by daphne is what
daphne, Twisted, autobahn and asgiref cost the table, and nothing of the table's own.

Served as the table is: the same daphne command line (``bench.harness.daphne_command``), and the
table's adapters of the socket stack put in as ``tabletop/asgi.py`` puts them in: the outermost
layer is the table's ``SocketProbe`` (autobahn's debug dumps deferred when it is made; a socket's
frames of one turn sent in one system call and protocol faults answered with a close frame, per
connection), daphne's access log redacted, and what loading made set aside from the garbage
collector as the table's defaults do. None of these reads Django's settings; the collector's
two come from the same environment variables as the table's (``TABLETOP_GC_FREEZE``,
``TABLETOP_GC_THRESHOLD``, defaults in ``tabletop/settings.py``). Importing the adapters imports
Django and Channels modules; nothing of them is configured or run.

Under uvicorn (``bench.harness.uvicorn_command``) the same application is a second point of
comparison: there the probe finds no daphne connection and the socket is uvicorn's.

    .venv/bin/python -m daphne -b 127.0.0.1 -p 18701 bench.servers.bare_asgi:application
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from bench.servers.bare import Room, answer, hello_frame
from tabletop.access_log import install as keep_tokens_out_of_the_access_log
from tabletop.transport import SocketProbe

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]

ROOMS: dict[str, Room[Send]] = {}


async def room_socket(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if (await receive())["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    room = ROOMS.setdefault(scope["path"], Room())
    room.sockets.add(send)
    try:
        await send({"type": "websocket.send", "text": hello_frame(room)})
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            own, others = answer(room, message.get("text") or message.get("bytes") or b"")
            if others is not None:
                frame = {"type": "websocket.send", "text": others}
                # One after another, as bare.py's broadcast: daphne's send never waits, uvicorn's
                # waits while that socket's buffer is full (its back-pressure).
                for other in [s for s in room.sockets if s is not send]:
                    # (uvicorn: a socket gone raises; its own task ends it)
                    with contextlib.suppress(OSError):
                        await other(frame)
            if own is not None:
                await send({"type": "websocket.send", "text": own})
    finally:
        room.sockets.discard(send)


async def lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def floor(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "websocket":
        await room_socket(scope, receive, send)
    elif scope["type"] == "lifespan":  # (uvicorn's)
        await lifespan(receive, send)
    elif scope["type"] == "http":
        await send(
            {"type": "http.response.start", "status": 404, "headers": [(b"content-length", b"0")]}
        )
        await send({"type": "http.response.body", "body": b""})


def _set_aside_what_loading_made() -> None:
    """What ``tabletop/asgi.py`` does with the table's defaults: a full collection, what is left
    frozen, and the young generation collected after ``TABLETOP_GC_THRESHOLD`` allocations."""
    if os.environ.get("TABLETOP_GC_FREEZE", "1") not in {"0", "false", "no"}:
        gc.collect()
        gc.freeze()
    threshold = int(os.environ.get("TABLETOP_GC_THRESHOLD", "10000"))
    if threshold:
        _, older, oldest = gc.get_threshold()
        gc.set_threshold(threshold, older, oldest)


# The table's log level (its settings' LOGGING: the root logger at LOG_LEVEL, WARNING unless
# told); daphne's command line has set INFO by the time the application loads.
logging.getLogger().setLevel(os.environ.get("LOG_LEVEL", "WARNING"))
keep_tokens_out_of_the_access_log()
application = SocketProbe(floor)
_set_aside_what_loading_made()
