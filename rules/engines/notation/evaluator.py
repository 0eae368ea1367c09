"""Rolling a parsed expression: draws every die from the DiceSource handed in.

The tree is compiled once per expression into nested closures (cached on the Expression), so a
roll is a handful of plain calls with no per-roll look-ups of the tree's shape.

Per dice term, dice are drawn slot by slot (one requested die at a time): the die, then its
explosion chain, then rerolls of the dice in that chain, in that order. Everything drawn goes
into ``dice`` in that order, so a verifier can replay the stream from the result alone. A
computed term (``(1d4)d6``) rolls its count and size first.

Each die's record keeps the face drawn in ``value``; a die that counts as something else (held
within ``min``/``max``, or one less after a penetrating explosion) says so in ``counts_as``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, Unpack, cast

from ..dice import DieMarks, DieRecord, Role, draw, draw_fudge
from ..errors import RuleError
from ..fair import DiceSource
from ..limits import MAX_CHAIN
from .arithmetic import ROUNDING_OF, Number, exact_quotient, power, remainder, toward_zero
from .expression import Expression
from .nodes import (
    Call,
    Compare,
    Const,
    Dice,
    Group,
    Keep,
    Labelled,
    Neg,
    Node,
    Power,
    Product,
    RollGroup,
    Sum,
)
from .parser import check_term
from .printer import Mark, Member, render

Roller = Callable[[DiceSource, "Evaluation"], Number]
N = TypeVar("N", bound=Number)
# A unit is what keep/drop and counting see: [value it counts as, its records, the face that
# rerolls test]. A list rather than a class: one is made per die in the rolling loop, and
# updated in place as its chain grows.
Unit = list[Any]
UnitRoller = Callable[[DiceSource, "Evaluation", Role], list[Unit]]


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
        "groups",
        "role",
        "spans",
        "successes",
        "total",
        "value",
    )

    def __init__(self, expr: Expression, role: Role) -> None:
        self.expr = expr
        self.field = expr.field
        self.role = role
        self.dice: list[DieRecord] = []
        self.spans: list[tuple[int, int]] = []  # per dice term, its slice of ``dice``
        self.groups: list[list[Member]] = []  # per group, (value, mark) per member
        self.capped = False
        self.value = self.total = 0
        self.successes: int | None = None
        self._text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = render(
                self.expr, self.dice, self.spans, self.groups, self.value, self.capped
            )
        return self._text

    def __repr__(self) -> str:
        return f"Evaluation({self.text!r})"


def evaluate(expr: Expression, source: DiceSource, *, role: Role = "base") -> Evaluation:
    """Roll ``expr`` with dice from ``source``; ``role`` is given to dice no keep/drop sorts."""
    roller = expr._cache.get("roller")
    if roller is None:
        roller = expr._cache["roller"] = _compile(expr.root)
    ev = Evaluation(expr, role)
    # Fractions live only inside floor, ceil, round and abs, which make them whole again.
    ev.value = ev.total = value = cast(int, roller(source, ev))
    if expr.counts:
        ev.successes = value
    return ev


# -- compiling the tree into closures ---------------------------------------------------
def _compile(node: Node) -> Roller:
    if isinstance(node, Const):
        value = node.value
        return lambda src, ctx: value
    if isinstance(node, (Group, Labelled)):
        return _compile(node.inner)
    if isinstance(node, Neg):
        inner = _compile(node.operand)
        return lambda src, ctx: -inner(src, ctx)
    if isinstance(node, Sum):
        return _compile_sum(node)
    if isinstance(node, Product):
        return _compile_product(node)
    if isinstance(node, Power):
        base, exponent = _compile(node.base), _compile(node.exponent)
        return lambda src, ctx: power(base(src, ctx), exponent(src, ctx))
    if isinstance(node, Call):
        return _compile_call(node)
    if isinstance(node, RollGroup):
        return _compile_group(node)
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

    def roll_sum(src: DiceSource, ctx: Evaluation) -> Number:
        total = first(src, ctx)
        for sign, fn in rest:
            total += fn(src, ctx) if sign > 0 else -fn(src, ctx)
        return total

    return roll_sum


def _nonzero(b: N, field: str, col: int) -> N:
    if b == 0:
        raise RuleError(field, f"division by zero: the divisor at column {col} came to 0")
    return b


def _compile_product(node: Product) -> Roller:
    first = _compile(node.first)
    # Outside floor, ceil, round and abs (``exact``) a product's numbers are whole.
    quotient = exact_quotient if node.exact else cast(Callable[[Number, Number], int], toward_zero)
    ops: dict[str, Callable[[Number, Number], Number]] = {"/": quotient, "%": remainder}
    rest = tuple((ops.get(op), _compile(child), child.col) for op, child in node.rest)

    def roll_product(src: DiceSource, ctx: Evaluation) -> Number:
        value = first(src, ctx)
        for fn, arg, col in rest:
            if fn is None:
                value *= arg(src, ctx)
            else:
                value = fn(value, _nonzero(arg(src, ctx), ctx.field, col))
        return value

    return roll_product


def _compile_call(node: Call) -> Roller:
    args = tuple(_compile(a) for a in node.args)
    if node.name in ROUNDING_OF:
        fn = ROUNDING_OF[node.name]
        (arg,) = args
        return lambda src, ctx: fn(arg(src, ctx))
    if len(args) == 1:
        return args[0]
    pick = min if node.name == "min" else max
    return lambda src, ctx: pick(a(src, ctx) for a in args)


def _keep_order(values: Sequence[Number], keep: Keep, n: int) -> list[int]:
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


# -- groups -----------------------------------------------------------------------------
def _compile_group(node: RollGroup) -> Roller:
    if node.pooled:
        return _compile_pooled(node)
    members = tuple(_compile(m) for m in node.members)
    keep, keep_n, counting = node.keep, node.keep_n, node.counts

    def roll_group(src: DiceSource, ctx: Evaluation) -> Number:
        values: list[Any] = []
        spans: list[tuple[int, int]] = []
        for member in members:
            start = len(ctx.dice)
            values.append(member(src, ctx))
            spans.append((start, len(ctx.dice)))
        marks: list[Mark] = [""] * len(values)
        kept: list[Any] = list(values)
        if keep:
            for i in _keep_order(values, keep, keep_n):
                marks[i] = "dropped"
                kept[i] = None
                start, end = spans[i]
                for rec in ctx.dice[start:end]:
                    rec["role"] = "dropped"
        total = 0
        for i, v in enumerate(kept):
            if v is None:
                continue
            if counting:
                score = node.score(v)
                marks[i] = "success" if score > 0 else ("failure" if score < 0 else "")
                total += score
            else:
                total += v
        ctx.groups.append(list(zip(values, marks, strict=True)))
        return total

    return roll_group


def _compile_pooled(node: RollGroup) -> Roller:
    """``{4d6+3d8}k4``: every die of every term in one pool, kept and counted one by one."""
    terms = tuple(_unit_roller(d) for d in node.pooled)
    keep, keep_n, counting = node.keep, node.keep_n, node.counts
    success = _Matching(node.success)
    failure = _Matching(node.failure)

    def roll_pooled(src: DiceSource, ctx: Evaluation) -> Number:
        role: Role = "kept" if keep else ctx.role
        units: list[Unit] = []
        for term in terms:
            units += term(src, ctx, role)
        ctx.groups.append([])
        return _finish(units, keep, keep_n, counting, success, failure)

    return roll_pooled


# -- dice terms -------------------------------------------------------------------------
def _compile_dice(die: Dice) -> Roller:
    if die.computed:
        return _compile_computed(die)
    if die.plain and not (die.match or die.crit_success or die.crit_failure):
        return _compile_plain(die)
    units_of = _unit_roller(die)
    role_kept: Role | None = "kept" if die.keep else None
    keep, keep_n, counting = die.keep, die.keep_n, die.counts
    success_set, failure_set = _count_sets(die)
    match, match_total = _matcher(die), die.match == "mt"

    def roll_term(src: DiceSource, ctx: Evaluation) -> Number:
        units = units_of(src, ctx, role_kept or ctx.role)
        return _finish(units, keep, keep_n, counting, success_set, failure_set, match, match_total)

    return roll_term


def _compile_computed(die: Dice) -> Roller:
    count_of = _compile(die.count_node) if die.count_node is not None else None
    sides_of = _compile(die.sides_node) if die.sides_node is not None else None
    rollers: dict[tuple[int, int], Roller] = {}

    def roll_computed(src: DiceSource, ctx: Evaluation) -> Number:
        # The parser refuses a count or a size that could come to a fraction.
        count = cast(int, count_of(src, ctx)) if count_of is not None else die.count
        sides = cast(int, sides_of(src, ctx)) if sides_of is not None else die.sides
        roller = rollers.get((count, sides))
        if roller is None:
            concrete = die.concrete(count, sides)
            check_term(concrete, ctx.field)
            roller = _compile_dice(concrete) if count else _no_dice
            if len(rollers) < 1024:
                rollers[(count, sides)] = roller
        return roller(src, ctx)

    return roll_computed


def _no_dice(src: DiceSource, ctx: Evaluation) -> int:
    ctx.spans.append((len(ctx.dice), len(ctx.dice)))
    return 0


def _compile_plain(die: Dice) -> Roller:
    """No explosion, no reroll, nothing shown differently: one die drawn per requested die
    (the fast path)."""
    count, sides, keep, keep_n = die.count, die.sides, die.keep, die.keep_n
    fudge = die.kind == "fudge"
    slots = range(count)
    counting = die.counts
    success_set, failure_set = die.success_set, die.failure_set

    def roll_plain(src: DiceSource, ctx: Evaluation) -> int:
        dice = ctx.dice
        start = len(dice)
        if fudge:
            role: Role = "kept" if keep else ctx.role
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
    records: list[DieRecord],
    values: Sequence[int | None],
    success_set: Values,
    failure_set: Values,
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


# What a unit's value is tested against (``value in ...``): the values a term's faces count as,
# or comparisons (a compounded die's total can go past the faces).
Values = frozenset[int] | _Matching


def _count_sets(die: Dice) -> tuple[Values, Values]:
    if die.explode == "!!":
        # A compounded die can go past the faces: test its total against the comparisons.
        return _Matching(die.success), _Matching(die.failure)
    return die.success_set, die.failure_set


# The units and the values they count as (None where keep/drop left one out).
Matcher = Callable[[list[Unit], Sequence[int | None]], int]


def _matcher(die: Dice) -> Matcher | None:
    """``m``/``mt``: marks the kept dice that share a value with at least ``match_size - 1``
    others (and match ``match_on``, if given); returns how many such sets there are."""
    if not die.match:
        return None
    size, on = die.match_size, die.match_on

    def match(units: list[Unit], values: Sequence[int | None]) -> int:
        groups: dict[int, list[int]] = {}
        for i, v in enumerate(values):
            if v is not None and (on is None or on.matches(v)):
                groups.setdefault(v, []).append(i)
        sets = 0
        for members in groups.values():
            if len(members) >= size:
                sets += 1
                for i in members:
                    for rec in units[i][1]:
                        rec["matched"] = True
        return sets

    return match


def _finish(
    units: list[Unit],
    keep: Keep | None,
    keep_n: int,
    counting: bool,
    success_set: Values,
    failure_set: Values,
    match: Matcher | None = None,
    match_total: bool = False,
) -> int:
    """A term's (or pooled group's) value from its units: keep/drop, then the number of
    matching sets (``mt``) or successes, else the sum of what is kept."""
    values: list[Any] = [u[0] for u in units]
    if keep:
        for i in _keep_order(values, keep, keep_n):
            for rec in units[i][1]:
                rec["role"] = "dropped"
            values[i] = None
    if match is not None:
        sets = match(units, values)
        if match_total:
            return sets
    if counting:
        # A chain's first record speaks for it.
        return _score([u[1][0] for u in units], values, success_set, failure_set)
    total = 0
    for v in values:
        if v is not None:
            total += v
    return total


def _unit_roller(die: Dice) -> UnitRoller:
    """The dice of one term as units: every die drawn, its explosions and rerolls listed."""
    count, sides = die.count, die.sides
    fudge = die.kind == "fudge"
    explode, explode_set = die.explode, die.explode_set
    reroll, reroll_set = die.reroll, die.reroll_set
    penetrate = explode == "!p"
    compound = explode == "!!"
    clamped = die.clamped
    show = die.show
    crit_s, crit_f = die.crit_success, die.crit_failure
    unit_rerolls: Values = _Matching(*die.reroll_on) if compound else reroll_set

    def one(
        src: DiceSource, role: Role, added: bool, **extra: Unpack[DieMarks]
    ) -> tuple[DieRecord, int, int]:
        rec = draw_fudge(src, role, **extra) if fudge else draw(src, sides, role, **extra)
        face = rec["value"]
        value = show(face) if clamped else face
        if added and penetrate:
            value -= 1
            rec["penetrated"] = True
        if value != face:
            rec["counts_as"] = value
        if crit_s is not None and crit_s.matches(value):
            rec["critical"] = "success"
        elif crit_f is not None and crit_f.matches(value):
            rec["critical"] = "failure"
        return rec, face, value

    def roll_units(src: DiceSource, ctx: Evaluation, role: Role) -> list[Unit]:
        dice = ctx.dice
        start = len(dice)
        units: list[Unit] = []
        for _ in range(count):
            rec, face, value = one(src, role, False)
            dice.append(rec)
            # [value, records, face]: rerolls test the face (``!!``: the total shown).
            slot: list[Unit] = [[value, [rec], face]]
            if explode:
                extra = 0
                while face in explode_set:
                    if extra == MAX_CHAIN:
                        rec["capped"] = True
                        ctx.capped = True
                        break
                    extra += 1
                    rec["explodes"] = True
                    rec, face, value = one(src, role, True, exploded=True)
                    dice.append(rec)
                    if compound:
                        rec["compounded"] = True
                        slot[0][0] += value
                        slot[0][1].append(rec)
                    else:
                        slot.append([value, [rec], face])
            if reroll:
                for pos, unit in enumerate(slot):
                    if (unit[0] if compound else unit[2]) not in unit_rerolls:
                        continue
                    for old in unit[1]:
                        old["role"] = "rerolled"
                    # A rerolled die does not explode again: plain draws from here on; one
                    # that took the place of a penetrating die still counts one less.
                    added = pos > 0
                    for attempt in range(1 if reroll == "ro" else MAX_CHAIN):
                        rec, face, value = one(src, role, added)
                        dice.append(rec)
                        if reroll == "ro" or face not in reroll_set:
                            break
                        if attempt < MAX_CHAIN - 1:
                            rec["role"] = "rerolled"
                    else:
                        # Only r gets here: MAX_CHAIN rerolls all in range; the last stands.
                        rec["capped"] = True
                        ctx.capped = True
                    unit[0], unit[1], unit[2] = value, [rec], face
            units += slot
        ctx.spans.append((start, len(dice)))
        return units

    return roll_units
