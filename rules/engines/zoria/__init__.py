"""Zoria RPG action dice: the check, cascading action dice, threats, and the
per-session pool rules the table runs (pool by level, the GM's pool, several characters).

Draw order in ``dice``: the check's dice as the notation engine draws them (role ``base``, or
``kept``/``dropped``...), then each action die in request order followed by its cascade
(role ``action``, ``"exploded": true`` on every cascade draw).

The package: ``fields`` (dice, limits, request fields), ``pools`` (a session's pools), ``roll``
(action dice, threats), ``odds`` (exact odds), ``text`` (a roll's words), ``engine`` (the game
system).
"""

from .engine import ZORIA, Zoria, insight_request
from .fields import (
    ACTION_DICE,
    ACTION_SIDES,
    BALANCED_CHOICES,
    FLAGS,
    INSIGHT_ABILITIES,
    MAX_LEVEL,
    MULTI_OPTIONS,
    ODDS_MAX_ACTION_DICE,
    SPECIAL_BOTCH_MARGIN,
    THREAT_SIDES,
)
from .pools import gm_die, gm_pool, gm_pool_growth, player_pool, pool_for_level
from .roll import roll_action_die

__all__ = [
    "ACTION_DICE",
    "ACTION_SIDES",
    "BALANCED_CHOICES",
    "FLAGS",
    "INSIGHT_ABILITIES",
    "MAX_LEVEL",
    "MULTI_OPTIONS",
    "ODDS_MAX_ACTION_DICE",
    "SPECIAL_BOTCH_MARGIN",
    "THREAT_SIDES",
    "ZORIA",
    "Zoria",
    "gm_die",
    "gm_pool",
    "gm_pool_growth",
    "insight_request",
    "player_pool",
    "pool_for_level",
    "roll_action_die",
]
