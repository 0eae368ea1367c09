"""Exact odds of a dice expression's headline number.

The odds describe the engine as built, including its caps: an explosion chain stops after
MAX_CHAIN extra dice, a die is rerolled at most MAX_CHAIN times. A chain whose chance of going
on is below ``ODDS_TAIL / dice`` is cut there instead (its last die then simply stands), so at
most ODDS_TAIL of probability sits on slightly wrong numbers and the total mass stays 1. (Only
``!`` pools with dh/dl leave their tail out instead, below ODDS_TAIL; the odds answer
renormalises.)

Terms are independent of each other, so the tree combines term distributions by convolution
(``+ -``) and by pairing outcomes (``* /``). See keep.py for keep/drop.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from ..dist import Budget, Dist, fraction_cost, product_cost
from ..errors import OddsTooLarge, RuleError
from ..limits import MAX_CHAIN, ODDS_TAIL
from .keep import drop_exploding, keep_exploding, keep_fixed
from .nodes import Const, Dice, Group, Neg, Node, Product, Sum
from .parser import Expression


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
    first = expr.dice_terms[0] if expr.dice_terms else None
    if (
        first is None
        or first.count != 1
        or first.kind != "number"
        or first.sides != sides
        or not first.plain
        or first.keep is not None
        or first.counts
    ):
        return {None: distribution(expr, budget)}
    key = f"joint:{sides}"
    cached = expr._cache.get(key)
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
            expr._cache[key] = cached
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
        if isinstance(node, Const):
            return Dist.point(node.value)
        if isinstance(node, Group):
            return self.dist(node.inner)
        if isinstance(node, Neg):
            return self.dist(node.operand).neg()
        if isinstance(node, Sum):
            out = self.dist(node.first)
            for sign, child in node.rest:
                d = self.dist(child)
                out = out.convolve(d if sign > 0 else d.neg(), self.budget, "this sum")
            return out
        if isinstance(node, Product):
            return self._product(node)
        assert isinstance(node, Dice)
        return _term(node, self)

    def _product(self, node: Product) -> Dist:
        out = self.dist(node.first)
        field = self.field
        for op, child in node.rest:
            d = self.dist(child)
            if op == "*":
                out = out.combine(d, int.__mul__, self.budget, "this product")
            else:
                if d.w.get(0):
                    raise RuleError(
                        field,
                        f"the divisor at column {child.col} can come to 0, "
                        "so the roll can fail with a division by zero",
                    )
                out = out.combine(d, _toward_zero, self.budget, "this division")
        return out


def _toward_zero(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _ancestors(root: Node, target: Dice) -> set[int]:
    """ids of the nodes on the way from ``root`` down to ``target``."""
    path: list[Node] = []

    def find(node: Node) -> bool:
        path.append(node)
        if node is target:
            return True
        children: list[Node] = []
        if isinstance(node, Neg):
            children = [node.operand]
        elif isinstance(node, Group):
            children = [node.inner]
        elif isinstance(node, (Sum, Product)):
            children = [node.first, *(c for _, c in node.rest)]
        for child in children:
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
    """Sub-distribution of the value that counts for a die whose first face is one of
    ``originals`` (each with chance 1/n), after any reroll."""
    if rep is None:
        return Dist(dict.fromkeys(originals, 1), n)
    rerolled = sum(1 for x in originals if x in die.reroll_set)
    w = {v: rw * rerolled for v, rw in rep.w.items()} if rerolled else {}
    for x in originals:
        if x not in die.reroll_set:
            w[x] = w.get(x, 0) + rep.den
    return Dist(w, n * rep.den)


def _term(die: Dice, st: _State) -> Dist:
    budget, eps = st.budget, st.eps
    what = die.notation()
    faces = die.faces
    n = len(faces)
    rep = _replacement(die, eps) if die.reroll else None
    score = die.score

    if die.explode and not die.explode_set:
        # "d6!>7": no face can explode, so the dice are plain.
        unit = _finals(die, list(faces), rep, n).reduced()
    elif die.explode == "!!":
        unit = _compound(die, rep, budget, eps, what)
    elif die.explode == "!":
        exploding = [f for f in faces if f in die.explode_set]
        stopping = [f for f in faces if f not in die.explode_set]
        fe, fn = _finals(die, exploding, rep, n), _finals(die, stopping, rep, n)
        if die.keep is not None:
            return _exploding_pool(die, fe, fn, st)
        # No keep/drop: one slot is a chain of scores, the term the sum of its slots.
        sfe, sfn = fe.map(score), fn.map(score)
        p = Fraction(len(exploding), n)
        chain = sfe.plus_mass(sfn)  # the last die of a chain at its cap just stands
        for _ in range(_depth(p, eps)):
            budget.spend(_mixing_cost(chain), what)
            chain = sfn.plus_mass(sfe.convolve(chain, budget, what)).reduced()
        return chain.power(die.count, budget, what)
    else:
        unit = _finals(die, list(faces), rep, n).reduced()

    return _pool(die, unit, budget, what)


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
    e = Dist({f: 1 for f in faces if f in die.explode_set}, n)
    s = Dist({f: 1 for f in faces if f not in die.explode_set}, n)
    chain = Dist.uniform(faces)
    for _ in range(_depth(Fraction(len(e.w), n), eps)):
        budget.spend(_mixing_cost(chain), what)
        chain = s.plus_mass(e.convolve(chain, budget, what)).reduced()
    if rep is None:
        return chain
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
