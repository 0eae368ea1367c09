"""Sunrider D6 at the table: rounds the GM starts, a character point that doubles the base dice
of every roll of its character for the rest of the round (paid once; one roll for a long action
or outside rounds), and a character point spent to survive."""

from __future__ import annotations

from typing import Any

from rules.engines.schema import Field

from ..models import Event
from ..services.pools import resource_names
from .base import (
    ResourceUse,
    begin_command,
    need_character,
    resource_award_command,
    resource_spend_command,
    spend_for_roll,
)
from .registry import RollContext, TableSystem


class D6ChanceTable(TableSystem):
    id = "d6-chance"
    roll_options = (
        Field(
            "long_action",
            "bool",
            label="A long action (a character point lasts this roll only)",
            default=False,
        ),
    )
    demo_characters = (
        {
            "name": "Captain Sera Vance",
            "sheet": {
                "attributes": {"Dexterity": "3D+1", "Perception": "3D"},
                "skills": {"Blaster": "5D+1", "Piloting": "4D+2"},
                "character_points": 5,
            },
        },
        {
            "name": "Dorrik",
            "sheet": {
                "attributes": {"Strength": "4D", "Knowledge": "2D+2"},
                "skills": {"Brawling": "5D"},
                "character_points": 3,
            },
        },
    )

    def prepare(self, ctx: RollContext, request: dict[str, Any]) -> dict[str, Any]:
        """A character point lasts the round: the first roll that asks for one pays it, and
        every roll of that character until the GM starts the next round has its base dice
        doubled. For a long action, or outside rounds (the GM has started none), it lasts that
        one roll. Which round a point lasts is kept on its spend, as hidden as the roll that
        paid it (never in the table's public state)."""
        round_ = int((ctx.session.table_state or {}).get("round") or 0)
        if ctx.character is not None and round_ and _point_lasts(ctx, round_):
            return {**request, "character_point": True}
        if not request.get("character_point"):
            return request
        character = need_character(ctx, "spends a character point")
        one_roll = bool(ctx.options.get("long_action")) or not round_
        lasts = "this round"
        if not round_:
            lasts = "for this roll (no round has begun)"
        if ctx.options.get("long_action"):
            lasts = "for this long action"
        spend_for_roll(
            ctx,
            name="character_points",
            amount=1,
            use="double-base",
            text=f"{character.name} spends a character point: base dice doubled {lasts}",
            **({} if one_roll else {"lasts_round": round_}),
        )
        return request


def _point_lasts(ctx: RollContext, round_: int) -> bool:
    """Whether the character spent a point for this round (the spend says which round)."""
    return Event.objects.filter(
        session_id=ctx.session.pk,
        kind="pool",
        data__use="double-base",
        data__character__id=ctx.character.pk,
        data__lasts_round=round_,
    ).exists()


table = D6ChanceTable()

USES = {"survive": ResourceUse("character_points")}

commands = (
    begin_command("round", None, "a new round: last round's character points are used up"),
    resource_spend_command(USES),
    resource_award_command(tuple(resource_names(table.id))),
)
