"""Exact keep-highest / keep-lowest sums by dynamic programming over the faces.

The faces are visited from the kept end (highest first for kh). A state is "m dice seen so
far" with the distribution of their score; while m < k every die seen is kept. As soon as k
dice are kept, the state closes: whatever the other dice show below, nothing changes, so their
chance is summed in one closed form instead of being enumerated. That keeps the work near
(faces x k x k x scores) rather than growing with the number of dice.

``keep_exploding`` does the same for ``!`` pools, whose size is open-ended: the count of dice
that exploded is negative binomial, so the counts per face follow a negative multinomial law,
which factors face by face just like the multinomial does; the closed form for "everything
else" is then a negative power. The result is exact for unbounded explosions.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from fractions import Fraction
from math import comb

from ..dist import Budget, Dist, product_cost
from ..errors import OddsTooLarge
from .nodes import Dice


def keep_fixed(
    unit: Dist,
    count: int,
    k: int,
    highest: bool,
    score: Callable[[int], int],
    budget: Budget,
    what: str,
) -> Dist:
    """Score of the k highest (or lowest) of ``count`` independent units; 0 < k < count."""
    values = sorted(unit.w, reverse=highest)
    weights = [unit.w[v] for v in values]
    below = [0] * len(values)
    acc = 0
    for i in range(len(values) - 1, -1, -1):
        below[i] = acc
        acc += weights[i]
    states: list[dict[int, int]] = [{0: 1}] + [{} for _ in range(k - 1)]
    result: dict[int, int] = {}
    last = len(values) - 1
    # Weights run up to den**count: big integers, whose every product costs in proportion.
    per_op = product_cost(count * unit.den.bit_length())
    low = count - k + 1  # exponents below this never occur: a state has m < k dice placed
    for i, v in enumerate(values):
        w, rest, s = weights[i], below[i], score(v)
        # Per state: one pass of the count loop (binomials, big products), and in each pass
        # one multiply-add per score the state holds.
        work = 3.0 * k * per_op
        for m, st in enumerate(states):
            if st:
                work += min(k - m, count - m + 1) * (1.0 + (len(st) + 1) * per_op)
        budget.spend(work, what)
        # Powers needed below, each made once per face: rest**e and (w + rest)**e for
        # low <= e <= count, and w**j for j < k.
        rest_pow = [rest**low]
        both_pow = [(w + rest) ** low]
        for _ in range(k - 1):
            rest_pow.append(rest_pow[-1] * rest)
            both_pow.append(both_pow[-1] * (w + rest))
        w_pow = [1]
        for _ in range(k - 1):
            w_pow.append(w_pow[-1] * w)
        # Highest m first: no die on v (j = 0) leaves a state as it is, so its dict is handed
        # on untouched, and lower states only add into states already handed on.
        new: list[dict[int, int]] = [{} for _ in range(k)]
        for m in range(k - 1, -1, -1):
            cur = states[m]
            if not cur:
                continue
            left, need = count - m, k - m
            partial = rest_pow[left - low]  # the ways with fewer than `need` dice left on v
            if i != last:
                if new[m]:
                    tgt = new[m]
                    for sc, x in cur.items():
                        tgt[sc] = tgt.get(sc, 0) + x
                else:
                    new[m] = cur
            for j in range(1, min(need, left + 1)):
                coef = comb(left, j) * w_pow[j]
                partial += coef * rest_pow[left - j - low]
                if i != last and coef:
                    tgt, add = new[m + j], j * s
                    get = tgt.get
                    for sc, x in cur.items():
                        tgt[sc + add] = get(sc + add, 0) + x * coef
            if need <= left:
                closing = both_pow[left - low] - partial
                if closing:
                    add = need * s
                    get = result.get
                    for sc, x in cur.items():
                        result[sc + add] = get(sc + add, 0) + x * closing
        states = new
    return Dist(result, unit.den**count).reduced()


def keep_exploding(
    q: dict[int, Fraction],
    r: dict[int, Fraction],
    p0: Fraction,
    count: int,
    k: int,
    highest: bool,
    score: Callable[[int], int],
    budget: Budget,
    what: str,
) -> Dist:
    """Score of the k highest (lowest) dice of ``count`` exploding chains, all dice pooled.

    ``q[v]``: chance that one die both explodes and ends up counting as v (sums to 1 - p0);
    ``r[v]``: chance that a chain's last (non-exploding) die counts as v (sums to 1).
    """
    values = sorted(set(q) | set(r), reverse=highest)
    zero = Fraction(0)
    qs = [q.get(v, zero) for v in values]
    rs = [r.get(v, zero) for v in values]
    q_after = [zero] * len(values)
    r_after = [zero] * len(values)
    qa = ra = zero
    for i in range(len(values) - 1, -1, -1):
        q_after[i], r_after[i] = qa, ra
        qa += qs[i]
        ra += rs[i]
    # states[(a, b)]: a exploding dice and b last dice seen so far, a + b < k.
    states: dict[tuple[int, int], dict[int, Fraction]] = {(0, 0): {0: Fraction(1)}}
    result: dict[int, Fraction] = {}
    for i, v in enumerate(values):
        qv, rv, qa, ra, s = qs[i], rs[i], q_after[i], r_after[i], score(v)
        work = sum(len(st) * (k - a - b + 1) ** 2 for (a, b), st in states.items())
        budget.spend(work * 5.0, what)
        new: dict[tuple[int, int], dict[int, Fraction]] = {}
        for (a, b), cur in states.items():
            need, left_r, base = k - a - b, count - b, count + a
            # Everything from v on, summed out: exploding dice (negative multinomial, a
            # negative power) and the remaining last dice (multinomial).
            total = (1 - qa - qv) ** -base * (rv + ra) ** left_r
            below = zero
            for i_e in range(need):
                coef_e = comb(base + i_e - 1, i_e) * qv**i_e if i_e else Fraction(1)
                if not coef_e:
                    break
                for j in range(min(need - i_e, left_r + 1)):
                    coef = coef_e * comb(left_r, j) * rv**j
                    if not coef:
                        break
                    below += coef * (1 - qa) ** -(base + i_e) * ra ** (left_r - j)
                    key = (a + i_e, b + j)
                    tgt = new.setdefault(key, {})
                    add = (i_e + j) * s
                    for sc, x in cur.items():
                        tgt[sc + add] = tgt.get(sc + add, zero) + x * coef
            closing = total - below
            if closing:
                add = need * s
                for sc, x in cur.items():
                    result[sc + add] = result.get(sc + add, zero) + x * closing
        states = new
    # Chains that never reach k kept dice: every last die has been placed.
    for (_a, b), cur in states.items():
        if b == count:
            for sc, x in cur.items():
                result[sc] = result.get(sc, zero) + x
    scale = p0**count
    return Dist.from_fractions({sc: x * scale for sc, x in result.items() if x}).reduced()


def drop_exploding(
    e_w: dict[int, int],
    n_w: dict[int, int],
    p: Fraction,
    count: int,
    drop: int,
    lowest: bool,
    score: Callable[[int], int],
    budget: Budget,
    what: str,
    eps: float,
) -> Dist:
    """Score of what is left after dropping the ``drop`` lowest (highest) dice of ``count``
    exploding chains, all dice pooled.

    ``e_w``: weights of the value a die that exploded ends up counting as; ``n_w``: the same for
    a chain's last die; ``p``: the chance that a die explodes. The number A of dice that
    exploded is negative binomial; for each A the pool is fixed (A dice of one law, ``count``
    of the other), and A is followed until the chance of more is below ``eps`` (left out).
    """
    values = sorted(set(e_w) | set(n_w), reverse=not lowest)
    scores = [score(v) for v in values]
    e_d, n_d = sum(e_w.values()), sum(n_w.values())
    memo: dict[tuple[int, int, int], dict[int, int]] = {}
    # bases[kind][t]: {score: weight} over the values from index t on, built from the end.
    bases: list[list[dict[int, int]]] = []
    for weights in (e_w, n_w):
        column: list[dict[int, int]] = [{}]
        for v, s in zip(reversed(values), reversed(scores), strict=True):
            budget.spend(1 + len(column[-1]) * 0.3, what)
            base = dict(column[-1])
            if weights.get(v):
                base[s] = base.get(s, 0) + weights[v]
            column.append(base)
        column.reverse()
        bases.append(column)

    def suffix_power(kind: int, t: int, m: int) -> dict[int, int]:
        """(sum over values from index t on of weight * z**score) ** m, as {score: weight}.

        Built up from the highest power already made, in a loop: a pool of a thousand dice
        needs a thousandth power, far deeper than Python's recursion goes."""
        key = (kind, t, m)
        got = memo.get(key)
        if got is not None:
            return got
        base = bases[kind][t]
        if m == 0:
            got = {0: 1}
        elif not base:
            got = {}
        else:
            have = m - 1
            while have > 0 and (kind, t, have) not in memo:
                have -= 1
            got = memo[(kind, t, have)] if have else {0: 1}
            for power in range(have + 1, m + 1):
                got = _sum_in_ways(got, base, budget, what)
                memo[(kind, t, power)] = got
        memo[key] = got
        return got

    total: Dist | None = None
    left, a = 1.0, 0
    p0 = 1 - p
    while True:
        chance = comb(a + count - 1, a) * p**a * p0**count
        cond = _drop_fixed(a, count, drop, values, scores, e_w, n_w, suffix_power, budget, what)
        part = Dist({s: w * chance.numerator for s, w in cond.items() if w},
                    e_d**a * n_d**count * chance.denominator)  # fmt: skip
        budget.spend(len(part.w) * 2.0, what)
        total = part if total is None else total.plus_mass(part).reduced()
        left -= float(chance)
        a += 1
        if left < eps:
            break
        if a > 400:
            raise OddsTooLarge(
                budget.field,
                f"exact odds for {what} are not offered: its pool grows too long by explosions; "
                "rolling it still works",
            )
    return total


