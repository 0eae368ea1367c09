"""Zoria: exact odds of the check with its cascading action dice.

The check's law is exact (integer weights); the cascading dice are summed in floats over the
same ``Dist`` algebra, their long tails pruned below ``dist.PRUNE``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..dist import Budget, Dist
from ..limits import MAX_CHAIN, ODDS_TAIL


def _cascade_sum_law(sides: int, n: int, tail: float, budget: Budget) -> Dist:
    """Law of the sum of ``n`` cascading d``sides``.

    One die is sides * M + R: M top faces in a row (geometric) and a last face R uniform on
    1..sides-1, independent. So n dice are sides * (a negative binomial count) + a sum of n
    uniforms; the count is followed until the mass left out is below ``tail``.
    """
    q = 1 / sides
    what = f"{n}d{sides} cascading"
    uniforms = Dist({r: 1 / (sides - 1) for r in range(1, sides)}, 1).power(n, budget, what)
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
    return Dist(tops, 1).convolve(uniforms, budget, what)


def action_law(action_dice: Sequence[str], budget: Budget) -> Dist:
    """Law of the sum of the action dice, in floats (cached by the multiset of dice)."""
    counts: dict[int, int] = {}
    for die in action_dice:
        counts[int(die[1:])] = counts.get(int(die[1:]), 0) + 1
    # Within the cap of action dice a law takes a few ms; the request's budget is asked first
    # so its deadline holds, and the law itself is made (and cached) on a budget of its own.
    budget.spend(10.0 * len(action_dice), "these action dice")
    return _action_law_of(tuple(sorted(counts.items())))


@functools.lru_cache(maxsize=256)
def _action_law_of(counts: tuple[tuple[int, int], ...]) -> Dist:
    budget = Budget("action_dice")
    total = Dist({0: 1.0}, 1)
    # The counts of top faces are cheap to follow, so follow them well past the odds tail.
    tail = ODDS_TAIL / 1000 / max(1, len(counts))
    for sides, n in counts:
        total = total.convolve(_cascade_sum_law(sides, n, tail, budget), budget, "action dice")
    return total
