"""Zoria: rolling an action die (it cascades), and what a check's natural die threatens."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..dice import DieRecord, draw
from ..errors import RuleError
from ..fair import DiceSource
from ..limits import MAX_CHAIN
from ..notation import Expression
from .fields import ACTION_DICE, ACTION_SIDES, THREAT_SIDES


def threat_die(expr: Expression) -> bool:
    """True when the check's first dice term is a lone plain 1d20: the die whose natural value
    decides threats (the same test ``joint_with_first_die`` applies to its odds)."""
    return expr.lone_first_die(THREAT_SIDES) is not None


def threat_flags(natural: int | None, req: Mapping[str, Any]) -> list[str]:
    flags = []
    if natural is not None:
        if natural >= req["crit_range"]:
            flags.append("critical-threat")
        if natural <= req["botch_range"]:
            flags.append("botch-threat")
    return flags


def roll_action_die(sides: int, source: DiceSource) -> list[DieRecord]:
    """Roll one action die: on its highest face it cascades (rolled again and added), without
    limit but for the MAX_CHAIN cap. The first record has role ``action``; every cascade draw
    also carries ``"exploded": true`` (and the face that set it off ``"explodes": true``); the
    last carries ``"capped": true`` if the cap stopped it.
    The die's value is the sum of the records' values."""
    if sides not in ACTION_SIDES:
        raise RuleError("sides", f"action dice are {list(ACTION_DICE)}, not {sides!r}")
    records = [draw(source, sides, "action")]
    extra = 0
    while records[-1]["value"] == sides:
        if extra == MAX_CHAIN:
            records[-1]["capped"] = True
            break
        records[-1]["explodes"] = True
        records.append(draw(source, sides, "action", exploded=True))
        extra += 1
    return records
