"""Whose action goes to the database thread next: the seat that has asked least lately.

Every socket action of a process runs on its one database thread, first come first served.
When one room is flooded (dozens of seats rolling as fast as they can), the thread's queue
fills with their rolls and a bystander's roll waits behind all of them: 575-740 ms at the
99th percentile on two processes (docs/benchmarks.md, "One busy room"). Here the actions wait
in the event loop instead. A seat asking for the first time in a second or two goes to the
thread at once; the seats asking more often wait their turn, the one that has asked least
lately first, with at most ``in_flight`` of theirs on the thread at a time (one running, the
others ready so the thread rarely idles while the event loop is busy;
``TABLETOP["ACTIONS_IN_FLIGHT"]``, 4: with 1 a flooded room delivered two fifths less, with 2 a
fifth less, docs/benchmarks.md). A bystander's roll waits behind a few of the flood's at most;
the flooding seats take turns among themselves, slowed rather than the table.

Nothing changes for a table that plays: every seat rolling at once (a whole table rolling
initiative) goes to the thread together, and with nobody waiting an action never waits here.
Each seat's own actions keep their order (a socket waits for one before sending the next).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from django.conf import settings

T = TypeVar("T")

# How fast a seat's count of recent asks fades: it halves in about 0.7 s (e^-1 a second).
FADE_SECONDS = 1.0
# A seat asking for the first time in a second or two goes to the thread at once (a count of
# 1, plus what is left of older asks); the others wait their turn. Not more: in a flooded room
# of forty seats each seat's own rate falls to 2-3 a second as the server is shared among
# them, and a threshold of 3 let most of the flood past the turns (bystander p99 0.8-0.9 s).
LIGHT = 1.25


class Turns:
    """Fair turns for one event loop's database work, keyed by seat."""

    def __init__(self, *, in_flight: int = 4, remember: int = 10_000) -> None:
        self.in_flight = in_flight
        self.remember = remember
        self._running = 0
        self._waiting: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._asked: dict[Any, tuple[float, float]] = {}  # key -> (recent asks, when counted)

    def _ask(self, key: Any) -> float:
        """Count one more ask of ``key``; how many it has made lately, this one included."""
        now = time.monotonic()
        recent, then = self._asked.pop(key, (0.0, now))
        recent = recent * math.exp((then - now) / FADE_SECONDS) + 1.0
        self._asked[key] = (recent, now)  # (re-inserted: the dict keeps the latest last)
        if len(self._asked) > self.remember:
            self._asked.pop(next(iter(self._asked)))
        return recent

    async def run(self, key: Any, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work`` (an awaitable using the database thread) when it is ``key``'s turn."""
        priority = self._ask(key)
        if priority <= LIGHT:
            # A seat that asks now and then never waits here: a whole table rolling at once
            # (each seat once) goes to the thread together, as before there were turns.
            return await work()
        if self._running >= self.in_flight or self._waiting:
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiting, (priority, next(self._order), turn))
            try:
                await turn
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():  # its turn came as it went: hand it on
                    self._running -= 1
                    self._next()
                raise
        else:
            self._running += 1
        try:
            return await work()
        finally:
            self._running -= 1
            self._next()

    def _next(self) -> None:
        while self._waiting and self._running < self.in_flight:
            _, _, turn = heapq.heappop(self._waiting)
            if turn.done():  # its socket went away
                continue
            self._running += 1
            turn.set_result(None)


_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Turns] = weakref.WeakKeyDictionary()


def turns() -> Turns:
    """The running event loop's turns (tests run a loop each)."""
    loop = asyncio.get_running_loop()
    found = _turns.get(loop)
    if found is None:
        found = _turns[loop] = Turns(in_flight=settings.TABLETOP["ACTIONS_IN_FLIGHT"])
    return found
