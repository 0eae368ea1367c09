"""Printing a roll of an expression (``render``); the expression alone is ``nodes.show``.

A roll prints every dice term followed by its dice in draw order, like avrae's d20::

    4d6kh3 (6, 5, ~~1~~, 3) + 2 = 16
    6d10!!kh3 (10!+4, 7, ~~2~~, 9, ~~1~~, ~~3~~) = 30
    5d10>8f1 (**9**, 4, _1_, **10**, **8**) = 2 successes
    {1d20 (15), ~~1d20 (3)~~}kh1 = 15

``~~x~~`` is a die (or group member) that does not count (dropped, or rerolled away), ``x!`` a
die that exploded, ``a!+b`` dice compounded into one, ``**x**`` a success and ``_x_`` a
failure. A die added by a penetrating explosion shows what it counts as (one less); ``x^`` and
``xv`` are dice raised by ``min`` or lowered by ``max``; ``x**`` and ``x__`` critical successes
and failures (``cs``/``cf``); ``xm`` a die in a matching set. Free text after the expression
leads the line ("Roll for Initiative: 1d20 (12) + 5 = 17").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Literal

from ..dice import DieRecord
from ..limits import MAX_CHAIN
from .arithmetic import Number
from .nodes import Call, Const, Dice, Group, Labelled, Neg, Node, Power, Product, RollGroup, Sum

if TYPE_CHECKING:
    from .expression import Expression

_STRUCK = frozenset(("dropped", "rerolled"))

# How a roll marks a group's member: left out, a success, a failure, or not at all.
Mark = Literal["", "dropped", "success", "failure"]
Member = tuple[Number, Mark]  # a group member's value and its mark


def render(
    expr: Expression,
    dice: Sequence[DieRecord],
    spans: Sequence[tuple[int, int]],
    groups: Sequence[Sequence[Member]],
    value: int,
    capped: bool,
) -> str:
    printer = expr._cache.get("printer")
    if printer is None:
        printer = expr._cache["printer"] = _compile(expr.root)
    body = printer(dice, _Cursor(spans, groups))
    tail = ("1 success" if value == 1 else f"{value} successes") if expr.counts else str(value)
    text = f"{body} = {tail}"
    if expr.label:
        text = f"{expr.label}: {text}"
    if capped:
        text += f" (a chain stopped at the cap of {MAX_CHAIN} extra rolls)"
    return text


class _Cursor:
    """Where the printer is in the roll: the next dice term's span, the next group's marks
    (both in the order the roll made them)."""

    __slots__ = ("groups", "spans")

    def __init__(
        self, spans: Sequence[tuple[int, int]], groups: Sequence[Sequence[Member]]
    ) -> None:
        self.spans: Iterator[tuple[int, int]] = iter(spans)
        self.groups: Iterator[Sequence[Member]] = iter(groups)

    def __next__(self) -> tuple[int, int]:
        return next(self.spans)


Printer = Callable[[Sequence[DieRecord], _Cursor], str]


def _compile(node: Node) -> Printer:
    """A printer for one expression, built once, like the roller (see evaluator.py)."""
    if isinstance(node, Const):
        text = str(node.value)
        return lambda dice, spans: text
    if isinstance(node, Neg):
        operand = _compile(node.operand)
        return lambda dice, spans: "-" + operand(dice, spans)
    if isinstance(node, Group):
        inner = _compile(node.inner)
        return lambda dice, spans: "(" + inner(dice, spans) + ")"
    if isinstance(node, Labelled):
        inner, label = _compile(node.inner), f" [{node.label}]"
        return lambda dice, spans: inner(dice, spans) + label
    if isinstance(node, Power):
        base, exponent = _compile(node.base), _compile(node.exponent)
        return lambda dice, spans: base(dice, spans) + " ** " + exponent(dice, spans)
    if isinstance(node, Call):
        args = [_compile(a) for a in node.args]
        name = node.name + "("
        return lambda dice, spans: name + ", ".join(a(dice, spans) for a in args) + ")"
    if isinstance(node, RollGroup):
        return _compile_group(node)
    if isinstance(node, (Sum, Product)):
        first = _compile(node.first)
        rest = [
            (" " + (op if isinstance(op, str) else ("+" if op > 0 else "-")) + " ", c)
            for op, c in node.rest
        ]
        if len(rest) == 1:
            sep, child = rest[0]
            if isinstance(child, Const):
                tail = sep + str(child.value)
                return lambda dice, spans: first(dice, spans) + tail
            second = _compile(child)
            return lambda dice, spans: first(dice, spans) + sep + second(dice, spans)
        compiled = [(sep, _compile(c)) for sep, c in rest]

        def show_chain(dice: Sequence[DieRecord], spans: _Cursor) -> str:
            parts = [first(dice, spans)]
            for sep, fn in compiled:
                parts.append(sep)
                parts.append(fn(dice, spans))
            return "".join(parts)

        return show_chain
    assert isinstance(node, Dice)
    if node.computed:
        return _compile_computed(node)
    prefix = node.notation() + " ("
    if (
        node.plain
        and node.kind != "fudge"
        and not node.counts
        and not (node.sort or node.match or node.crit_success or node.crit_failure)
    ):

        def show_plain(dice: Sequence[DieRecord], spans: _Cursor) -> str:
            start, end = next(spans)
            items = [
                f"~~{r['value']}~~" if r["role"] == "dropped" else str(r["value"])
                for r in dice[start:end]
            ]
            return prefix + ", ".join(items) + ")"

        return show_plain

    def show_dice(dice: Sequence[DieRecord], spans: _Cursor) -> str:
        start, end = next(spans)
        return prefix + _show_dice(node, dice[start:end]) + ")"

    return show_dice


def _compile_computed(node: Dice) -> Printer:
    """``(1d4)d6``: the count's (and size's) own roll, then the term's dice."""
    count = _compile(node.count_node) if node.count_node is not None else None
    sides = _compile(node.sides_node) if node.sides_node is not None else None
    count_text, size_text = node.count_text(), node.size_text()
    mods = node.notation()[len(f"{count_text}d{size_text}") :]

    def show_computed(dice: Sequence[DieRecord], spans: _Cursor) -> str:
        head = f"({count(dice, spans)})" if count is not None else count_text
        size = f"({sides(dice, spans)})" if sides is not None else size_text
        start, end = next(spans)
        return f"{head}d{size}{mods} (" + _show_dice(node, dice[start:end]) + ")"

    return show_computed


