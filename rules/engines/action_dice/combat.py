"""The Action Dice System: combat helpers the table runs (defense, rounds, group attacks)."""

from __future__ import annotations

from ..schema import whole_number
from .fields import BASE_DEFENSE


def defense_rating(best_combat_skill_dice: int, resisting_attribute_dice: int = 0) -> int:
    """Difficulty to hit a character: 4 + dice of the best combat skill, +1 per die of a
    passive attribute that resists the attack."""
    best = whole_number(best_combat_skill_dice, "best_combat_skill_dice", minimum=0)
    resisting = whole_number(resisting_attribute_dice, "resisting_attribute_dice", minimum=0)
    return BASE_DEFENSE + best + resisting


def round_defense(
    defense_action_total: int | None = None, general_defense_total: int | None = None
) -> dict[str, int]:
    """What a round's defensive actions add to the defense rating.

    A defense action adds its whole total against the one opponent it targets; a general
    defense adds half its total (rounded down) against everyone. They do not stack: against
    the targeted opponent the better of the two counts.
    """
    specific = (
        None
        if defense_action_total is None
        else whole_number(defense_action_total, "defense_action_total")
    )
    general = (
        0
        if general_defense_total is None
        else whole_number(general_defense_total, "general_defense_total") // 2
    )
    against_opponent = general if specific is None else max(specific, general)
    return {"against_opponent": against_opponent, "against_everyone_else": general}


def group_attack(total: int, extra_action_dice: int = 0) -> dict[str, int]:
    """A group attack: half the total (rounded down) applies to every member of the group;
    each extra action die committed (not rolled) adds the usual number of targets again."""
    total = whole_number(total, "total")
    extra = whole_number(extra_action_dice, "extra_action_dice", minimum=0)
    return {"per_member": total // 2, "target_multiplier": 1 + extra}
