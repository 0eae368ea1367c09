"""The syntax tree of a dice expression.

Nodes are immutable once parsed; everything a roll or an odds computation needs about a dice
term (its faces, which faces explode, reroll, succeed or fail) is worked out once by
``resolve``, so the hot rolling loop only does set look-ups.

A die's *face* is what the stream drew (``dF`` faces are -1, 0, +1). What it *shows* is the
face held within ``min``/``max``; explosions, rerolls and critical marks test what it shows.
What it *counts as* is what it shows, one less for a die added by a penetrating explosion
(``!p``); keep/drop, success counting and matching use that.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Literal, overload

from .arithmetic import Number

FUDGE_FACES = (-1, 0, 1)

Keep = Literal["kh", "kl", "dh", "dl"]  # keep highest, keep lowest, drop highest, drop lowest
CompareOp = Literal[">", "<", "="]  # at least, at most, equal to


@dataclass(frozen=True, slots=True)
class Compare:
    """An inclusive comparison as on Roll20: ``>N`` is N or more, ``<N`` N or less."""

    op: CompareOp
    number: int

    def matches(self, value: Number) -> bool:
        if self.op == ">":
            return value >= self.number
        if self.op == "<":
            return value <= self.number
        return value == self.number

    def show(self, *, bare_equal: bool) -> str:
        # "!5", "r1" and "f1" read better than "!=5" (which looks like "not equal").
        if self.op == "=" and bare_equal:
            return str(self.number)
        return f"{self.op}{self.number}"


class Node:
    """A node of the tree; every one knows the column it was written at."""

    __slots__ = ()
    col: int


@dataclass(frozen=True, slots=True, eq=False)
class Const(Node):
    value: int
    col: int


@dataclass(frozen=True, slots=True, eq=False)
class Neg(Node):
    operand: Node
    col: int


@dataclass(frozen=True, slots=True, eq=False)
class Group(Node):
    """Parentheses: kept only so the printed roll shows them where the player wrote them."""

    inner: Node
    col: int


@dataclass(frozen=True, slots=True, eq=False)
class Sum(Node):
    """``a + b - c``: a flat chain (no deep trees for long sums), signs are +1 or -1."""

    first: Node
    rest: tuple[tuple[int, Node], ...]
    col: int


@dataclass(frozen=True, slots=True, eq=False)
class Product(Node):
    """``a * b / c % d``, left to right. ``/`` rounds toward zero and ``%`` is the remainder
    that goes with it (the dividend's sign), except inside ``floor ceil round abs``
    (``exact``), where ``/`` is an exact fraction."""

    first: Node
    rest: tuple[tuple[str, Node], ...]
    col: int
    exact: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Power(Node):
    """``a ** b`` (right to left: ``2 ** 3 ** 2`` is ``2 ** 9``); the exponent is never
    negative."""

    base: Node
    exponent: Node
    col: int


# The functions of dice notation: the first four make an integer of an exact number.
ROUNDING = ("floor", "ceil", "round", "abs")
FUNCTIONS = (*ROUNDING, "min", "max")


@dataclass(frozen=True, slots=True, eq=False)
class Call(Node):
    """``floor(x)``, ``ceil(x)``, ``round(x)`` (halves away from zero), ``abs(x)`` (toward
    zero), ``min(a, b, ...)``, ``max(a, b, ...)``."""

    name: str
    args: tuple[Node, ...]
    col: int


@dataclass(frozen=True, slots=True, eq=False)
class Labelled(Node):
    """``1d20+5[STR]``: a label after a term; carried into the roll's line, no effect."""

    inner: Node
    label: str
    col: int


@dataclass(frozen=True, slots=True, eq=False)
class RollGroup(Node):
    """``{a, b, ...}`` with keep/drop and success counting over its members' totals; a group
    of one sum of dice (``{4d6+3d8}k4``) keeps and counts its dice one by one instead."""

    members: tuple[Node, ...]
    col: int
    keep: Keep | None = None
    keep_n: int = 0
    success: Compare | None = None
    failure: Compare | None = None
    # For a group of one member: the dice terms whose dice are pooled (set by the parser).
    pooled: tuple[Dice, ...] = ()

    @property
    def counts(self) -> bool:
        return self.success is not None

    @overload
    def score(self, value: int) -> int: ...
    @overload
    def score(self, value: Fraction) -> Number: ...
    def score(self, value: Number) -> Number:
        """What a member that came to ``value`` adds: its value, or +1 success / -1 failure."""
        if self.success is None:
            return value
        failed = self.failure is not None and self.failure.matches(value)
        return self.success.matches(value) - failed

    def suffix(self) -> str:
        out = []
        if self.keep:
            out.append(f"{self.keep}{self.keep_n}")
        if self.success is not None:
            out.append(self.success.show(bare_equal=False))
        if self.failure is not None:
            out.append(f"f{self.failure.show(bare_equal=True)}")
        return "".join(out)


@dataclass(frozen=True, slots=True, eq=False)
class Dice(Node):
    """One dice term with its modifiers, e.g. ``6d10!!r1k3>8f1``."""

    count: int
    sides: int  # the die drawn from the stream: 3 for dF, 100 for d%
    kind: str  # "number" (d6), "percent" (d%), "fudge" (dF)
    count_written: bool  # "d20" prints as d20, "1d20" as 1d20
    col: int
    # ``(1d4)d6``, ``2d(1+5)``: worked out when rolled (count and sides above are then 0).
    count_node: Node | None = None
    sides_node: Node | None = None
    lowest: int | None = None  # "min3": each die shows at least 3
    highest: int | None = None  # "max5": each die shows at most 5
    explode: str | None = None  # None, "!" (separate dice), "!!" (compounding), "!p" (penetrating)
    explode_on: tuple[Compare, ...] = ()  # empty: the highest face
    reroll: str | None = None  # None, "r" (until out of range) or "ro" (once)
    reroll_on: tuple[Compare, ...] = ()
    keep: Keep | None = None
    keep_n: int = 0
    success: Compare | None = None
    failure: Compare | None = None
    match: str | None = None  # None, "m" (marks matching dice) or "mt" (counts the sets)
    match_size: int = 2
    match_on: Compare | None = None
    crit_success: Compare | None = None  # "cs>19": marked, nothing else
    crit_failure: Compare | None = None
    sort: str | None = None  # None, "sa" or "sd": the roll's line lists the dice in order
    # Worked out by ``resolve`` from the fields above.
    faces: tuple[int, ...] = ()
    shows: tuple[int, ...] = ()  # what each face shows (within min/max)
    explode_set: frozenset[int] = field(default_factory=frozenset)  # faces
    reroll_set: frozenset[int] = field(default_factory=frozenset)  # faces
    success_set: frozenset[int] = field(default_factory=frozenset)  # values counted as
    failure_set: frozenset[int] = field(default_factory=frozenset)  # values counted as
    # Concrete terms of a computed one, by (count, sides); filled as they are needed.
    made: dict[tuple[int, int], Dice] = field(default_factory=dict)

    @property
    def computed(self) -> bool:
        return self.count_node is not None or self.sides_node is not None

    @property
    def counts(self) -> bool:
        return self.success is not None

    @property
    def clamped(self) -> bool:
        return self.lowest is not None or self.highest is not None

    @property
    def separate(self) -> bool:
        """Explosions add separate dice (``!`` and ``!p``)."""
        return self.explode in ("!", "!p")

    @property
    def plain(self) -> bool:
        """No explosion, no reroll, nothing shown differently: every die drawn is one die of
        the term and counts as its face."""
        return self.explode is None and self.reroll is None and not self.clamped

    def show(self, face: int) -> int:
        """What a die with ``face`` shows."""
        if self.lowest is not None and face < self.lowest:
            face = self.lowest
        if self.highest is not None and face > self.highest:
            face = self.highest
        return face

    def score(self, value: int) -> int:
        """What one kept unit adds to the term: its value, or +1 success / -1 failure.

        Works for any value, not just faces: a compounded die (``!!``) can exceed them.
        """
        if self.success is None:
            return value
        failed = self.failure is not None and self.failure.matches(value)
        return self.success.matches(value) - failed

    def rerolls(self, value: int) -> bool:
        """Whether a unit showing ``value`` (a face, or a compounded total) is rerolled."""
        return any(c.matches(value) for c in self.reroll_on)

    def size_text(self) -> str:
        if self.sides_node is not None:
            return f"({show(self.sides_node)})"
        return {"fudge": "F", "percent": "%"}.get(self.kind, str(self.sides))

    def count_text(self) -> str:
        if self.count_node is not None:
            return f"({show(self.count_node)})"
        return str(self.count) if self.count_written else ""

    def notation(self) -> str:
        out = [f"{self.count_text()}d{self.size_text()}"]
        if self.lowest is not None:
            out.append(f"min{self.lowest}")
        if self.highest is not None:
            out.append(f"max{self.highest}")
        # A comparison right after an explosion belongs to it: a success count on dice that
        # explode on their highest face is written first ("3d10>8!", not "3d10!>8").
        success = self.success
        success_first = (
            success if self.explode and not self.explode_on and not (self.reroll or self.keep)
            else None
        )  # fmt: skip
        if success_first is not None:
            out.append(success_first.show(bare_equal=False))
        if self.explode:
            out.append(self.explode)
            out.extend(c.show(bare_equal=True) for c in self.explode_on)
        if self.reroll:
            out.extend(f"{self.reroll}{c.show(bare_equal=True)}" for c in self.reroll_on)
        if self.keep:
            out.append(f"{self.keep}{self.keep_n}")
        if success is not None and success_first is None:
            out.append(success.show(bare_equal=False))
        if self.failure is not None:
            out.append(f"f{self.failure.show(bare_equal=True)}")
        if self.match:
            out.append(self.match + (str(self.match_size) if self.match_size != 2 else ""))
            if self.match_on is not None:
                out.append(self.match_on.show(bare_equal=False))
        if self.crit_success is not None:
            out.append("cs" + self.crit_success.show(bare_equal=True))
        if self.crit_failure is not None:
            out.append("cf" + self.crit_failure.show(bare_equal=True))
        if self.sort:
            out.append("s" if self.sort == "sa" else "sd")
        return "".join(out)

    def concrete(self, count: int, sides: int) -> Dice:
        """The term as rolled with ``count`` dice of ``sides`` (a computed term)."""
        key = (count, sides)
        got = self.made.get(key)
        if got is None:
            got = resolve(
                replace(
                    self,
                    count=count,
                    sides=sides,
                    count_node=None,
                    sides_node=None,
                    count_written=True,
                    made={},
                )
            )
            if len(self.made) < 4096:
                self.made[key] = got
        return got


def resolve(die: Dice) -> Dice:
    """``die`` with its faces and face sets worked out from its kind, sides and modifiers."""
    if die.kind == "fudge":
        faces: tuple[int, ...] = FUDGE_FACES
    else:
        faces = tuple(range(1, die.sides + 1))
    shows = tuple(die.show(f) for f in faces)

    def on(compares: tuple[Compare, ...]) -> frozenset[int]:
        # Faces whose shown value matches: explosions and rerolls test what a die shows.
        pairs = zip(faces, shows, strict=True)
        return frozenset(f for f, s in pairs if any(c.matches(s) for c in compares))

    explode_set: frozenset[int] = frozenset()
    if die.explode:
        explode_set = on(die.explode_on or (Compare("=", max(faces)),))
    values = set(shows)
    if die.explode == "!p":
        values |= {s - 1 for s in shows}
    success_set = frozenset(v for v in values if die.success and die.success.matches(v))
    failure_set = frozenset(v for v in values if die.failure and die.failure.matches(v))
    return replace(
        die,
        faces=faces,
        shows=shows,
        explode_set=explode_set,
        reroll_set=on(die.reroll_on) if die.reroll else frozenset(),
        success_set=success_set,
        failure_set=failure_set,
    )


def children(node: Node) -> tuple[Node, ...]:
    """The nodes directly below ``node``, in draw order."""
    if isinstance(node, (Neg,)):
        return (node.operand,)
    if isinstance(node, (Group, Labelled)):
        return (node.inner,)
    if isinstance(node, (Sum, Product)):
        return (node.first, *(c for _, c in node.rest))
    if isinstance(node, Power):
        return (node.base, node.exponent)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, RollGroup):
        return node.members
    if isinstance(node, Dice):
        return tuple(n for n in (node.count_node, node.sides_node) if n is not None)
    return ()


