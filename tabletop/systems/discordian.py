"""Kingyak's Workshop at the table: the GM's Discord Die, rolled once a
round (or once a scene in scene mode) and applied to every roll; rounds and scenes; Luck and
Instant Karma spent on a luck die, on protection (only for dice actually protected), on
avoiding a costly success and on extra successes."""

from __future__ import annotations

from typing import Any

from rules.engines import discordian as rules
from rules.engines.schema import Field

from ..models import Event, GameSession
from ..protocol.commands import Command
from ..selectors.pools import resource_snapshot
from ..services.errors import conflict
from ..services.events import change
from ..services.pools import ensure_resources, resource_names, spend_resource
from ..services.rolls import fair_stream
from .base import (
    CLIENT_SEED,
    ResourceUse,
    begin_command,
    gm_session,
    need_character,
    resource_award_command,
    resource_spend_command,
    roll_change,
    save_table_state,
    seat_change,
    seat_of,
    spend_for_roll,
)
from .registry import RollContext, TableSystem


def _mode(session: GameSession) -> str:
    return (session.campaign.settings or {}).get("discord_mode", "round")


def _discord(state: dict[str, Any]) -> dict[str, Any]:
    return dict(state.get("discord") or {})


class DiscordianTable(TableSystem):
    id = "discordian"
    roll_options = (
        Field(
            "add_luck_die",
            "bool",
            label="Add my luck die (1 Instant Karma)",
            default=False,
        ),
    )
    demo_characters = (
        {
            "name": "Eris Quill",
            "sheet": {
                "hero_dice": ["d6", "d8"],
                "tropes": {"Trickster": 8},
                "trademarks": {"Lockpicks": 6},
                "luck": 3,
                "instant_karma": 2,
            },
        },
        {
            "name": "Bob Dobbs",
            "sheet": {
                "hero_dice": ["d6"],
                "tropes": {"Salesman": 10},
                "trademarks": {"Pipe": 4},
                "luck": 2,
                "instant_karma": 3,
            },
        },
    )

    def prepare(self, ctx: RollContext, request: dict[str, Any]) -> dict[str, Any]:
        # The GM's Discord Die applies to every roll by itself.
        request = {**request, "discord": _discord(ctx.session.table_state or {}).get("value")}
        if ctx.options.get("add_luck_die"):
            character = need_character(ctx, "adds a luck die")
            luck_die = (character.sheet or {}).get("luck_die", "d6")
            request = {**request, "pool": [*request["pool"], luck_die]}
            spend_for_roll(
                ctx,
                name="instant_karma",
                amount=1,
                use="add-luck-die",
                text=f"{character.name} spends 1 Instant Karma: a {luck_die} joins the pool",
            )
        if request.get("protect"):
            # Protection is paid after the roll, for the dice it actually shielded; the
            # character must hold enough Instant Karma to cover what is asked.
            character = need_character(ctx, "protects dice from the Discord Die")
            rows = ensure_resources(character=character)
            held = next((r.amount for r in rows if r.name == "instant_karma"), 0)
            if held < request["protect"]:
                raise conflict(
                    f"{character.name} has only {held} Instant Karma to protect "
                    f"{request['protect']} dice"
                )
        return request

    def settle(self, ctx: RollContext, roll: Event) -> None:
        protected = int(roll.data.get("protected") or 0)
        if not protected:
            return
        character = need_character(ctx, "protects dice")
        row = spend_resource(character=character, name="instant_karma", amount=protected)
        roll_change(
            ctx,
            data={
                "action": "spend",
                "use": "protect",
                "roll": roll.seq,
                "character": {"id": character.pk, "name": character.name},
                "amount": protected,
                "resources": [resource_snapshot(row)],
                "text": f"{character.name} spends {protected} Instant Karma: "
                f"{protected} dice protected from the Discord Die",
            },
        )


table = DiscordianTable()


# --- the Discord Die, rounds and scenes -----------------------------------------------------


