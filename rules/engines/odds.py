"""The odds answer shared by every system (docs/rules.md, "The command line")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Literal, TypedDict

# What a system's headline number counts: a total, successes, or successes net of the other side.
Outcome = Literal["total", "successes", "net_successes"]


class OddsAnswer(TypedDict):
    """The odds of one request, as every system answers them."""

    system: str
    request: dict[str, Any]
    outcome: Outcome
    distribution: dict[str, float]  # headline -> chance, ascending
    p_success: float | None  # None when the request sets no target
    events: dict[str, float]  # flag -> chance of it


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
    outcome: Outcome,
    distribution: Mapping[int, Fraction | float],
    p_success: Fraction | float | None,
    events: Mapping[str, Fraction | float],
) -> OddsAnswer:
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
