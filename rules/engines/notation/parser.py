"""Recursive-descent parser: dice notation text -> ``Expression``.

Grammar (EBNF; case-insensitive, whitespace between tokens ignored)::

    expression = sum ;
    sum        = product , { ( "+" | "-" ) , product } ;
    product    = unary , { ( "*" | "/" ) , unary } ;
    unary      = ( "-" | "+" ) , unary | atom ;
    atom       = integer | dice | "(" , sum , ")" ;
    dice       = [ integer ] , "d" , ( integer | "%" | "F" ) , { modifier } ;
    modifier   = "!" , [ "!" ] , [ compare ]             (* explode / compound *)
               | ( "r" | "ro" ) , compare                (* reroll until / once *)
               | ( "kh" | "kl" | "dh" | "dl" | "k" | "d" ) , integer
               | ( ">" | "<" | "=" ) , signed            (* count successes *)
               | "f" , compare ;                         (* count failures *)
    compare    = ( ">" | ">=" | "<" | "<=" | "=" ) , signed | integer ;
    signed     = [ "-" | "+" ] , integer ;

Every limit is checked here, before any die is drawn or any odds computed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..errors import TOO_LARGE, RuleError
from ..limits import (
    MAX_CHAIN,
    MAX_DICE,
    MAX_LISTED_DICE,
    MAX_MODIFIER,
    MAX_NOTATION_LENGTH,
    MAX_SIDES,
    MIN_SIDES,
)
from .lexer import Token, tokenize
from .nodes import (
    FUDGE_FACES,
    Compare,
    Const,
    Dice,
    Group,
    Neg,
    Node,
    Product,
    Sum,
    faces_matching,
    walk_dice,
)

# Parentheses and unary signs nested deeper than this are refused (keeps recursion shallow).
MAX_DEPTH = 32
# No expression may be able to reach a number JavaScript cannot hold exactly.
MAX_RESULT = 2**53 - 1
# A roll expected to draw more dice than this (long explosion or reroll chains on many dice)
# is refused before rolling: it would mostly be refused for listing too many dice anyway.
MAX_EXPECTED_DRAWS = MAX_LISTED_DICE

_KEEP_WORDS = {"kh": "kh", "kl": "kl", "dh": "dh", "dl": "dl", "k": "kh", "d": "dl"}
_COMPARE_OPS = {">": ">", ">=": ">", "<": "<", "<=": "<", "=": "="}


class Expression:
    """A parsed, checked dice expression. Shared between callers: treat as read-only."""

    __slots__ = (
        "_cache",
        "counts",
        "dice_count",
        "dice_terms",
        "field",
        "notation",
        "root",
        "text",
    )

    def __init__(self, root: Node, text: str, field: str) -> None:
        self.root = root
        self.text = text
        self.field = field
        self.dice_terms: tuple[Dice, ...] = tuple(walk_dice(root))
        self.dice_count = sum(d.count for d in self.dice_terms)
        # With any success count in it, the headline number is successes.
        self.counts = any(d.counts for d in self.dice_terms)
        from .printer import show_notation

        self.notation = show_notation(root)
        self._cache: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Expression({self.notation!r})"


def parse(text: str, *, field: str = "notation") -> Expression:
    """Parse and check ``text``; the same text gives the same (cached) Expression."""
    if not isinstance(text, str):
        raise RuleError(field, f"expected dice notation as text, got {type(text).__name__}")
    if len(text) > MAX_NOTATION_LENGTH:
        raise RuleError(field, f"at most {MAX_NOTATION_LENGTH} characters, got {len(text)}")
    return _parse_cached(text, field)


@lru_cache(maxsize=4096)
def _parse_cached(text: str, field: str) -> Expression:
    if not text.strip():
        raise RuleError(field, "is empty; expected dice notation like 2d6+3")
    root = _Parser(tokenize(text, field), field).parse()
    expr = Expression(root, text, field)
    _check_limits(expr)
    return expr


class _Parser:
    def __init__(self, tokens: list[Token], field: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.field = field

    # -- helpers -------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def advance(self) -> Token:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def fail(self, reason: str, tok: Token | None = None) -> RuleError:
        tok = tok or self.tok
        where = "at the end" if tok.kind == "end" else f"at column {tok.col}"
        return RuleError(self.field, f"{reason} {where}")

    def describe(self, tok: Token) -> str:
        if tok.kind == "end":
            return "end of notation"
        if tok.kind == "int":
            return f"number {tok.value}"
        return f"'{tok.kind}'"

    def number(self, what: str, *, signed: bool = False) -> int:
        sign = 1
        if signed and self.tok.kind in ("-", "+"):
            sign = -1 if self.advance().kind == "-" else 1
        tok = self.tok
        if tok.kind != "int":
            raise self.fail(f"expected {what}, found {self.describe(tok)}")
        self.advance()
        value = sign * tok.value
        if abs(value) > MAX_MODIFIER:
            raise self.fail(f"numbers must lie within ±{MAX_MODIFIER:,}, got {value:,}", tok)
        return value

    # -- grammar -------------------------------------------------------------------------
    def parse(self) -> Node:
        node = self.sum(0)
        if self.tok.kind != "end":
            if self.tok.kind == ")":
                raise self.fail("unmatched ')'")
            raise self.fail(f"unexpected {self.describe(self.tok)}")
        return node

    def sum(self, depth: int) -> Node:
        col = self.tok.col
        first = self.product(depth)
        rest: list[tuple[int, Node]] = []
        while self.tok.kind in ("+", "-"):
            sign = 1 if self.advance().kind == "+" else -1
            rest.append((sign, self.product(depth)))
        return Sum(first, tuple(rest), col) if rest else first

    def product(self, depth: int) -> Node:
        col = self.tok.col
        first = self.unary(depth)
        rest: list[tuple[str, Node]] = []
        while self.tok.kind in ("*", "/"):
            op_tok = self.advance()
            operand = self.unary(depth)
            if op_tok.kind == "/" and isinstance(operand, Const) and operand.value == 0:
                raise self.fail("division by zero", op_tok)
            rest.append((op_tok.kind, operand))
        return Product(first, tuple(rest), col) if rest else first

    def unary(self, depth: int) -> Node:
        tok = self.tok
        if tok.kind in ("-", "+"):
            if depth >= MAX_DEPTH:
                raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
            self.advance()
            operand = self.unary(depth + 1)
            return Neg(operand, tok.col) if tok.kind == "-" else operand
        return self.atom(depth)

    def atom(self, depth: int) -> Node:
        tok = self.tok
        if tok.kind == "(":
            if depth >= MAX_DEPTH:
                raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
            self.advance()
            inner = self.sum(depth + 1)
            if self.tok.kind != ")":
                raise self.fail(
                    f"expected ')' to close the '(' at column {tok.col}, found "
                    f"{self.describe(self.tok)}"
                )
            self.advance()
            return Group(inner, tok.col)
        if tok.kind == "int":
            self.advance()
            if self.tok.kind in ("d", "df"):
                return self.dice(tok.value, True, tok)
            if abs(tok.value) > MAX_MODIFIER:
                raise self.fail(
                    f"numbers must lie within ±{MAX_MODIFIER:,}, got {tok.value:,}", tok
                )
            return Const(tok.value, tok.col)
        if tok.kind in ("d", "df"):
            return self.dice(1, False, tok)
        raise self.fail(f"expected a number, a die like 2d6 or '(', found {self.describe(tok)}")

    def dice(self, count: int, count_written: bool, start: Token) -> Dice:
        if count < 1:
            raise self.fail("a dice term needs at least one die", start)
        if count > MAX_DICE:
            raise self.fail(f"at most {MAX_DICE:,} dice, got {count:,}", start)
        d_tok = self.advance()
        if d_tok.kind == "df" or (d_tok.kind == "d" and self.tok.kind == "f"):
            if d_tok.kind == "d":
                self.advance()
            kind, sides, faces = "fudge", 3, FUDGE_FACES
        elif self.tok.kind == "%":
            self.advance()
            kind, sides = "percent", 100
            faces = tuple(range(1, 101))
        elif self.tok.kind == "int":
            size_tok = self.advance()
            sides = size_tok.value
            if not MIN_SIDES <= sides <= MAX_SIDES:
                raise self.fail(
                    f"die sizes run from d{MIN_SIDES} to d{MAX_SIDES}, not d{sides}", size_tok
                )
            kind, faces = "number", tuple(range(1, sides + 1))
        else:
            raise self.fail(f"expected the die size after 'd', found {self.describe(self.tok)}")
        mods = self.modifiers(faces)
        die = Dice(
            count=count,
            sides=sides,
            kind=kind,
            count_written=count_written,
            col=start.col,
            faces=faces,
            **mods,
        )
        self.check_dice(die, start)
        return die

    def modifiers(self, faces: tuple[int, ...]) -> dict[str, Any]:
        mods: dict[str, Any] = {}
        reroll_on: list[Compare] = []
        f_tok = self.tok
        while True:
            tok = self.tok
            kind = tok.kind
            if kind == "!":
                if "explode" in mods:
                    raise self.fail("only one explosion per dice term")
                self.advance()
                mode = "!"
                if self.tok.kind == "!":
                    self.advance()
                    mode = "!!"
                mods["explode"] = mode
                if self.tok.kind in _COMPARE_OPS or self.tok.kind == "int":
                    mods["explode_on"] = (self.compare(),)
            elif kind in ("r", "ro"):
                if mods.get("reroll", kind) != kind:
                    raise self.fail("use either r (until) or ro (once) in one dice term")
                self.advance()
                mods["reroll"] = kind
                reroll_on.append(self.compare())
            elif kind in _KEEP_WORDS:
                if "keep" in mods:
                    raise self.fail("only one keep or drop per dice term")
                self.advance()
                mods["keep"] = _KEEP_WORDS[kind]
                mods["keep_n"] = self.number(f"how many dice to {kind}")
            elif kind in _COMPARE_OPS:
                if "success" in mods:
                    raise self.fail("only one success count per dice term")
                mods["success"] = self.compare()
            elif kind == "f":
                if "failure" in mods:
                    raise self.fail("only one failure count per dice term")
                f_tok = self.advance()
                mods["failure"] = self.compare()
            else:
                break
        if "failure" in mods and "success" not in mods:
            raise self.fail("failures (f) only count alongside successes, e.g. 5d10>8f1", f_tok)
        if reroll_on:
            mods["reroll_on"] = tuple(reroll_on)
        # Sets of faces, worked out once for the rolling loop and the odds.
        if "explode" in mods:
            on = mods.get("explode_on") or (Compare("=", max(faces)),)
            mods["explode_set"] = faces_matching(faces, on)
        if reroll_on:
            mods["reroll_set"] = faces_matching(faces, tuple(reroll_on))
        if "success" in mods:
            mods["success_set"] = faces_matching(faces, (mods["success"],))
        if "failure" in mods:
            mods["failure_set"] = faces_matching(faces, (mods["failure"],))
        return mods

    def compare(self) -> Compare:
        tok = self.tok
        if tok.kind in _COMPARE_OPS:
            self.advance()
            return Compare(
                _COMPARE_OPS[tok.kind], self.number("a number to compare with", signed=True)
            )
        if tok.kind == "int":
            return Compare("=", self.number("a number"))
        raise self.fail(f"expected a comparison like >5, <2 or 3, found {self.describe(tok)}")

    def check_dice(self, die: Dice, start: Token) -> None:
        name = die.notation()
        every = frozenset(die.faces)
        if die.explode and die.explode_set == every:
            raise self.fail(f"{name} explodes on every face and would never stop", start)
        if die.reroll and die.reroll_set == every:
            raise self.fail(f"{name} rerolls every face and would never stop", start)


# -- whole-expression limits -------------------------------------------------------------
def _check_limits(expr: Expression) -> None:
    field = expr.field
    if expr.dice_count > MAX_DICE:
        raise RuleError(field, f"at most {MAX_DICE:,} dice in one roll, got {expr.dice_count:,}")
    lo, hi = _bounds(expr.root, field)
    if max(-lo, hi) > MAX_RESULT:
        raise RuleError(
            field, f"could come to {max(-lo, hi):,}; results are limited to ±{MAX_RESULT:,}"
        )
    expected = sum(_expected_draws(d) for d in expr.dice_terms)
    if expected > MAX_EXPECTED_DRAWS:
        raise RuleError(
            field,
            f"would draw about {expected:,.0f} dice with its explosions and "
            f"rerolls; a roll lists at most {MAX_EXPECTED_DRAWS:,}",
            code=TOO_LARGE,
        )


def _bounds(node: Node, field: str) -> tuple[int, int]:
    """A safe (wide) range the node's value always falls in."""
    if isinstance(node, Const):
        return node.value, node.value
    if isinstance(node, Neg):
        lo, hi = _bounds(node.operand, field)
        return -hi, -lo
    if isinstance(node, Group):
        return _bounds(node.inner, field)
    if isinstance(node, Sum):
        lo, hi = _bounds(node.first, field)
        for sign, child in node.rest:
            clo, chi = _bounds(child, field)
            lo, hi = (lo + clo, hi + chi) if sign > 0 else (lo - chi, hi - clo)
        return lo, hi
    if isinstance(node, Product):
        lo, hi = _bounds(node.first, field)
        for op, child in node.rest:
            clo, chi = _bounds(child, field)
            if op == "*":
                corners = (lo * clo, lo * chi, hi * clo, hi * chi)
                lo, hi = min(corners), max(corners)
            else:
                if clo == chi == 0:
                    raise RuleError(
                        field, f"division by zero: the divisor at column {child.col} is always 0"
                    )
                m = max(-lo, hi)
                lo, hi = -m, m
        return lo, hi
    assert isinstance(node, Dice)
    chain = 1 + MAX_CHAIN if node.explode else 1
    most = node.count * chain
    if node.counts:
        return -most, most
    return min(0, min(node.faces) * most), max(0, max(node.faces) * most)


def _expected_draws(die: Dice) -> float:
    n = len(die.faces)
    chain = 1.0
    if die.explode:
        p = len(die.explode_set) / n
        chain = (1 - p ** (MAX_CHAIN + 1)) / (1 - p)
    per_unit = 1.0
    if die.reroll == "ro":
        per_unit = 2.0
    elif die.reroll == "r":
        q = len(die.reroll_set) / n
        per_unit = 1 + (1 - q**MAX_CHAIN) / (1 - q)
    if die.explode == "!!":
        # The rerolls act on the compounded die as a whole.
        return die.count * (chain + per_unit - 1)
    return die.count * chain * per_unit


def dice_upper_bound(expr: Expression) -> int:
    """The most dice a roll of ``expr`` can ever draw (every chain at its cap)."""
    total = 0
    for d in expr.dice_terms:
        chain = 1 + MAX_CHAIN if d.explode else 1
        rerolls = MAX_CHAIN if d.reroll == "r" else (1 if d.reroll == "ro" else 0)
        total += d.count * (chain * (1 + rerolls) if d.explode != "!!" else chain + rerolls)
    return total


__all__ = ["MAX_DEPTH", "MAX_EXPECTED_DRAWS", "MAX_RESULT", "Expression", "parse"]
