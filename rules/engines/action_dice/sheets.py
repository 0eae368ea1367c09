"""The Action Dice System: traits on a character sheet, and action dice per round."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import RuleError
from ..limits import MAX_DICE
from ..schema import Field, whole_number

_TRAIT = re.compile(
    r"^\s*(\+)?\s*(\d{1,4})\s*[dD]6?\s*(?:\(\s*(\d{1,4})\s*[dD]6?\s*(?:;[^)]*)?\))?\s*$"
)


def parse_trait(text: str, *, field: str) -> dict[str, Any]:
    """``"+4d6 (5d6)"`` -> active (added to action dice), 4 dice, at most 5 counted;
    ``"2d6"`` -> passive (no action die), 2 dice. A note after ``;`` in the brackets
    (``"+2d6 (3d6; 12m)"``) is allowed and ignored."""
    match = _TRAIT.match(text) if isinstance(text, str) else None
    if match is None:
        raise RuleError(field, f"expected dice like '+4d6', '+4d6 (5d6)' or '2d6', got {text!r}")
    dice = int(match.group(2))
    most = None if match.group(3) is None else int(match.group(3))
    if dice > MAX_DICE or (most is not None and not 1 <= most <= MAX_DICE):
        raise RuleError(field, f"dice counts run up to {MAX_DICE}")
    return {"active": match.group(1) == "+", "dice": dice, "max_dice": most}


def format_trait(trait: Mapping[str, Any]) -> str:
    text = ("+" if trait["active"] else "") + f"{trait['dice']}d6"
    if trait["max_dice"] is not None:
        text += f" ({trait['max_dice']}d6)"
    return text


def new_round(sheet: Mapping[str, Any]) -> int:
    """Action dice a character has at the start of a round."""
    return whole_number(sheet.get("action_dice", 0), "sheet.action_dice", minimum=0)


def spend_action_dice(left: int, count: int = 1) -> int:
    """Commit ``count`` action dice this round (rolled, or spent on a group attack's targets);
    returns how many are left."""
    left = whole_number(left, "action_dice_left", minimum=0)
    count = whole_number(count, "count", minimum=1)
    if count > left:
        raise RuleError("action_dice_left", f"only {left} action dice left this round")
    return left - count


TRAIT_MAP = (Field("trait", "text", max_length=40),)
TRAIT_GROUPS = ("attributes", "skills", "combat_skills")
SHEET_OPTIONS = frozenset({"trait", "action_dice", "sequence", "modifier", "difficulty", "average"})