def _compile_group(node: RollGroup) -> Printer:
    members = [_compile(m) for m in node.members]
    suffix = node.suffix()
    # A member's total is shown unless it is plain to see (one die, or a number).
    totals = [
        not (isinstance(m, Const) or (isinstance(m, Dice) and m.count == 1)) for m in node.members
    ]

    def show_group(dice: Sequence[DieRecord], spans: _Cursor) -> str:
        texts = [m(dice, spans) for m in members]
        marks = next(spans.groups)
        if node.pooled:
            return "{" + texts[0] + "}" + suffix
        items = []
        for text, (value, mark), total in zip(texts, marks, totals, strict=True):
            if total:
                text = f"{text} = {value}"
            items.append(_wrap(mark, text))
        return "{" + ", ".join(items) + "}" + suffix

    return show_group


def _wrap(mark: Mark, text: str) -> str:
    if mark == "dropped":
        # The member's own dice are dropped with it: one strike-through for the lot.
        return "~~" + text.replace("~~", "") + "~~"
    if mark == "success":
        return f"**{text}**"
    if mark == "failure":
        return f"_{text}_"
    return text


def _face(rec: DieRecord, fudge: bool) -> str:
    value = rec.get("counts_as", rec["value"])
    text = f"{value:+d}" if fudge and value else str(value)
    if "counts_as" in rec and not rec.get("penetrated"):
        text += "^" if value > rec["value"] else "v"
    critical = rec.get("critical")
    if critical:
        text += "**" if critical == "success" else "__"
    if rec.get("matched"):
        text += "m"
    return text


def _show_dice(node: Dice, recs: Sequence[DieRecord]) -> str:
    fudge = node.kind == "fudge"
    compound = node.explode == "!!"
    items: list[tuple[int, str]] = []
    unit: list[str] = []
    total = 0
    head: DieRecord | None = None
    for i, rec in enumerate(recs):
        text = _face(rec, fudge)
        nxt = recs[i + 1] if i + 1 < len(recs) else None
        if nxt is not None and nxt.get("exploded"):
            text += "!"
        if compound and rec.get("exploded"):
            unit.append(text)
            total += rec.get("counts_as", rec["value"])
        else:
            if head is not None:
                items.append((total, _mark(head, "+".join(unit))))
            head, unit, total = rec, [text], rec.get("counts_as", rec["value"])
    if head is not None:
        items.append((total, _mark(head, "+".join(unit))))
    if node.sort:
        items.sort(key=lambda item: item[0], reverse=node.sort == "sd")
    return ", ".join(text for _, text in items)


def _mark(head: DieRecord, text: str) -> str:
    if head["role"] in _STRUCK:
        return f"~~{text}~~"
    if head.get("success"):
        return f"**{text}**"
    if head.get("failure"):
        return f"_{text}_"
    return text
