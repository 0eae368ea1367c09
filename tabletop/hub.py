"""Process-local fan-out: one channel-layer subscription per room per process.

A room of 200 sockets on one process would otherwise cost 200 channel-layer deliveries per
event (with the in-memory layer, each one a deep copy and a sweep of every channel). Instead,
each process subscribes one channel per room to the room's group and hands every event to its
own sockets directly, in order. A socket that is not ready for an event in order (still
replaying, or behind after a gap) gets it through its own channel instead, where it is put in
order from the event store; see ``RoomConsumer.hub_deliver``.

The process that commits an event hands it to its own sockets at once (``publish``) rather than
waiting for it to come back through the channel layer; the layer's copy, arriving later, is
dropped by its seq. Every seq below a committed one is in the store (seqs are taken under the
session row's lock, in commit order), so a socket that sees a later event first fills the gap
from there, and an event dropped here as already passed is never lost. A room whose next event
is overtaken by a later one (another process's) holds the later one a moment for it
(``REORDER_SECONDS``), so that its sockets seldom have a gap to fill.

A process sends its events through the layer only while another process has the room. Behind
the proxy a room's sockets are all on one process, and every roll's copy through Redis came
back only to this process, to be dropped: a ``PUBLISH`` and its echo, 0.6 ms of the process's
time a roll. So each process's room says it is there (``room.peer``: as it subscribes, then
every ``PEER_ANNOUNCE_SECONDS``, and goodbye as it goes), a room that hears of another answers
it once, and a room publishes while it knows of another that has spoken within
``PEER_SECONDS`` (and for ``PEER_GRACE_SECONDS`` after it subscribed, before any has answered).
An event committed in the moment before a process hears that another has just subscribed
reaches that one's sockets from the store, like any event the layer lost; a room that had to
fill from the store says it is there again at once.

Faults heal here too. A room's subscription is retried until the channel layer answers (a
room whose first socket arrives while Redis is down starts once it is back), and each process
watches the store: a room whose last stored seq stays ahead of what its sockets were handed
(an event published while Redis was away is lost, at-most-once) is filled from the store, so
every socket learns of it within a second or two.
"""

from __future__ import annotations

import asyncio
import logging
import time
import zlib
from typing import Any, Protocol

from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer
from django.conf import settings

from . import timing
from .selectors.events import dumps, events_after, last_seqs
from .services.events import message_payload

log = logging.getLogger(__name__)

FILL_LIMIT = 1000  # events a room fills from the store at once; sockets fill the rest
# How long a room holds an event that came before the one ahead of it, waiting for that one:
# a room spread over processes sees another process's event overtake this process's own (on
# its way from the database thread) or the layer's copy of an earlier one. Handed over at once,
# every socket of the room read the gap from the store: three rounds of a room's 200 sockets
# rolling at once, over two processes, made 7,100 reads of the store (docs/benchmarks.md). The
# missing one is nearly always late, not lost (it committed first: seqs are taken in commit
# order), and in that burst up to a few hundred ms late: held 50 ms, 1,800-5,900 reads; held
# 500 ms, 200-300. One that was lost (the layer dropped it) reaches the sockets this much
# later, from the store.
REORDER_SECONDS = 0.5
REORDER_LIMIT = 256  # events held at most; past it, they go on and the sockets fill the gaps


# Another process's room is taken to be there this long after it last said so; each room says
# so this often (and as it subscribes, and answering a room it had not heard of).
PEER = "room.peer"  # the channel-layer type of "this process has the room" (not an event)
PEER_SECONDS = 150.0
PEER_ANNOUNCE_SECONDS = 60.0
PEER_GRACE_SECONDS = 2.0  # a room just subscribed publishes while the others answer
# A room waits this long for the layer to take its announcement (never the store watch or the
# room's pump: those send it in a task of their own); one that failed is tried again this soon.
PEER_SEND_SECONDS = 1.0
PEER_RETRY_SECONDS = 1.0

PRESENCE_DELAY = 0.15  # seconds: sockets that come or go together make one notice
PRESENCE = "room.presence"  # the channel-layer type of a "who is here" notice (not an event)
NOTICE = "room.notice"  # another change that is not an event (services/notices.py, sheets)


