"""Die records: how a result lists each die it drew.

Every result's ``dice`` is a list of these, in draw order, one per draw from the source:

    {"die": "d10", "sides": 10, "value": 7, "role": "kept", ...}

``die`` is the die's name as players say it (``d6``, ``d%`` is ``d100``, ``dF``), ``sides``
the number of sides drawn from the stream (``dF`` is drawn as a d3), ``value`` the face shown
(``dF`` shows -1, 0, +1). ``role`` is what the die did in the roll (``Role``):

- ``base``: an ordinary die that counts; ``kept``/``dropped``: kept or dropped by a keep rule;
  ``rerolled``: replaced by a reroll, it does not count;
- ``chance``: the D6 Chance Die (and its explosions); ``action``: an action die (Zoria, the Action
  Dice System); ``skill``: a plain skill die (the Action Dice System); ``bonus``: a bonus die (D6
  bonus dice, Law of Fives dice);
- ``challenge``: a Discordian challenge die; ``eliminated``: removed by the Discord Die;
  ``luck``: the Discordian luck die; ``discord``: the Discord Die itself;
- ``opponent``: a die of the opposing side in an opposed roll.

Engines may add the keys of ``DieMarks`` (``"explodes": true`` on a die whose face exploded,
``"exploded": true`` on the die drawn because of it, ``"protected": true``, ``"success": true``,
...), never remove these four.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Literal, TypedDict, Unpack

from .fair import DiceSource

Role = Literal[
    "base", "kept", "dropped", "rerolled", "chance", "action", "skill", "bonus", "challenge",
    "eliminated", "luck", "discord", "opponent",
]

Side = Literal["self", "opponent"]  # whose die, in an opposed roll

# The keys engines add to a die's record, each only where it says something. ("from" is a
# Python keyword, hence the functional form.)
DieMarks = TypedDict(
    "DieMarks",
    {
        "exploded": bool,  # drawn because the die before it exploded (or cascaded)
        "explodes": bool,  # its face exploded: it set off the draw of the die after it
        "compounded": bool,  # added onto the die before it (``!!``): part of that one die
        "capped": bool,  # the last of a chain that stopped at MAX_CHAIN
        "penetrated": bool,  # added by a penetrating explosion: counts one less
        "counts_as": int,  # what the die counts as, where that is not its face
        "critical": Literal["success", "failure"],  # a critical mark (cs/cf)
        "success": bool,  # counted as a success
        "failure": bool,  # counted as a failure
        "matched": bool,  # in a matching set (m/mt)
        "successes": int,  # the successes the die scores (Discordian)
        "hit": bool,  # a challenge die that hit (Discordian)
        "protected": bool,  # spared by the Discord Die (Discordian)
        "from": int,  # a Law of Fives bonus die: the index of the die that brought it
        "second_roll": bool,  # the Discord Die rolled again after a 20
        "side": Side,
        "group": int,  # the die (of an Action Dice roll) this record belongs to
        "dropped": bool,  # an Action Dice die that does not count
    },
    total=False,
)


class DieRecord(DieMarks):
    """One die a result lists: the four keys every record has, and any of ``DieMarks``."""

    die: str
    sides: int
    value: int
    role: Role


@lru_cache(maxsize=512)
def die_name(sides: int) -> str:
    return f"d{sides}"


def draw(
    source: DiceSource,
    sides: int,
    role: Role,
    *,
    name: str | None = None,
    **extra: Unpack[DieMarks],
) -> DieRecord:
    """Draw one die from ``source`` and return its record."""
    return {
        "die": name or die_name(sides),
        "sides": sides,
        "value": source.roll(sides),
        "role": role,
        **extra,
    }


def draw_fudge(source: DiceSource, role: Role, **extra: Unpack[DieMarks]) -> DieRecord:
    """A dF: drawn as a d3, showing -1, 0, +1 for 1, 2, 3."""
    record = draw(source, 3, role, name="dF", **extra)
    record["value"] -= 2
    return record


def parse_die(text: str, *, field: str, allowed: Callable[[int], bool] | None = None) -> int:
    """``"d8"`` -> 8, with a clear error naming ``field`` otherwise."""
    from .errors import RuleError
    from .limits import MAX_SIDES, MIN_SIDES

    if not isinstance(text, str) or not text.lower().startswith("d") or not text[1:].isdigit():
        raise RuleError(field, f"expected a die like 'd6', got {text!r}")
    sides = int(text[1:])
    if not MIN_SIDES <= sides <= MAX_SIDES:
        raise RuleError(field, f"die sizes run from d{MIN_SIDES} to d{MAX_SIDES}, not d{sides}")
    if allowed is not None and not allowed(sides):
        raise RuleError(field, f"d{sides} is not allowed here")
    return sides