def walk_dice(node: Node) -> list[Dice]:
    """Every dice term in draw order (left to right; a computed term after its count and
    sides)."""
    out: list[Dice] = []
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        if done:
            assert isinstance(n, Dice)  # only a dice term comes back, after its count and sides
            out.append(n)
            continue
        if isinstance(n, Dice):
            stack.append((n, True))
        stack.extend((c, False) for c in reversed(children(n)))
    return out


def walk(node: Node) -> list[Node]:
    """Every node, parents before children."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(children(n)))
    return out


def show(node: Node) -> str:
    """The expression in canonical form, e.g. ``4d6kh3 + 2``."""
    if isinstance(node, Const):
        return str(node.value)
    if isinstance(node, Neg):
        return "-" + show(node.operand)
    if isinstance(node, Group):
        return "(" + show(node.inner) + ")"
    if isinstance(node, Labelled):
        return f"{show(node.inner)} [{node.label}]"
    if isinstance(node, (Sum, Product)):
        parts = [show(node.first)]
        for op, child in node.rest:
            parts.append(op if isinstance(op, str) else ("+" if op > 0 else "-"))
            parts.append(show(child))
        return " ".join(parts)
    if isinstance(node, Power):
        return f"{show(node.base)} ** {show(node.exponent)}"
    if isinstance(node, Call):
        return f"{node.name}({', '.join(show(a) for a in node.args)})"
    if isinstance(node, RollGroup):
        return "{" + ", ".join(show(m) for m in node.members) + "}" + node.suffix()
    assert isinstance(node, Dice)
    return node.notation()
