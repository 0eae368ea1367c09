"""The room socket (TABLE.md): a thin JSON consumer over the service layer.

Every event reaches every seat exactly once and in seq order: live events come through the
channel layer (at-most-once), and any gap is filled from the event store, which is the record.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings

from .hub import hub
from .origin import origin_allowed
from .selectors.events import Viewer, can_see, dumps, events_after, for_viewer, owner_of
from .selectors.room import room_state, seat_summary
from .services import actions
from .services.access import Access, resolve_access, seat_cookie_name
from .services.errors import ServiceError, busy
from .services.events import OUTBOX, room_group

log = logging.getLogger(__name__)
BACKLOG_LIMIT = 1000  # events a socket may be behind before it catches up from the store


class TokenBucket:
    """Per-seat message budget: ``rate`` a second, bursts of ``burst``."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


# One bucket per seat per process, shared by that seat's sockets.
_buckets: dict[int, TokenBucket] = {}


def _bucket(seat_id: int) -> TokenBucket:
    bucket = _buckets.get(seat_id)
    if bucket is None:
        conf = settings.TABLETOP
        bucket = _buckets[seat_id] = TokenBucket(conf["RATE_PER_SECOND"], conf["RATE_BURST"])
    return bucket


def _in_time(handler: Any, *, deadline: float, seat_id: int, message: dict[str, Any]) -> int | None:
    """Run an action on the ORM thread unless it waited there past its deadline."""
    if time.monotonic() > deadline:
        raise busy()
    return handler(seat_id=seat_id, message=message)


