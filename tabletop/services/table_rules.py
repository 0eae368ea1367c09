"""What each game system's table rules add around a roll: resources spent before it (a
character point, Instant Karma), state applied to it (the Discord Die), and what follows it
(an open Zoria roll, progress on an extended action, the round's action dice and defense)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import F

from rules.engines import action_dice as action_rules

from ..models import Character, Event, GameSession, Seat
from ..models.pools import ExtendedAction, Pool, PoolKind
from ..selectors.pools import extended_summary, resource_snapshot
from .errors import conflict, invalid
from .pools import pools_changed, record_pool_event, spend_resource, take_dice


@dataclass
class RollContext:
    seat: Seat
    session: GameSession  # locked for this transaction
    system: str
    character: Character | None
    options: dict[str, Any] = field(default_factory=dict)
    visibility: str = "public"


# Roll options whose effects the whole table sees (progress, the round's defenses, targets).
TABLE_WIDE = ("extended", "defense", "group_extra")


def _need_character(ctx: RollContext, what: str) -> Character:
    if ctx.character is None:
        raise invalid(f"choose the character who {what}", field="character")
    return ctx.character


def _as_hidden_as_the_roll(ctx: RollContext) -> dict[str, Any]:
    """What a roll spends tells of its request (a luck die, protected dice): a spend for a
    hidden roll is as hidden as the roll; the room still sees the new counts."""
    if ctx.visibility == "public":
        return {}
    return {"visibility": ctx.visibility, "owner": ctx.seat}


def _spend_event(ctx: RollContext, *, name: str, amount: int, use: str, text: str) -> None:
    character = _need_character(ctx, f"spends {name.replace('_', ' ')}")
    row = spend_resource(character=character, name=name, amount=amount)
    record_pool_event(
        session_id=ctx.session.pk,
        actor=ctx.seat,
        **_as_hidden_as_the_roll(ctx),
        data={
            "action": "spend",
            "use": use,
            "character": {"id": character.pk, "name": character.name},
            "amount": amount,
            "resources": [resource_snapshot(row)],
            "text": text,
        },
    )


def prepare(ctx: RollContext, request: dict[str, Any]) -> dict[str, Any]:
    """Adjust the normalised request and pay for it; may record pool events before the roll."""
    for option in TABLE_WIDE:
        if ctx.options.get(option) and ctx.visibility != "public":
            # Their effect is public table state: it would tell everyone of the hidden roll.
            raise invalid("only a public roll can count for the whole table", field=option)
    if ctx.system == "d6-chance" and request.get("character_point"):
        name = ctx.character.name if ctx.character else "?"
        _spend_event(
            ctx,
            name="character_points",
            amount=1,
            use="double-base",
            text=f"{name} spends a character point: base dice doubled",
        )
    elif ctx.system == "discordian":
        discord = (ctx.session.table_state or {}).get("discord") or {}
        # The GM's Discord Die applies to every roll automatically.
        request = {**request, "discord": discord.get("value")}
        if ctx.options.get("add_luck_die"):
            character = _need_character(ctx, "adds a luck die")
            luck_die = (character.sheet or {}).get("luck_die", "d6")
            request = {**request, "pool": [*request["pool"], luck_die]}
            _spend_event(
                ctx,
                name="instant_karma",
                amount=1,
                use="add-luck-die",
                text=f"{character.name} spends 1 Instant Karma: a {luck_die} joins the pool",
            )
        if request.get("protect"):
            n = request["protect"]
            name = ctx.character.name if ctx.character else "?"
            _spend_event(
                ctx,
                name="instant_karma",
                amount=n,
                use="protect",
                text=f"{name} spends {n} Instant Karma to protect dice from the Discord Die",
            )
    elif ctx.system == "action-dice":
        _commit_action_dice(ctx, request)
    return request


def _commit_action_dice(ctx: RollContext, request: dict[str, Any]) -> None:
    """While a round runs, rolled action dice (and extra dice on a group attack) come out of the
    character's dice for the round."""
    if not (ctx.session.table_state or {}).get("round") or ctx.character is None:
        return
    extra = ctx.options.get("group_extra", 0)
    if isinstance(extra, bool) or not isinstance(extra, int) or not 0 <= extra <= 20:
        raise invalid("extra action dice: 0 to 20", field="group_extra")
    count = request.get("action_dice", 0) + extra
    if count == 0:
        return
    stack = Pool.objects.filter(
        seat=ctx.seat, character=ctx.character, kind=PoolKind.ROUND_DICE
    ).first()
    if stack is None:
        raise conflict(f"{ctx.character.name} has no action dice this round")
    if not take_dice(pool_id=stack.pk, count=count):
        stack.refresh_from_db()
        raise conflict(
            f"{ctx.character.name} has only {stack.remaining} action dice left this round"
        )
    record_pool_event(
        session_id=ctx.session.pk,
        actor=ctx.seat,
        **_as_hidden_as_the_roll(ctx),
        data={
            "action": "commit",
            "character": {"id": ctx.character.pk, "name": ctx.character.name},
            "count": count,
            "pools": pools_changed([stack.pk]),
            "text": f"{ctx.character.name} commits {count} action dice",
        },
    )


