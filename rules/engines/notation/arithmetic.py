"""The arithmetic of dice notation, shared by rolling and by the odds."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import cast

# What a part of an expression comes to: a whole number, but inside floor, ceil, round and abs,
# where ``/`` is exact, a fraction until the function makes it whole again.
Number = int | Fraction


def toward_zero(a: int, b: int) -> int:
    """``a / b`` rounding toward zero (``/`` rounds toward zero); ``b`` is not 0."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def exact_quotient(a: Number, b: Number) -> Fraction:
    """``a / b`` as an exact fraction (inside floor, ceil, round and abs)."""
    return Fraction(a) / b


def remainder(a: Number, b: Number) -> Number:
    """``a % b``: what is left after ``/`` rounding toward zero (the dividend's sign)."""
    return a - b * math.trunc(Fraction(a) / b)


def power(base: Number, exponent: Number) -> Number:
    """``base ** exponent``. The parser lets only a whole exponent, 0 or more, through, so the
    power stays a whole number (or an exact fraction)."""
    return cast(Number, base**exponent)


def round_half_away(x: Number) -> int:
    """``round``: to the nearest whole number, halves away from zero (2.5 -> 3, -2.5 -> -3)."""
    q = Fraction(x)
    n = math.floor(abs(q) + Fraction(1, 2))
    return n if q >= 0 else -n


# What each rounding function makes of one number.
ROUNDING_OF: dict[str, Callable[[Number], int]] = {
    "floor": math.floor,
    "ceil": math.ceil,
    "round": round_half_away,
    "abs": lambda x: abs(math.trunc(x)),  # |x| toward zero, like "/"
}
