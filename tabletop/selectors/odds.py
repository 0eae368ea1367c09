"""Exact odds for the room's roll panel, computed off the request path.

An odds computation is pure and can be heavy (seconds of CPU for a large exploding pool), so it
never runs on the process's ORM thread or its event loop: it runs in a small pool of worker
processes, under a time budget, with a cap on how many run or wait at once. Past the budget the
worker stops the computation itself and the answer says the request is too large for exact
odds (a worker that does not answer at all is stopped); past the cap the answer is "busy".
Answers and refusals are remembered by request, so each is computed once per process.
"""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import os
import threading
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from django.conf import settings

from rules.engines import OddsTooLarge, RuleError

from ..odds_worker import compute, watch_server

log = logging.getLogger(__name__)


class OddsBusy(Exception):
    """Too many odds computations are running or waiting in this process."""


class OddsFailed(Exception):
    """The engine could not answer this request (a fault, not a refusal)."""


class _Workers:
    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self.in_flight = 0
        self.cache: OrderedDict[tuple[str, str], tuple[str, str]] = OrderedDict()
        self.slots: dict[int, asyncio.Semaphore] = {}

    def pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # forkserver: the workers do not inherit the server's threads and sockets; the
                # fork server runs below the server in the CPU's queue with the engines loaded
                # (tabletop/odds_forkserver.py), and every worker is a fork of it.
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(["tabletop.odds_forkserver"])
                self._pool = ProcessPoolExecutor(
                    max_workers=settings.TABLETOP["ODDS_WORKERS"],
                    mp_context=context,
                    # A worker ends with this process, even one killed without clean-up.
                    initializer=watch_server,
                    initargs=(os.getpid(),),
                )
            return self._pool

    def restart(self) -> None:
        """Stop every worker (one ran past its budget) and start afresh on the next request."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            for process in list((pool._processes or {}).values()):
                process.kill()
            # (a computation still queued there fails as BrokenProcessPool and is tried again)
            pool.shutdown(wait=False)

    def remember(self, key: tuple[str, str], answer: tuple[str, str]) -> None:
        self.cache[key] = answer
        while len(self.cache) > 2048:
            self.cache.popitem(last=False)


_workers = _Workers()


async def odds_for(*, system_id: str, request: Any) -> dict[str, Any]:
    """The engine's odds answer. RuleError (incl. OddsTooLarge) passes through; OddsBusy when
    the workers are full; OddsFailed when the engine could not answer."""
    key = (system_id, json.dumps(request, sort_keys=True, separators=(",", ":")))
    answer = _workers.cache.get(key)
    if answer is None:
        answer = await _compute(key)
    kind, body = answer
    if kind == "ok":
        return json.loads(body)
    if kind == "too-large":
        raise OddsTooLarge(**json.loads(body))
    if kind == "refused":
        raise RuleError(**json.loads(body))
    raise OddsFailed(body)


def _slots() -> asyncio.Semaphore:
    """One computation per worker at a time, so the time budget counts computing, not waiting."""
    loop = asyncio.get_running_loop()
    slots = _workers.slots.get(id(loop))
    if slots is None:
        slots = _workers.slots[id(loop)] = asyncio.Semaphore(settings.TABLETOP["ODDS_WORKERS"])
    return slots


async def _compute(key: tuple[str, str]) -> tuple[str, str]:
    conf = settings.TABLETOP
    if _workers.in_flight >= conf["ODDS_WORKERS"] + conf["ODDS_WAITING"]:
        raise OddsBusy()
    _workers.in_flight += 1
    try:
        async with _slots():
            for attempt in range(2):
                try:
                    answer = await _run(key, conf["ODDS_SECONDS"])
                except BrokenProcessPool:
                    # Another computation overran and its worker was stopped: once more.
                    if attempt:
                        raise OddsFailed("the odds could not be worked out just now") from None
                    continue
                _workers.remember(key, answer)
                return answer
        raise AssertionError("unreachable")
    finally:
        _workers.in_flight -= 1


# Past a computation's own budget (which the worker keeps itself), how long a worker may take
# to start and answer before it is taken for stuck and stopped.
STARTUP_ALLOWANCE = 20.0


async def _run(key: tuple[str, str], seconds: float) -> tuple[str, str]:
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(_workers.pool(), compute, *key, seconds)
    try:
        return await asyncio.wait_for(future, seconds + STARTUP_ALLOWANCE)
    except TimeoutError:
        log.warning("odds worker for %s did not answer; stopped", key)
        _workers.restart()
        field = "notation" if "notation" in key[1] else "request"
        reason = "too large to work out exact odds in time"
        return "too-large", json.dumps({"field": field, "reason": reason})
    except BrokenProcessPool:
        _workers.restart()
        raise
    except Exception as exc:  # the worker could not be reached: start afresh next time
        log.warning("odds worker failed: %s", exc)
        _workers.restart()
        raise OddsFailed("the odds could not be worked out just now; try again") from None
