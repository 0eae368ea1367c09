"""Exact odds of a dice expression's headline number.

The odds describe the engine as built, including its caps: an explosion chain stops after
MAX_CHAIN extra dice, a die is rerolled at most MAX_CHAIN times. A chain whose chance of going
on is below ``ODDS_TAIL / dice`` is cut there instead (its last die then simply stands), so at
most ODDS_TAIL of probability sits on slightly wrong numbers and the total mass stays 1. (Only
``!`` pools with dh/dl leave their tail out instead, below ODDS_TAIL; the odds answer
renormalises.)

Terms are independent of each other, so the tree combines term distributions by convolution
(``+ -``) and by pairing outcomes (``* / % **``, ``min``, ``max``); a computed term (``(1d4)d6``)
is the mixture of its terms for each count and size. Inside ``floor ceil round abs`` values
are exact fractions until the function makes the integer. See keep.py for keep/drop, matching
and groups.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from fractions import Fraction
from typing import cast

from ..dist import Budget, Dist, fraction_cost, product_cost
from ..errors import OddsTooLarge, RuleError
from ..limits import MAX_CHAIN, ODDS_TAIL
from .arithmetic import ROUNDING_OF, exact_quotient, remainder, toward_zero
from .expression import Expression
from .keep import drop_exploding, keep_exploding, keep_fixed, keep_mixed, match_sets
from .nodes import (
    Call,
    Const,
    Dice,
    Group,
    Labelled,
    Neg,
    Node,
    Power,
    Product,
    RollGroup,
    Sum,
    children,
)
from .parser import check_term

# A law's values are typed as whole numbers (see dist.Weight): inside floor, ceil, round and
# abs a quotient, or a remainder, is an exact fraction that the law carries like any other value
# until the function makes it whole.
_EXACT_QUOTIENT = cast(Callable[[int, int], int], exact_quotient)
_REMAINDER = cast(Callable[[int, int], int], remainder)


def distribution(expr: Expression, budget: Budget | None = None) -> dict[int, Fraction]:
    """P(headline = t) for every t, exactly (see the module note on long chains).

    Raises OddsTooLarge (naming the expression's field) past the size cap, or past the
    ``budget`` handed in (its limit or deadline).
    """
    cached = expr._cache.get("dist")
    if cached is None:
        weights = _weights(expr, fraction_cost, budget)
        cached = weights.fractions()
        if _small(weights):
            expr._cache["dist"] = cached
    return dict(cached)


def odds_table(
    expr: Expression, at_least: int | None, budget: Budget | None = None
) -> tuple[dict[int, float], float | None]:
    """The headline odds as floats, and P(headline >= at_least) (None without a threshold).

    Same numbers as ``distribution``, but each float is rounded once from the exact integer
    weights: thousands of huge Fractions (1000d6 has 5001 of ~2600 bits) would each cost a gcd.
    """
    # Each entry also costs a few microseconds in the JSON answer built from the table.
    d = _weights(expr, lambda d: len(d.w) * 5.0, budget)
    den = d.den
    table = {t: w / den for t, w in sorted(d.w.items()) if w}
    if at_least is None:
        return table, None
    hits = sum(w for t, w in d.w.items() if t >= at_least)
    return table, hits / sum(d.w.values())


def _weights(expr: Expression, finish: Callable[[Dist], float], budget: Budget | None) -> Dist:
    """The exact weights, computed once; ``finish`` estimates what the caller then spends on
    them, counted against the same budget so the whole request stays under the cap."""
    budget = (budget or Budget()).naming(expr.field)
    cached = expr._cache.get("weights")
    if cached is None:
        state = _State(expr, budget)
        weights = state.dist(expr.root)
        budget.spend(finish(weights), "this many outcomes")
        if _small(weights):
            expr._cache["weights"] = weights
        return weights
    budget.spend(finish(cached), "this many outcomes")
    return cached


def _small(d: Dist) -> bool:
    """Worth keeping on the (cached, shared) Expression: thousands of parsed expressions stay
    in memory, so only odds of modest size ride along (1000d6's weights are ~1.6 MB)."""
    return len(d.w) * d.den.bit_length() < 1_000_000


def joint_with_first_die(
    expr: Expression, sides: int, budget: Budget | None = None
) -> dict[int | None, dict[int, Fraction]]:
    """P(first die = n and headline = t) as ``{n: {t: p}}``.

    Only when the first dice term drawn is a lone plain ``1dN``/``dN`` with N == ``sides`` (a
    check like ``1d20+7``); otherwise ``{None: distribution(expr)}``.
    """
    first = expr.lone_first_die(sides)
    if first is None:
        return {None: distribution(expr, budget)}
    joints = expr._cache.setdefault("joint", {})
    cached = joints.get(sides)
    if cached is None:
        state = _State(expr, (budget or Budget()).naming(expr.field), fixed=first)
        cached = {}
        small = True
        for n in range(1, sides + 1):
            state.override = Dist.point(n)
            given_n = state.dist(expr.root)
            # Exact fractions cost a gcd each: count them against the same budget.
            state.budget.spend(len(given_n.w) * (1 + given_n.den.bit_length() / 200), "this check")
            small = small and _small(given_n)
            cached[n] = Dist(given_n.w, given_n.den * sides).fractions()
        if small:
            joints[sides] = cached
    return {n: dict(d) for n, d in cached.items()}


class _State:
    """One odds computation: its budget, and memoised distributions of the parts that do
    not depend on the die held fixed by ``joint_with_first_die``."""

    def __init__(self, expr: Expression, budget: Budget, fixed: Dice | None = None) -> None:
        self.expr = expr
        self.field = expr.field
        self.budget = budget
        self.eps = ODDS_TAIL / max(1, expr.dice_count)
        self.fixed = fixed
        self.override: Dist | None = None
        self.memo: dict[int, Dist] = {}
        self.on_path = _ancestors(expr.root, fixed) if fixed is not None else set()

    def dist(self, node: Node) -> Dist:
        if node is self.fixed:
            assert self.override is not None
            return self.override
        key = id(node)
        if key not in self.on_path and key in self.memo:
            return self.memo[key]
        out = self._dist(node)
        if key not in self.on_path:
            self.memo[key] = out
        return out

    def _dist(self, node: Node) -> Dist:
        budget = self.budget
        if isinstance(node, Const):
            return Dist.point(node.value)
        if isinstance(node, (Group, Labelled)):
            return self.dist(node.inner)
        if isinstance(node, Neg):
            return self.dist(node.operand).neg()
        if isinstance(node, Sum):
            out = self.dist(node.first)
            for sign, child in node.rest:
                d = self.dist(child)
                out = out.convolve(d if sign > 0 else d.neg(), budget, "this sum")
            return out
        if isinstance(node, Product):
            return self._product(node)
        if isinstance(node, Power):
            base, exponent = self.dist(node.base), self.dist(node.exponent)
            return base.combine(exponent, pow, budget, "this power")
        if isinstance(node, Call):
            args = [self.dist(a) for a in node.args]
            if node.name not in ROUNDING_OF:
                pick = min if node.name == "min" else max
                out = args[0]
                for d in args[1:]:
                    out = out.combine(d, pick, budget, f"this {node.name}")
                return out
            budget.spend(len(args[0].w), node.name)
            return args[0].map(ROUNDING_OF[node.name])
        if isinstance(node, RollGroup):
            return self._group(node)
        assert isinstance(node, Dice)
        if node.computed:
            return self._computed(node)
        return _term(node, self)

    def _product(self, node: Product) -> Dist:
        out = self.dist(node.first)
        field = self.field
        for op, child in node.rest:
            d = self.dist(child)
            if op == "*":
                out = out.combine(d, operator.mul, self.budget, "this product")
                continue
            if d.w.get(0):
                raise RuleError(
                    field,
                    f"the divisor at column {child.col} can come to 0, "
                    "so the roll can fail with a division by zero",
                )
            if op == "%":
                out = out.combine(d, _REMAINDER, self.budget, "this remainder")
            elif node.exact:
                out = out.combine(d, _EXACT_QUOTIENT, self.budget, "this division")
            else:
                out = out.combine(d, toward_zero, self.budget, "this division")
        return out

    def _computed(self, die: Dice) -> Dist:
        """``(1d4)d6``: the term for each count and size, weighed by their chances."""
        counts = self.dist(die.count_node) if die.count_node is not None else Dist.point(die.count)
        sizes = self.dist(die.sides_node) if die.sides_node is not None else Dist.point(die.sides)
        parts = []
        what = die.notation()
        for count, wc in counts.w.items():
            for sides, ws in sizes.w.items():
                # Making the term for this size (its faces and face sets) costs per face.
                self.budget.spend(30 + 1.5 * sides, what)
                if not count:
                    term = Dist.point(0)
                else:
                    concrete = die.concrete(count, sides)
                    check_term(concrete, self.field)
                    term = _term(concrete, self)
                parts.append(term.weighted(wc * ws, counts.den * sizes.den))
        return Dist.mixture(parts, self.budget, what)

    def _group(self, node: RollGroup) -> Dist:
        budget, what = self.budget, "this group"
        if node.pooled:
            units: list[Dist] = []
            for die in node.pooled:
                units += [_unit(die, self)] * die.count
        else:
            units = [self.dist(m) for m in node.members]
        keep, n = node.keep, node.keep_n
        if keep in ("dh", "dl"):
            keep, n = ("kl" if keep == "dh" else "kh"), len(units) - n
        if keep is None or n >= len(units):
            out = Dist.point(0)
            for unit in units:
                out = out.convolve(unit.map(node.score).reduced(), budget, what)
            return out
        if n <= 0:
            return Dist.point(0)
        return keep_mixed(units, n, keep == "kh", node.score, budget, what)


def _ancestors(root: Node, target: Dice) -> set[int]:
    """ids of the nodes on the way from ``root`` down to ``target``."""
    path: list[Node] = []

    def find(node: Node) -> bool:
        path.append(node)
        if node is target:
            return True
        for child in children(node):
            if find(child):
                return True
        path.pop()
        return False

    find(root)
    return {id(n) for n in path}


# -- one dice term -----------------------------------------------------------------------
def _depth(p: Fraction, eps: float) -> int:
    """How long a chain continuing with probability ``p`` each step must be followed: the
    cap, or less when the chance of going further is already below ``eps``."""
    depth, tail = 0, 1.0
    pf = float(p)
    while depth < MAX_CHAIN and tail >= eps:
        depth += 1
        tail *= pf
    return depth


def _replacement(die: Dice, eps: float) -> Dist:
    """The value that replaces a rerolled die: one fresh die (``ro``), or fresh dice until
    one falls outside the reroll range, at most MAX_CHAIN of them (``r``)."""
    faces = die.faces
    n = len(faces)
    if die.reroll == "ro":
        return Dist.uniform(faces)
    r = len(die.reroll_set)
    depth = _depth(Fraction(r, n), eps)
    # Draw 1..depth: stop at the first face outside the range; the last draw always stands.
    stay = sum(r**i * n ** (depth - 1 - i) for i in range(depth))
    w = {f: (r ** (depth - 1) if f in die.reroll_set else stay) for f in faces}
    return Dist(w, n**depth).reduced()


def _finals(die: Dice, originals: list[int], rep: Dist | None, n: int) -> Dist:
    """Sub-distribution of the face that counts for a die whose first face is one of
    ``originals`` (each with chance 1/n), after any reroll."""
    if rep is None:
        return Dist(dict.fromkeys(originals, 1), n)
    rerolled = sum(1 for x in originals if x in die.reroll_set)
    w = {v: rw * rerolled for v, rw in rep.w.items()} if rerolled else {}
    for x in originals:
        if x not in die.reroll_set:
            w[x] = w.get(x, 0) + rep.den
    return Dist(w, n * rep.den)


def _unit(die: Dice, st: _State) -> Dist:
    """What one die of a term without separate explosions counts as (after its compounding,
    rerolls and min/max): the unit keep/drop and counting see."""
    faces = die.faces
    n = len(faces)
    rep = _replacement(die, st.eps) if die.reroll else None
    if die.separate and die.explode_set:
        raise OddsTooLarge(
            st.field,
            f"exact odds for {die.notation()} are not offered: its explosions add dice to a "
            "pool that is kept, counted or matched as a whole; rolling it still works",
        )
    if die.explode == "!!" and die.explode_set:
        return _compound(die, rep, st.budget, st.eps, die.notation())
    return _finals(die, list(faces), rep, n).map(die.show).reduced()


def _term(die: Dice, st: _State) -> Dist:
    budget, eps = st.budget, st.eps
    what = die.notation()
    faces = die.faces
    n = len(faces)
    score, show = die.score, die.show
    if die.match == "mt":
        return match_sets(_unit(die, st), die, budget, what)
    if not (die.separate and die.explode_set):
        return _pool(die, _unit(die, st), budget, what)
    rep = _replacement(die, eps) if die.reroll else None
    exploding = [f for f in faces if f in die.explode_set]
    stopping = [f for f in faces if f not in die.explode_set]
    fe, fn = _finals(die, exploding, rep, n), _finals(die, stopping, rep, n)
    penetrate = 1 if die.explode == "!p" else 0
    if die.keep is not None:
        if penetrate:
            raise OddsTooLarge(
                st.field,
                f"exact odds for {what} are not offered: penetrating dice that are kept or "
                "dropped; rolling it still works",
            )
        return _exploding_pool(die, fe.map(show), fn.map(show), st)
    # No keep/drop: one slot is a chain of scores, the term the sum of its slots. A die added
    # by a penetrating explosion counts one less than it shows.
    p = Fraction(len(exploding), n)

    def added(f: int) -> int:
        return score(show(f) - penetrate)

    ae, an = fe.map(added), fn.map(added)
    chain = ae.plus_mass(an)  # the last die of a chain at its cap just stands
    depth = _depth(p, eps)
    for _ in range(depth - 1):
        budget.spend(_mixing_cost(chain), what)
        chain = an.plus_mass(ae.convolve(chain, budget, what)).reduced()
    if penetrate:
        ae, an = fe.map(lambda f: score(show(f))), fn.map(lambda f: score(show(f)))
    budget.spend(_mixing_cost(chain), what)
    chain = an.plus_mass(ae.convolve(chain, budget, what)).reduced()
    return chain.power(die.count, budget, what)


def _mixing_cost(d: Dist) -> float:
    """Adding one step of a chain: rescaling and reducing every weight, twice over."""
    return 5 + len(d.w) * 4 * product_cost(d.den.bit_length())


def _pool(die: Dice, unit: Dist, budget: Budget, what: str) -> Dist:
    """``count`` independent units, then keep/drop, then the score of what is kept."""
    count, score = die.count, die.score
    if die.keep is None:
        return unit.map(score).reduced().power(count, budget, what)
    keep, n = die.keep, die.keep_n
    if keep in ("dh", "dl"):
        # On a fixed number of dice, dropping n highest is keeping count - n lowest.
        keep, n = ("kl" if keep == "dh" else "kh"), count - n
    if n >= count:
        return unit.map(score).reduced().power(count, budget, what)
    if n <= 0:
        return Dist.point(0)
    return keep_fixed(unit, count, n, keep == "kh", score, budget, what)


def _compound(die: Dice, rep: Dist | None, budget: Budget, eps: float, what: str) -> Dist:
    """One ``!!`` die: the sum of its explosion chain, then a reroll of that total."""
    faces = die.faces
    n = len(faces)
    e = Dist(dict.fromkeys((f for f in faces if f in die.explode_set), 1), n).map(die.show)
    s = Dist(dict.fromkeys((f for f in faces if f not in die.explode_set), 1), n).map(die.show)
    chain = Dist.uniform(faces).map(die.show)
    for _ in range(_depth(Fraction(len(e.w), n), eps)):
        budget.spend(_mixing_cost(chain), what)
        chain = s.plus_mass(e.convolve(chain, budget, what)).reduced()
    if rep is None:
        return chain
    rep = rep.map(die.show)
    rerolled = sum(cw for v, cw in chain.w.items() if die.rerolls(v))
    w = {r: rw * rerolled for r, rw in rep.w.items()} if rerolled else {}
    for v, cw in chain.w.items():
        if not die.rerolls(v):
            w[v] = w.get(v, 0) + cw * rep.den
    return Dist(w, chain.den * rep.den).reduced()


def _exploding_pool(die: Dice, fe: Dist, fn: Dist, st: _State) -> Dist:
    """``!`` with keep/drop: every die of every chain joins one pool of variable size."""
    what = die.notation()
    n = len(die.faces)
    p = Fraction(len(die.explode_set), n)
    if die.count * float(p) ** MAX_CHAIN >= ODDS_TAIL:
        raise OddsTooLarge(
            st.field,
            f"exact odds for {what} are not offered: its explosions run to the cap of "
            f"{MAX_CHAIN} extra dice too often; rolling it still works",
        )
    if die.keep in ("dh", "dl"):
        return drop_exploding(
            fe.w, fn.w, p, die.count, die.keep_n, die.keep == "dl", die.score, st.budget, what,
            st.eps,
        )  # fmt: skip
    if die.keep_n <= 0:
        return Dist.point(0)
    # fe/fn are sub-distributions (masses p and 1 - p); the DP wants P(value | exploded) * p
    # for the exploding dice and P(value | stopped) for the stopping ones.
    q = {v: Fraction(w, fe.den) for v, w in fe.w.items()}
    mass_n = fn.mass()
    r = {v: Fraction(w, fn.den) / mass_n for v, w in fn.w.items()}
    return keep_exploding(
        q, r, 1 - p, die.count, die.keep_n, die.keep == "kh", die.score, st.budget, what
    )
