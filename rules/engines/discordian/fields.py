"""Kingyak's Workshop: the dice, the limits and the request fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..limits import MAX_DICE
from ..schema import Field

# Dice a character can put in a pool (and roll as a luck die). The source's table of multiple
# successes stops at 12, and the d20 is the Discord Die's; so the polyhedrals d4..d12.
PC_SIDES = (4, 6, 8, 10, 12)
PC_DICE = tuple(f"d{n}" for n in PC_SIDES)
TNS = (4, 5, 6)
CHALLENGE_SIDES = 6
CHALLENGE_HIT = 5  # a challenge die hits on 5 or 6
DISCORD_SIDES = 20
DISCORD_WANDER = 3  # a 20 then a 3: the Discord Die wanders off

# Exact-odds size caps: past these the answer is OddsTooLarge, never a hang. Pool dice count
# both sides of a PvP roll; protection counts only dice that could show the Discord value.
# The worst cases at the caps take about 0.1 s (docs/rules/discordian.md).
ODDS_MAX_POOL = 20
ODDS_MAX_CHALLENGE = 100
ODDS_MAX_PROTECT = 6

FLAGS = ("lucky-break", "bad-break", "fluke", "costly")

_SIDE_FIELDS: tuple[Field, ...] = (
    Field(
        "pool",
        "dice",
        label="Pool",
        help="The PC dice: Hero Dice, trope die, trademark die, luck dice bought with Instant "
        "Karma, GM bonus dice.",
        required=True,
        choices=PC_DICE,
        max_items=MAX_DICE,
    ),
    Field(
        "tn",
        "int",
        label="Target Number",
        help="4 when the hooks help, 6 when they hinder, 5 otherwise.",
        default=5,
        choices=TNS,
    ),
    Field(
        "challenge",
        "int",
        label="Challenge Dice",
        help="d6s that hit on 5-6; each hit cancels one success.",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "protect",
        "int",
        label="Protect",
        help="Dice to save from the Discord Die (1 Instant Karma each), biggest dice first.",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field("luck_die", "die", label="Luck die", default="d6", choices=PC_DICE),
    Field(
        "infinite_fives",
        "bool",
        label="Law of Infinite Fives",
        help="An ability that applies the Law of Infinite Fives (a Discord Die of 5 always does).",
        default=False,
    ),
)

REQUEST_FIELDS: tuple[Field, ...] = (
    *_SIDE_FIELDS[:3],
    Field(
        "discord",
        "int",
        label="Discord Die",
        help="The GM's d20 for the round or scene; null when none is in play.",
        default=None,
        nullable=True,
        min=1,
        max=DISCORD_SIDES,
    ),
    *_SIDE_FIELDS[3:],
    Field(
        "opponent",
        "object",
        label="Opponent (PvP)",
        help="The other side's pool, TN, challenge dice and protection, under the same "
        "Discord Die.",
        nullable=True,
        fields=_SIDE_FIELDS,
    ),
)


def sides_of(die: str) -> int:
    return int(die[1:])


def count_dice(side: Mapping[str, Any]) -> int:
    challenge: int = side["challenge"]
    return len(side["pool"]) + challenge


def tidy_side(side: dict[str, Any]) -> dict[str, Any]:
    # ``infinite_fives`` is an extension of the contract's request: only shown when switched on.
    if not side.get("infinite_fives"):
        side.pop("infinite_fives", None)
    return side
