"""The odds answer shared by every system (RULES.md section 1)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

Distribution = dict[int, Fraction]


def convolve(a: Mapping[int, Fraction], b: Mapping[int, Fraction]) -> Distribution:
    """Distribution of the sum of two independent numbers."""
    out: Distribution = {}
    for x, px in a.items():
        for y, py in b.items():
            out[x + y] = out.get(x + y, Fraction(0)) + px * py
    return out


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
    dist = {
        str(k): float(Fraction(v) / Fraction(total)) for k, v in sorted(distribution.items()) if v
    }
    return {
        "system": system,
        "request": dict(request),
        "outcome": outcome,
        "distribution": dist,
        "p_success": None if p_success is None else float(p_success),
        "events": {flag: float(p) for flag, p in events.items()},
    }
