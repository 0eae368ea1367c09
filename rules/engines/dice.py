"""Die records: how a result lists each die it drew.

Every result's ``dice`` is a list of these, in draw order, one per draw from the source:

    {"die": "d10", "sides": 10, "value": 7, "role": "kept", ...}

``die`` is the die's name as players say it (``d6``, ``d%`` is ``d100``, ``dF``), ``sides``
the number of sides drawn from the stream (``dF`` is drawn as a d3), ``value`` the face shown
(``dF`` shows -1, 0, +1). ``role`` is what the die did in the roll:

- ``base``: an ordinary die that counts; ``kept``/``dropped``: kept or dropped by a keep rule;
  ``rerolled``: replaced by a reroll, it does not count;
- ``chance``: the D6 Chance Die (and its explosions); ``action``: an action die (Zoria, the Action
  Dice System); ``skill``: a plain skill die (the Action Dice System); ``bonus``: a bonus die (D6
  bonus dice, Law of Fives dice);
- ``challenge``: a Discordian challenge die; ``eliminated``: removed by the Discord Die;
  ``luck``: the Discordian luck die; ``discord``: the Discord Die itself;
- ``opponent``: a die of the opposing side in an opposed roll.

Engines may add keys of their own (``"exploded": true`` on a die drawn because the one before it
exploded, ``"protected": true``, ``"success": true``, ...), never remove these four.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypedDict

from .fair import DiceSource


class DieRecord(TypedDict, total=False):
    die: str
    sides: int
    value: int
    role: str


@lru_cache(maxsize=512)
def die_name(sides: int) -> str:
    return f"d{sides}"


def draw(
    source: DiceSource, sides: int, role: str, *, name: str | None = None, **extra: Any
) -> DieRecord:
    """Draw one die from ``source`` and return its record."""
    value = source.roll(sides)
    record: DieRecord = {
        "die": name or die_name(sides),
        "sides": sides,
        "value": value,
        "role": role,
    }
    if extra:
        record.update(extra)  # type: ignore[typeddict-item]
    return record


def draw_fudge(source: DiceSource, role: str, **extra: Any) -> DieRecord:
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
