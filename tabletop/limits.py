"""Budgets, so one seat, one room or one address cannot take a process's time from the others.

Token buckets kept in each process's memory: a rate a second and a burst. A budget can be
charged by cost, not only by count (a roll costs what its event weighs, so one roll of
thousands of dice counts for as much as thousands of small rolls). Each process keeps its own
buckets: with N processes behind a proxy a client could get up to N times the rate, which is
still bounded.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import OrderedDict
from typing import Any


class TokenBucket:
    """``rate`` a second, bursts of ``burst``. ``take`` refuses once the bucket is empty;
    ``charge`` may leave it in debt, which later takes wait out."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, cost: float = 1) -> bool:
        self._refill()
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False

    def has_credit(self) -> bool:
        self._refill()
        return self.tokens > 0

    def charge(self, cost: float) -> None:
        self._refill()
        self.tokens -= cost

    def wait_for(self, cost: float = 1) -> float:
        """Seconds until ``take(cost)`` would succeed; 0 if it would now."""
        self._refill()
        if self.tokens >= cost:
            return 0.0
        return (cost - self.tokens) / self.rate if self.rate else math.inf

    def wait(self) -> float:
        """Seconds until the bucket is out of debt."""
        return max(0.0, -self.tokens / self.rate) if self.rate else float("inf")


class Buckets:
    """One bucket per key (a seat, a room, an address), the least recently used forgotten past
    ``size`` so a flood of new keys cannot grow the process."""

    def __init__(self, rate: float, burst: float, *, size: int = 10_000) -> None:
        self.rate, self.burst, self.size = rate, burst, size
        self._buckets: OrderedDict[Any, TokenBucket] = OrderedDict()

    def __call__(self, key: Any) -> TokenBucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self.rate, self.burst)
            while len(self._buckets) > self.size:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        return bucket

    def clear(self) -> None:
        self._buckets.clear()

    def keep_to(self, rate: float, burst: float) -> None:
        """Take the budget as the settings give it now (they are read on each use, so a test or
        an operator's change is in force at once): every bucket starts again, full, when it
        changes."""
        if (self.rate, self.burst) != (rate, burst):
            self.rate, self.burst = rate, burst
            self.clear()

    def keep_to_per_minute(self, per_minute: float) -> None:
        """``keep_to`` for a budget of ``per_minute`` a minute, in bursts of as many."""
        self.keep_to(per_minute / 60, per_minute)


class Slots:
    """At most ``size`` of something at once in a process (replays, exports). ``take`` waits
    up to ``wait`` seconds for a free slot, in the event loop, and answers whether it got one;
    whoever got one gives it back with ``give_back``. (Polled rather than an asyncio
    semaphore: a slot is held for seconds, and a semaphore belongs to one event loop.)"""

    def __init__(self, size: int) -> None:
        self.size = size
        self.taken = 0
        self._lock = threading.Lock()  # (synchronous views take slots from their own threads)

    def try_take(self) -> bool:
        with self._lock:
            if self.taken >= self.size:
                return False
            self.taken += 1
            return True

    async def take(self, wait: float) -> bool:
        deadline = time.monotonic() + wait
        while not self.try_take():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    def give_back(self) -> None:
        with self._lock:
            self.taken = max(0, self.taken - 1)
