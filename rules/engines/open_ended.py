"""Open-ended d6 (a 6 adds 6 and rolls again, as long as 6s come): rolling one, and the exact
law of sums of open-ended and plain d6. Shared by the D6 Chance Die and the Action Dice
System's action dice."""

from __future__ import annotations

import math
from typing import Unpack

from .dice import DieMarks, DieRecord, Role, draw
from .dist import Budget, Dist
from .fair import DiceSource
from .limits import MAX_CHAIN, ODDS_TAIL

# Each cut infinite chain leaves out less than this: well under ODDS_TAIL, and below what a
# float probability near 1 can even show, so cutting moves no printed digit that matters.
CHAIN_EPS = ODDS_TAIL / 10_000


def sixes_cut(dice: int) -> int:
    """How many 6s (over all ``dice`` open-ended chains) the exact odds follow.

    The number of 6s is negative binomial: P(g) = C(g+n-1, n-1) (1/6)^g (5/6)^n. Past the
    mode the terms fall with a shrinking ratio, so term(g+1) / (1 - ratio) bounds the tail.
    """
    term = (5 / 6) ** dice
    g = 0
    while True:
        nxt = term * (g + dice) / (6 * (g + 1))
        ratio = (g + 1 + dice) / (6 * (g + 2))
        if ratio < 1 and nxt / (1 - ratio) < CHAIN_EPS:
            return g
        term = nxt
        g += 1


def open_ended_law(open_ended: int, plain: int, budget: Budget | None = None) -> Dist:
    """Exact law of the sum of ``open_ended`` exploding d6 and ``plain`` ordinary d6.

    An open-ended die is 6 per 6 rolled plus a last toss uniform on 1..5, so the sum is
    6 x (a negative binomial count of 6s) + (``open_ended`` d5) + (``plain`` d6). Chains are
    followed until the mass left out is below CHAIN_EPS; that mass is simply missing (the
    weights add up to a little less than the denominator), and callers divide by the total.
    """
    base = Dist.dice_sum([(plain, 6), (open_ended, 5)])
    if open_ended == 0:
        return base
    cut = sixes_cut(open_ended)
    # g sixes over all the chains: C(g + n - 1, n - 1) ways, each 1/6 as likely as g - 1;
    # with the last tosses' 5**n that makes the denominator 6 ** (n + plain + cut).
    sixes = Dist(
        {
            6 * g: math.comb(g + open_ended - 1, open_ended - 1) * 6 ** (cut - g)
            for g in range(cut + 1)
        },
        1,
    )
    law = base.convolve(sixes, budget or Budget(limit=math.inf), "these open-ended dice")
    return Dist(None, 6 ** (open_ended + plain + cut), law.run)


def roll_open_ended(
    source: DiceSource, role: Role, **extra: Unpack[DieMarks]
) -> tuple[list[DieRecord], int, bool]:
    """One open-ended d6: its records (a 6 marked ``explodes``, its re-roll ``exploded``), its
    value, and whether the chain stopped at MAX_CHAIN extra rolls rather than on a non-6."""
    first = draw(source, 6, role, **extra)
    records = [first]
    value = first["value"]
    last = first["value"]
    again: DieMarks = {"exploded": True, **extra}
    while last == 6:
        if len(records) > MAX_CHAIN:
            records[-1]["capped"] = True
            return records, value, True
        records[-1]["explodes"] = True
        record = draw(source, 6, role, **again)
        records.append(record)
        last = record["value"]
        value += last
    return records, value, False
