"""The Action Dice System: exact keep-highest of open-ended and plain d6."""

from __future__ import annotations

import math
from itertools import repeat
from operator import add, mul
from typing import Any

from ..dist import Budget, Dist
from ..open_ended import CHAIN_EPS, open_ended_law


def _place_down(
    count: int, keep: int, states: dict[int, tuple[int, list[int]]], top_face: int, out: list[int]
) -> None:
    """Place the rest of ``count`` dice on faces ``top_face``..1, highest first, into ``out``.

    ``states`` maps dice placed so far (fewer than ``keep``) to ``(lowest, ways)``: ways by
    kept sum from ``lowest`` up. At each face some of the dice left land on it; once ``keep``
    dice are placed, the others only need to show less than that face, which is a single
    count, so states stay below ``keep``. Each die left has one way per face, whatever its
    size was.
    """
    size = len(out)
    for face in range(top_face, 0, -1):
        acc: dict[int, list[int]] = {}
        span: dict[int, tuple[int, int]] = {}
        for placed, (lo, ways) in states.items():
            left = count - placed
            need = keep - placed
            width = len(ways)
            done = sum(math.comb(left, t) * (face - 1) ** (left - t) for t in range(need, left + 1))
            if done:
                at = lo + need * face
                out[at : at + width] = map(add, out[at : at + width], map(mul, ways, repeat(done)))
            if face == 1:
                continue  # every die is placed by the last face
            for t in range(min(left, need - 1) + 1):
                q = placed + t
                arr = acc.get(q)
                if arr is None:
                    arr = acc[q] = [0] * size
                at = lo + t * face
                part = map(mul, ways, repeat(math.comb(left, t))) if t else ways
                arr[at : at + width] = map(add, arr[at : at + width], part)
                first, last = span.get(q, (at, at + width))
                span[q] = (min(first, at), max(last, at + width))
        states = {q: (span[q][0], arr[span[q][0] : span[q][1]]) for q, arr in acc.items()}


def top_uniform(count: int, keep: int, faces: int) -> Dist:
    """Law of the highest ``keep`` of ``count`` dice with faces 1..faces, in whole ways."""
    if keep <= 0:
        return Dist.from_run(0, [faces**count], faces**count)
    if keep >= count:
        return Dist.dice_sum([(count, faces)])
    out = [0] * (faces * keep + 1)
    _place_down(count, keep, {0: (0, [1])}, faces, out)
    return Dist.from_run(keep, out[keep:], faces**count)


def top_plain(low: int, sixes: int, keep: int) -> Dist:
    """Chance that ``low`` action dice all stop below 6, with the law of the highest ``keep``
    of them and ``sixes`` d6 (the skill dice): a sub-law over 6 ** (low + sixes).

    Only the d6 can show 6, so face 6 is placed first for them alone; below it every die left
    is alike.
    """
    count = low + sixes
    den = 6**count
    if keep <= 0:
        return Dist.from_run(0, [5**low * 6**sixes], den)
    if keep >= count:
        return Dist(None, den, Dist.dice_sum([(sixes, 6), (low, 5)]).run)
    out = [0] * (6 * keep + 1)
    states: dict[int, tuple[int, list[int]]] = {}
    for j in range(sixes + 1):
        ways = math.comb(sixes, j)
        if j >= keep:
            out[6 * keep] += ways * 5 ** (count - j)
        else:
            states[j] = (6 * j, [ways])
    _place_down(count, keep, states, 5, out)
    return Dist.from_run(keep, out[keep:], den)


def keep_top(
    action: int,
    skill: int,
    keep: int,
    memo: dict[Any, Dist] | None = None,
    budget: Budget | None = None,
) -> Dist:
    """Exact law of the sum of the highest ``keep`` of ``action`` open-ended d6 and ``skill``
    plain d6 (an open-ended die counts as one die, with its whole value).

    Every die first shows a face 1..6. An action die on 6 is "high": 6 + a fresh open-ended
    die, so it beats every other die (which show at most 6). So with H high action dice the
    kept dice are the best min(H, keep) high dice (6 each plus the best of H fresh open-ended
    dice: the same question, smaller) and the best of the others, which are the skill dice and
    the action dice that stopped on 1..5 (``top_plain``). When every action die is high and
    there are no skill dice the question repeats itself 6 x keep higher with chance 6^-action;
    that geometric series is summed until its tail is below CHAIN_EPS.
    """
    memo = {} if memo is None else memo
    budget = budget or Budget(limit=math.inf)
    what = "these action dice"
    if keep >= action + skill:
        key: tuple[Any, ...] = ("sum", action, skill)
        if key not in memo:
            memo[key] = open_ended_law(action, skill, budget)
        return memo[key]
    key = (action, skill, keep)
    if key in memo:
        return memo[key]
    repeats_itself = skill == 0 and action > keep
    pieces: list[Dist] = []
    for high in range(action + 1):
        if repeats_itself and high == action:
            continue
        h = min(high, keep)
        top = keep_top(high, 0, h, memo, budget)
        rest = top_plain(action - high, skill, keep - h)
        # C(action, high) ways to choose the high dice, each of them 1/6 to show 6.
        chosen = Dist({6 * h: math.comb(action, high)}, 6**high)
        both = top.convolve(rest, budget, what).convolve(chosen, budget, what)
        pieces.append(both)
    law = Dist.mixture(pieces, budget, what)
    if repeats_itself:
        reps = 0
        while 6.0 ** (-action * (reps + 1)) >= CHAIN_EPS:
            reps += 1
        # All high again with chance 6**-action: the same law 6 x keep higher, reps times over.
        again = Dist(
            {6 * keep * i: 6 ** (action * (reps - i)) for i in range(reps + 1)},
            6 ** (action * reps),
        )
        law = law.convolve(again, budget, what)
    memo[key] = law
    return law
