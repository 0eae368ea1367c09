"""The syntax tree of a dice expression.

Nodes are immutable once parsed; everything a roll or an odds computation needs about a dice
term (its faces, which faces explode, reroll, succeed or fail) is worked out once here, so the
hot rolling loop only does set look-ups.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FUDGE_FACES = (-1, 0, 1)


@dataclass(frozen=True, slots=True)
class Compare:
    """An inclusive comparison as on Roll20: ``>N`` is N or more, ``<N`` N or less."""

    op: str  # ">", "<" or "="
    number: int

    def matches(self, value: int) -> bool:
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


def faces_matching(faces: tuple[int, ...], compares: tuple[Compare, ...]) -> frozenset[int]:
    return frozenset(f for f in faces if any(c.matches(f) for c in compares))


class Node:
    __slots__ = ()


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
    """``a * b / c``, left to right; ``/`` rounds toward zero."""

    first: Node
    rest: tuple[tuple[str, Node], ...]
    col: int


@dataclass(frozen=True, slots=True, eq=False)
class Dice(Node):
    """One dice term with its modifiers, e.g. ``6d10!!r1k3>8f1``."""

    count: int
    sides: int  # the die drawn from the stream: 3 for dF, 100 for d%
    kind: str  # "number" (d6), "percent" (d%), "fudge" (dF)
    count_written: bool  # "d20" prints as d20, "1d20" as 1d20
    col: int
    explode: str | None = None  # None, "!" (separate dice) or "!!" (compounding)
    explode_on: tuple[Compare, ...] = ()  # empty: the highest face
    reroll: str | None = None  # None, "r" (until out of range) or "ro" (once)
    reroll_on: tuple[Compare, ...] = ()
    keep: str | None = None  # None, "kh", "kl", "dh" or "dl"
    keep_n: int = 0
    success: Compare | None = None
    failure: Compare | None = None
    # Worked out by the parser from the fields above.
    faces: tuple[int, ...] = ()
    explode_set: frozenset[int] = field(default_factory=frozenset)
    reroll_set: frozenset[int] = field(default_factory=frozenset)
    success_set: frozenset[int] = field(default_factory=frozenset)
    failure_set: frozenset[int] = field(default_factory=frozenset)

    @property
    def counts(self) -> bool:
        return self.success is not None

    @property
    def plain(self) -> bool:
        """No explosion and no reroll: every die drawn is one die of the term."""
        return self.explode is None and self.reroll is None

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

    def notation(self) -> str:
        size = {"fudge": "F", "percent": "%"}.get(self.kind, str(self.sides))
        out = [f"{self.count if self.count_written else ''}d{size}"]
        if self.explode:
            out.append(self.explode)
            out.extend(c.show(bare_equal=True) for c in self.explode_on)
        if self.reroll:
            out.extend(f"{self.reroll}{c.show(bare_equal=True)}" for c in self.reroll_on)
        if self.keep:
            out.append(f"{self.keep}{self.keep_n}")
        if self.success is not None:
            out.append(self.success.show(bare_equal=False))
        if self.failure is not None:
            out.append(f"f{self.failure.show(bare_equal=True)}")
        return "".join(out)


def walk_dice(node: Node) -> list[Dice]:
    """Every dice term in draw order (left to right)."""
    out: list[Dice] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Dice):
            out.append(n)
        elif isinstance(n, Neg):
            stack.append(n.operand)
        elif isinstance(n, Group):
            stack.append(n.inner)
        elif isinstance(n, (Sum, Product)):
            stack.extend(reversed([child for _, child in n.rest]))
            stack.append(n.first)
    return out
