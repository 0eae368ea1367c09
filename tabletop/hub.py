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
from there, and an event dropped here as already passed is never lost.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

log = logging.getLogger(__name__)


class Member(Protocol):
    async def hub_deliver(self, message: dict[str, Any]) -> None: ...


class _Room:
    def __init__(self, layer: Any, group: str) -> None:
        self.layer = layer
        self.group = group
        self.members: set[Member] = set()
        self.channel = ""
        self.started = asyncio.Event()
        self.pump_task: asyncio.Task[None] | None = None
        self.passed = 0  # the highest seq handed to the members

    async def dispatch(self, message: dict[str, Any]) -> None:
        seq = message["event"]["seq"]
        if seq <= self.passed:
            return  # already handed over (this process committed it, or a later one came first)
        self.passed = seq
        for member in list(self.members):
            try:
                await member.hub_deliver(message)
            except Exception:  # one broken socket must not stop the room
                log.exception("delivering to a socket failed")

    async def start(self) -> None:
        self.channel = await self.layer.new_channel("room-hub.")
        await self.layer.group_add(self.group, self.channel)
        self.pump_task = asyncio.create_task(self._pump())
        self.started.set()

    async def stop(self) -> None:
        await self.layer.group_discard(self.group, self.channel)
        if self.pump_task is not None:
            self.pump_task.cancel()

    async def _pump(self) -> None:
        while True:
            await self.dispatch(await self.layer.receive(self.channel))


class RoomHub:
    def __init__(self) -> None:
        self._rooms: dict[tuple[int, int, str], _Room] = {}

    @staticmethod
    def _key(layer: Any, group: str) -> tuple[int, int, str]:
        # Per event loop too: a room's pump lives on the loop that started it.
        return (id(layer), id(asyncio.get_running_loop()), group)

    async def join(self, layer: Any, group: str, member: Member) -> None:
        key = self._key(layer, group)
        room = self._rooms.get(key)
        if room is None:
            room = self._rooms[key] = _Room(layer, group)
            room.members.add(member)
            await room.start()
        else:
            room.members.add(member)
            await room.started.wait()

    async def publish(self, layer: Any, group: str, message: dict[str, Any]) -> None:
        """Send a committed event to the room: to the other processes through the layer first
        (so they start at once), then to this process's sockets without the round trip."""
        try:
            await layer.group_send(group, message)
        except Exception:  # the event is stored: the others fill the gap from the store
            log.exception("publishing an event to the room's other processes failed")
        room = self._rooms.get(self._key(layer, group))
        if room is not None:
            await room.dispatch(message)

    async def leave(self, layer: Any, group: str, member: Member) -> None:
        key = self._key(layer, group)
        room = self._rooms.get(key)
        if room is None:
            return
        room.members.discard(member)
        if not room.members:
            del self._rooms[key]
            await room.stop()


hub = RoomHub()
