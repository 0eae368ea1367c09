"""Recursive-descent parser: dice notation text -> ``Expression``.

Grammar (EBNF; case-insensitive, whitespace between tokens ignored)::

    notation   = sum , [ free text ] ;                   (* "1d20+5 Roll for Initiative" *)
    sum        = product , { ( "+" | "-" ) , product } ;
    product    = unary , { ( "*" | "/" | "%" ) , unary } ;
    unary      = ( "-" | "+" ) , unary | power ;
    power      = labelled , [ "**" , unary ] ;
    labelled   = atom , { "[" , label text , "]" } ;
    atom       = integer | dice | "(" , sum , ")" | group | function ;
    function   = ( "floor" | "ceil" | "round" | "abs" | "min" | "max" ) ,
                 "(" , sum , { "," , sum } , ")" ;
    group      = "{" , sum , { "," , sum } , "}" , { group-mod } ;
    group-mod  = keep | success | failure ;
    dice       = [ integer | "(" , sum , ")" ] , "d" ,
                 ( integer | "%" | "F" | "(" , sum , ")" ) , { modifier } ;
    modifier   = ( "min" | "max" ) , signed                 (* each die shows at least/most *)
               | ( "!" | "!!" | "!p" ) , [ compare ]       (* explode / compound / penetrate *)
               | ( "r" | "ro" ) , compare                   (* reroll until / once *)
               | keep | success | failure
               | ( "m" | "mt" ) , [ integer ] , [ compare ] (* matching *)
               | ( "cs" | "cf" ) , compare                  (* critical marks *)
               | "s" | "sa" | "sd" ;                         (* sorted in the roll's line *)
    keep       = ( "kh" | "kl" | "dh" | "dl" | "k" | "d" ) , integer ;
    success    = ( ">" | "<" | "=" ) , signed ;
    failure    = "f" , compare ;
    compare    = ( ">" | ">=" | "<" | "<=" | "=" ) , signed | integer ;
    signed     = [ "-" | "+" ] , integer ;

Free text is whatever follows the longest part of the notation that reads as an expression,
starting after a space with a letter ("2d6 fire"); it is carried into the result and has no
effect on the roll or its odds.

Every limit is checked here, before any die is drawn or any odds computed.
"""

from __future__ import annotations

import math
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
from .expression import Expression
from .lexer import NotationError, Token, tokenize
from .nodes import (
    FUNCTIONS,
    ROUNDING,
    Call,
    Compare,
    CompareOp,
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
    resolve,
    show,
    walk,
)

# Parentheses, braces, functions and unary signs nested deeper than this are refused (keeps
# recursion shallow).
MAX_DEPTH = 32
# No expression may be able to reach a number JavaScript cannot hold exactly.
MAX_RESULT = 2**53 - 1
# A roll expected to draw more dice than this (long explosion or reroll chains on many dice)
# is refused before rolling: it would mostly be refused for listing too many dice anyway.
MAX_EXPECTED_DRAWS = MAX_LISTED_DICE
# Members of one group.
MAX_MEMBERS = 100

_KEEP_WORDS = {"kh": "kh", "kl": "kl", "dh": "dh", "dl": "dl", "k": "kh", "d": "dl"}
_COMPARE_OPS: dict[str, CompareOp] = {">": ">", ">=": ">", "<": "<", "<=": "<", "=": "="}
# Free text never starts with what could only be notation.
_NOT_TEXT = frozenset("0123456789+-*/%()[]{},<>=!.")
# How many places free text may start at that a parse tries, latest first.
_FREE_TEXT_TRIES = 16


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
    try:
        root, label = _Parser(tokenize(text, field), field).parse(), ""
    except NotationError as exc:
        root, label = _with_free_text(text, field, exc)
    expr = Expression(root, text, field, show(root), label, _most_dice(root, field))
    _check_limits(expr)
    return expr


def _with_free_text(text: str, field: str, error: NotationError) -> tuple[Node, str]:
    """The expression before free text, and the text: the longest start of ``text``, ending
    before a space, that parses whole, followed by text starting with a letter. Otherwise the
    first error stands."""
    starts = [
        i
        for i in range(1, min(error.col, len(text)))
        if text[i - 1].isspace() and not text[i].isspace() and text[i] not in _NOT_TEXT
    ]
    for i in reversed(starts[-_FREE_TEXT_TRIES:]):
        try:
            root = _Parser(tokenize(text[:i], field), field).parse()
        except NotationError:
            continue
        return root, " ".join(text[i:].split())
    raise error


