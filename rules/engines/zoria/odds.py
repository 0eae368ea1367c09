"""Zoria: exact odds of the check with its cascading action dice."""

from __future__ import annotations

import bisect
import functools
from collections.abc import Mapping, Sequence

from ..limits import MAX_CHAIN, ODDS_TAIL
from .fields import PRUNE


def convolve(a: Mapping[int, float], b: Mapping[int, float]) -> dict[int, float]:
    """Law of the sum, leaving out the products below PRUNE (b's outcomes are visited most
    likely first, so each row stops at the first product too small to keep)."""
    out: dict[int, float] = {}
    get = out.get
    b_items = sorted(b.items(), key=lambda kv: -kv[1])
    neg = [-p for _, p in b_items]
    for x, px in a.items():
        if px <= 0.0:  # underflowed: nothing of it can reach PRUNE
            continue
        stop = bisect.bisect_right(neg, -PRUNE / px)
        for y, py in b_items[:stop]:
            out[x + y] = get(x + y, 0.0) + px * py
    return {t: p for t, p in out.items() if p >= PRUNE}


def _power(law: Mapping[int, float], n: int) -> dict[int, float]:
    out: dict[int, float] = {0: 1.0}
    power = dict(law)
    while n:
        if n & 1:
            out = convolve(out, power)
        n >>= 1
        if n:
            power = convolve(power, power)
    return out


def _cascade_sum_law(sides: int, n: int, tail: float) -> dict[int, float]:
    """Law of the sum of ``n`` cascading d``sides``.

    One die is sides * M + R: M top faces in a row (geometric) and a last face R uniform on
    1..sides-1, independent. So n dice are sides * (a negative binomial count) + a sum of n
    uniforms; the count is followed until the mass left out is below ``tail``.
    """
    q = 1 / sides
    uniforms = _power({r: 1 / (sides - 1) for r in range(1, sides)}, n)
    tops: dict[int, float] = {}
    p = (1 - q) ** n  # P(no top face among n dice)
    seen = 0.0
    j = 0
    while True:
        tops[j * sides] = p
        seen += p
        if 1 - seen < tail or j >= MAX_CHAIN * n:
            break
        p *= (j + n) / (j + 1) * q
        j += 1
    return convolve(tops, uniforms)


def action_law(action_dice: Sequence[str]) -> dict[int, float]:
    """Law of the sum of the action dice (cached by the multiset of dice; do not mutate)."""
    counts: dict[int, int] = {}
    for die in action_dice:
        counts[int(die[1:])] = counts.get(int(die[1:]), 0) + 1
    return _action_law_of(tuple(sorted(counts.items())))


@functools.lru_cache(maxsize=256)
def _action_law_of(counts: tuple[tuple[int, int], ...]) -> dict[int, float]:
    total: dict[int, float] = {0: 1.0}
    # The counts of top faces are cheap to follow, so follow them well past the odds tail.
    tail = ODDS_TAIL / 1000 / max(1, len(counts))
    for sides, n in counts:
        total = convolve(total, _cascade_sum_law(sides, n, tail))
    return total
