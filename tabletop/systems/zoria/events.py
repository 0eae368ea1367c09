"""The events Zoria's table records (its checks, its dice pools), beyond the core's."""

from __future__ import annotations

from rules.engines.schema import Field

from ...protocol import events as ev
from ..base import (
    resource_award,
)

# The events Zoria's table records (its checks, its dice pools), beyond the core's.
EVENTS: tuple[ev.EventType, ...] = (
    ev.EventType(
        "pool",
        "insight-ask",
        (ev.ACTION, ev.SEAT, Field("subject", "text", max_length=200), ev.TABLE, ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "a player asks the GM to make an inspiration check",
    ),
    ev.EventType(
        "pool",
        "insight-answer",
        (
            ev.ACTION,
            ev.int_field("ask", min=1),
            ev.SEAT,
            Field("granted", "bool"),
            ev.TABLE,
            ev.TEXT,
        ),
        ev.PUBLIC,
        "everyone",
        "the GM grants or refuses an inspiration check",
    ),
    ev.EventType(
        "pool",
        "initiative",
        (
            ev.ACTION,
            Field("phase", "bool", help="whether the initiative phase is on"),
            ev.TABLE,
            ev.TEXT,
        ),
        ev.PUBLIC,
        "everyone",
        "the GM begins or ends the initiative phase",
    ),
    ev.EventType(
        "roll.close",
        None,
        (
            ev.int_field("roll", min=1, required=True),
            Field("result", "text", max_length=200),
            ev.OPEN_ROLL,
            ev.TEXT,
        ),
        ev.ANY,
        "as hidden as the roll (judged for its roller)",
        "the GM declared an open roll's result: no more dice on it",
    ),
    ev.EventType(
        "pool",
        "spend",
        (
            ev.ACTION,
            Field("effect", "text", required=True),
            ev.ROLL_SEQ,
            ev.COUNT,
            ev.NOTE,
            Field(
                "subject", "text", nullable=True, max_length=200, help="what an insight is about"
            ),
            ev.OPEN_ROLL,
            ev.POOLS,
            ev.TABLE,
            ev.TEXT,
        ),
        ev.ANY,
        ev.POOL_RULE,
        "dice spent from a pool for an effect (`effect`)",
        matches=lambda data: "use" not in data,
    ),
    ev.EventType(
        "pool",
        "award",
        (ev.ACTION, ev.SEAT, ev.COUNT, ev.POOLS, ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "the GM awarded a player dice (the GM's pool grows to match)",
        matches=lambda data: not resource_award(data),
    ),
    ev.EventType(
        "pool",
        "undo-award",
        (ev.ACTION, ev.int_field("undoes", min=1), ev.SEAT, ev.COUNT, ev.POOLS, ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "the GM took back an award (`undoes`: its seq)",
    ),
    ev.EventType(
        "pool",
        "refund",
        (
            ev.ACTION,
            ev.ROLL_SEQ,
            ev.SEAT,
            ev.COUNT,
            ev.objs_field("returned", help='{"pool", "count"}: the stacks the dice went back to'),
            ev.NOTE,
            ev.OPEN_ROLL,
            ev.POOLS,
            ev.TEXT,
        ),
        ev.ANY,
        ev.POOL_RULE,
        "the GM gave back dice spent on a roll's critical (`seat`: who spent them)",
    ),
    ev.EventType(
        "pool",
        "lucky-break",
        (ev.ACTION, ev.SEAT, ev.int_field("given_up", min=0), ev.POOLS, ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "a player gave up their whole pool for a lucky break",
    ),
    ev.EventType(
        "pool",
        "deal",
        (ev.ACTION, ev.SEAT, ev.POOLS, ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "a player's pool dealt (the GM's grows to match)",
    ),
    ev.EventType(
        "pool",
        "use",
        (
            ev.ACTION,
            ev.ROLL_SEQ,
            ev.DICE,
            ev.CLIENT_SEED,
            ev.int_field("added"),
            ev.OPEN_ROLL,
            ev.POOLS,
            ev.TEXT,
        ),
        ev.ANY,
        ev.POOL_RULE,
        "a die from a pool rolled and added to an open roll",
    ),
    ev.EventType(
        "pool",
        "close",
        (ev.ACTION, Field("rolls", "list", fields=(ev.int_field("seq", min=1),)), ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "the session ends: rolls still open close as they stand",
    ),
)
