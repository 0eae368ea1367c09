"""Kingyak's Workshop: the words of a roll's line (the result's ``text``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..limits import MAX_CHAIN
from ..results import with_notes
from .fields import sides_of


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def pool_text(pool: list[str]) -> str:
    counts: dict[str, int] = {}
    for die in pool:
        counts[die] = counts.get(die, 0) + 1
    order = sorted(counts, key=lambda d: -sides_of(d))
    return "+".join(f"{counts[d]}{d}" for d in order)


def roll_line(result: Mapping[str, Any]) -> str:
    req = result["request"]
    head = f"{pool_text(req['pool'])} at TN {req['tn']}"
    if req["challenge"]:
        head += f" vs {req['challenge']} challenge"
    if req.get("discord") is not None:
        head += f", Discord {req['discord']}"
    opp = result.get("opponent")
    if opp is None:
        body = (
            f"{plural(result['successes'], 'success', 'successes')} - "
            f"{plural(result['challenge_hits'], 'hit', 'hits')} = net {result['net']}"
        )
    else:
        body = (
            f"{result['remaining']} left vs the opponent's {opp['remaining']} = net {result['net']}"
        )
    line = f"{head}: {body}: {result['outcome']}"
    if opp is not None:
        winner = {"self": "roller wins", "opponent": "opponent wins", None: "tie"}
        line += f" ({winner[result['winner']]})"
    elif result["fails"]:
        line += f", {plural(result['fails'], 'fail', 'fails')}"
    notes = list(result["flags"])
    if result.get("protected"):
        notes.append(f"{result['protected']} protected")
    if result.get("infinite_fives"):
        notes.append("Infinite Fives")
    if opp is not None and opp["flags"]:
        notes.append("opponent " + " ".join(opp["flags"]))
    if result.get("capped"):
        notes.append(f"a fives chain stopped at the {MAX_CHAIN}-roll cap")
    return with_notes(line, notes)
