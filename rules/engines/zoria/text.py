"""Zoria: the words of a roll's line (the result's ``text``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..limits import MAX_CHAIN
from ..results import with_notes


def check_notation(bonus: int) -> str:
    """The check a bonus makes: ``1d20+7``."""
    if bonus == 0:
        return "1d20"
    return f"1d20{bonus:+d}"


def roll_line(result: Mapping[str, Any]) -> str:
    req = result["request"]
    line = result.get("check_text") or f"{req['check']} = {result.get('check_total')}"
    # Each action die with its cascade, e.g. "d6 6+6+2".
    chains: list[list[int]] = []
    for rec in result["dice"]:
        if rec["role"] == "action":
            if rec.get("exploded") and chains:
                chains[-1].append(rec["value"])
            else:
                chains.append([rec["value"]])
    if chains:
        shown = ", ".join(
            f"{die} {'+'.join(map(str, values))}"
            for die, values in zip(req["action_dice"], chains, strict=False)
        )
        line += f"; action dice {shown}; total {result['total']}"
    if req["dc"] is not None:
        line += f" vs DC {req['dc']}: {result['outcome']}"
    line = with_notes(line, result["flags"])
    if result.get("capped"):
        line += f" (a chain stopped at the {MAX_CHAIN}-roll cap)"
    return line
