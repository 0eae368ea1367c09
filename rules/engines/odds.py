"""The odds answer shared by every system (RULES.md section 1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import repeat
from operator import add, mul
from typing import Any

Distribution = dict[int, Fraction]


def convolve(a: Mapping[int, Fraction], b: Mapping[int, Fraction]) -> Distribution:
    """Distribution of the sum of two independent numbers."""
    out: Distribution = {}
    for x, px in a.items():
        for y, py in b.items():
            out[x + y] = out.get(x + y, Fraction(0)) + px * py
    return out


def convolve_weights(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
    """Convolution of two weight lists (ints or floats alike): index i of the answer is the
    weight of a sum i above the sum of the two lists' lowest values."""
    if len(a) > len(b):
        a, b = b, a
    width = len(b)
    out = [0 * b[0]] * (len(a) + width - 1)
    for i, x in enumerate(a):
        if x:
            out[i : i + width] = map(add, out[i : i + width], map(mul, b, repeat(x)))
    return out


def from_weights(
    lowest: int, weights: Sequence[int], at_least: int | None = None
) -> tuple[dict[int, float], Fraction | None]:
    """A distribution from whole numbers of ways (``weights[i]`` ways to come out
    ``lowest + i``), and the exact chance of ``at_least`` or more (None without it)."""
    mass = sum(weights)
    distribution = {lowest + i: w / mass for i, w in enumerate(weights) if w}
    if at_least is None:
        return distribution, None
    return distribution, Fraction(sum(weights[max(0, at_least - lowest) :]), mass)


def odds_answer(
    *,
    system: str,
    request: Mapping[str, Any],
    outcome: str,
    distribution: Mapping[int, Fraction | float],
    p_success: Fraction | float | None,
    events: Mapping[str, Fraction | float],
) -> dict[str, Any]:
    """Turn exact (or tail-truncated) probabilities into the contract's JSON shape.

    The distribution is renormalised so it sums to 1 even where an infinite tail was cut
    below ODDS_TAIL; values come out in ascending order.
    """
    total = sum(distribution.values())
    if total <= 0:
        raise ValueError("an odds distribution needs positive mass")
    # Exact Fractions stay exact until this division; floats (summed closed forms) are divided
    # as floats: turning them into Fractions first costs far more and changes nothing.
    dist = {str(k): float(v / total) for k, v in sorted(distribution.items()) if v}
    return {
        "system": system,
        "request": dict(request),
        "outcome": outcome,
        "distribution": dist,
        "p_success": None if p_success is None else float(p_success),
        "events": {flag: float(p) for flag, p in events.items()},
    }
