"""Rolling a parsed expression: draws every die from the DiceSource handed in.

The tree is compiled once per expression into nested closures (cached on the Expression), so a
roll is a handful of plain calls with no per-roll look-ups of the tree's shape.

Per dice term, dice are drawn slot by slot (one requested die at a time): the die, then its
explosion chain, then rerolls of the dice in that chain, in that order. Everything drawn goes
into ``dice`` in that order, so a verifier can replay the stream from the result alone.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

from ..dice import DieRecord, draw, draw_fudge
from ..errors import RuleError
from ..fair import DiceSource
from ..limits import MAX_CHAIN
from .nodes import Compare, Const, Dice, Group, Neg, Node, Product, Sum
from .parser import Expression
from .printer import render

Roller = Callable[[DiceSource, "Evaluation"], int]


class Evaluation:
    """The outcome of one roll.

    ``value`` is the headline number (successes when the expression counts them, else the
    total); ``total`` is the number the expression came to, which is the same number;
    ``successes`` is ``value`` when counting, else None. ``dice`` lists every die drawn, in
    draw order. ``capped`` says a chain stopped at MAX_CHAIN. ``text`` is printed on first use.
    """

    # The same object collects the dice while the roll runs, so a roll makes one object.
    __slots__ = (
        "_text",
        "capped",
        "dice",
        "expr",
        "field",
        "role",
        "spans",
        "successes",
        "total",
        "value",
    )

    def __init__(self, expr: Expression, role: str) -> None:
        self.expr = expr
        self.field = expr.field
        self.role = role
        self.dice: list[DieRecord] = []
        self.spans: list[tuple[int, int]] = []  # per dice term, its slice of ``dice``
        self.capped = False
        self.value = self.total = 0
        self.successes: int | None = None
        self._text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = render(self.expr, self.dice, self.spans, self.value, self.capped)
        return self._text

    def __repr__(self) -> str:
        return f"Evaluation({self.text!r})"


def evaluate(expr: Expression, source: DiceSource, *, role: str = "base") -> Evaluation:
    """Roll ``expr`` with dice from ``source``; ``role`` is given to dice no keep/drop sorts."""
    roller = expr._cache.get("roller")
    if roller is None:
        roller = expr._cache["roller"] = _compile(expr.root)
    ev = Evaluation(expr, role)
    ev.value = ev.total = value = roller(source, ev)
    if expr.counts:
        ev.successes = value
    return ev


# -- compiling the tree into closures ---------------------------------------------------
def _compile(node: Node) -> Roller:
    if isinstance(node, Const):
        value = node.value
        return lambda src, ctx: value
    if isinstance(node, Group):
        return _compile(node.inner)
    if isinstance(node, Neg):
        inner = _compile(node.operand)
        return lambda src, ctx: -inner(src, ctx)
    if isinstance(node, Sum):
        return _compile_sum(node)
    if isinstance(node, Product):
        return _compile_product(node)
    assert isinstance(node, Dice)
    return _compile_dice(node)


def _compile_sum(node: Sum) -> Roller:
    first = _compile(node.first)
    rest = tuple((sign, _compile(child)) for sign, child in node.rest)
    if len(rest) == 1:
        ((sign, second),) = rest
        child = node.rest[0][1]
        if isinstance(child, Const):
            # "1d20 + 5": the commonest shape, one call fewer.
            const = child.value * sign
            return lambda src, ctx: first(src, ctx) + const
        if sign > 0:
            return lambda src, ctx: first(src, ctx) + second(src, ctx)
        return lambda src, ctx: first(src, ctx) - second(src, ctx)

    def roll_sum(src: DiceSource, ctx: Evaluation) -> int:
        total = first(src, ctx)
        for sign, fn in rest:
            total += fn(src, ctx) if sign > 0 else -fn(src, ctx)
        return total

    return roll_sum


def divide(a: int, b: int, field: str, col: int) -> int:
    """Integer division rounding toward zero (RULES.md: ``/`` rounds toward zero)."""
    if b == 0:
        raise RuleError(field, f"division by zero: the divisor at column {col} came to 0")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _compile_product(node: Product) -> Roller:
    first = _compile(node.first)
    rest = tuple((op, _compile(child), child.col) for op, child in node.rest)

    def roll_product(src: DiceSource, ctx: Evaluation) -> int:
        value = first(src, ctx)
        for op, fn, col in rest:
            if op == "*":
                value *= fn(src, ctx)
            else:
                value = divide(value, fn(src, ctx), ctx.field, col)
        return value

    return roll_product


def _keep_order(values: list[int], keep: str, n: int) -> list[int]:
    """Indices of the dropped units. Among equal values the earlier die is kept."""
    m = len(values)
    if keep == "kh":
        k, highest = n, True
    elif keep == "kl":
        k, highest = n, False
    elif keep == "dh":
        k, highest = m - n, False
    else:  # "dl"
        k, highest = m - n, True
    if k >= m:
        return []
    if k <= 0:
        return list(range(m))
    if k == m - 1:
        # Drop one (4d6kh3, 2d20kh1): the last of the lowest (or highest) goes.
        worst = min(values) if highest else max(values)
        return [m - 1 - values[::-1].index(worst)]
    # sorted() is stable, also with reverse=True, so ties keep the earlier die.
    return sorted(range(m), key=values.__getitem__, reverse=highest)[k:]


def _compile_dice(die: Dice) -> Roller:
    if die.plain:
        return _compile_plain(die)
    return _compile_chains(die)


def _compile_plain(die: Dice) -> Roller:
    """No explosion, no reroll: one die drawn per requested die (the fast path)."""
    count, sides, keep, keep_n = die.count, die.sides, die.keep, die.keep_n
    fudge = die.kind == "fudge"
    slots = range(count)
    counting = die.counts
    success_set, failure_set = die.success_set, die.failure_set

    def roll_plain(src: DiceSource, ctx: Evaluation) -> int:
        dice = ctx.dice
        start = len(dice)
        if fudge:
            role = "kept" if keep else ctx.role
            recs = [draw_fudge(src, role) for _ in slots]
        elif keep:
            recs = [draw(src, sides, "kept") for _ in slots]
        else:
            role = ctx.role
            recs = [draw(src, sides, role) for _ in slots]
        dice += recs
        ctx.spans.append((start, start + count))
        if not keep and not counting:
            total = 0
            for r in recs:
                total += r["value"]
            return total
        values: list[Any] = [r["value"] for r in recs]
        if keep:
            for i in _keep_order(values, keep, keep_n):
                recs[i]["role"] = "dropped"
                values[i] = None
        if not counting:
            total = 0
            for v in values:
                if v is not None:
                    total += v
            return total
        return _score(recs, values, success_set, failure_set)

    return roll_plain


def _score(
    records: list[Any], values: list[Any], success_set: Container[int], failure_set: Container[int]
) -> int:
    """Success counting: +1 per counted value in ``success_set``, -1 per one in
    ``failure_set`` (a value left out by keep/drop is None), marking each die's record."""
    score = 0
    for rec, v in zip(records, values, strict=True):
        if v is None:
            continue
        if v in success_set:
            rec["success"] = True
            score += 1
        if v in failure_set:
            rec["failure"] = True
            score -= 1
    return score


