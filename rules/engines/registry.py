"""The game systems, in the order players see them: one explicit list. Engines never import
this module; the table and the command line find a system here by its id."""

from __future__ import annotations

from .action_dice import ACTION_DICE
from .d6_chance import D6_CHANCE
from .discordian import DISCORDIAN
from .errors import RuleError
from .generic import GENERIC
from .roll_and_keep import ROLL_AND_KEEP
from .system import GameSystem
from .zoria import ZORIA

SYSTEMS: tuple[GameSystem, ...] = (
    GENERIC,
    ZORIA,
    ROLL_AND_KEEP,
    D6_CHANCE,
    DISCORDIAN,
    ACTION_DICE,
)

_BY_ID: dict[str, GameSystem] = {s.id: s for s in SYSTEMS}
assert len(_BY_ID) == len(SYSTEMS), "two systems share an id"


def get_system(system_id: str) -> GameSystem:
    try:
        return _BY_ID[system_id]
    except (KeyError, TypeError):
        raise RuleError(
            "system", f"unknown system {system_id!r}; expected one of {system_ids()}"
        ) from None


def system_ids() -> list[str]:
    return [s.id for s in SYSTEMS]