class Member(Protocol):
    @property
    def delivered(self) -> int: ...

    async def hub_deliver(self, message: dict[str, Any]) -> None: ...

    async def hub_notice(
        self, notice: dict[str, Any], seats: list[int] | None = None, *, text: str = ""
    ) -> None: ...


def _seats_here(session_id: int) -> list[int]:
    from .services.presence import seats_here

    return seats_here(session_id=session_id)


def _stored_payloads(session_id: int, after: int, upto: int) -> list[dict[str, Any]]:

    limit = min(upto - after, FILL_LIMIT)
    events = events_after(session_id=session_id, after=after, limit=limit)
    return [message_payload(m) for m in events]


class _Room:
    def __init__(self, layer: Any, group: str, session_id: int | None) -> None:
        self.layer = layer
        self.group = group
        self.session_id = session_id
        self.members: set[Member] = set()
        self.channel = ""
        self.started = asyncio.Event()
        self.stopped = False
        self.start_task: asyncio.Task[None] | None = None
        self.pump_task: asyncio.Task[None] | None = None
        self.passed = 0  # the highest seq handed to the members
        self.held: dict[int, dict[str, Any]] = {}  # seq -> an event ahead of a missing one
        self.release_task: asyncio.Task[None] | None = None
        self.lagging = 0  # a stored seq the room had not been handed at the last watch
        self.stored = 0  # the last stored seq, as the last watch read it
        # Other processes' rooms of this group (their channels), each until when it is taken to
        # be there; and until when this room publishes anyway (just subscribed).
        self.peers: dict[str, float] = {}
        self.grace_until = 0.0
        self.next_announce = 0.0  # when this room says again that it is here
        self.announce_task: asyncio.Task[None] | None = None
        # Only a layer between processes has other processes' rooms to hear or tell.
        self.between_processes = reaches_other_processes(layer)

    def has_peers(self) -> bool:
        """Whether another process may have this room: its events go through the layer. A room
        not subscribed yet (the layer slow or away) has not heard from the others: it sends."""
        if not self.started.is_set():
            return True
        now = time.monotonic()
        return now < self.grace_until or any(until > now for until in self.peers.values())

    async def announce(self, *, here: bool = True) -> None:
        """Tell the other processes' rooms of this group that this one is here (or going)."""
        # Again in a half to a whole PEER_ANNOUNCE_SECONDS, by the channel's random name: rooms
        # that opened together (a process's rooms after a restart) do not speak together.
        spread = 0.5 + (zlib.crc32(self.channel.encode()) % 1000) / 2000
        self.next_announce = time.monotonic() + PEER_ANNOUNCE_SECONDS * spread
        message = {
            "type": PEER,
            "channel": self.channel,
            "here": here,
            # Seq 0 is no event (seqs start at 1): a process of an earlier version, which knows
            # no room.peer, drops this as an event already handed over.
            "event": {"seq": 0},
        }
        try:
            await asyncio.wait_for(self.layer.group_send(self.group, message), PEER_SEND_SECONDS)
        except Exception as exc:  # the layer is away, or lost it: try again in a moment
            self.next_announce = time.monotonic() + PEER_RETRY_SECONDS
            log.warning("room %s could not tell the other processes (%s)", self.group, exc)

    def announce_soon(self) -> None:
        """``announce`` in a task of its own, so that the caller does not wait for the layer."""
        if self.announce_task is None or self.announce_task.done():
            self.announce_task = asyncio.create_task(self.announce())

    def heard(self, message: dict[str, Any]) -> None:
        """Another process's room is here (or going); one not heard of before is answered, so
        that it knows of this one too."""
        channel = message.get("channel")
        if not isinstance(channel, str) or not channel or channel == self.channel:
            return  # (this room's own, back through the layer)
        if not message.get("here", True):
            self.peers.pop(channel, None)
            return
        now = time.monotonic()
        new = self.peers.get(channel, 0.0) <= now
        self.peers[channel] = now + PEER_SECONDS
        if new:
            self.announce_soon()

    def keep_peers(self) -> None:
        """Say again that this room is here, about every ``PEER_ANNOUNCE_SECONDS``; forget rooms
        not heard from within ``PEER_SECONDS`` (a process killed without a goodbye). The store
        watch asks every room each time round; a room that is not subscribed does nothing."""
        if not self.between_processes or not self.started.is_set() or self.stopped:
            return
        now = time.monotonic()
        self.peers = {channel: until for channel, until in self.peers.items() if until > now}
        if now >= self.next_announce:
            self.announce_soon()

    async def dispatch(self, message: dict[str, Any]) -> None:
        if message.get("type") == PEER:
            self.heard(message)
            return
        if message.get("type") == PRESENCE:
            await self.tell_presence(message["here"])
            return
        if message.get("type") == NOTICE:
            # Not an event (services/notices.py): no seq, nothing to put in order or fill.
            await self.tell_notice(message["notice"], message.get("seats"))
            return
        event = message.get("event")
        if not isinstance(event, dict) or not isinstance(event.get("seq"), int):
            return  # (nothing this version knows: a later version's message)
        seq = event["seq"]
        if seq <= self.passed:
            return  # already handed over (this process committed it, or a later one came first)
        if self.passed and seq > self.passed + 1 and len(self.held) < REORDER_LIMIT:
            # The one before it is most likely a moment behind: wait for it (``REORDER_SECONDS``)
            # rather than have every socket read it from the store.
            self.held[seq] = message
            if self.release_task is None:
                self.release_task = asyncio.create_task(self._release_held())
            return
        await self._hand_over(message)
        while self.passed + 1 in self.held:  # what was waiting for it, in order
            await self._hand_over(self.held.pop(self.passed + 1))

    async def _hand_over(self, message: dict[str, Any]) -> None:
        seq = message["event"]["seq"]
        if seq <= self.passed:
            return
        self.passed = seq
        with timing.span("fanout"):
            for member in list(self.members):
                try:
                    await member.hub_deliver(message)
                except Exception:  # one broken socket must not stop the room
                    log.exception("delivering to a socket failed")

    async def _release_held(self) -> None:
        """Hand over what is still held once the wait is over, in order: what is still
        missing before it, each socket fills from the store (it was lost, not late)."""
        await asyncio.sleep(REORDER_SECONDS)
        self.release_task = None
        while self.held:
            await self._hand_over(self.held.pop(min(self.held)))

    async def tell_presence(self, here: list[int]) -> None:
        """Who is here now, to the sockets that show it (the seats' rooms; spectators are not
        told): the same message to each, its JSON made once."""
        text = dumps({"type": "here", "here": here})
        for member in list(self.members):
            tell = getattr(member, "hub_presence", None)
            if tell is None:
                continue
            try:
                await tell(here, text=text)
            except Exception:  # one broken socket must not stop the room
                log.exception("telling a socket who is here failed")

    async def tell_notice(self, notice: dict[str, Any], seats: list[int] | None) -> None:
        """A notice to every socket of the room (``seats``: for those seats and the GM), its JSON
        made once."""
        text = dumps(notice)
        for member in list(self.members):
            try:
                await member.hub_notice(notice, seats, text=text)
            except Exception:  # one broken socket must not stop the room
                log.exception("sending a notice to a socket failed")

    async def start(self) -> None:
        """Subscribe to the room's group, retrying while the channel layer is away."""
        delay = 0.1
        while not self.stopped:
            try:
                if not self.channel:
                    self.channel = await self.layer.new_channel("room-hub.")
                await self.layer.group_add(self.group, self.channel)
            except Exception as exc:
                log.warning("room %s cannot subscribe yet (%s); retrying", self.group, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
                continue
            self.pump_task = asyncio.create_task(self._pump())
            if self.between_processes:
                # Before the room's first socket reads where the room stands: a process that
                # commits an event after hearing this sends it here.
                self.grace_until = time.monotonic() + PEER_GRACE_SECONDS
                await self.announce()
            self.started.set()
            return

    async def stop(self) -> None:
        self.stopped = True
        self.held.clear()
        for task in (self.start_task, self.pump_task, self.release_task, self.announce_task):
            if task is not None:
                task.cancel()
        if self.started.is_set():
            if self.between_processes:
                await self.announce(here=False)
            try:
                await self.layer.group_discard(self.group, self.channel)
            except Exception:  # the layer is away: its subscription goes with the process
                log.warning("room %s could not unsubscribe", self.group)

    async def _pump(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the layer is away: wait for it, the watch fills gaps
                log.warning("room %s lost its channel layer (%s)", self.group, exc)
                await asyncio.sleep(0.5)
                continue
            try:
                await self.dispatch(message)
            except asyncio.CancelledError:
                raise
            except Exception:  # one message must not end the room's subscription
                log.exception("room %s could not take a message from the layer", self.group)

    async def catch_up(self, stored: int) -> None:
        """The store holds ``stored``: hand over what this room was never handed."""
        self.stored = stored
        ready = [m.delivered for m in self.members if m.delivered]
        base = max([self.passed, *([min(ready)] if ready else [])])
        if stored <= base:
            self.passed = max(self.passed, stored)
            self.lagging = 0
            return
        if not self.lagging or base >= self.lagging:
            # Behind now: maybe only the live copy is still on its way. Look again next time;
            # what was stored by then and is still not handed over is missing, even in a room
            # whose store moves on between two looks.
            self.lagging = stored
            return
        self.lagging = 0
        if not ready or self.session_id is None:
            return
        payloads = await database_sync_to_async(_stored_payloads)(self.session_id, base, stored)
        log.warning("room %s filled %d events from the store", self.group, len(payloads))
        if self.between_processes:
            # Maybe a process that does not know of this room (it missed its announcement):
            # saying so again makes it send its events here.
            self.announce_soon()
        # The sockets have everything up to ``base`` (their own replays): the fill follows on
        # from there, not from what the room was handed, so none of it is held for a gap.
        self.passed = max(self.passed, base)
        for payload in payloads:
            await self.dispatch(payload)


class RoomHub:
    def __init__(self) -> None:
        self._rooms: dict[tuple[int, int, str], _Room] = {}
        self._watches: dict[int, asyncio.Task[None]] = {}
        # Rooms whose presence changed and the task telling it (per event loop and room).
        self._presence_due: set[tuple[int, int, str]] = set()
        self._presence: dict[tuple[int, int, str], asyncio.Task[None]] = {}
        # How many event loops of this process have each (layer, group) room: ``_elsewhere``
        # asks on every publish, and a scan of every room of the process cost each roll a
        # share that grew with the rooms (11 % of the event loop's work at 200 rooms).
        self._loops: dict[tuple[int, str], int] = {}

    @staticmethod
    def _key(layer: Any, group: str) -> tuple[int, int, str]:
        # Per event loop too: a room's pump lives on the loop that started it.
        return (id(layer), id(asyncio.get_running_loop()), group)

    async def join(
        self, layer: Any, group: str, member: Member, *, session_id: int | None = None
    ) -> None:
        """Add a socket to the room, subscribing the room if it is new here. Waits a moment
        for the subscription, never longer: while the layer is away the room's watch fills
        what the socket misses."""
        key = self._key(layer, group)
        room = self._rooms.get(key)
        if room is None:
            room = self._rooms[key] = _Room(layer, group, session_id)
            self._loops[key[0], group] = self._loops.get((key[0], group), 0) + 1
            room.start_task = asyncio.create_task(room.start())
        room.members.add(member)
        if session_id is not None:
            self._watch()
        if not room.started.is_set():
            try:
                await asyncio.wait_for(asyncio.shield(room.started.wait()), _wait_for_layer())
            except TimeoutError:
                log.warning("room %s: a socket joins before its subscription is up", group)

    async def publish(self, layer: Any, group: str, message: dict[str, Any]) -> None:
        """Send a committed event to the room: to this process's sockets first, without the
        round trip, then to the other processes through the layer. Behind the proxy a room's
        sockets are all on one process (docs/operations.md): its screens do not wait for the
        layer's answer (a round trip to Redis on every roll), only the rare socket elsewhere (a
        spectator, a room spread by a plain balancer) waits for this process's frames."""
        room = self._rooms.get(self._key(layer, group))
        if room is not None:
            await room.dispatch(message)
        if self._elsewhere(layer, group):
            try:
                await layer.group_send(group, message)
            except Exception:  # the event is stored: the others fill the gap from the store
                log.exception("publishing an event to the room's other processes failed")

    def presence_changed(self, layer: Any, group: str, session_id: int) -> None:
        """A socket of the room opened or closed: tell every screen of the room, in every
        process, who is here now, pushed (not polled) and never recorded as an event. Changes
        that come together (a room reconnecting at once) make one read and one notice."""
        key = self._key(layer, group)
        self._presence_due.add(key)
        task = self._presence.get(key)
        if task is None or task.done():
            self._presence[key] = asyncio.create_task(
                self._tell_presence(key, layer, group, session_id)
            )

    async def _tell_presence(
        self, key: tuple[int, int, str], layer: Any, group: str, session_id: int
    ) -> None:
        try:
            while key in self._presence_due:
                await asyncio.sleep(PRESENCE_DELAY)
                self._presence_due.discard(key)  # a change from here on is told again
                try:
                    here = await database_sync_to_async(_seats_here)(session_id)
                except Exception:  # the database is away: the next change tells it
                    log.warning("room %s: who is here could not be read", group)
                    continue
                message = {"type": PRESENCE, "here": here}
                if self._elsewhere(layer, group):
                    try:
                        # The layer brings it back to this process's sockets too (once).
                        await layer.group_send(group, message)
                        continue
                    except Exception:  # the layer is away: the others hear the next change
                        log.warning("room %s: who is here could not be told elsewhere", group)
                room = self._rooms.get(key)
                if room is not None:
                    await room.tell_presence(here)
        finally:
            if self._presence.get(key) is asyncio.current_task():
                del self._presence[key]

    def _elsewhere(self, layer: Any, group: str) -> bool:
        """Whether the room may have sockets the layer reaches and this event loop does not.
        An in-memory layer reaches this process only: when no other event loop here has the
        room (the table's defaults: one process, one loop), the layer's copy would only come
        back to this room to be dropped by its seq, after a deep copy of the event and a turn
        of the event loop that every socket of the room waits for. A layer between processes:
        while another process's room has said it is here (``room.peer``), or this process
        does not have the room."""
        room = self._rooms.get(self._key(layer, group))
        if room is None:
            return True
        if room.between_processes:
            return room.has_peers()
        return self._loops[id(layer), group] > 1

    def last_stored(self, layer: Any, group: str) -> int:
        """The room's last seq: the store's, as last read here, or the last handed over."""
        room = self._rooms.get(self._key(layer, group))
        return max(room.stored, room.passed) if room is not None else 0

    async def leave(self, layer: Any, group: str, member: Member) -> None:
        key = self._key(layer, group)
        room = self._rooms.get(key)
        if room is None:
            return
        room.members.discard(member)
        if not room.members:
            del self._rooms[key]
            left = self._loops.pop((key[0], group), 1) - 1
            if left:
                self._loops[key[0], group] = left
            await room.stop()

    def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        task = self._watches.get(id(loop))
        if task is None or task.done():
            self._watches[id(loop)] = loop.create_task(self._watch_store(loop))

    async def _watch_store(self, loop: asyncio.AbstractEventLoop) -> None:
        """Every second, compare each room's last stored seq with what it was handed."""
        try:
            while True:
                await asyncio.sleep(settings.TABLETOP["STORE_WATCH_SECONDS"])
                rooms = [
                    r
                    for k, r in list(self._rooms.items())
                    if k[1] == id(loop) and r.session_id is not None
                ]
                if not rooms:
                    return
                session_ids = [r.session_id for r in rooms if r.session_id is not None]
                try:
                    for room in rooms:
                        room.keep_peers()
                    stored = await database_sync_to_async(last_seqs)(session_ids=session_ids)
                    for room in rooms:
                        if room.session_id in stored:
                            await room.catch_up(stored[room.session_id])
                except Exception:  # the database is away: look again next time
                    log.exception("watching the rooms' stored events failed")
        finally:
            if self._watches.get(id(loop)) is asyncio.current_task():
                del self._watches[id(loop)]


def reaches_other_processes(layer: Any) -> bool:
    """Whether the channel layer carries messages between processes (Redis), not only within
    this one (the in-memory layer)."""
    return not isinstance(layer, InMemoryChannelLayer)


def _wait_for_layer() -> float:
    return settings.TABLETOP["LAYER_WAIT_SECONDS"]


hub = RoomHub()
