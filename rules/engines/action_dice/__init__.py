"""The Action Dice System.

Open-ended d6 action dice plus plain d6 skill dice, summed and compared with a difficulty
(meet or beat; ``degree`` = total - difficulty). Outside an action sequence one action die is
rolled and each further one adds a flat +1. ``max_dice`` counts only the highest dice; a
passive roll (no action dice) may take its average instead of being rolled.

Draw order in ``dice``: each action die in turn with its re-rolls right after it, then the skill
dice. Every record carries ``group``, the index of the die it belongs to (0, 1, ... in draw
order), so an action die and its re-rolls (``"exploded": true``) share one group: they are one
die. When ``max_dice`` leaves dice out, every record of a die that does not count has
``"dropped": true`` (the role stays ``action`` or ``skill``).

Exact odds: see ``keep_top`` for the ``max_dice`` case; without it the sum is the shared
open-ended d6 law of ``open_ended.open_ended_law``.

The package: ``fields`` (limits, request fields, what a request rolls), ``odds`` (exact
keep-highest), ``combat`` and ``sheets`` (what the table runs around rolls), ``text`` (a roll's
words), ``engine`` (the game system).
"""

from .combat import defense_rating, group_attack, round_defense
from .engine import ACTION_DICE, ActionDice
from .fields import (
    BASE_DEFENSE,
    ODDS_MAX_ACTION,
    ODDS_MAX_DICE,
    ODDS_MAX_KEEP_ACTION,
    ODDS_MAX_KEEP_POOL,
    average_total,
)
from .odds import keep_top, top_plain, top_uniform
from .sheets import format_trait, new_round, parse_trait, spend_action_dice

__all__ = [
    "ACTION_DICE",
    "BASE_DEFENSE",
    "ODDS_MAX_ACTION",
    "ODDS_MAX_DICE",
    "ODDS_MAX_KEEP_ACTION",
    "ODDS_MAX_KEEP_POOL",
    "ActionDice",
    "average_total",
    "defense_rating",
    "format_trait",
    "group_attack",
    "keep_top",
    "new_round",
    "parse_trait",
    "round_defense",
    "spend_action_dice",
    "top_plain",
    "top_uniform",
]
