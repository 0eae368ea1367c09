"""What the room and watch sockets (and downloads) need from the server under them that ASGI
does not say.

Daphne writes every message into the connection's buffer at once and never pushes back: a
client that stops reading would keep all of it in the server's memory. ``SocketProbe`` (the
outermost ASGI layer for websockets) finds the connection behind a socket so the socket can
ask how many bytes its client has not read yet, and close with a reason (daphne's own close
message carries only a code); a frame too large to take is answered with a close frame. How it
reads daphne is ``tabletop/adapters.py``'s part. Under other servers, and in tests without a
server, the socket does without.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

from . import adapters

log = logging.getLogger(__name__)

SCOPE_KEY = "tabletop.connection"
# How long a socket let go for not reading has to read up to its close frame (and its reason)
# before the connection is dropped; what it holds meanwhile is what was already on its way.
CLOSE_READ_SECONDS = 10.0


class SocketProbe:
    def __init__(self, app: Any) -> None:
        self.app = app
        adapters.defer_autobahn_debug_dumps()
        adapters.unmask_and_check_text_holding_the_lock()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            connection = adapters.daphne_connection(send)
            if connection is not None:
                adapters.close_frame_on_protocol_faults(connection)
                adapters.write_at_once(connection)
                scope = {**scope, SCOPE_KEY: connection}
        elif scope["type"] == "http":
            # (a download streams only as fast as its client reads: tabletop/views/export.py)
            request = adapters.daphne_http_request(send)
            if request is not None:
                scope = {**scope, SCOPE_KEY: request}
        await self.app(scope, receive, send)


def abort(scope: dict[str, Any]) -> None:
    """Drop the connection under a request or socket at once, where the server tells how."""
    connection = scope.get(SCOPE_KEY)
    if connection is not None:
        adapters.abort(connection)


def unsent_bytes(scope: Mapping[str, Any]) -> Callable[[], int | None] | None:
    """A function answering how many bytes were written to the socket and not yet taken by
    the network (what its client has not read, past the kernel's buffers); None where the
    server does not tell."""
    connection = scope.get(SCOPE_KEY)
    return None if connection is None else adapters.unsent_bytes(connection)


async def close_with_reason(
    consumer: Any,
    *,
    code: int,
    reason: str,
    drop: bool = False,
    drop_queued: float | None = None,
) -> None:
    """Close the socket with a code and a reason the client can show. ``drop``: let the
    connection go at once (its unread buffer is what must be freed; the client never reads
    the close frame). ``drop_queued``: for a client that stopped reading, forget what is queued
    for it and not yet on the network, so the close frame follows what it already has, and
    drop the connection if it has not read that within so many seconds."""
    connection = consumer.scope.get(SCOPE_KEY)
    if connection is not None:
        try:
            adapters.close_with_reason(
                connection, code=code, reason=reason, drop=drop, drop_queued=drop_queued
            )
            return
        except Exception:
            log.exception("closing a socket with a reason failed")
    await consumer.close(code=code, reason=reason)


class BadQuery(ValueError):
    """A socket's query string that cannot be read (``after`` that is not a number)."""


def wants_notices(scope: Mapping[str, Any]) -> bool:
    """``notices=1`` in a room socket's query: tell this socket what changes at the table
    without being an event (who is here, a character's quick rolls). The room page asks; a bot
    that does not ask gets the socket's messages as before."""
    params = parse_qs(scope.get("query_string", b"").decode(errors="replace"))
    return (params.get("notices") or [""])[0] == "1"


def socket_query(scope: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """The room and watch sockets' query: ``token`` (or None) and ``after`` (the last seq the
    client saw, or None for a fresh start). Raises BadQuery for an ``after`` that is no number."""
    params = parse_qs(scope.get("query_string", b"").decode(errors="replace"))
    token = (params.get("token") or [None])[0]
    after_text = (params.get("after") or [None])[0]
    if after_text in (None, ""):
        return token, None
    try:
        return token, max(0, int(after_text))
    except ValueError:
        raise BadQuery(after_text) from None


def batched_replay(scope: Mapping[str, Any]) -> bool:
    """The client asked for its replay many events to a frame (``replay=batch``): a browser
    handles one frame of a hundred events far sooner than a hundred frames."""
    params = parse_qs(scope.get("query_string", b"").decode(errors="replace"))
    return (params.get("replay") or [None])[0] == "batch"
