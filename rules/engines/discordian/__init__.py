"""Kingyak's Workshop: TN pools, Challenge Dice, the Discord Die, the Law of
Fives, breaks and costly successes.

Order of play: roll (pool, then challenge dice) -> Discord Die -> Law of Fives -> breaks ->
successes. Draw order in ``dice``: the roller's pool dice in request order, the roller's challenge
dice, the Law of Fives bonus dice (each surviving 5's chain in full, in pool order), the luck die
(lucky break only); then, in a PvP roll, the opponent's dice in the same order.

Exact odds enumerate the pool die by die (biggest dice first, so protection follows the rule),
keeping the joint law of (successes, 1s) and just enough about the surviving dice to know a lucky
break; bad breaks and flukes are separate small sums. Challenge dice are a closed-form multinomial.

The package: ``fields`` (dice, limits, request fields), ``roll`` (rolling a side, the Discord
Die), ``odds`` (exact odds), ``text`` (a roll's words), ``engine`` (the game system).
"""

from .engine import DISCORDIAN, Discordian
from .fields import (
    CHALLENGE_HIT,
    CHALLENGE_SIDES,
    DISCORD_SIDES,
    DISCORD_WANDER,
    FLAGS,
    ODDS_MAX_CHALLENGE,
    ODDS_MAX_POOL,
    ODDS_MAX_PROTECT,
    PC_DICE,
    PC_SIDES,
    TNS,
)
from .roll import roll_discord_die

__all__ = [
    "CHALLENGE_HIT",
    "CHALLENGE_SIDES",
    "DISCORDIAN",
    "DISCORD_SIDES",
    "DISCORD_WANDER",
    "FLAGS",
    "ODDS_MAX_CHALLENGE",
    "ODDS_MAX_POOL",
    "ODDS_MAX_PROTECT",
    "PC_DICE",
    "PC_SIDES",
    "TNS",
    "Discordian",
    "roll_discord_die",
]
