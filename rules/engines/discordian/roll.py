"""Kingyak's Workshop: rolling a side, and the GM's Discord Die."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..dice import DieMarks, DieRecord, draw
from ..fair import DiceSource
from ..limits import MAX_CHAIN
from .fields import CHALLENGE_HIT, CHALLENGE_SIDES, DISCORD_SIDES, DISCORD_WANDER, sides_of


def roll_discord_die(source: DiceSource) -> dict[str, Any]:
    """The GM's Discord Die: a d20; on a 20 roll again, and a 3 then means it wanders off.

    Returns ``{"value": int | None, "wandered": bool, "dice": [records], "text": str}``;
    ``value`` None means no Discord Die until the next scene (scene mode: the adventure).
    """
    first = draw(source, DISCORD_SIDES, "discord")
    dice = [first]
    if first["value"] != DISCORD_SIDES:
        value: int | None = first["value"]
        wandered = False
        text = f"Discord Die: {value}"
    else:
        second = draw(source, DISCORD_SIDES, "discord", second_roll=True)
        dice.append(second)
        wandered = second["value"] == DISCORD_WANDER
        value = None if wandered else second["value"]
        text = (
            "Discord Die: 20, then 3: it wanders off"
            if wandered
            else f"Discord Die: 20, rolled again: {value}"
        )
    return {"value": value, "wandered": wandered, "dice": dice, "text": text}


def roll_side(
    side: Mapping[str, Any],
    discord: int | None,
    source: DiceSource,
    offset: int,
    extra: DieMarks,
) -> dict[str, Any]:
    """One side's dice and tallies; ``offset`` is where its first die sits in the result's list."""
    tn = side["tn"]
    infinite = discord == 5 or side.get("infinite_fives", False)
    pool = [draw(source, sides_of(d), "base", **extra) for d in side["pool"]]
    challenge = [
        draw(source, CHALLENGE_SIDES, "challenge", **extra) for _ in range(side["challenge"])
    ]
    for rec in challenge:
        rec["hit"] = rec["value"] >= CHALLENGE_HIT

    # Discord Die: matching dice go, except the protected ones (most sides first, then draw order).
    matching = [i for i, rec in enumerate(pool) if discord is not None and rec["value"] == discord]
    matching.sort(key=lambda i: -pool[i]["sides"])
    protected = set(matching[: side["protect"]])
    for i in matching:
        if i in protected:
            pool[i]["protected"] = True
        else:
            pool[i]["role"] = "eliminated"
    survivors = [rec for rec in pool if rec["role"] == "base"]

    # Law of Fives: each surviving 5 brings a bonus die of its size; under Infinite Fives a
    # bonus 5 brings another. Bonus dice are not subject to the Discord Die.
    bonus: list[DieRecord] = []
    capped = False
    base_at = offset + len(pool) + len(challenge)
    for i, rec in enumerate(pool):
        if rec["role"] != "base" or rec["value"] != 5:
            continue
        parent = offset + i
        for extra_rolls in range(1, MAX_CHAIN + 1):
            die = draw(source, rec["sides"], "bonus", **extra)
            die["from"] = parent
            bonus.append(die)
            if not (infinite and die["value"] == 5):
                break
            if extra_rolls == MAX_CHAIN:
                capped = True
            parent = base_at + len(bonus) - 1

    for rec in survivors + bonus:
        rec["successes"] = rec["value"] // tn
    successes = sum(rec["value"] // tn for rec in survivors + bonus)

    flags: list[str] = []
    luck: list[DieRecord] = []
    if len(survivors) >= 2:
        values = {rec["value"] for rec in survivors}
        if min(values) >= tn:
            flags.append("lucky-break")
            luck_die = draw(source, sides_of(side["luck_die"]), "luck", **extra)
            luck.append(luck_die)
            successes += luck_die["value"]
        if values == {1}:
            flags.append("bad-break")
        elif len(values) == 1:
            flags.append("fluke")

    hits = sum(1 for rec in challenge if rec["value"] >= CHALLENGE_HIT)
    ones = sum(1 for rec in survivors + bonus + challenge if rec["value"] == 1)
    return {
        "dice": pool + challenge + bonus + luck,
        "successes": successes,
        "challenge_hits": hits,
        "ones": ones,
        "protected": len(protected),
        "infinite_fives": bool(infinite),
        "capped": capped,
        "flags": flags,
    }
