"""The Action Dice System: the words of a roll's line (the result's ``text``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..limits import MAX_CHAIN
from ..results import with_notes


def roll_line(result: Mapping[str, Any]) -> str:
    req = result["request"]
    action = req["action_dice"]
    # Written as on a sheet: "+4d6 (5d6)" added to action dice, "2d6" for a passive roll.
    head = f"{action} action {'die' if action == 1 else 'dice'} +" if action else ""
    head += f"{req['skill_dice']}d6"
    if req["max_dice"] is not None:
        head += f" ({req['max_dice']}d6)"
    if action and not req["sequence"]:
        head += ", outside a sequence"
    if req["average"]:
        body = f"average of {result['counted']}d6"
    else:
        groups: dict[int, list[int]] = {}
        dropped = set()
        for d in result["dice"]:
            groups.setdefault(d["group"], []).append(d["value"])
            if d.get("dropped"):
                dropped.add(d["group"])
        shown = [
            ("+".join(map(str, vals)) + (" (dropped)" if g in dropped else ""))
            for g, vals in groups.items()
        ]
        body = ", ".join(shown) if shown else "no dice"
    extra = []
    if result["flat_bonus"]:
        extra.append(f"+{result['flat_bonus']}")
    if req["modifier"]:
        extra.append(f"{req['modifier']:+d}")
    line = f"{head}: {body}"
    if extra:
        line += " " + " ".join(extra)
    line += f" = {result['total']}"
    if result["outcome"] is not None:
        line += f" vs {req['difficulty']}: {result['outcome']} (degree {result['degree']})"
    notes = []
    if result.get("capped"):
        notes.append(f"an action die stopped at the {MAX_CHAIN}-roll cap")
    return with_notes(line, notes)