def _connect_snapshot(
    access: Access, after: int | None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """hello (last_seq read before the state, so the state is never older than last_seq) and
    the events to replay after ``after``."""
    session = access.session
    session.refresh_from_db(fields=["last_seq", "status", "ended_at", "table_state", "server_seed"])
    last_seq = session.last_seq
    hello = {
        "type": "hello",
        "seat": seat_summary(access.seat),
        "role": access.seat.role,
        "last_seq": last_seq,
        "state": room_state(
            session=session,
            viewer=Viewer(seat_id=access.seat.pk, is_gm=access.seat.is_gm),
            last_seq=last_seq,
        ),
    }
    replay = [] if after is None else events_after(session_id=session.pk, after=after, limit=None)
    return hello, [e for e in replay if e["seq"] <= last_seq]


class RoomConsumer(AsyncWebsocketConsumer):
    # No channel of its own: the room's one subscription per process (tabletop/hub.py) hands
    # events over, and what must be put in order waits in a local queue. A socket costs the
    # channel layer nothing, however many come and go.
    channel_layer_alias = None
    access: Access | None = None
    backlog_task: asyncio.Task[None] | None = None

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels runs close_old_connections() on the ORM thread before every handler: a hop
        # onto the process's one ORM thread for each message, even a ping. This consumer reaches
        # the database only through database_sync_to_async, which closes stale connections on
        # that thread itself, so a message waits for the ORM thread only when it needs it.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"no handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        code = self.scope["url_route"]["kwargs"]["code"]
        params = parse_qs(self.scope.get("query_string", b"").decode(errors="replace"))
        token = (params.get("token") or [None])[0]
        after_text = (params.get("after") or [None])[0]
        after: int | None = None
        if after_text not in (None, ""):
            try:
                after = max(0, int(after_text))
            except ValueError:
                await self.close(code=4400)
                return
        cookies = self.scope.get("cookies", {})
        access = await database_sync_to_async(resolve_access)(
            code=code,
            token=token,
            cookie_token=cookies.get(seat_cookie_name(code)),
            user=self.scope.get("user"),
        )
        if access is None:
            await self.close(code=4403)
            return
        # Cookie and login sockets ride on ambient browser credentials: check where they come from.
        if access.via != "token" and not origin_allowed(self.scope):
            await self.close(code=4403)
            return
        self.access = access
        self.viewer = Viewer(seat_id=access.seat.pk, is_gm=access.seat.is_gm)
        self.group = room_group(access.session.pk)
        self.delivered = 0
        self.refs: dict[int, Any] = {}
        self.layer = get_channel_layer()
        # Events the room hands over while this socket is not ready for them in order wait
        # here for room_event, which orders them from the store.
        self.ready = False
        self.backlog: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        # Join the room before reading last_seq: anything committed later arrives live.
        await hub.join(self.layer, self.group, self)
        self.joined = True
        await self.accept()
        hello, replay = await database_sync_to_async(_connect_snapshot)(access, after)
        await self._send(hello)
        for message in replay:
            await self._send(for_viewer(message, self.viewer))
        self.delivered = hello["last_seq"]
        self.ready = True
        self.backlog_task = asyncio.create_task(self._drain_backlog())

    async def disconnect(self, code: int) -> None:
        if self.backlog_task is not None:
            self.backlog_task.cancel()
        if getattr(self, "joined", False):
            await hub.leave(self.layer, self.group, self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.access is None:
            return
        # Every message counts against the seat's budget; the refusal waits until the message
        # is decoded, so it can carry the message's ref.
        allowed = _bucket(self.access.seat.pk).take()
        raw = text_data if text_data is not None else (bytes_data or b"").decode(errors="replace")
        if not allowed and len(raw) > settings.TABLETOP["MAX_MESSAGE_BYTES"]:
            await self._error(None, "rate-limited", "slow down: too many messages")
            return
        if len(raw.encode()) > settings.TABLETOP["MAX_MESSAGE_BYTES"]:
            await self._error(
                None,
                "too-large",
                f"messages are limited to {settings.TABLETOP['MAX_MESSAGE_BYTES']} bytes",
            )
            return
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError):
            message = None
        if not isinstance(message, dict):
            if not allowed:
                await self._error(None, "rate-limited", "slow down: too many messages")
            else:
                await self._error(None, "invalid", "the message is not a JSON object with a type")
            return
        ref = message.get("ref")
        if ref is not None and (
            not isinstance(ref, (str, int)) or isinstance(ref, bool) or len(str(ref)) > 100
        ):
            await self._error(None, "invalid", "ref: a string or number of at most 100 characters")
            return
        if not allowed:
            await self._error(ref, "rate-limited", "slow down: too many messages")
            return
        kind = message.get("type")
        if kind == "ping":
            await self._send({"type": "pong", "ref": ref, "last_seq": self.delivered})
            return
        handler = actions.HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            await self._error(ref, "unknown-type", f"unknown message type {kind!r}")
            return
        # database_sync_to_async closes stale connections around the call, on the ORM thread.
        outbox: list[tuple[str, dict[str, Any]]] = []
        token = OUTBOX.set(outbox)
        seq = None
        try:
            seq = await database_sync_to_async(_in_time)(
                handler,
                deadline=time.monotonic() + settings.TABLETOP["ACTION_DEADLINE_SECONDS"],
                seat_id=self.access.seat.pk,
                message=message,
            )
        except ServiceError as exc:
            await self._error(ref, exc.code, exc.message, field=exc.field)
        except Exception:
            log.exception("room action %s failed", kind)
            await self._error(
                ref, "server-error", "the table could not do that; nothing was changed"
            )
        finally:
            OUTBOX.reset(token)
        # The sender's copy carries its ref: note it before the event can come back.
        if ref is not None and seq is not None and seq > self.delivered:
            self.refs[seq] = ref
        # Committed events are published from here, not from the ORM thread.
        for group, payload in outbox:
            await hub.publish(self.layer, group, payload)

    async def hub_deliver(self, message: dict[str, Any]) -> None:
        """The room's fast path: the next event in order goes straight out, serialised once for
        the whole room; anything else takes the ordered path through this socket's channel."""
        seq = message["event"]["seq"]
        if self.ready and self.backlog.empty() and seq == self.delivered + 1:
            await self._send_event(message)
        elif (not self.ready or seq > self.delivered) and self.backlog.qsize() < BACKLOG_LIMIT:
            # (past the limit it is dropped here; the next event's gap fill brings it back)
            self.backlog.put_nowait(message)

    async def _drain_backlog(self) -> None:
        while True:
            message = await self.backlog.get()
            try:
                await self.room_event(message)
            except Exception:
                log.exception("ordering an event for a socket failed")

    async def room_event(self, message: dict[str, Any]) -> None:
        event = message["event"]
        seq = event["seq"]
        if seq <= self.delivered:
            return  # already sent (replay, or a gap fill overtook it)
        if seq > self.delivered + 1:
            # The layer dropped or reordered something: the store has it.
            missing = await database_sync_to_async(events_after)(
                session_id=self.access.session.pk,
                after=self.delivered,
                limit=seq - self.delivered - 1,
            )
            for earlier in missing:
                if earlier["seq"] < seq:
                    await self._deliver(earlier)
        await self._send_event(message)

    async def _send_event(self, message: dict[str, Any]) -> None:
        event = message["event"]
        ref = self.refs.pop(event["seq"], None)
        if ref is not None:
            await self._deliver(event, ref=ref)
            return
        visible = can_see(
            visibility=event["visibility"], actor_seat_id=owner_of(event), viewer=self.viewer
        )
        self.delivered = event["seq"]
        # The event's JSON was made once for the whole room; send it as it is.
        await self.send(text_data=message["text"] if visible else message["hidden_text"])

    async def _deliver(self, event: dict[str, Any], *, ref: Any = None) -> None:
        if event["seq"] <= self.delivered:
            return
        out = for_viewer(event, self.viewer)
        if ref is None:
            ref = self.refs.pop(event["seq"], None)
        if ref is not None:
            out = {**out, "ref": ref}
        self.delivered = event["seq"]
        await self._send(out)

    async def _send(self, message: dict[str, Any]) -> None:
        await self.send(text_data=dumps(message))

    async def _error(self, ref: Any, code: str, text: str, *, field: str | None = None) -> None:
        message: dict[str, Any] = {"type": "error", "ref": ref, "code": code, "message": text}
        if field:
            message["field"] = field
        await self._send(message)
