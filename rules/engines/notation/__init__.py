"""Ordinary dice notation: parse, roll, print and exact odds.

    expr = parse("4d6kh3+2")
    roll = evaluate(expr, FairStream(seed, "", 1))
    roll.value, roll.dice, roll.text      # 16, [...], "4d6kh3 (6, 5, ~~1~~, 3) + 2 = 16"
    distribution(expr)                    # {5: Fraction(1, 1296), ...}

Pure Python: no Django, no I/O, no global random state.
"""

from .evaluator import Evaluation, evaluate
from .exact import distribution, joint_with_first_die, odds_table
from .expression import Expression
from .parser import MAX_DEPTH, MAX_EXPECTED_DRAWS, MAX_RESULT, parse

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPECTED_DRAWS",
    "MAX_RESULT",
    "Evaluation",
    "Expression",
    "distribution",
    "evaluate",
    "joint_with_first_die",
    "odds_table",
    "parse",
]