class _Parser:
    def __init__(self, tokens: list[Token], field: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.field = field
        self.exact = False  # inside floor/ceil/round/abs: "/" is exact
        self.failure_tok = tokens[0]  # the last "f" read, for the error that needs it

    # -- helpers -------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def advance(self) -> Token:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def fail(self, reason: str, tok: Token | None = None) -> NotationError:
        tok = tok or self.tok
        where = "at the end" if tok.kind == "end" else f"at column {tok.col}"
        return NotationError(self.field, f"{reason} {where}", tok.col)

    def describe(self, tok: Token) -> str:
        if tok.kind == "end":
            return "the end"
        if tok.kind == "int":
            return f"the number {tok.value}"
        if tok.kind == "label":
            return f"the label [{tok.text}]"
        return f"'{tok.kind}'"

    def wanted(self, what: str, tok: Token | None = None) -> NotationError:
        """What should come next and is not there, said as a person would say it: "the die
        size after 'd' (like 2d6) is missing at the end", "at column 5 there should be a
        number, not '*'"."""
        tok = tok or self.tok
        if tok.kind == "end":
            return NotationError(self.field, f"{what} is missing at the end", tok.col)
        return NotationError(
            self.field,
            f"at column {tok.col} there should be {what}, not {self.describe(tok)}",
            tok.col,
        )

    def number(self, what: str, *, signed: bool = False) -> int:
        sign = 1
        if signed and self.tok.kind in ("-", "+"):
            sign = -1 if self.advance().kind == "-" else 1
        tok = self.tok
        if tok.kind != "int":
            raise self.wanted(what, tok)
        self.advance()
        value = sign * tok.value
        if abs(value) > MAX_MODIFIER:
            raise self.fail(f"numbers must lie within ±{MAX_MODIFIER:,}, got {value:,}", tok)
        return value

    def deeper(self, depth: int) -> int:
        if depth >= MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        return depth + 1

    def expect(self, kind: str, opener: Token) -> None:
        if self.tok.kind != kind:
            if self.tok.kind == "end":
                raise self.fail(
                    f"the '{opener.kind}' at column {opener.col} is never closed: add '{kind}'"
                )
            raise self.wanted(f"'{kind}' to close the '{opener.kind}' at column {opener.col}")
        self.advance()

    # -- grammar -------------------------------------------------------------------------
    def parse(self) -> Node:
        node = self.sum(0)
        if self.tok.kind != "end":
            if self.tok.kind in (")", "}"):
                opening = "(" if self.tok.kind == ")" else "{"
                raise self.fail(
                    f"'{self.tok.kind}' closes nothing: there is no '{opening}' before it"
                )
            raise self.fail(
                f"{self.describe(self.tok)} does not belong here: join terms with + or -"
            )
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
        while self.tok.kind in ("*", "/", "%"):
            op_tok = self.advance()
            operand = self.unary(depth)
            if op_tok.kind != "*" and isinstance(operand, Const) and operand.value == 0:
                raise self.fail("division by zero", op_tok)
            rest.append((op_tok.kind, operand))
        return Product(first, tuple(rest), col, self.exact) if rest else first

    def unary(self, depth: int) -> Node:
        tok = self.tok
        if tok.kind in ("-", "+"):
            depth = self.deeper(depth)
            self.advance()
            operand = self.unary(depth)
            return Neg(operand, tok.col) if tok.kind == "-" else operand
        return self.power(depth)

    def power(self, depth: int) -> Node:
        base = self.labelled(depth)
        if self.tok.kind != "**":
            return base
        tok = self.advance()
        return Power(base, self.unary(self.deeper(depth)), tok.col)

    def labelled(self, depth: int) -> Node:
        node = self.atom(depth)
        while self.tok.kind == "label":
            tok = self.advance()
            node = Labelled(node, tok.text, tok.col)
        return node

    def atom(self, depth: int) -> Node:
        tok = self.tok
        if tok.kind == "(":
            self.advance()
            inner = self.sum(self.deeper(depth))
            self.expect(")", tok)
            if self.tok.kind in ("d", "df"):
                return self.dice(0, True, tok, depth, count_node=inner)
            return Group(inner, tok.col)
        if tok.kind == "{":
            return self.group(depth, tok)
        if tok.kind in FUNCTIONS:
            return self.call(depth, tok)
        if tok.kind == "int":
            self.advance()
            if self.tok.kind in ("d", "df"):
                return self.dice(tok.value, True, tok, depth)
            if abs(tok.value) > MAX_MODIFIER:
                raise self.fail(
                    f"numbers must lie within ±{MAX_MODIFIER:,}, got {tok.value:,}", tok
                )
            return Const(tok.value, tok.col)
        if tok.kind in ("d", "df"):
            return self.dice(1, False, tok, depth)
        raise self.wanted("a number, a die like 2d6, '(' or '{'", tok)

    def sub_sum(self, depth: int, *, exact: bool) -> Node:
        outer, self.exact = self.exact, exact
        try:
            return self.sum(depth)
        finally:
            self.exact = outer

    def call(self, depth: int, name_tok: Token) -> Call:
        self.advance()
        name = name_tok.kind
        opener = self.tok
        if opener.kind != "(":
            raise self.wanted(f"'(' after {name}", opener)
        self.advance()
        depth = self.deeper(depth)
        exact = self.exact or name in ROUNDING
        args = [self.sub_sum(depth, exact=exact)]
        while self.tok.kind == ",":
            self.advance()
            if len(args) == MAX_MEMBERS:
                raise self.fail(f"at most {MAX_MEMBERS} arguments")
            args.append(self.sub_sum(depth, exact=exact))
        self.expect(")", opener)
        if name in ROUNDING and len(args) != 1:
            raise self.fail(f"{name} takes one number, got {len(args)}", name_tok)
        return Call(name, tuple(args), name_tok.col)

    def group(self, depth: int, opener: Token) -> RollGroup:
        self.advance()
        depth = self.deeper(depth)
        members = [self.sum(depth)]
        while self.tok.kind == ",":
            self.advance()
            if len(members) == MAX_MEMBERS:
                raise self.fail(f"a group has at most {MAX_MEMBERS} members")
            members.append(self.sum(depth))
        self.expect("}", opener)
        mods = self.group_modifiers()
        pooled: tuple[Dice, ...] = ()
        if len(members) == 1 and mods:
            pooled = self.pooled(members[0], opener)
        return RollGroup(tuple(members), opener.col, pooled=pooled, **mods)

    def pooled(self, member: Node, opener: Token) -> tuple[Dice, ...]:
        """The dice terms of a group of one whose dice are kept or counted one by one."""
        terms, signs = [member], [1]
        if isinstance(member, Sum):
            terms = [member.first, *(c for _, c in member.rest)]
            signs = [1, *(s for s, _ in member.rest)]
        out = []
        for sign, term in zip(signs, terms, strict=True):
            while isinstance(term, Labelled):
                term = term.inner
            if (
                sign < 0
                or not isinstance(term, Dice)
                or term.computed
                or term.keep
                or term.counts
                or term.match == "mt"
            ):
                raise self.fail(
                    "a group of one keeps or counts its dice one by one, so it holds dice "
                    "terms added together, like {4d6+3d8}k4 (no keep, counting or computed "
                    "dice of their own)",
                    opener,
                )
            out.append(term)
        return tuple(out)

    def group_modifiers(self) -> dict[str, Any]:
        mods: dict[str, Any] = {}
        while self.keep_or_count(mods, "group"):
            pass
        self.check_failures(mods, "{3d6, 3d6}>10f3")
        return mods

    def keep_or_count(self, mods: dict[str, Any], where: str) -> bool:
        """Keep/drop, a success count or a failure count (dice terms and groups alike): True
        when the next token was one of them."""
        kind = self.tok.kind
        if kind in _KEEP_WORDS:
            if "keep" in mods:
                raise self.fail(f"only one keep or drop per {where}")
            self.advance()
            mods["keep"] = _KEEP_WORDS[kind]
            mods["keep_n"] = self.number(f"how many to {kind}")
        elif kind in _COMPARE_OPS:
            if "success" in mods:
                raise self.fail(f"only one success count per {where}")
            mods["success"] = self.compare()
        elif kind == "f":
            if "failure" in mods:
                raise self.fail(f"only one failure count per {where}")
            self.failure_tok = self.advance()
            mods["failure"] = self.compare()
        else:
            return False
        return True

    def check_failures(self, mods: dict[str, Any], example: str) -> None:
        if "failure" in mods and "success" not in mods:
            raise self.fail(
                f"failures (f) only count alongside successes, e.g. {example}", self.failure_tok
            )

    def dice(
        self,
        count: int,
        count_written: bool,
        start: Token,
        depth: int,
        count_node: Node | None = None,
    ) -> Dice:
        if count_node is None:
            if count < 1:
                raise self.fail("a dice term needs at least one die", start)
            if count > MAX_DICE:
                raise self.fail(f"at most {MAX_DICE:,} dice, got {count:,}", start)
        d_tok = self.advance()
        sides_node = None
        if d_tok.kind == "df" or (d_tok.kind == "d" and self.tok.kind == "f"):
            if d_tok.kind == "d":
                self.advance()
            kind, sides = "fudge", 3
        elif self.tok.kind == "%":
            self.advance()
            kind, sides = "percent", 100
        elif self.tok.kind == "int":
            size_tok = self.advance()
            sides = size_tok.value
            if not MIN_SIDES <= sides <= MAX_SIDES:
                raise self.fail(
                    f"die sizes run from d{MIN_SIDES} to d{MAX_SIDES}, not d{sides}", size_tok
                )
            kind = "number"
        elif self.tok.kind == "(":
            opener = self.advance()
            sides_node = self.sub_sum(self.deeper(depth), exact=False)
            self.expect(")", opener)
            kind, sides = "number", 0
        else:
            raise self.wanted("the die size after 'd' (like 2d6)")
        if count_node is not None and any(
            isinstance(n, Product) and n.exact for n in walk(count_node)
        ):
            raise self.fail("a number of dice is a whole number: round it first", start)
        mods = self.modifiers()
        die = Dice(
            count=count,
            sides=sides,
            kind=kind,
            count_written=count_written,
            col=start.col,
            count_node=count_node,
            sides_node=sides_node,
            **mods,
        )
        if not die.computed:
            die = resolve(die)
            self.check_dice(die, start)
        return die

    def modifiers(self) -> dict[str, Any]:
        mods: dict[str, Any] = {}
        reroll_on: list[Compare] = []
        while True:
            tok = self.tok
            kind = tok.kind
            if kind in ("min", "max"):
                key = "lowest" if kind == "min" else "highest"
                if key in mods:
                    raise self.fail(f"only one {kind} per dice term")
                self.advance()
                mods[key] = self.number(f"the number each die shows at {kind}", signed=True)
            elif kind in ("!", "!p"):
                if "explode" in mods:
                    raise self.fail("only one explosion per dice term")
                self.advance()
                mode = kind
                if kind == "!" and self.tok.kind == "!":
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
            elif self.keep_or_count(mods, "dice term"):
                pass
            elif kind in ("m", "mt"):
                if "match" in mods:
                    raise self.fail("only one matching per dice term")
                self.advance()
                mods["match"] = kind
                if self.tok.kind == "int":
                    size_tok = self.tok
                    size = self.number("how many dice make a match")
                    if not 2 <= size <= MAX_DICE:
                        raise self.fail("a match is 2 or more dice", size_tok)
                    mods["match_size"] = size
                if self.tok.kind in _COMPARE_OPS:
                    mods["match_on"] = self.compare()
            elif kind in ("cs", "cf"):
                key = "crit_success" if kind == "cs" else "crit_failure"
                if key in mods:
                    raise self.fail(f"only one {kind} per dice term")
                self.advance()
                mods[key] = self.compare()
            elif kind in ("s", "sa", "sd"):
                if "sort" in mods:
                    raise self.fail("only one sort per dice term")
                self.advance()
                mods["sort"] = "sd" if kind == "sd" else "sa"
            else:
                break
        self.check_failures(mods, "5d10>8f1")
        if mods.get("match") == "mt" and "success" in mods:
            raise self.fail("count either successes or matches (mt) in one dice term")
        if reroll_on:
            mods["reroll_on"] = tuple(reroll_on)
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
        raise self.wanted("a comparison like >5, <2 or 3", tok)

    def check_dice(self, die: Dice, start: Token) -> None:
        try:
            check_term(die, self.field)
        except RuleError as exc:
            raise self.fail(exc.reason, start) from None


def check_term(die: Dice, field: str) -> None:
    """The checks a resolved term must pass (a computed one, for each count and size)."""
    name = die.notation()
    every = frozenset(die.faces)
    if die.explode and die.explode_set == every:
        raise RuleError(field, f"{name} explodes on every face and would never stop")
    if die.reroll and die.reroll_set == every:
        raise RuleError(field, f"{name} rerolls every face and would never stop")


# -- whole-expression limits -------------------------------------------------------------
def _check_limits(expr: Expression) -> None:
    field = expr.field
    if expr.dice_count > MAX_DICE:
        raise RuleError(field, f"at most {MAX_DICE:,} dice in one roll, got {expr.dice_count:,}")
    lo, hi, _ = _bounds(expr.root, field)
    if max(-lo, hi) > MAX_RESULT:
        raise RuleError(
            field, f"could come to {max(-lo, hi):,}; results are limited to ±{MAX_RESULT:,}"
        )
    expected = expr.expected_draws = sum(_expected_draws(d) for d in expr.dice_terms)
    if expected > MAX_EXPECTED_DRAWS:
        raise RuleError(
            field,
            f"would draw about {expected:,.0f} dice with its explosions and "
            f"rerolls; a roll lists at most {MAX_EXPECTED_DRAWS:,}",
            code=TOO_LARGE,
        )


def count_range(die: Dice, field: str) -> tuple[int, int]:
    """The numbers of dice a (computed) term can roll."""
    if die.count_node is None:
        return die.count, die.count
    lo, hi, _ = _bounds(die.count_node, field)
    if lo < 0 or hi > MAX_DICE:
        raise RuleError(
            field,
            f"the number of dice at column {die.col} ({show(die.count_node)}) could come to "
            f"{lo if lo < 0 else hi:,}; it must lie within 0..{MAX_DICE:,}",
        )
    return int(lo), int(hi)


def sides_range(die: Dice, field: str) -> tuple[int, int]:
    """The die sizes a (computed) term can roll."""
    if die.sides_node is None:
        return die.sides, die.sides
    lo, hi, _ = _bounds(die.sides_node, field)
    if lo < MIN_SIDES or hi > MAX_SIDES:
        raise RuleError(
            field,
            f"the die size at column {die.col} ({show(die.sides_node)}) could come to "
            f"{lo if lo < MIN_SIDES else hi:,}; die sizes run from d{MIN_SIDES} to d{MAX_SIDES}",
        )
    return int(lo), int(hi)


def _samples(lo: int, hi: int) -> list[int]:
    """The ends of a range and a few points between (checks that cost per die size)."""
    step = max(1, (hi - lo) // 16)
    return sorted({*range(lo, hi + 1, step), hi})


def _most_dice(root: Node, field: str) -> int:
    """The most dice the terms ask for before explosions and rerolls; a computed term is
    checked here for every count and size it can come to."""
    total = 0
    for node in walk(root):
        if not isinstance(node, Dice):
            continue
        if not node.computed:
            total += node.count
            continue
        c_hi = count_range(node, field)[1]
        s_lo, s_hi = sides_range(node, field)
        for sides in _samples(s_lo, s_hi):
            check_term(node.concrete(c_hi, sides), field)
        total += c_hi
    return total


Bounds = tuple[int, int, int]  # lowest, highest, and a bound on an exact value's denominator


def _bounds(node: Node, field: str) -> Bounds:
    """A safe (wide) range the node's value always falls in."""
    if isinstance(node, Const):
        return node.value, node.value, 1
    if isinstance(node, Neg):
        lo, hi, den = _bounds(node.operand, field)
        return -hi, -lo, den
    if isinstance(node, (Group, Labelled)):
        return _bounds(node.inner, field)
    if isinstance(node, Sum):
        lo, hi, den = _bounds(node.first, field)
        for sign, child in node.rest:
            clo, chi, cden = _bounds(child, field)
            lo, hi = (lo + clo, hi + chi) if sign > 0 else (lo - chi, hi - clo)
            den *= cden
        return lo, hi, den
    if isinstance(node, Product):
        return _product_bounds(node, field)
    if isinstance(node, Power):
        return _power_bounds(node, field)
    if isinstance(node, Call):
        args = [_bounds(a, field) for a in node.args]
        if node.name in ("min", "max"):
            pick = min if node.name == "min" else max
            return pick(a[0] for a in args), pick(a[1] for a in args), math.prod(a[2] for a in args)
        ((lo, hi, _),) = args
        if node.name == "abs":
            return (0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(-lo, hi), 1
        return lo, hi, 1
    if isinstance(node, RollGroup):
        return _group_bounds(node, field)
    assert isinstance(node, Dice)
    c_lo, c_hi = count_range(node, field)
    die = node.concrete(c_hi, sides_range(node, field)[1]) if node.computed else node
    chain = 1 + MAX_CHAIN if node.explode else 1
    most = c_hi * chain
    if node.counts or node.match == "mt":
        return -most, most, 1
    low = min(die.shows) - (1 if node.explode == "!p" else 0)
    high = max(die.shows)
    # The fewest units that count: all of them, or what keep/drop leaves.
    fewest = c_lo
    if node.keep in ("kh", "kl"):
        fewest = min(c_lo, node.keep_n)
    elif node.keep:
        fewest = max(0, c_lo - node.keep_n)
    lo = low * (fewest if low >= 0 else most)
    hi = high * (most if high >= 0 else fewest)
    return lo, hi, 1


def _product_bounds(node: Product, field: str) -> Bounds:
    lo, hi, den = _bounds(node.first, field)
    for op, child in node.rest:
        clo, chi, cden = _bounds(child, field)
        if op == "*":
            corners = (lo * clo, lo * chi, hi * clo, hi * chi)
            lo, hi, den = min(corners), max(corners), den * cden
            continue
        if clo == chi == 0:
            raise RuleError(
                field, f"division by zero: the divisor at column {child.col} is always 0"
            )
        m = max(-lo, hi)
        if op == "%":
            # |a % b| is below |b| and at most |a|.
            m = min(m, max(-clo, chi))
            lo, hi, den = -m, m, den * cden
        elif node.exact:
            # |b| is at least 1 / its denominator, and a / b's denominator grows with b.
            lo, hi, den = -m * cden, m * cden, den * cden * max(-clo, chi, 1)
        else:
            lo, hi = -m, m
    return lo, hi, den


def _power_bounds(node: Power, field: str) -> Bounds:
    lo, hi, den = _bounds(node.base, field)
    elo, ehi, eden = _bounds(node.exponent, field)
    if eden != 1:
        raise RuleError(field, f"the exponent at column {node.col} must be a whole number")
    if elo < 0:
        raise RuleError(
            field, f"the exponent at column {node.col} could come to {elo}; it must not be negative"
        )
    m = max(-lo, hi, 1)
    if (m.bit_length() + den.bit_length()) * ehi > 4 * 53:
        raise RuleError(
            field,
            f"the power at column {node.col} could come to about "
            f"2**{(m.bit_length() - 1) * ehi:,}; results are limited to ±{MAX_RESULT:,}",
        )
    top = m**ehi
    return (0 if lo >= 0 else -top), top, den**ehi


def _group_bounds(node: RollGroup, field: str) -> Bounds:
    if node.pooled:
        (member,) = node.members
        lo, hi, den = _bounds(member, field)
        if node.counts:
            most = sum(
                count_range(d, field)[1] * (1 + MAX_CHAIN if d.explode else 1) for d in node.pooled
            )
            return -most, most, 1
        return min(0, lo), max(0, hi), den
    parts = [_bounds(m, field) for m in node.members]
    if node.counts:
        return -len(parts), len(parts), 1
    den = math.prod(p[2] for p in parts)
    if node.keep:
        return sum(min(0, p[0]) for p in parts), sum(max(0, p[1]) for p in parts), den
    return sum(p[0] for p in parts), sum(p[1] for p in parts), den


def _expected_draws(die: Dice) -> float:
    if die.computed:
        return max(
            _expected_draws(die.concrete(count_range(die, "")[1], sides))
            for sides in _samples(*sides_range(die, ""))
        )
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


__all__ = ["MAX_DEPTH", "MAX_EXPECTED_DRAWS", "MAX_RESULT", "Expression", "parse"]
