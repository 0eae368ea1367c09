"""One socket's view of the room's events: every seq exactly once, in order, within a budget.

This is the ordering half of the room socket; ``tabletop/consumers.py`` is the transport half
(who is connecting, decoding, sizes, rates). It knows nothing of websockets: it is given a way
to send text, a way to read the event store and a way to ask how much the client has not read
yet, so it can be tested without a socket.

Live events come through the room's hub (at-most-once); any gap is filled from the event store,
which is the record. An event too large to send goes out as a stand-in with the same seq, never
skipped. A client that reads slowly is waited for (its events wait in its backlog, never
holding up the room); one that stops reading is let go (``TooFarBehind``) rather than buffered
without end, and resumes from the store with ``after=`` when it reconnects.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from . import timing
from .selectors.events import Viewer, dumps, for_viewer, sees

log = logging.getLogger(__name__)

BACKLOG_LIMIT = 1000  # events a socket may be behind before it catches up from the store
# A replay reads the store this many events at a time (a few milliseconds of the database
# thread each, ~3 KiB an event), so the other rooms' actions go between its pages.
REPLAY_PAGE = 50
# Daphne cannot send a message over 1 MiB; anything near it goes out as a stand-in.
FRAME_LIMIT = 1024 * 1024
DELIVERABLE = FRAME_LIMIT - 4096  # room for the `ref` the sender's copy carries
# A batched replay's frames: a few tens of events each, so the client draws from the first one
# while the next is on its way.
REPLAY_FRAME = 64 * 1024

SendText = Callable[[str], Awaitable[None]]
FetchAfter = Callable[[int, int], Awaitable[list[dict[str, Any]]]]
Unsent = Callable[[], int | None]


def with_ref(text: str, ref: Any) -> str:
    """The JSON of a message, ``text`` (an object with no ``ref``), with ``ref`` as its last
    key: what ``dumps`` writes for the message with the ref added. The sender's own copy of an
    event is the room's JSON with its ref, not the event encoded once more for it (a roll's
    largest encoding on the event loop after the room's own)."""
    return f'{text[:-1]},"ref":{json.dumps(ref, separators=(",", ":"))}}}'


class TooFarBehind(Exception):
    """The client has not read what was sent to it; more would only grow the server."""

    def __init__(self, unsent: int) -> None:
        super().__init__(f"{unsent} bytes sent but not read")
        self.unsent = unsent


def stand_in(event: dict[str, Any], size: int) -> dict[str, Any]:
    """What a socket gets for an event whose message is too large to send: the same seq, kind,
    actor and visibility, and data saying so, so the seq is never skipped."""
    return {
        **{k: v for k, v in event.items() if k != "data"},
        "data": {
            "too_large": True,
            "bytes": size,
            "message": "this event is too large to show; it is kept in the session's record",
        },
    }