def _drop_fixed(
    a: int,
    count: int,
    drop: int,
    values: list[int],
    scores: list[int],
    e_w: dict[int, int],
    n_w: dict[int, int],
    suffix_power: Callable[[int, int, int], dict[int, int]],
    budget: Budget,
    what: str,
) -> dict[int, int]:
    """Weights of the kept score for a pool of ``a`` exploded dice and ``count`` last dice.

    Values are visited in dropping order. While fewer than ``drop`` dice have been seen, all of
    them are dropped (no score to track). When the quota fills on a value, everything from there
    on counts except the dice still needed for the quota: "all the rest from here" minus the
    cases where fewer than ``need`` dice landed here (those carry on to the next value).
    """
    if a + count <= drop:
        return {0: sum(e_w.values()) ** a * sum(n_w.values()) ** count}
    result: dict[int, int] = {}

    def add(src: dict[int, int], factor: int, shift: int) -> None:
        budget.spend(2 + len(src) * 1.0, what)
        for s, w in src.items():
            result[s + shift] = result.get(s + shift, 0) + w * factor

    states = {(0, 0): 1}
    for t, (v, s) in enumerate(zip(values, scores, strict=True)):
        ew, nw = e_w.get(v, 0), n_w.get(v, 0)
        new: dict[tuple[int, int], int] = {}
        for (e, c), x in states.items():
            # The pool is bigger than the quota, so it always fills: ea + nc > need.
            need, ea, nc = drop - e - c, a - e, count - c
            full = _sum_in_ways(suffix_power(0, t, ea), suffix_power(1, t, nc), budget, what)
            add(full, x, -need * s)
            # Only faces some die can show take dice: skip the loops over impossible counts.
            i_top = min(need, ea + 1) if ew else 1
            budget.spend(i_top * (min(need, nc + 1) if nw else 1), what)
            for i in range(i_top):
                for j in range(min(need - i, nc + 1) if nw else 1):
                    coef = comb(ea, i) * ew**i * comb(nc, j) * nw**j
                    if not coef:
                        continue
                    rest = _sum_in_ways(
                        suffix_power(0, t + 1, ea - i), suffix_power(1, t + 1, nc - j), budget, what
                    )
                    add(rest, -x * coef, (i + j - need) * s)
                    new[(e + i, c + j)] = new.get((e + i, c + j), 0) + x * coef
        states = new
    return {s: w for s, w in result.items() if w}


