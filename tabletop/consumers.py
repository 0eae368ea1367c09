"""The room socket (docs/protocol.md, "The socket"): the transport half, a thin JSON consumer over
the service layer.

Here: who is connecting (seat, origin), decoding, message sizes and rates, and running actions.
Putting this socket's events in order (every seq exactly once, gaps filled from the store, the
send buffer bounded) is ``tabletop/delivery.py``'s part.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import DatabaseError
from django.utils import translation
from django.utils.translation import gettext as _

from . import outage, timing
from .adapters import LeanWebsocketConsumer
from .arrivals import arrivals, hello_text
from .delivery import Delivery, TooFarBehind
from .hub import hub
from .language import scope_language
from .limits import Buckets, TokenBucket
from .origin import origin_allowed
from .outage import DatabaseAway
from .protocol.commands import Decoded, Refused
from .protocol.wire import ANSWERED_BY_THE_SOCKET, decode, perform, precheck
from .replays import BUSY, replay
from .selectors.events import Viewer, dumps, events_after
from .services.access import Access, seat_cookie_name
from .services.errors import ServiceError
from .services.events import room_group
from .transport import (
    CLOSE_READ_SECONDS,
    BadQuery,
    batched_replay,
    close_with_reason,
    socket_query,
    unsent_bytes,
    wants_notices,
)
from .turns import turns

log = logging.getLogger(__name__)
# Close codes (4000-4999 are the application's): the reason travels with the close frame.
CLOSE_TOO_FAR_BEHIND = 4408
CLOSE_BAD_REQUEST = 4400
CLOSE_FORBIDDEN = 4403
CLOSE_TRY_AGAIN = 4503  # the database is away: try again in a moment


# Per process: messages per seat (shared by that seat's sockets), and work per seat and per
# room, counted in the bytes of the events an action makes (a roll's event weighs what its dice
# cost to draw, send and store).
_buckets = Buckets(0, 0)
_seat_work = Buckets(0, 0)
_room_work = Buckets(0, 0)


# Checks of a message that need no database (a roll's size: parsing its notation, up to a few
# milliseconds for a long one) run here: never on the ORM thread, and on the event loop only
# for a short message: a short notation parses in a fraction of a millisecond (3.5 ms at the
# very worst measured), and the hop to a thread and back cost every roll more than that
# (docs/benchmarks.md, "Many tables, and the most tables").
_prechecks = ThreadPoolExecutor(max_workers=2, thread_name_prefix="precheck")
PRECHECK_ON_THE_LOOP_BYTES = 160

# An action's work on the database thread. Made once: asgiref's wrapper inspects the function
# as it is made (whether it is a coroutine function, a partial, a method), 22 us of the event
# loop's time on every roll when it was made for each.
_perform = database_sync_to_async(perform)


def _configure_buckets() -> None:
    conf = settings.TABLETOP
    for buckets, rate, burst in (
        (_buckets, conf["RATE_PER_SECOND"], conf["RATE_BURST"]),
        (_seat_work, conf["SEAT_WORK_PER_SECOND"], conf["SEAT_WORK_BURST"]),
        (_room_work, conf["ROOM_WORK_PER_SECOND"], conf["ROOM_WORK_BURST"]),
    ):
        buckets.keep_to(rate, burst)


def _bucket(seat_id: int) -> TokenBucket:
    _configure_buckets()
    return _buckets(seat_id)


class RoomConsumer(LeanWebsocketConsumer):
    # No channel of its own: the room's one subscription per process (tabletop/hub.py) hands
    # events over, and what must be put in order waits in this socket's Delivery. A socket
    # costs the channel layer nothing, however many come and go.
    # Channels reads a None alias as "no layer"; its stubs type the attribute as a str only.
    channel_layer_alias = None  # type: ignore[assignment]
    access: Access | None = None
    delivery: Delivery | None = None
    backlog_task: asyncio.Task[None] | None = None
    present = False
    joined = False
    closing: asyncio.Future[None] | None = None
    notices = False  # the socket asked for the table's notices (``notices=1``)
    language: str | None = None

    @property
    def delivered(self) -> int:
        """The last seq this socket was sent (the hub asks, to fill what a room missed)."""
        return self.delivery.delivered if self.delivery is not None and self.delivery.ready else 0

    async def connect(self) -> None:
        code = self.scope["url_route"]["kwargs"]["code"]
        try:
            token, after = socket_query(self.scope)
        except BadQuery:
            await self.close(code=CLOSE_BAD_REQUEST)
            return
        cookies = self.scope.get("cookies", {})
        try:
            with timing.span("access"):
                access = await arrivals.access(
                    code=code,
                    token=token,
                    cookie_token=cookies.get(seat_cookie_name(code)),
                    user=self.scope.get("user"),
                )
        except (DatabaseAway, DatabaseError):
            # Told, not dropped: the page tries again (a refused handshake looks like a ban).
            await self.accept()
            await close_with_reason(self, code=CLOSE_TRY_AGAIN, reason=outage.MESSAGE[:120])
            return
        if access is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        # Cookie and login sockets ride on ambient browser credentials: check where they come from.
        if access.via != "token" and not origin_allowed(self.scope):
            await self.close(code=CLOSE_FORBIDDEN)
            return
        self.access = access
        self.notices = wants_notices(self.scope)
        self.viewer = Viewer(seat_id=access.seat.pk, is_gm=access.seat.is_gm)
        self.group = room_group(access.session.pk)
        session_id = access.session.pk

        async def fetch_after(after: int, limit: int) -> list[dict[str, Any]]:
            return await database_sync_to_async(events_after)(
                session_id=session_id, after=after, limit=limit
            )

        self.delivery = Delivery(
            viewer=self.viewer,
            send_text=self.send_text,
            fetch_after=fetch_after,
            unsent=unsent_bytes(self.scope),
            max_unsent=settings.TABLETOP["SEND_BUFFER_BYTES"],
            stall_seconds=settings.TABLETOP["SEND_STALL_SECONDS"],
            on_delivered=self._on_delivered,
        )
        self.layer = get_channel_layer()
        # Join the room before reading last_seq: anything committed later arrives live.
        await hub.join(self.layer, self.group, self, session_id=session_id)
        self.joined = True
        await self.accept()
        with timing.span("hello"):
            # (the replay is read after it, a page at a time: tabletop/replays.py)
            hello, _ = await arrivals.hello(access, None)
        if not await self._guarded(self._start(self.delivery, access, hello, after)):
            return
        # Presence: one more socket of this seat is open; the room's screens are told.
        self.present = True
        await arrivals.present(access.seat.pk)
        hub.presence_changed(self.layer, self.group, session_id)

    async def _start(
        self, delivery: Delivery, access: Access, hello: dict[str, Any], after: int | None
    ) -> bool:
        await delivery.send(hello, text=hello_text(hello))
        if not await replay(
            delivery,
            session_id=access.session.pk,
            after=after,
            upto=hello["last_seq"],
            batch=batched_replay(self.scope),
        ):
            await self._error(None, "busy", BUSY)
            await close_with_reason(self, code=CLOSE_TRY_AGAIN, reason=BUSY)
            return False
        self.backlog_task = asyncio.create_task(self._guarded(delivery.drain()))
        return True

    async def _guarded(self, work: Any) -> Any:
        """Run this socket's sending; a client too far behind is let go with a reason (what
        was queued for it and not yet on the network is dropped, so the close frame follows
        what it has; one that does not read it within the stall time is dropped)."""
        try:
            return await work
        except TooFarBehind as exc:
            log.warning("closing a socket that stopped reading (%s bytes unsent)", exc.unsent)
            await close_with_reason(
                self,
                code=CLOSE_TOO_FAR_BEHIND,
                reason="too far behind: reconnect with after=<last seq> to catch up",
                drop_queued=CLOSE_READ_SECONDS,
            )
            return None

    async def disconnect(self, code: int) -> None:
        if self.backlog_task is not None:
            self.backlog_task.cancel()
        if self.present and self.access is not None:
            self.present = False
            await arrivals.gone(self.access.seat.pk)
            hub.presence_changed(self.layer, self.group, self.access.session.pk)
        if self.joined:
            self.joined = False
            await hub.leave(self.layer, self.group, self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.access is None:
            return
        # Errors come back in the reader's language (their codes stay the same in every one),
        # chosen once: a socket's cookies and headers are those of its handshake. Every message
        # of a socket is handled in that socket's own task, so the language is made active once
        # in the task's context and stays for the rest (entering and leaving it for each message
        # cost 9 us of the event loop's time a message).
        if self.language is None:
            self.language = scope_language(self.scope)
            translation.activate(self.language)
        await self._guarded(self._receive(self.access, text_data, bytes_data))

    async def _receive(
        self, access: Access, text_data: str | None, bytes_data: bytes | None
    ) -> None:
        # Every message counts against the seat's budget; the refusal waits until the message
        # is decoded, so it can carry the message's ref.
        allowed = _bucket(access.seat.pk).take()
        raw = text_data if text_data is not None else (bytes_data or b"").decode(errors="replace")
        if not allowed and len(raw) > settings.TABLETOP["MAX_MESSAGE_BYTES"]:
            await self._error(None, "rate-limited", _("slow down: too many messages"))
            return
        size = len(raw.encode())
        if size > settings.TABLETOP["MAX_MESSAGE_BYTES"]:
            await self._error(
                None,
                "too-large",
                _("messages are limited to %(bytes)d bytes")
                % {"bytes": settings.TABLETOP["MAX_MESSAGE_BYTES"]},
            )
            return
        # Checked against its declaration here, before any service runs (tabletop/protocol).
        with timing.span("decode"):
            decoded = decode(raw, system=access.session.campaign.system, is_gm=self.viewer.is_gm)
        if not allowed:
            await self._error(decoded.ref, "rate-limited", _("slow down: too many messages"))
            return
        if isinstance(decoded, Refused):
            await self._send(decoded.as_message())
            return
        if decoded.command.type in ANSWERED_BY_THE_SOCKET:
            await self._pong(decoded.ref)
            return
        seat_work, room_work = _seat_work(access.seat.pk), _room_work(self.group)
        if not (seat_work.has_credit() and room_work.has_credit()):
            wait = max(seat_work.wait(), room_work.wait())
            text = (
                _(
                    "this seat has made a lot of heavy changes (many dice) just now; "
                    "try again in %(seconds)d s"
                )
                if not seat_work.has_credit()
                else _(
                    "this table has made a lot of heavy changes (many dice) just now; "
                    "try again in %(seconds)d s"
                )
            )
            await self._error(decoded.ref, "rate-limited", text % {"seconds": max(1, round(wait))})
            return
        if decoded.command.precheck is not None:
            system = access.session.campaign.system
            message = decoded
            if size <= PRECHECK_ON_THE_LOOP_BYTES:
                checked = precheck(message, system=system)
            else:
                # Django's active language is the event loop thread's own, which a copy of the
                # context does not carry to another thread: the refusal is made in the reader's
                # language by naming it there.
                language = translation.get_language()

                def in_language() -> Decoded | Refused:
                    with translation.override(language):
                        return precheck(message, system=system)

                checked = await asyncio.get_running_loop().run_in_executor(_prechecks, in_language)
            if isinstance(checked, Refused):
                await self._send(checked.as_message())
                return
            decoded = checked  # what the handler takes: the precheck's values
        await self._act(access, decoded)

    async def _pong(self, ref: Any) -> None:
        """pong carries the store's last seq as this process last read it (at most a second or
        two old; no database hop for a ping), so a client can tell it is up to date. Anything
        the socket missed is on its way from the store by then (tabletop/hub.py)."""
        stored = hub.last_stored(self.layer, self.group)
        await self._send({"type": "pong", "ref": ref, "last_seq": max(stored, self.delivered)})

    async def _act(self, access: Access, decoded: Decoded) -> None:
        ref = decoded.ref
        seat_id = access.seat.pk
        done = None
        try:
            # database_sync_to_async closes stale connections around the call, on the ORM thread.
            deadline = time.monotonic() + settings.TABLETOP["ACTION_DEADLINE_SECONDS"]
            # The seat that has asked least lately goes to the database thread first.
            done = await turns().run(
                seat_id,
                lambda: _perform(decoded, seat_id=seat_id, deadline=deadline),
            )
        except ServiceError as exc:
            # Work refused after it was done (a roll too large to keep) still counts.
            refused_work = exc.cost
            _seat_work(seat_id).charge(refused_work)
            _room_work(self.group).charge(refused_work)
            await self._error(ref, exc.code, exc.message, field=exc.field)
        except Exception:
            log.exception("room action %s failed", decoded.command.type)
            await self._error(
                ref, "server-error", _("the table could not do that; nothing was changed")
            )
        if done is None:
            return
        # The sender's copy carries its ref: note it before the event can come back.
        if done.seq is not None and self.delivery is not None:
            self.delivery.expect(done.seq, ref)
        # The unit of work's committed events are published from here, not from the ORM thread;
        # what they weigh is charged to the seat's and the room's work budgets.
        work = sum(len(payload["text"]) for payload in done.payloads)
        _seat_work(seat_id).charge(work)
        _room_work(self.group).charge(work)
        for payload in done.payloads:
            await hub.publish(self.layer, self.group, payload)

    def _on_delivered(self, event: dict[str, Any]) -> None:
        """A seat the GM removed loses its sockets once they have been told so."""
        seat_id = self.access.seat.pk if self.access is not None else None
        if event["kind"] == "seat.leave" and (event.get("data") or {}).get("seat") == seat_id:
            self.closing = asyncio.ensure_future(
                close_with_reason(
                    self, code=CLOSE_FORBIDDEN, reason="the GM removed this seat from the table"
                )
            )

    async def hub_deliver(self, message: dict[str, Any]) -> None:
        """The room's fast path: the next event in order goes straight out, serialised once for
        the whole room; anything else waits in this socket's backlog to be put in order."""
        if self.delivery is not None:
            await self._guarded(self.delivery.offer(message))

    async def hub_presence(self, here: list[int], *, text: str = "") -> None:
        """Who is at the table now (the room's notice): ``{"type": "here", "here": [seat ids]}``
        (``text``: that message as JSON, made once for the room)."""
        if self.delivery is not None and self.delivery.ready and self.notices:
            message = {"type": "here", "here": here}
            await self._guarded(self.delivery.send(message, text=text or None))

    async def hub_notice(
        self, notice: dict[str, Any], seats: list[int] | None = None, *, text: str = ""
    ) -> None:
        """A notice to the room (the campaign's next session): sent as it is, after what this
        socket was sent so far; hello comes first, so a socket still opening is not sent it.
        One for ``seats`` (a character's new quick rolls, for the seats playing it) goes to
        them and the GM only, on the sockets that asked for the table's notices."""
        if self.delivery is None or not self.delivery.ready:
            return
        if seats is not None and not (
            self.notices and (self.viewer.is_gm or self.viewer.seat_id in seats)
        ):
            return
        await self._guarded(self.delivery.send(notice, text=text or None))

    async def _send(self, message: dict[str, Any]) -> None:
        if self.delivery is not None:
            await self.delivery.send(message)
        else:
            await self.send_text(dumps(message))

    async def _error(self, ref: Any, code: str, text: str, *, field: str | None = None) -> None:
        message: dict[str, Any] = {"type": "error", "ref": ref, "code": code, "message": text}
        if field:
            message["field"] = field
        await self._send(message)
