"""The one distribution algebra of the rules core: ``Dist``, its ``Budget``, and the convolutions
every engine's odds are built from.

A ``Dist`` holds weights over one denominator. Exact ones have integer weights (the notation,
Zoria's check); where an engine sums long open-ended chains in floats (Zoria's cascading dice,
Discordian pools, opposed roll-and-keep) the weights are floats over 1 and products below
``PRUNE`` are left out, their mass counted. A law that is a run of consecutive totals (sums
of d6 for the D6 Chance Die and the Action Dice System, roll-and-keep successes) also carries
that run as one dense list (``Dist.from_run``, ``Dist.dice_sum``), and sums and mixtures of runs
go slice-wise in C-level ``map`` calls. Engines take only ``Dist`` and ``Budget`` from here (a
test in tests/rules/test_structure.py holds them to it): the helpers below are the algebra's own.

Fractions are exact but slow (every addition takes a gcd); here a distribution is a dict of
integer weights plus a denominator, and sums of many dice use either Miller's recurrence for
the power of a polynomial or Kronecker substitution (pack the weights into one big integer and
let CPython's Karatsuba multiply them). Every step first tells the ``Budget`` what it is about
to cost, so an oversized request stops with OddsTooLarge before the slow step, never during it.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from itertools import accumulate, repeat
from operator import add, mul, sub
from typing import TYPE_CHECKING, Any

from .errors import OddsTooLarge

# Estimated cost, in microseconds on a slow core, that one odds request may spend.
BUDGET_MICROSECONDS = 120_000
# In float convolutions, a product below this is left out (and its mass counted): far below
# ODDS_TAIL, and below what a float probability near 1 can even show.
PRUNE = 1e-19

# A weight: a whole number of ways in an exact law, a probability in a float law. Which one a
# law holds is decided as it is built (``Dist.floats`` tells them apart), and the algebra's steps
# serve both, so the type cannot say which: int-only steps (``reduced``, ``fractions``, Miller's
# recurrence) are only ever given exact laws. (The values a law is over are whole numbers but
# inside the notation's floor, ceil, round and abs, where they are exact fractions until the
# function makes them whole again: see notation/exact.py.)
Weight = Any


class Budget:
    """Running estimate of the work one odds request does, with an optional deadline.

    Every costly step first tells the budget what it is about to cost (``spend``); past
    ``limit`` estimated microseconds, or past ``deadline`` (a ``time.monotonic()`` instant), the
    request stops with OddsTooLarge naming ``field``, before the slow step, never during it.
    """

    __slots__ = ("deadline", "field", "limit", "spent")

    def __init__(
        self,
        field: str = "request",
        limit: float = BUDGET_MICROSECONDS,
        *,
        deadline: float | None = None,
    ) -> None:
        self.field = field
        self.limit = limit
        self.deadline = deadline
        self.spent = 0.0

    def naming(self, field: str) -> Budget:
        """This budget, now naming ``field`` in its refusals."""
        self.field = field
        return self

    def spend(self, cost: float, what: str) -> None:
        self.spent += cost
        if self.spent > self.limit:
            raise OddsTooLarge(
                self.field,
                f"exact odds for {what} are past the size cap (too many dice, faces or "
                f"outcomes to enumerate quickly); rolling it still works",
            )
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OddsTooLarge(
                self.field,
                f"exact odds for {what} took longer than this table allows; rolling it still works",
            )


class Dist:
    """A (sub-)probability distribution: P(v) = w[v] / den.

    A law that is a run of consecutive totals (sums of dice) may also carry ``run``: its
    lowest total and its weights as one dense list, so sums of such laws take the fast
    slice-wise convolution instead of a loop over pairs.
    """

    __slots__ = ("den", "pruned_law", "run", "w")

    w: dict[int, Weight]
    pruned_law: PrunedLaw

    def __init__(
        self, w: dict[int, Weight] | None, den: int, run: tuple[int, list[Weight]] | None = None
    ) -> None:
        if w is not None:
            self.w = w
        # A float law's weights are probabilities already: its denominator is 1.
        self.den = den
        self.run = run

    if not TYPE_CHECKING:  # to the type checker, ``w`` and ``pruned_law`` are plain attributes

        def __getattr__(self, name: str) -> Any:
            # Only a law built from a run lacks ``w``; most are only ever summed slice-wise,
            # so the dict is made on first use.
            if name == "pruned_law":
                # A float law summed with many others is sorted for pruning once, on first use.
                self.pruned_law = PrunedLaw(self.w)
                return self.pruned_law
            if name != "w" or self.run is None:
                raise AttributeError(name)
            lowest, weights = self.run
            self.w = {lowest + i: x for i, x in enumerate(weights) if x}
            return self.w

    # -- building ------------------------------------------------------------------------
    @staticmethod
    def point(value: int) -> Dist:
        return Dist({value: 1}, 1)

    @staticmethod
    def uniform(values: Iterable[int], den: int | None = None) -> Dist:
        w = dict.fromkeys(values, 1)
        return Dist(w, den if den is not None else len(w))

    @staticmethod
    def from_run(lowest: int, weights: list[Weight], den: int = 1) -> Dist:
        """The law with weight ``weights[i]`` at ``lowest + i`` (ints or floats), over ``den``."""
        return Dist(None, den, (lowest, weights))

    @staticmethod
    def dice_sum(dice: Sequence[tuple[int, int]]) -> Dist:
        """Law of the sum of ``count`` dice of ``faces`` faces (1..faces) for each
        ``(count, faces)``, in whole numbers of ways."""
        weights: list[int] | None = None
        lowest = 0
        den = 1
        for count, faces in dice:
            weights = uniform_counts(count, faces, weights)
            lowest += count
            den *= faces**count
        return Dist.from_run(lowest, weights or [1], den)

    # -- float laws built up in place -------------------------------------------------------
    # An engine that follows many states (Discordian pools) keeps one float law per state and
    # adds into it; the mass left out below PRUNE is returned for the engine to count.
    @staticmethod
    def floats_over_one(w: dict[int, float] | None = None) -> Dist:
        """A float law (weights are probabilities), empty unless ``w`` is given."""
        return Dist({} if w is None else w, 1)

    def add(self, other: Dist, divisor: float = 1) -> None:
        """Add ``other``'s weights (each divided by ``divisor``) into this law, in place."""
        w = self.w
        get = w.get
        if divisor == 1:
            for k, p in other.w.items():
                w[k] = get(k, 0.0) + p
        else:
            for k, p in other.w.items():
                w[k] = get(k, 0.0) + p / divisor

    def add_sum(self, a: Dist, b: Dist) -> float:
        """Add the law of a + b (float weights) into this law, in place, leaving out products
        below PRUNE; return the mass left out. ``b`` is sorted for that once and kept."""
        return conv_floats_into(self.w, a.w, b.pruned_law)

    def pruned(self) -> tuple[Dist, float]:
        """This float law without the outcomes below PRUNE, and the mass they had."""
        if not self.w or min(self.w.values()) >= PRUNE:
            return self, 0.0
        kept = {k: p for k, p in self.w.items() if p >= PRUNE}
        return Dist(kept, self.den), sum(self.w.values()) - sum(kept.values())

    def most_likely_first(self) -> Dist:
        """The same law with its outcomes in falling order of weight, so sums over it add the
        big terms first."""
        return Dist(self.pruned_law.law(), self.den)

    def total(self) -> Weight:
        """Sum of the weights (the mass, times ``den``)."""
        return sum(self.w.values())

    def dense(self) -> tuple[int, list[Weight]]:
        """Lowest total and the weights of every total from it up (zeros where none)."""
        if self.run is not None:
            return self.run
        lo, hi = min(self.w), max(self.w)
        out = [0 * next(iter(self.w.values()))] * (hi - lo + 1)
        for v, x in self.w.items():
            out[v - lo] = x
        return lo, out

    def shifted(self, by: int) -> Dist:
        """The law of this number plus ``by``."""
        if self.run is not None:
            return Dist(None, self.den, (self.run[0] + by, self.run[1]))
        return Dist({v + by: x for v, x in self.w.items()}, self.den)

    def at_least(self, target: int) -> Weight:
        """Weight of the totals ``target`` and up (over ``den``)."""
        return sum(x for v, x in self.w.items() if v >= target)

    @staticmethod
    def from_fractions(probs: Mapping[int, Fraction]) -> Dist:
        den = math.lcm(*(p.denominator for p in probs.values())) if probs else 1
        return Dist({v: p.numerator * (den // p.denominator) for v, p in probs.items()}, den)

    def fractions(self) -> dict[int, Fraction]:
        den = self.den
        return {v: Fraction(w, den) for v, w in sorted(self.w.items()) if w}

    def mass(self) -> Fraction:
        return Fraction(sum(self.w.values()), self.den)

    def reduced(self) -> Dist:
        g = math.gcd(self.den, *self.w.values())
        if g > 1:
            return Dist({v: w // g for v, w in self.w.items()}, self.den // g)
        return self

    @property
    def bits(self) -> int:
        return max(self.den.bit_length(), 1)

    # -- arithmetic ----------------------------------------------------------------------
    def map(self, fn: Callable[[int], int]) -> Dist:
        out: dict[int, int] = {}
        for v, w in self.w.items():
            k = fn(v)
            out[k] = out.get(k, 0) + w
        return Dist(out, self.den)

    def weighted(self, num: int, den: int) -> Dist:
        """This distribution taken with chance num/den (a part of a mixture)."""
        return Dist({v: w * num for v, w in self.w.items()}, self.den * den)

    @staticmethod
    def mixture(parts: list[Dist], budget: Budget, what: str) -> Dist:
        """The sub-distributions of disjoint cases added into one."""
        runs = [part.run for part in parts if part.run is not None]
        if len(runs) == len(parts):
            return Dist._run_mixture(parts, runs, budget, what)
        out = parts[0]
        for part in parts[1:]:
            bits = out.den.bit_length() + part.den.bit_length()
            budget.spend(2 + (len(out.w) + len(part.w)) * (1 + product_cost(bits)), what)
            out = out.plus_mass(part)
        return out.reduced()

    @staticmethod
    def _run_mixture(
        parts: list[Dist], runs: list[tuple[int, list[Weight]]], budget: Budget, what: str
    ) -> Dist:
        """Runs of totals (``runs``, the parts' own) added into one list, each brought to the
        common denominator."""
        den = math.lcm(*(part.den for part in parts))
        lowest = min(lo for lo, _ in runs)
        top = max(lo + len(weights) for lo, weights in runs)
        budget.spend(len(parts) * (top - lowest) * 0.05, what)
        out = [0] * (top - lowest)
        for part, (lo, weights) in zip(parts, runs, strict=True):
            at = lo - lowest
            end = at + len(weights)
            scale = den // part.den
            if scale == 1:
                out[at:end] = map(add, out[at:end], weights)
            else:
                out[at:end] = map(add, out[at:end], map(mul, weights, repeat(scale)))
        return Dist.from_run(lowest, out, den)

    def neg(self) -> Dist:
        if self.run is not None:
            lowest, weights = self.run
            return Dist(None, self.den, (1 - lowest - len(weights), weights[::-1]))
        return Dist({-v: w for v, w in self.w.items()}, self.den)

    def scaled(self, factor: int) -> Dist:
        """Same distribution over a denominator ``factor`` times larger."""
        return Dist({v: w * factor for v, w in self.w.items()}, self.den * factor)

    def plus_mass(self, other: Dist) -> Dist:
        """The two sub-distributions' masses added (a mixture of disjoint cases)."""
        den = math.lcm(self.den, other.den)
        fa, fb = den // self.den, den // other.den
        out = {v: w * fa for v, w in self.w.items()}
        for v, w in other.w.items():
            out[v] = out.get(v, 0) + w * fb
        return Dist(out, den)

    @property
    def floats(self) -> bool:
        """Float weights (summed in floats, pruned below PRUNE) rather than exact integers."""
        weights = self.run[1] if self.run is not None else self.w.values()
        return any(type(x) is float for x in weights)

    def convolve(self, other: Dist, budget: Budget, what: str) -> Dist:
        """Distribution of the sum of two independent numbers."""
        if self.run is not None or other.run is not None:
            return self._slice_convolve(other, budget, what)
        if self.floats or other.floats:
            out: dict[int, float] = {}
            budget.spend(10 + len(self.w) * len(other.w) * 0.15, what)
            conv_floats_into(out, self.w, PrunedLaw(other.w))
            return Dist({v: p for v, p in out.items() if p >= PRUNE}, self.den * other.den)
        return Dist(conv_weights(self.w, other.w, budget, what), self.den * other.den).reduced()

    def _slice_convolve(self, other: Dist, budget: Budget, what: str) -> Dist:
        """Sum with a run of totals: one C-level slice pass per weight of the other law (the
        fewer), exact for ints, nothing left out for floats."""
        # The law with a run (the longer one when both have one) slides over the other's
        # weights.
        if other.run is not None and (self.run is None or len(self.run[1]) <= len(other.run[1])):
            a, (b_lo, run) = self, other.run
        else:
            assert self.run is not None  # convolve only comes here when a law has a run
            a, (b_lo, run) = other, self.run
        budget.spend((len(a.w) if a.run is None else len(a.run[1])) * len(run) * 0.05, what)
        if a.run is not None:
            a_lo, a_run = a.run
            return Dist.from_run(a_lo + b_lo, convolve_weights(a_run, run), self.den * other.den)
        if len(a.w) == 1:
            # One total: the run moved, and scaled unless by 1.
            ((v, x),) = a.w.items()
            scaled = run if x == 1 else list(map(mul, run, repeat(x)))
            return Dist.from_run(v + b_lo, scaled, self.den * other.den)
        lo, hi = min(a.w), max(a.w)
        width = len(run)
        out = [0 * run[0]] * (hi - lo + width)
        for v, x in a.w.items():
            at = v - lo
            out[at : at + width] = map(add, out[at : at + width], map(mul, run, repeat(x)))
        return Dist.from_run(lo + b_lo, out, self.den * other.den)

    def sum_in_ways(self, other: Dist, budget: Budget, what: str) -> Dist:
        """Law of the sum with weights left as whole numbers of ways (not reduced), for
        counting rules that scale and add the ways themselves (keep-highest pools)."""
        return Dist(conv_weights(self.w, other.w, budget, what), self.den * other.den)

    def combine(
        self, other: Dist, op: Callable[[int, int], int], budget: Budget, what: str
    ) -> Dist:
        """Distribution of ``op(a, b)`` for independent a, b (products and quotients)."""
        bits = self.den.bit_length() + other.den.bit_length()
        # A call of ``op`` per pair on top of the dict work.
        budget.spend(len(self.w) * len(other.w) * (0.6 + product_cost(bits)), what)
        out: dict[int, int] = {}
        get = out.get
        for x, wx in self.w.items():
            for y, wy in other.w.items():
                k = op(x, y)
                out[k] = get(k, 0) + wx * wy
        return Dist(out, self.den * other.den).reduced()

    def power(self, n: int, budget: Budget, what: str) -> Dist:
        """Sum of ``n`` independent copies."""
        if n == 1:
            return self
        if n == 0:
            return Dist.point(0)
        if self.floats:
            return self._squarings(n, budget, what)
        if not all(self.w.values()):
            # Miller's recurrence divides by the lowest weight: it must not be a zero.
            return Dist({v: x for v, x in self.w.items() if x}, self.den).power(n, budget, what)
        lo, hi = min(self.w), max(self.w)
        span = hi - lo + 1
        out_span = n * (span - 1) + 1
        out_bits = n * self.bits + 1
        # Each step multiplies and (exactly) divides big integers.
        miller = out_span * len(self.w) * (0.1 + 2 * product_cost(out_bits))
        squaring = _squaring_cost(self, n)
        if miller <= squaring or span == 1:
            budget.spend(miller, what)
            return Dist(_miller_power(self.w, lo, span, n), self.den**n).reduced()
        return self._squarings(n, budget, what)

    def _squarings(self, n: int, budget: Budget, what: str) -> Dist:
        """Sum of ``n`` copies by repeated squaring."""
        result: Dist | None = None
        base = self
        while True:
            if n & 1:
                result = base if result is None else result.convolve(base, budget, what)
            n >>= 1
            if not n:
                break
            base = base.convolve(base, budget, what)
        assert result is not None
        return result


def product_cost(bits: int) -> float:
    """Microseconds for one multiply-and-add of weights whose product has ``bits`` bits."""
    growth: float = (bits / 1000) ** 1.585
    return 0.3 + 0.12 * growth


def fraction_cost(d: Dist) -> float:
    """Microseconds to turn every weight into a reduced Fraction (a gcd each, quadratic)."""
    return len(d.w) * (1 + 2e-6 * d.den.bit_length() ** 2)


def _squaring_cost(d: Dist, n: int) -> float:
    span = max(d.w) - min(d.w) + 1
    cost, k = 0.0, 1
    while k < n:
        k *= 2
        cost += _kronecker_cost(k * span, k * d.bits)
    return cost * 0.4


def _kronecker_cost(span: int, bits: int) -> float:
    total_bits = span * (bits + 16)
    growth: float = (total_bits / 1000) ** 1.585
    return span * 0.5 + 0.9 * growth


def _miller_power(w: Mapping[int, int], lo: int, span: int, n: int) -> dict[int, int]:
    """Coefficients of Q(x)**n by J.C.P. Miller's recurrence; Q's lowest weight is nonzero.

    p_0 = q_0**n, p_k = sum_{j=1..min(k,d)} ((n+1) j - k) q_j p_{k-j} / (k q_0), exactly.
    """
    q = [0] * span
    for v, weight in w.items():
        q[v - lo] = weight
    nz = [(j, qj) for j, qj in enumerate(q) if j and qj]
    q0 = q[0]
    size = n * (span - 1) + 1
    p = [0] * size
    p[0] = q0**n
    n1 = n + 1
    for k in range(1, size):
        acc = 0
        for j, qj in nz:
            if j > k:
                break
            acc += (n1 * j - k) * qj * p[k - j]
        p[k] = acc // (k * q0)
    base = n * lo
    return {base + k: c for k, c in enumerate(p) if c}


def conv_weights(a: dict[int, int], b: dict[int, int], budget: Budget, what: str) -> dict[int, int]:
    """Weights of the sum; the cheaper of plain loops and Kronecker substitution."""
    if not a or not b:
        return {}
    if len(a) > len(b):
        a, b = b, a
    if len(a) == 1:
        ((x, wx),) = a.items()
        budget.spend(2 + len(b) * 0.2, what)
        return {x + y: wx * wy for y, wy in b.items()}
    if not _whole(a) or not _whole(b):
        # Exact fractions (inside floor, ceil, round, abs) cannot be packed: plain loops.
        budget.spend(10 + len(a) * len(b) * 3.0, what)
        sums: dict[int, int] = {}
        for x, wx in a.items():
            for y, wy in b.items():
                sums[x + y] = sums.get(x + y, 0) + wx * wy
        return sums
    bits = max(a.values()).bit_length() + max(b.values()).bit_length()
    loops = 10 + len(a) * len(b) * (0.3 + product_cost(bits))
    a_lo, a_hi, b_lo, b_hi = min(a), max(a), min(b), max(b)
    span = (a_hi - a_lo) + (b_hi - b_lo) + 1
    bits = max(a.values()).bit_length() + max(b.values()).bit_length() + len(a).bit_length()
    kron = _kronecker_cost(span, bits)
    if loops <= kron:
        budget.spend(loops, what)
        out: dict[int, int] = {}
        get = out.get
        for x, wx in a.items():
            for y, wy in b.items():
                k = x + y
                out[k] = get(k, 0) + wx * wy
        return out
    budget.spend(kron, what)
    return _kronecker(a, a_lo, a_hi, b, b_lo, b_hi, a is b)


def _whole(d: dict[int, int]) -> bool:
    """Whether every value is a whole number (no exact fraction: see ``Weight``)."""
    return all(type(v) is int for v in d)


def _kronecker(
    a: dict[int, int],
    a_lo: int,
    a_hi: int,
    b: dict[int, int],
    b_lo: int,
    b_hi: int,
    same: bool,
) -> dict[int, int]:
    """Convolution by packing each weight list into one integer and multiplying."""
    bits = max(a.values()).bit_length() + max(b.values()).bit_length()
    bits += min(len(a), len(b)).bit_length() + 1
    nbytes = (bits + 7) // 8

    def pack(d: dict[int, int], lo: int, hi: int) -> int:
        zero = bytes(nbytes)
        chunks = [zero] * (hi - lo + 1)
        for v, w in d.items():
            chunks[v - lo] = w.to_bytes(nbytes, "little")
        return int.from_bytes(b"".join(chunks), "little")

    big_a = pack(a, a_lo, a_hi)
    product = big_a * big_a if same else big_a * pack(b, b_lo, b_hi)
    size = (a_hi - a_lo) + (b_hi - b_lo) + 1
    raw = product.to_bytes(size * nbytes, "little")
    base = a_lo + b_lo
    out: dict[int, int] = {}
    from_bytes = int.from_bytes
    for i in range(size):
        c = from_bytes(raw[i * nbytes : (i + 1) * nbytes], "little")
        if c:
            out[base + i] = c
    return out


class PrunedLaw:
    """A float law's outcomes as (value, p) pairs, most likely first, with the mass of each
    tail, so a convolution with it can stop where the products fall below PRUNE and count what
    it left out. Made once, convolved with many times."""

    __slots__ = ("items", "neg", "tails")

    def __init__(self, law: Mapping[int, float]) -> None:
        self.items = sorted(((k, p) for k, p in law.items() if p > 0), key=lambda kp: -kp[1])
        self.neg = [-p for _, p in self.items]  # ascending, for bisect
        self.tails = [0.0] * (len(self.items) + 1)
        for i in range(len(self.items) - 1, -1, -1):
            self.tails[i] = self.tails[i + 1] + self.items[i][1]

    def __bool__(self) -> bool:
        return bool(self.items)

    def law(self) -> dict[int, float]:
        return dict(self.items)


def conv_floats_into(out: dict[int, float], a: Mapping[int, float], b: PrunedLaw) -> float:
    """Add the law of (a + b) into ``out``, leaving out products below PRUNE; return the mass
    left out."""
    get = out.get
    items, neg, tails = b.items, b.neg, b.tails
    whole = len(items)
    dropped = 0.0
    for ka, pa in a.items():
        if pa <= 0.0:  # underflowed: nothing of it can reach PRUNE
            continue
        stop = bisect.bisect_right(neg, -PRUNE / pa)
        if stop < whole:
            dropped += pa * tails[stop]
            if stop == 0:
                continue
            for kb, pb in items[:stop]:
                k = ka + kb
                out[k] = get(k, 0.0) + pa * pb
        else:
            for kb, pb in items:
                k = ka + kb
                out[k] = get(k, 0.0) + pa * pb
    return dropped


def convolve_weights(a: Sequence[Weight], b: Sequence[Weight]) -> list[Weight]:
    """Convolution of two dense weight lists (ints or floats alike): index i of the answer is
    the weight of a sum i above the sum of the two lists' lowest values."""
    if len(a) > len(b):
        a, b = b, a
    width = len(b)
    out = [0 * b[0]] * (len(a) + width - 1)
    for i, x in enumerate(a):
        if x:
            out[i : i + width] = map(add, out[i : i + width], map(mul, b, repeat(x)))
    return out


def uniform_counts(n: int, faces: int, start: list[int] | None = None) -> list[int]:
    """Ways ``n`` dice of ``faces`` faces (1..faces) add to each sum, convolved into ``start``
    (a dense weight list).

    Index i of the answer is the sum (lowest of ``start``) + n + i. Each die is one sliding
    window sum, done with C-level ``accumulate``/``map`` so big pools stay fast.
    """
    dist = list(start) if start else [1]
    pad = [0] * (faces - 1)
    for _ in range(n):
        prefix = list(accumulate(dist + pad))
        dist = prefix[:faces] + list(map(sub, prefix[faces:], prefix))
    return dist
