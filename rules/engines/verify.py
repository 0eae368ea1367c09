"""Recompute a finished session's dice from its revealed seed (docs/rules.md, "The fair-dice
stream").

Pure: it takes the published commitment, the revealed seed and the events, and says, per event,
whether every die listed is the die the stream gives at that place.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .fair import FairStream


@dataclass
class EventCheck:
    seq: int
    kind: str
    dice: int
    ok: bool
    problem: str = ""


@dataclass
class Report:
    commitment_ok: bool
    checks: list[EventCheck] = field(default_factory=list)

    @property
    def failures(self) -> list[EventCheck]:
        return [c for c in self.checks if not c.ok]

    @property
    def ok(self) -> bool:
        return self.commitment_ok and not self.failures

    @property
    def dice(self) -> int:
        return sum(c.dice for c in self.checks)


def check_dice(
    *, server_seed: bytes, client_seed: str, seq: int, dice: list[Mapping[str, Any]]
) -> str:
    """'' if every listed die matches the stream for (client_seed, seq), else what is wrong."""
    stream = FairStream(server_seed, client_seed, seq)
    for index, die in enumerate(dice):
        try:
            sides = int(die["sides"])
            shown = int(die["value"])
        except (KeyError, TypeError, ValueError):
            return f"die {index} has no sides/value"
        if sides < 1:
            return f"die {index} has {sides} sides"
        drawn = stream.roll(sides)
        expected = drawn - 2 if die.get("die") == "dF" else drawn
        if shown != expected:
            name = die.get("die", f"d{sides}")
            return f"die {index} ({name}) shows {shown}, the stream gives {expected}"
    return ""


def verify_events(
    *, commitment: str, server_seed: bytes, events: Iterable[tuple[int, str, Mapping[str, Any]]]
) -> Report:
    """``events`` are (seq, kind, data); every event whose data lists dice is checked."""
    report = Report(commitment_ok=hashlib.sha256(server_seed).hexdigest() == commitment.lower())
    for seq, kind, data in events:
        dice = data.get("dice") if isinstance(data, Mapping) else None
        if not isinstance(dice, list) or not dice:
            continue
        client_seed = data.get("client_seed") or ""
        problem = check_dice(
            server_seed=server_seed, client_seed=str(client_seed), seq=seq, dice=dice
        )
        report.checks.append(
            EventCheck(seq=seq, kind=kind, dice=len(dice), ok=not problem, problem=problem)
        )
    return report
