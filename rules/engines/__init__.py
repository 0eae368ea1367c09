"""Pure game engines: no Django, no I/O, no global random state.

Every engine takes a request and a ``DiceSource`` and returns a result; odds are exact.
"""

from .errors import OddsTooLarge, RuleError
from .fair import DiceSource, FairStream, ScriptedSource
from .registry import get_system, system_ids
from .system import GameSystem

__all__ = [
    "DiceSource",
    "FairStream",
    "GameSystem",
    "OddsTooLarge",
    "RuleError",
    "ScriptedSource",
    "get_system",
    "system_ids",
]
