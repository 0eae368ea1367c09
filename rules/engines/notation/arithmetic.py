"""The arithmetic of dice notation, shared by rolling and by the odds."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any


def toward_zero(a: int, b: int) -> int:
    """``a / b`` rounding toward zero (``/`` rounds toward zero); ``b`` is not 0."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def exact_quotient(a: Any, b: Any) -> Any:
    """``a / b`` as an exact fraction (inside floor, ceil, round and abs)."""
    return Fraction(a) / b


def remainder(a: Any, b: Any) -> Any:
    """``a % b``: what is left after ``/`` rounding toward zero (the dividend's sign)."""
    return a - b * math.trunc(Fraction(a) / b)


def round_half_away(x: Any) -> int:
    """``round``: to the nearest whole number, halves away from zero (2.5 -> 3, -2.5 -> -3)."""
    q = Fraction(x)
    n = math.floor(abs(q) + Fraction(1, 2))
    return n if q >= 0 else -n


# What each function makes of one value (min and max of two, applied left to right).
FUNCTION_OF: dict[str, Callable[..., Any]] = {
    "floor": math.floor,
    "ceil": math.ceil,
    "round": round_half_away,
    "abs": lambda x: math.trunc(abs(x)),  # an exact |x|, then toward zero like "/"
    "min": min,
    "max": max,
}