def settle(ctx: RollContext, roll: Event) -> None:
    """What follows a stored roll."""
    result = roll.data
    if ctx.system == "zoria":
        from .zoria import register_roll

        if ctx.options.get("stat_roll"):
            return  # statistics and ability increases are never augmented or re-rolled
        register_roll(
            seat=ctx.seat,
            seq=roll.seq,
            character_id=ctx.character.pk if ctx.character else None,
            result=result,
            visibility=roll.visibility,
        )
    elif ctx.system == "roll-and-keep" and ctx.options.get("extended") is not None:
        _extended_progress(ctx, roll)
    elif ctx.system == "action-dice" and ctx.options.get("defense"):
        _defense(ctx, roll)
    if ctx.system == "action-dice" and ctx.options.get("group_extra"):
        attack = action_rules.group_attack(result.get("total") or 0, ctx.options["group_extra"])
        record_pool_event(
            session_id=ctx.session.pk,
            actor=ctx.seat,
            visibility=roll.visibility,
            data={
                "action": "group-attack",
                "roll": roll.seq,
                **attack,
                "text": f"group attack from roll #{roll.seq}: {attack}",
            },
        )


def _extended_progress(ctx: RollContext, roll: Event) -> None:
    action_id = ctx.options["extended"]
    if isinstance(action_id, bool) or not isinstance(action_id, int):
        raise invalid("which extended action", field="extended")
    action = ExtendedAction.objects.filter(pk=action_id, session=ctx.session).first()
    if action is None:
        raise invalid("no such extended action at this table", field="extended")
    gained = max(0, roll.data.get("successes") or 0)
    if not ExtendedAction.objects.filter(pk=action.pk, is_open=True).update(
        progress=F("progress") + gained
    ):
        raise conflict(f"the extended action {action.label!r} is closed")
    action.refresh_from_db()
    completed = action.progress >= action.target
    if completed:
        ExtendedAction.objects.filter(pk=action.pk).update(is_open=False)
        action.is_open = False
    record_pool_event(
        session_id=ctx.session.pk,
        actor=ctx.seat,
        visibility=roll.visibility,
        data={
            "action": "extended-progress",
            "roll": roll.seq,
            "gained": gained,
            "extended": extended_summary(action),
            "text": f"{action.label}: +{gained} → {action.progress}/{action.target}"
            + (" — complete!" if completed else ""),
        },
    )


def _defense(ctx: RollContext, roll: Event) -> None:
    kind = ctx.options["defense"]
    if kind not in {"action", "general"}:
        raise invalid(
            "'action' (against one opponent) or 'general' (against everyone)", field="defense"
        )
    character = _need_character(ctx, "defends")
    total = roll.data.get("total") or 0
    state = dict(ctx.session.table_state or {})
    defense = dict(state.get("defense") or {})
    mine = dict(defense.get(str(character.pk)) or {})
    mine["action" if kind == "action" else "general"] = total
    mine.update(
        action_rules.round_defense(
            defense_action_total=mine.get("action"), general_defense_total=mine.get("general")
        )
    )
    mine["name"] = character.name
    defense[str(character.pk)] = mine
    state["defense"] = defense
    GameSession.objects.filter(pk=ctx.session.pk).update(table_state=state)
    ctx.session.table_state = state
    record_pool_event(
        session_id=ctx.session.pk,
        actor=ctx.seat,
        visibility=roll.visibility,
        data={
            "action": "defense",
            "roll": roll.seq,
            "character": {"id": character.pk, "name": character.name},
            "defense": mine,
            "table": state,
            "text": f"{character.name}'s {kind} defense this round: {total}",
        },
    )