class _Matching:
    """``value in _Matching(...)``: true when any comparison matches (inclusive)."""

    __slots__ = ("compares",)

    def __init__(self, *compares: Compare | None) -> None:
        self.compares = tuple(c for c in compares if c is not None)

    def __contains__(self, value: int) -> bool:
        return any(c.matches(value) for c in self.compares)


def _compile_chains(die: Dice) -> Roller:
    """Explosions and/or rerolls. A *unit* is what keep/drop and counting see: a die of its
    own for ``!``, a die and everything compounded onto it for ``!!``."""
    count, sides, keep, keep_n = die.count, die.sides, die.keep, die.keep_n
    fudge = die.kind == "fudge"
    explode, explode_set = die.explode, die.explode_set
    reroll, reroll_set = die.reroll, die.reroll_set
    counting = die.counts
    success_set, failure_set = die.success_set, die.failure_set
    if explode == "!!":
        # A compounded die can go past the faces: test its total against the comparisons.
        success_set = _Matching(die.success)  # type: ignore[assignment]
        failure_set = _Matching(die.failure)  # type: ignore[assignment]
        unit_rerolls = _Matching(*die.reroll_on)
    else:
        unit_rerolls = reroll_set  # type: ignore[assignment]

    def one(src: DiceSource, role: str, **extra: Any) -> DieRecord:
        if fudge:
            return draw_fudge(src, role, **extra)
        return draw(src, sides, role, **extra)

    def roll_chains(src: DiceSource, ctx: Evaluation) -> int:
        dice = ctx.dice
        start = len(dice)
        role = "kept" if keep else ctx.role
        units: list[list[Any]] = []  # [value, records]
        for _ in range(count):
            rec = one(src, role)
            dice.append(rec)
            value = rec["value"]
            slot: list[list[Any]] = [[value, [rec]]]
            if explode:
                extra = 0
                while value in explode_set:
                    if extra == MAX_CHAIN:
                        rec["capped"] = True
                        ctx.capped = True
                        break
                    extra += 1
                    rec = one(src, role, exploded=True)
                    dice.append(rec)
                    value = rec["value"]
                    if explode == "!":
                        slot.append([value, [rec]])
                    else:
                        slot[0][0] += value
                        slot[0][1].append(rec)
            if reroll:
                for unit in slot:
                    if unit[0] not in unit_rerolls:
                        continue
                    for old in unit[1]:
                        old["role"] = "rerolled"
                    # A rerolled die does not explode again: plain draws from here on.
                    for attempt in range(1 if reroll == "ro" else MAX_CHAIN):
                        rec = one(src, role)
                        dice.append(rec)
                        value = rec["value"]
                        if reroll == "ro" or value not in reroll_set:
                            break
                        if attempt < MAX_CHAIN - 1:
                            rec["role"] = "rerolled"
                    else:
                        # Only r gets here: MAX_CHAIN rerolls all in range; the last stands.
                        rec["capped"] = True
                        ctx.capped = True
                    unit[0] = value
                    unit[1] = [rec]
            units.extend(slot)
        ctx.spans.append((start, len(dice)))
        values: list[int | None] = [u[0] for u in units]
        if keep:
            for i in _keep_order(values, keep, keep_n):  # type: ignore[arg-type]
                for rec in units[i][1]:
                    rec["role"] = "dropped"
                values[i] = None
        if not counting:
            return sum(v for v in values if v is not None)
        # A chain's first record speaks for it.
        return _score([unit[1][0] for unit in units], values, success_set, failure_set)

    return roll_chains
