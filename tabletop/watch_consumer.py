"""The spectators' socket: ``ws /ws/watch/<watch code>/?after=<seq>``.

The room socket's ordering (``tabletop/delivery.py``) for a viewer with no seat: every event
arrives, hidden ones redacted exactly as to a player with no part in them, and every action is
refused ``forbidden``. Revoking the link closes its sockets at once.

Every refusal is a close code with a reason the page can show (never a refused handshake, which
a browser cannot tell from a network fault): 4403 for an unknown or revoked link, 4429 for a
link with too many sockets open on this process, 4503 for a replay that found no turn in time,
4408 for a spectator that stopped reading."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from .adapters import LeanWebsocketConsumer
from .delivery import Delivery, TooFarBehind
from .hub import hub
from .limits import TokenBucket
from .models import GameSession
from .replays import BUSY, replay
from .selectors.events import events_after
from .selectors.room import room_state
from .services.events import room_group
from .services.watch import (
    SPECTATOR,
    link_group,
    link_is_live,
    watched_session,
    without_invite,
)
from .transport import (
    CLOSE_READ_SECONDS,
    BadQuery,
    batched_replay,
    close_with_reason,
    socket_query,
    unsent_bytes,
)

CLOSE_BAD_REQUEST = 4400
CLOSE_FORBIDDEN = 4403  # an unknown or revoked link
CLOSE_TOO_FAR_BEHIND = 4408
CLOSE_TOO_MANY = 4429  # the link has WATCHERS_PER_LINK sockets open on this process
CLOSE_TRY_AGAIN = 4503  # no turn for the replay in time: try again in a moment
UNKNOWN_LINK = "this watch link is unknown or was revoked"

# Open sockets per watch link, in this process.
_watchers: dict[int, int] = {}


def _snapshot(session: GameSession) -> dict[str, Any]:
    session.refresh_from_db(fields=["last_seq", "status", "ended_at", "table_state", "server_seed"])
    last_seq = session.last_seq
    state = room_state(session=session, viewer=SPECTATOR, last_seq=last_seq)
    return {
        "type": "hello",
        "seat": None,
        "role": "spectator",
        "last_seq": last_seq,
        "state": {**state, "session": without_invite(state["session"])},
    }


class WatchConsumer(LeanWebsocketConsumer):
    # (lean: a frame goes straight to the server, and a message hops to the database thread only
    # for what reads the store, through database_sync_to_async)
    # A channel of its own (unlike a seat's socket): revoking the link reaches it by its group.
    channel_layer_alias = "default"
    delivery: Delivery | None = None
    drain_task: asyncio.Task[None] | None = None
    watching: str | None = None
    counted: int | None = None
    joined = False

    async def _refuse(self, code: int, reason: str) -> None:
        await self.accept()
        await close_with_reason(self, code=code, reason=reason)

    async def connect(self) -> None:
        code = self.scope["url_route"]["kwargs"]["code"]
        try:
            _, after = socket_query(self.scope)
        except BadQuery:
            await self._refuse(CLOSE_BAD_REQUEST, "after= must be a number: the last seq seen")
            return
        found = await database_sync_to_async(watched_session)(code=code)
        if found is None:
            await self._refuse(CLOSE_FORBIDDEN, UNKNOWN_LINK)
            return
        # No Origin check: the link itself is the credential, and it rides on no cookie.
        link, session = found
        cap = settings.TABLETOP["WATCHERS_PER_LINK"]
        if _watchers.get(link.pk, 0) >= cap:
            await self._refuse(
                CLOSE_TOO_MANY,
                f"this watch link has {cap} spectators on this server already; try again later",
            )
            return
        self.counted = link.pk
        _watchers[link.pk] = _watchers.get(link.pk, 0) + 1
        self.session = session
        conf = settings.TABLETOP
        self.bucket = TokenBucket(conf["RATE_PER_SECOND"], conf["RATE_BURST"])
        self.layer = get_channel_layer()
        self.group = room_group(session.pk)
        self.delivery = Delivery(
            viewer=SPECTATOR,
            send_text=self._send_text,
            fetch_after=self._fetch_after,
            unsent=unsent_bytes(self.scope),
            max_unsent=conf["SEND_BUFFER_BYTES"],
            stall_seconds=conf["SEND_STALL_SECONDS"],
        )
        self.watching = link_group(link.pk)
        await self.channel_layer.group_add(self.watching, self.channel_name)
        # A revocation between the lookup and joining the link's group would not reach this
        # socket: look again now that it would.
        if not await database_sync_to_async(link_is_live)(link_id=link.pk):
            await self._refuse(CLOSE_FORBIDDEN, UNKNOWN_LINK)
            return
        # Join the room before reading last_seq: anything committed later arrives live.
        await hub.join(self.layer, self.group, self, session_id=session.pk)
        self.joined = True
        await self.accept()
        hello = await database_sync_to_async(_snapshot)(session)
        try:
            await self.delivery.send(hello)
            if not await replay(
                self.delivery,
                session_id=self.session.pk,
                after=after,
                upto=hello["last_seq"],
                batch=batched_replay(self.scope),
            ):
                await self._error(None, "busy", BUSY)
                await close_with_reason(self, code=CLOSE_TRY_AGAIN, reason=BUSY)
                return
        except TooFarBehind:
            await self._let_go()
            return
        self.drain_task = asyncio.create_task(self._drain(self.delivery))

    @property
    def delivered(self) -> int:
        """The last seq sent in order (0 until the replay is out): the room's hub asks."""
        return self.delivery.delivered if self.delivery is not None and self.delivery.ready else 0

    async def _let_go(self) -> None:
        # What was queued and not yet handed to the network is dropped, so the close frame
        # comes right after what the client was already sent: a client that reads again
        # within CLOSE_READ_SECONDS reads 4408 and its reason (one that never does is dropped).
        await close_with_reason(
            self,
            code=CLOSE_TOO_FAR_BEHIND,
            reason="too far behind: reconnect with after=<last seq> to catch up",
            drop_queued=CLOSE_READ_SECONDS,
        )

    async def _send_text(self, text: str) -> None:
        await self.send_text(text)

    async def _fetch_after(self, after: int, limit: int) -> list[dict[str, Any]]:
        return await database_sync_to_async(events_after)(
            session_id=self.session.pk, after=after, limit=limit
        )

    async def _drain(self, delivery: Delivery) -> None:
        try:
            await delivery.drain()
        except TooFarBehind:
            await self._let_go()

    async def hub_deliver(self, message: dict[str, Any]) -> None:
        if self.delivery is None:
            return
        try:
            await self.delivery.offer(message)
        except TooFarBehind:
            await self._let_go()

    async def hub_notice(
        self, notice: dict[str, Any], seats: list[int] | None = None, *, text: str = ""
    ) -> None:
        """Notices lead players on to the campaign's next session; a watch link shows its own
        session only (the next one has watch links of its own)."""

    async def disconnect(self, code: int) -> None:
        if self.counted is not None:
            left = _watchers.get(self.counted, 1) - 1
            if left > 0:
                _watchers[self.counted] = left
            else:
                _watchers.pop(self.counted, None)
            self.counted = None
        if self.drain_task is not None:
            self.drain_task.cancel()
        if self.watching is not None:
            await self.channel_layer.group_discard(self.watching, self.channel_name)
        if self.joined:
            await hub.leave(self.layer, self.group, self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.delivery is None:
            return
        allowed = self.bucket.take()
        raw = text_data if text_data is not None else (bytes_data or b"").decode(errors="replace")
        message: Any = None
        if len(raw) <= settings.TABLETOP["MAX_MESSAGE_BYTES"]:
            try:
                message = json.loads(raw)
            except (ValueError, RecursionError):
                message = None
        ref = message.get("ref") if isinstance(message, dict) else None
        if ref is not None and (
            not isinstance(ref, (str, int)) or isinstance(ref, bool) or len(str(ref)) > 100
        ):
            ref = None
        try:
            if not allowed:
                await self._error(ref, "rate-limited", "slow down: too many messages")
            elif not isinstance(message, dict):
                await self._error(None, "invalid", "the message is not a JSON object with a type")
            elif message.get("type") == "ping":
                pong = {"type": "pong", "ref": ref, "last_seq": self.delivery.delivered}
                await self.delivery.send(pong)
            else:
                await self._error(ref, "forbidden", "spectators watch the table; they cannot act")
        except TooFarBehind:
            await self._let_go()

    async def _error(self, ref: Any, code: str, text: str) -> None:
        assert self.delivery is not None
        await self.delivery.send({"type": "error", "ref": ref, "code": code, "message": text})

    async def watch_revoked(self, message: dict[str, Any]) -> None:
        if self.delivery is not None:
            await self._error(None, "forbidden", "this watch link was revoked")
        await close_with_reason(self, code=CLOSE_FORBIDDEN, reason="this watch link was revoked")
