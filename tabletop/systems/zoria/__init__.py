"""Zoria at the table: per-session pools of action dice dealt
by level, the GM's pool growing to match, every action die on a check paid from the roller's
pool, dice used on open checks, spend effects (re-rolls, botches, criticals, insight), awards,
refunds and the lucky break; a player's inspiration check waits for the GM's consent; the
initiative phase sets initiative rolls; open checks close and pools expire when the session
ends."""

from __future__ import annotations

from .commands import (
    answer_insight,
    ask_insight,
    award,
    commands,
    declare,
    initiative_phase,
    lucky_break,
    refund,
    spend_dice,
    undo_award,
    use_die,
)
from .dealing import INSIGHT_ASKS_PER_SEAT, deal_pool
from .table import table

__all__ = [
    "INSIGHT_ASKS_PER_SEAT",
    "answer_insight",
    "ask_insight",
    "award",
    "commands",
    "deal_pool",
    "declare",
    "initiative_phase",
    "lucky_break",
    "refund",
    "spend_dice",
    "table",
    "undo_award",
    "use_die",
]