def _sum_in_ways(a: dict[int, int], b: dict[int, int], budget: Budget, what: str) -> dict[int, int]:
    return Dist(a, 1).sum_in_ways(Dist(b, 1), budget, what).w


def keep_mixed(
    units: list[Dist],
    k: int,
    highest: bool,
    score: Callable[[int], int],
    budget: Budget,
    what: str,
) -> Dist:
    """Score of the k highest (lowest) of independent units that need not share a law (the
    dice of ``{4d6+3d8}k4``, the members of ``{1d20, 1d20+2}kh1``); 0 < k < len(units).

    A state is the sorted values kept so far; each unit either joins them, pushing out the
    worst, or is dropped at once."""
    states: dict[tuple[int, ...], int] = {(): 1}
    den = 1
    for unit in units:
        # Per pair: a sorted insert of k values, a tuple, and a product of big weights.
        per_op = 1.0 + 0.1 * k + product_cost(den.bit_length() + unit.den.bit_length())
        budget.spend(10 + len(states) * len(unit.w) * per_op, what)
        new: dict[tuple[int, ...], int] = {}
        get = new.get
        for kept, x in states.items():
            for v, w in unit.w.items():
                grown = list(kept)
                bisect.insort(grown, v)
                if len(grown) > k:
                    # Sorted low to high: keeping the highest pushes out the lowest.
                    del grown[0 if highest else -1]
                key = tuple(grown)
                new[key] = get(key, 0) + x * w
        states = new
        den *= unit.den
    out: dict[int, int] = {}
    for kept, x in states.items():
        s = sum(score(v) for v in kept)
        out[s] = out.get(s, 0) + x
    return Dist(out, den).reduced()


