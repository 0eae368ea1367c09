"""The timing loop shared by both sides of the dice-roller comparison.

Standard library only: ``engines.py`` runs it in-process for our engines, and
``d20_worker.py`` runs the very same code under the d20 virtualenv, so both sides are
measured by one loop with the same overhead per call.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from time import perf_counter, process_time

# Calls between two looks at the clock: small enough that a slow call (a few ms) cannot
# overshoot the time box by much, large enough that reading the clock costs next to nothing.
BATCH = 8


def rate(call: Callable[[int], float], duration: float, *, first: int = 0) -> dict[str, float]:
    """Call ``call(i)`` for i = first, first + 1, ... until ``duration`` seconds have passed.

    ``call`` returns a number (the roll's total, or whatever the caller wants averaged);
    the mean and variance of those numbers come back with the rate, so the two libraries can
    be checked to have rolled the same thing.
    """
    i = first
    total = 0.0
    squares = 0.0
    cpu = process_time()
    start = perf_counter()
    end = start + duration
    while True:
        for _ in range(BATCH):
            v = call(i)
            i += 1
            total += v
            squares += v * v
        now = perf_counter()
        if now >= end:
            break
    cpu = process_time() - cpu
    n = i - first
    elapsed = now - start
    mean = total / n
    return {
        "calls": n,
        "seconds": elapsed,
        "per_second": n / elapsed,
        # Below 1.0 the process was waiting for a CPU part of the time (a busy machine).
        "cpu_share": cpu / elapsed,
        "per_cpu_second": n / cpu if cpu > 0 else 0.0,
        "mean": mean,
        "variance": max(0.0, squares / n - mean * mean),
        "next": i,
    }


def warm_up(call: Callable[[int], float], seconds: float, *, first: int = 0) -> int:
    """Run ``call`` untimed for a while (fills parse caches, compiles, specialises)."""
    return int(rate(call, seconds, first=first)["next"])


def median(values: list[float]) -> float:
    return statistics.median(values)


def z_score(a: dict[str, float], b: dict[str, float]) -> float:
    """How many standard errors apart two sample means are (0.0 when both never vary)."""
    se = math.sqrt(a["variance"] / a["calls"] + b["variance"] / b["calls"])
    if se == 0:
        return 0.0 if a["mean"] == b["mean"] else math.inf
    return (a["mean"] - b["mean"]) / se


def pooled(samples: list[dict[str, float]]) -> dict[str, float]:
    """Mean and variance of all the calls of several runs taken together."""
    n = sum(s["calls"] for s in samples)
    mean = sum(s["mean"] * s["calls"] for s in samples) / n
    squares = sum((s["variance"] + s["mean"] ** 2) * s["calls"] for s in samples) / n
    return {"calls": n, "mean": mean, "variance": max(0.0, squares - mean * mean)}


def combined(slices: list[dict[str, float]]) -> dict[str, float]:
    """Several short timed slices of the same loop taken as one run."""
    seconds = sum(s["seconds"] for s in slices)
    out = pooled(slices)
    out["seconds"] = seconds
    out["per_second"] = out["calls"] / seconds
    cpu = sum(s["cpu_share"] * s["seconds"] for s in slices)
    out["cpu_share"] = cpu / seconds
    out["per_cpu_second"] = out["calls"] / cpu if cpu > 0 else 0.0
    return out
