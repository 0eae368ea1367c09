"""Printing: the expression alone (``show_notation``) and a roll of it (``render``).

A roll prints every dice term followed by its dice in draw order, like avrae's d20::

    4d6kh3 (6, 5, ~~1~~, 3) + 2 = 16
    6d10!!kh3 (10!+4, 7, ~~2~~, 9, ~~1~~, ~~3~~) = 30
    5d10>8f1 (**9**, 4, _1_, **10**, **8**) = 2 successes

``~~x~~`` is a die that does not count (dropped, or rerolled away), ``x!`` a die that
exploded, ``a!+b`` dice compounded into one, ``**x**`` a success and ``_x_`` a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from ..dice import DieRecord
from ..limits import MAX_CHAIN
from .nodes import Const, Dice, Group, Neg, Node, Product, Sum

if TYPE_CHECKING:
    from .parser import Expression

_STRUCK = frozenset(("dropped", "rerolled"))


def show_notation(node: Node) -> str:
    """The expression in canonical form, e.g. ``4d6kh3 + 2``."""
    return _show(node)


def render(
    expr: Expression,
    dice: Sequence[DieRecord],
    spans: Sequence[tuple[int, int]],
    value: int,
    capped: bool,
) -> str:
    printer = expr._cache.get("printer")
    if printer is None:
        printer = expr._cache["printer"] = _compile(expr.root)
    body = printer(dice, iter(spans))
    tail = ("1 success" if value == 1 else f"{value} successes") if expr.counts else str(value)
    text = f"{body} = {tail}"
    if capped:
        text += f" (a chain stopped at the cap of {MAX_CHAIN} extra rolls)"
    return text


Printer = Callable[[Sequence[DieRecord], Iterator[tuple[int, int]]], str]


def _show(node: Node) -> str:
    if isinstance(node, Const):
        return str(node.value)
    if isinstance(node, Neg):
        return "-" + _show(node.operand)
    if isinstance(node, Group):
        return "(" + _show(node.inner) + ")"
    if isinstance(node, (Sum, Product)):
        parts = [_show(node.first)]
        for op, child in node.rest:
            parts.append(op if isinstance(op, str) else ("+" if op > 0 else "-"))
            parts.append(_show(child))
        return " ".join(parts)
    assert isinstance(node, Dice)
    return node.notation()


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

        def show_chain(dice: Sequence[DieRecord], spans: Iterator[tuple[int, int]]) -> str:
            parts = [first(dice, spans)]
            for sep, fn in compiled:
                parts.append(sep)
                parts.append(fn(dice, spans))
            return "".join(parts)

        return show_chain
    assert isinstance(node, Dice)
    prefix = node.notation() + " ("
    if node.plain and node.kind != "fudge" and not node.counts:

        def show_plain(dice: Sequence[DieRecord], spans: Iterator[tuple[int, int]]) -> str:
            start, end = next(spans)
            items = [
                f"~~{r['value']}~~" if r["role"] == "dropped" else str(r["value"])
                for r in dice[start:end]
            ]
            return prefix + ", ".join(items) + ")"

        return show_plain

    def show_dice(dice: Sequence[DieRecord], spans: Iterator[tuple[int, int]]) -> str:
        start, end = next(spans)
        return prefix + _show_dice(node, dice[start:end]) + ")"

    return show_dice


def _face(rec: DieRecord, fudge: bool) -> str:
    value = rec["value"]
    return f"{value:+d}" if fudge and value else str(value)


def _show_dice(node: Dice, recs: Sequence[DieRecord]) -> str:
    fudge = node.kind == "fudge"
    compound = node.explode == "!!"
    items: list[str] = []
    unit: list[str] = []
    head: DieRecord | None = None
    for i, rec in enumerate(recs):
        text = _face(rec, fudge)
        nxt = recs[i + 1] if i + 1 < len(recs) else None
        if nxt is not None and nxt.get("exploded"):
            text += "!"
        if compound and rec.get("exploded"):
            unit.append(text)
        else:
            if head is not None:
                items.append(_mark(head, "+".join(unit)))
            head, unit = rec, [text]
    if head is not None:
        items.append(_mark(head, "+".join(unit)))
    return ", ".join(items)


def _mark(head: DieRecord, text: str) -> str:
    if head["role"] in _STRUCK:
        return f"~~{text}~~"
    if head.get("success"):
        return f"**{text}**"
    if head.get("failure"):
        return f"_{text}_"
    return text
