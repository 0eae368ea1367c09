"""Zoria: the dice, the limits and the request fields."""

from __future__ import annotations

from ..limits import MAX_DICE, MAX_MODIFIER
from ..schema import Field

ACTION_SIDES = (3, 4, 6, 8, 10, 12, 14, 16, 20, 24)
ACTION_DICE = tuple(f"d{n}" for n in ACTION_SIDES)
THREAT_SIDES = 20
SPECIAL_BOTCH_MARGIN = 5  # failing by 5 or more: total <= dc - 5
FLAGS = ("critical-threat", "botch-threat", "special-botch-threat")

# Exact-odds size cap: the cascading action dice added to one check.
ODDS_MAX_ACTION_DICE = 20

MAX_LEVEL = 1000
MULTI_OPTIONS = ("highest", "balanced", "divided")
BALANCED_CHOICES = ("fewer", "extra")
INSIGHT_ABILITIES = ("reason", "intuition", "knowledge")

REQUEST_FIELDS: tuple[Field, ...] = (
    Field(
        "check",
        "text",
        label="Check",
        help="Dice notation for the base roll, usually 1d20+modifier; its first d20 decides "
        "critical and botch threats.",
        default="1d20",
        max_length=500,
    ),
    Field(
        "action_dice",
        "dice",
        label="Action dice",
        help="Action dice used on this roll; each cascades on its highest face.",
        default=[],
        choices=ACTION_DICE,
        max_items=MAX_DICE,
    ),
    Field(
        "dc", "int", label="DC", default=None, nullable=True, min=-MAX_MODIFIER, max=MAX_MODIFIER
    ),
    Field(
        "crit_range",
        "int",
        label="Critical threat from",
        help="A natural d20 at or above this is a critical threat.",
        default=20,
        min=2,
        max=20,
    ),
    Field(
        "botch_range",
        "int",
        label="Botch threat up to",
        help="A natural d20 at or below this is a botch threat (weapons: 1 to 4).",
        default=1,
        min=1,
        max=4,
    ),
)