class Delivery:
    """Puts one socket's events in order. ``delivered`` is the last seq sent to it."""

    def __init__(
        self,
        *,
        viewer: Viewer,
        send_text: SendText,
        fetch_after: FetchAfter,
        unsent: Unsent | None = None,
        max_unsent: int = 4 * 1024 * 1024,
        stall_seconds: float = 5.0,
        on_delivered: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.viewer = viewer
        self.send_text = send_text
        self.fetch_after = fetch_after
        self.unsent = unsent or (lambda: None)
        self.max_unsent = max_unsent
        self.stall_seconds = stall_seconds
        # Told of every event once it is sent (the transport closes a removed seat's socket).
        self.on_delivered = on_delivered or (lambda event: None)
        self.delivered = 0
        self.ready = False  # until the replay after hello is sent, live events wait
        self.refs: dict[int, Any] = {}
        self.backlog: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    # --- the socket's own sends -----------------------------------------------------------
    async def send(self, message: dict[str, Any], *, text: str | None = None) -> None:
        """A message to this socket alone (hello, error, pong); ``text``: already as JSON."""
        await self._send_text(dumps(message) if text is None else text)

    def behind(self) -> bool:
        unsent = self.unsent()
        return unsent is not None and unsent > self.max_unsent

    async def _send_text(self, text: str, *, checked: bool = False) -> None:
        """Send, once the client has read enough of what it was sent (``checked``: the caller
        has just found it not behind; this is every live frame's path, asked once)."""
        if not checked and self.behind():
            # Give the client a moment to read what it has (a replay of big events fills the
            # buffer faster than any network drains it); one that does not is let go.
            deadline = time.monotonic() + self.stall_seconds
            while self.behind():
                if time.monotonic() > deadline:
                    raise TooFarBehind(self.unsent() or 0)
                await asyncio.sleep(0.02)
        with timing.span("send"):
            await self.send_text(text)

    def expect(self, seq: int, ref: Any) -> None:
        """The sender's own copy of ``seq`` carries its ref."""
        if ref is not None and seq > self.delivered:
            self.refs[seq] = ref

    # --- events ---------------------------------------------------------------------------
    async def replay(
        self,
        *,
        after: int | None,
        upto: int,
        fetch: FetchAfter | None = None,
        batch: bool = False,
    ) -> None:
        """The events after the client's ``after`` up to ``upto`` (the hello's ``last_seq``),
        read from the store a page at a time and sent as the client reads them; then live
        ones. The database thread is held for one page at a time, never the whole replay, and
        only one page is in memory. ``fetch``: how pages are read (else ``fetch_after``).
        ``batch``: a page's events go many to a frame, ``{"type": "replay", "events": [...]}``
        (the client asked)."""
        read = fetch or self.fetch_after
        if after is not None:
            self.delivered = max(self.delivered, after)
            while self.delivered < upto:
                page = await read(self.delivered, min(REPLAY_PAGE, upto - self.delivered))
                before = self.delivered
                wanted = [event for event in page if event["seq"] <= upto]
                if batch:
                    await self._replay_batched(wanted)
                else:
                    for event in wanted:
                        await self.deliver(event)
                if self.delivered == before:
                    break  # (nothing more stored: a seq the store does not hold)
        self.delivered = max(self.delivered, upto)
        self.ready = True

    async def _replay_batched(self, events: list[dict[str, Any]]) -> None:
        """Each event as ``deliver`` would send it (redacted, a stand-in when too large, its ref),
        joined into frames of up to REPLAY_FRAME characters (one larger event alone)."""
        texts: list[str] = []
        held: list[dict[str, Any]] = []
        size = 0

        async def send() -> None:
            nonlocal size
            if not texts:
                return
            self.delivered = held[-1]["seq"]
            await self._send_text('{"type":"replay","events":[' + ",".join(texts) + "]}")
            for event in held:
                self.on_delivered(event)
            texts.clear()
            held.clear()
            size = 0

        for event in events:
            if event["seq"] <= max(self.delivered, held[-1]["seq"] if held else 0):
                continue
            out = for_viewer(event, self.viewer)
            ref = self.refs.pop(event["seq"], None)
            if ref is not None:
                out = {**out, "ref": ref}
            text = dumps(out)
            if len(text) > DELIVERABLE:
                text = dumps(stand_in(out, len(text)))
            if texts and size + len(text) > REPLAY_FRAME:
                await send()
            texts.append(text)
            held.append(event)
            size += len(text) + 1
        await send()

    async def offer(self, message: dict[str, Any]) -> bool:
        """A live event from the hub. The next one in order goes straight out (its JSON made
        once for the whole room); anything else waits in the backlog to be put in order.
        Answers whether the backlog has something to put in order."""
        seq = message["event"]["seq"]
        # (a socket whose client is behind never holds up the room: its events wait here)
        if self.ready and self.backlog.empty() and seq == self.delivered + 1 and not self.behind():
            await self.send_live(message, checked=True)
            return False
        if (not self.ready or seq > self.delivered) and self.backlog.qsize() < BACKLOG_LIMIT:
            # (past the limit it is dropped here; the next event's gap fill brings it back)
            self.backlog.put_nowait(message)
            return True
        return False

    async def drain(self) -> None:
        """Put backlogged events in order, for as long as the socket lives."""
        while True:
            message = await self.backlog.get()
            try:
                await self.in_order(message)
            except TooFarBehind:
                raise
            except Exception:
                log.exception("ordering an event for a socket failed")

    async def in_order(self, message: dict[str, Any]) -> None:
        event = message["event"]
        seq = event["seq"]
        if seq <= self.delivered:
            return  # already sent (replay, or a gap fill overtook it)
        if seq > self.delivered + 1:
            await self.fill(upto=seq - 1)
        await self.send_live(message)

    async def fill(self, *, upto: int) -> None:
        """Send what the store holds between ``delivered`` and ``upto`` (the layer dropped or
        reordered it, or a Redis outage lost it)."""
        if upto <= self.delivered:
            return
        for earlier in await self.fetch_after(self.delivered, upto - self.delivered):
            if earlier["seq"] <= upto:
                await self.deliver(earlier)

    async def send_live(self, message: dict[str, Any], *, checked: bool = False) -> None:
        event = message["event"]
        ref = self.refs.pop(event["seq"], None)
        seen = sees(event, self.viewer)
        if ref is not None and (not seen or "ref" in event):
            await self.deliver(event, ref=ref)
            return
        text = message["text"] if seen else message["hidden_text"]
        if ref is not None:
            text = with_ref(text, ref)
        if len(text) > DELIVERABLE:
            await self.deliver(event, ref=ref)
            return
        self.delivered = event["seq"]
        await self._send_text(text, checked=checked)
        self.on_delivered(event)

    async def deliver(self, event: dict[str, Any], *, ref: Any = None) -> None:
        if event["seq"] <= self.delivered:
            return
        out = for_viewer(event, self.viewer)
        if ref is None:
            ref = self.refs.pop(event["seq"], None)
        if ref is not None:
            out = {**out, "ref": ref}
        text = dumps(out)
        if len(text) > DELIVERABLE:
            text = dumps(stand_in(out, len(text)))
        self.delivered = event["seq"]
        await self._send_text(text)
        self.on_delivered(event)