def match_sets(unit: Dist, die: Dice, budget: Budget, what: str) -> Dist:
    """``mt``: how many values are shown by at least ``match_size`` of the kept dice (and pass
    ``match_on``), for ``count`` independent dice of law ``unit``.

    The values are visited from the kept end, with states "m dice seen, s sets so far"; where
    the keep quota fills, the rest of the dice fall below it in one closed form, as in
    ``keep_fixed``."""
    count, size, on = die.count, die.match_size, die.match_on
    keep, k = die.keep, die.keep_n
    if keep in ("dh", "dl"):
        keep, k = ("kl" if keep == "dh" else "kh"), count - k
    if keep is None or k >= count:
        keep, k = "kh", count
    if k <= 0:
        return Dist.point(0)
    values = sorted(unit.w, reverse=keep == "kh")
    weights = [unit.w[v] for v in values]
    rests = [sum(weights[i + 1 :]) for i in range(len(values))]
    states: dict[tuple[int, int], int] = {(0, 0): 1}
    result: dict[int, int] = {}
    per_op = product_cost(count * unit.den.bit_length())
    for v, w, rest in zip(values, weights, rests, strict=True):
        counts = on is None or on.matches(v)
        budget.spend(10 + sum(count - seen + 1 for seen, _ in states) * (1 + per_op), what)
        new: dict[tuple[int, int], int] = {}
        for (seen, sets), x in states.items():
            left = count - seen
            for c in range(left + 1):
                coef = comb(left, c) * w**c
                if seen + c >= k:
                    # The quota fills on v: k - seen of these dice are kept, the rest of the
                    # pool lies beyond v.
                    add = int(counts and k - seen >= size)
                    tail = x * coef * rest ** (left - c)
                    if tail:
                        result[sets + add] = result.get(sets + add, 0) + tail
                else:
                    add = int(counts and c >= size)
                    key = (seen + c, sets + add)
                    new[key] = new.get(key, 0) + x * coef
        states = new
    return Dist(result, unit.den**count).reduced()
