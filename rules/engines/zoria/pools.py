"""Zoria: the pools of a game session (by level, the GM's pool, several characters)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import RuleError
from ..schema import whole_number
from .fields import BALANCED_CHOICES, MAX_LEVEL, MULTI_OPTIONS

_LEVEL_TABLE = (  # (highest level of the band, count, sides)
    (5, 3, 4),
    (10, 4, 6),
    (15, 5, 8),
    (20, 6, 10),
    (25, 7, 12),
    (30, 8, 14),
    (35, 9, 16),
    (40, 10, 16),
)
_GM_DIE = {3: 6, 4: 8, 6: 10, 8: 12, 10: 14, 12: 16, 14: 20, 16: 24}


def checked_level(value: object, where: str) -> int:
    level = whole_number(value, where)
    if not 0 <= level <= MAX_LEVEL:
        raise RuleError(where, f"levels run from 0 to {MAX_LEVEL}, got {level}")
    return level


def pool_for_level(level: int) -> tuple[int, int]:
    """Starting action dice of a character of ``level``: ``(count, sides)``.

    Below 1: 2d3; 1-5: 3d4; ... 36-40: 10d16; from 41 on d16 and one more die per started five
    levels past 40 (41-45: 11, 46-50: 12, ...). Never bigger than d16.
    """
    level = checked_level(level, "level")
    if level < 1:
        return (2, 3)
    for top, count, sides in _LEVEL_TABLE:
        if level <= top:
            return (count, sides)
    return (10 + math.ceil((level - 40) / 5), 16)


def gm_die(highest_player_sides: int) -> int:
    """The GM's die type, from the highest die type among the players (d3 -> d6 ... d16 -> d24)."""
    try:
        return _GM_DIE[highest_player_sides]
    except (KeyError, TypeError):
        raise RuleError(
            "highest_player_sides",
            f"player action dice are d3 to d16 ({sorted(_GM_DIE)}), not {highest_player_sides!r}",
        ) from None


PoolGroups = list[tuple[int, int]]  # one player's pool as (count, sides) groups


def _groups(pool: tuple[int, int] | Sequence[tuple[int, int]], where: str) -> PoolGroups:
    """A player's pool given as one (count, sides) or a list of them (the divided option)."""
    if (
        isinstance(pool, (tuple, list))
        and len(pool) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in pool)
    ):
        items: Iterable[Any] = [pool]
    elif isinstance(pool, (list, tuple)):
        items = pool
    else:
        raise RuleError(where, f"expected (count, sides) or a list of them, got {pool!r}")
    out: PoolGroups = []
    for i, item in enumerate(items):
        try:
            count, sides = item
        except (TypeError, ValueError):
            raise RuleError(f"{where}.{i}", f"expected (count, sides), got {item!r}") from None
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise RuleError(f"{where}.{i}", f"a count is a whole number, 0 or more, not {count!r}")
        if sides not in _GM_DIE:
            raise RuleError(f"{where}.{i}", f"player action dice are d3 to d16, not {sides!r}")
        out.append((count, sides))
    return out


def gm_pool(player_pools: Sequence[tuple[int, int] | Sequence[tuple[int, int]]]) -> tuple[int, int]:
    """The GM's starting pool: ``(count, sides)``.

    count = number of players (GM excluded) + the largest starting pool of any one player; the
    die type comes from the highest die type any player has. Each player's pool is one
    ``(count, sides)`` or, under the divided option, a list of them.
    """
    if not isinstance(player_pools, (list, tuple)) or not player_pools:
        raise RuleError("player_pools", "needs at least one player")
    players = [_groups(pool, f"player_pools.{i}") for i, pool in enumerate(player_pools)]
    largest = max(sum(count for count, _ in groups) for groups in players)
    highest = max((sides for groups in players for count, sides in groups if count), default=None)
    if highest is None:
        raise RuleError("player_pools", "no player has a die to take the GM's die type from")
    return (len(players) + largest, gm_die(highest))


def gm_pool_growth(
    *,
    before: Sequence[tuple[int, int] | Sequence[tuple[int, int]]],
    after: Sequence[tuple[int, int] | Sequence[tuple[int, int]]],
) -> tuple[int, int]:
    """When a player sits down after the start: ``(dice to add to the GM's pool, GM die type)``.

    The late player counts as if present at the start; the GM's pool and die type grow to
    match, never shrink.
    """
    old_count, old_sides = gm_pool(before)
    new_count, new_sides = gm_pool(after)
    return (max(0, new_count - old_count), max(old_sides, new_sides))


def player_pool(
    levels: Sequence[int],
    *,
    option: str = "highest",
    balanced_choice: str = "fewer",
) -> list[tuple[int, int]]:
    """One player's starting pool from the levels of every character they control.

    - ``highest``: the pool of the highest-level character.
    - ``balanced``: within 3 levels, the highest's pool; 4 or more apart, either one die fewer
      of the highest's type (``balanced_choice="fewer"``) or one die more but of the lowest
      character's type (``"extra"``).
    - ``divided``: each character gives its own type, floor(its count / characters) dice.

    Returns ``(count, sides)`` groups, biggest dice first, empty groups left out.
    """
    if not isinstance(levels, (list, tuple)) or not levels:
        raise RuleError("levels", "needs the level of at least one character")
    checked = [checked_level(level, f"levels.{i}") for i, level in enumerate(levels)]
    if option not in MULTI_OPTIONS:
        raise RuleError("option", f"must be one of {list(MULTI_OPTIONS)}, got {option!r}")
    if balanced_choice not in BALANCED_CHOICES:
        raise RuleError(
            "balanced_choice", f"must be one of {list(BALANCED_CHOICES)}, got {balanced_choice!r}"
        )
    top, low = max(checked), min(checked)
    count, sides = pool_for_level(top)
    if option == "highest" or len(checked) == 1:
        return [(count, sides)]
    if option == "balanced":
        if top - low <= 3:
            return [(count, sides)]
        if balanced_choice == "fewer":
            return [(count - 1, sides)]
        return [(count + 1, pool_for_level(low)[1])]
    by_sides: dict[int, int] = {}
    for level in checked:
        c, s = pool_for_level(level)
        by_sides[s] = by_sides.get(s, 0) + c // len(checked)
    return [(c, s) for s, c in sorted(by_sides.items(), reverse=True) if c]