def roll_discord_die(*, seat_id: int, client_seed: str = "") -> Event:
    """The GM rolls the Discord Die: once a round (once a scene in scene mode). A die that
    wanders off stays away until the next scene (in scene mode, for the rest of the
    adventure)."""
    seat = seat_of(seat_id)
    with change():
        session, seq = gm_session(seat)
        mode = _mode(session)
        state = dict(session.table_state or {})
        current = _discord(state)
        scene, round_ = int(state.get("scene") or 0), int(state.get("round") or 0)
        if current.get("wandered"):
            if mode == "scene":
                raise conflict("the Discord Die wandered off: it is gone for the adventure")
            if current.get("scene") == scene:
                raise conflict("the Discord Die wandered off: it is gone until the next scene")
        if current.get("scene") == scene and (mode == "scene" or current.get("round") == round_):
            unit = "scene" if mode == "scene" else "round"
            raise conflict(
                f"the Discord Die is rolled once a {unit}: start a new {unit} to roll again"
            )
        stream, client_seed = fair_stream(
            server_seed=bytes(session.server_seed), client_seed=client_seed, seq=seq
        )
        rolled = rules.roll_discord_die(stream)
        state["discord"] = {
            "value": rolled["value"],
            "wandered": rolled["wandered"],
            "mode": mode,
            "seq": seq,
            "scene": scene,
            "round": round_,
        }
        save_table_state(session, state)
        return seat_change(
            seat,
            seq,
            data={
                "action": "discord",
                "dice": rolled["dice"],
                "client_seed": client_seed,
                "discord": state["discord"],
                "table": state,
                "text": rolled["text"],
            },
        )


def _new_round(session: GameSession, state: dict[str, Any]) -> tuple[list[int], str]:
    """In round mode the last round's Discord Die no longer applies; a wandered die stays
    away."""
    discord = _discord(state)
    if _mode(session) == "round" and discord.get("value") is not None:
        state["discord"] = {**discord, "value": None}
        return [], "the GM rolls a new Discord Die"
    return [], ""


def _new_scene(session: GameSession, state: dict[str, Any]) -> tuple[list[int], str]:
    """A new scene: a Discord Die to roll again, and one that wandered off comes back (not
    in scene mode, where it is gone for the adventure)."""
    discord = _discord(state)
    if not discord:
        return [], ""
    if _mode(session) == "scene" and discord.get("wandered"):
        return [], "the Discord Die is still gone"
    state["discord"] = {**discord, "value": None, "wandered": False}
    return [], "the Discord Die comes back to the table"


# --- Luck and Instant Karma -----------------------------------------------------------------


def _successful(roll: Event) -> None:
    if roll.data.get("outcome") != "success":
        raise conflict("+1 success is only for a successful roll")


def _costly(roll: Event) -> None:
    if "costly" not in roll.data.get("flags", []):
        raise conflict(f"roll #{roll.seq} is not a costly success")
    if Event.objects.filter(
        session_id=roll.session_id,
        kind="pool",
        data__roll=roll.seq,
        data__use__in=list(AVOID),
    ).exists():
        raise conflict(f"roll #{roll.seq}'s costly success is already avoided")


def _extra_successes(roll: Event, amount: int) -> dict[str, Any]:
    """The roll's headline after this spend: every success bought on it so far, and this."""
    bought = amount + sum(
        e.data.get("amount", 0)
        for e in Event.objects.filter(
            session_id=roll.session_id, kind="pool", data__roll=roll.seq, data__use="extra-success"
        )
    )
    out: dict[str, Any] = {"successes": (roll.data.get("successes") or 0) + bought}
    if roll.data.get("net") is not None:
        out["net"] = roll.data["net"] + bought
    return out


def _avoided(roll: Event, amount: int) -> dict[str, Any]:
    return {"costly_avoided": True}


AVOID = ("avoid-costly", "avoid-costly-luck")
USES = {
    # The roll sets the price of avoiding a costly success: Instant Karma equal to its 1s.
    "avoid-costly": ResourceUse(
        "instant_karma",
        for_roll=True,
        check=_costly,
        price=lambda roll: max(1, int(roll.data.get("ones") or 0)),
        effect=_avoided,
    ),
    "avoid-costly-luck": ResourceUse(
        "luck", for_roll=True, check=_costly, price=lambda roll: 1, effect=_avoided
    ),
    "extra-success": ResourceUse("luck", for_roll=True, check=_successful, effect=_extra_successes),
}

commands = (
    Command(
        "discord.roll",
        (CLIENT_SEED,),
        roll_discord_die,
        "roll the Discord Die (once a round, or once a scene in scene mode)",
        gm_only=True,
    ),
    begin_command("round", _new_round, "a new round: a new Discord Die to roll (round mode)"),
    begin_command("scene", _new_scene, "a new scene: a wandered Discord Die comes back"),
    resource_spend_command(USES),
    resource_award_command(tuple(resource_names(table.id))),
)
