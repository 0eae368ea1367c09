"""The Action Dice System: limits, the request fields and what a request rolls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..limits import MAX_DICE, MAX_MODIFIER
from ..schema import Field

# Exact-odds caps (measured on 2 cores; the worst cases inside them take 55-90 ms): a plain
# sum of up to ODDS_MAX_DICE dice, at most ODDS_MAX_ACTION of them action dice; with max_dice
# leaving dice out, up to ODDS_MAX_KEEP_POOL dice rolled, at most ODDS_MAX_KEEP_ACTION action.
ODDS_MAX_DICE = 400
ODDS_MAX_ACTION = 50
ODDS_MAX_KEEP_POOL = 30
ODDS_MAX_KEEP_ACTION = 10

BASE_DEFENSE = 4  # the base difficulty to hit a moving, human-sized target

REQUEST_FIELDS: tuple[Field, ...] = (
    Field(
        "action_dice",
        "int",
        label="Action dice",
        help="Open-ended d6 (a 6 rolls again and adds). 0 for a passive attribute.",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "skill_dice",
        "int",
        label="Skill dice",
        help="Plain d6 of the skill or attribute (the 4 of +4d6).",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "max_dice",
        "int",
        label="Maximum dice",
        help="The (5d6) of +4d6 (5d6): only the highest this many dice count.",
        default=None,
        nullable=True,
        min=1,
        max=MAX_DICE,
    ),
    Field(
        "sequence",
        "bool",
        label="In an action sequence",
        help="Outside one, only one action die is rolled and each further one adds +1.",
        default=True,
    ),
    Field(
        "modifier",
        "int",
        label="Modifier",
        default=0,
        min=-MAX_MODIFIER,
        max=MAX_MODIFIER,
    ),
    Field(
        "difficulty",
        "int",
        label="Difficulty",
        help="A fixed number or another character's total; meet or beat it.",
        default=None,
        nullable=True,
        min=-MAX_MODIFIER,
        max=MAX_MODIFIER,
    ),
    Field(
        "average",
        "bool",
        label="Take the average",
        help="Passive rolls only: 3.5 per die counted, rounded up, no dice rolled.",
        default=False,
    ),
)


def dice_plan(req: Mapping[str, Any]) -> dict[str, int]:
    action = req["action_dice"]
    rolled_action = action if req["sequence"] else min(action, 1)
    flat = 0 if req["sequence"] else max(action - 1, 0)
    rolled = rolled_action + req["skill_dice"]
    counted = rolled if req["max_dice"] is None else min(rolled, req["max_dice"])
    return {"action": rolled_action, "flat": flat, "rolled": rolled, "counted": counted}


def average_total(dice: int) -> int:
    """ceil(3.5 x dice): 7 per 2d6, +4 for an odd die."""
    return (7 * dice + 1) // 2
