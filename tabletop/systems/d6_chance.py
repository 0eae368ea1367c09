"""Sunrider D6 at the table: rounds the GM starts, a character point that doubles the base dice
of every roll of its character for the rest of the round (paid once; one roll for a long action
or outside rounds), a character point spent to survive, and the actions a character declares
for a round: every roll of the round takes the declaration's penalty, and a defense beyond the
declared actions takes the next one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from rules.engines.schema import Field

from ..models import Event, GameSession
from ..protocol import events as ev
from ..protocol.commands import Command
from ..services.errors import ServiceError, conflict
from ..services.events import UnitOfWork, change, sent_by
from ..services.pools import character_for, resource_names
from .base import (
    CHARACTER,
    Begun,
    ResourceUse,
    begin,
    begin_command,
    live_seq,
    need_character,
    resource_award_command,
    resource_spend_command,
    roll_change,
    save_table_state,
    seat_change,
    seat_of,
    seen_by,
    spend_for_roll,
)
from .registry import RollContext, TableSystem

# The events of declared actions, beyond the core's and the shared commands'.
EVENTS: tuple[ev.EventType, ...] = (
    ev.EventType(
        "pool",
        "declare",
        (
            ev.ACTION,
            ev.CHARACTER,
            ev.int_field("actions", min=1),
            ev.int_field("round", min=1),
            ev.TABLE,
            ev.TEXT,
        ),
        ev.PUBLIC,
        "everyone",
        "a character's actions declared for the round",
    ),
    ev.EventType(
        "pool",
        "staged",
        (
            ev.ACTION,
            ev.CHARACTER,
            ev.int_field("round", min=1),
            ev.int_field("taken", min=1, help="this roll is the character's action number `taken`"),
            ev.int_field("declared", min=1),
            ev.int_field(
                "actions", min=1, help="the penalty the roll takes: 3D per action after one"
            ),
            Field("defense", "bool"),
            ev.TEXT,
        ),
        ev.ANY,
        ev.POOL_RULE,
        "a roll taken as one of the character's declared actions",
    ),
)


class D6ChanceTable(TableSystem):
    events = EVENTS
    use_words: ClassVar[Mapping[str, ev.UseWords]] = {
        "survive": ev.UseWords("to survive"),
        "double-base": ev.UseWords("to double the base dice"),
    }
    resource_words: ClassVar[Mapping[str, tuple[str, str]]] = {
        "character_points": ("character point", "character points"),
    }
    id = "d6-chance"

    def start_round(self, uow: UnitOfWork, *, seat_id: int) -> Event:
        """The turn order's next round is this table's own (last round's character points
        used up, actions declared again): one round, started once, whichever the GM uses."""
        return begin(uow=uow, seat_id=seat_id, unit="round", then=_new_round)

    roll_options = (
        Field(
            "long_action",
            "bool",
            label="A long action (a character point lasts this roll only)",
            default=False,
        ),
        Field(
            "defense",
            "bool",
            label="A dodge or other defense",
            help="Beyond the actions declared this round, only a defense may be rolled.",
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
        return self._character_point(ctx, _staged(ctx, request))

    def _character_point(self, ctx: RollContext, request: dict[str, Any]) -> dict[str, Any]:
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
    if ctx.character is None:
        return False
    return Event.objects.filter(
        session_id=ctx.session.pk,
        kind="pool",
        data__use="double-base",
        data__character__id=ctx.character.pk,
        data__lasts_round=round_,
    ).exists()


def _declared(state: dict[str, Any], character_id: int) -> int:
    """The actions a character declared for the round under way (0: none)."""
    return int((state.get("declared") or {}).get(str(character_id)) or 0)


def _staged(ctx: RollContext, request: dict[str, Any]) -> dict[str, Any]:
    """A character who declared actions this round rolls each of them with the declaration's
    penalty (``actions``, whatever the roll asked); a dodge or other defense counts as one of
    them. Once all are taken, only a defense may be rolled, with the penalty of one action
    more than those taken. Which action a roll is goes on its own event, as hidden as the roll;
    a hidden roll's action counts for whoever sees it until it is revealed."""
    state = ctx.session.table_state or {}
    round_ = int(state.get("round") or 0)
    if ctx.character is None or not round_:
        return request
    declared = _declared(state, ctx.character.pk)
    if not declared:
        return request
    who = ctx.character
    taken = sum(
        1
        for event in Event.objects.filter(
            session_id=ctx.session.pk,
            kind="pool",
            data__action="staged",
            data__character__id=who.pk,
            data__round=round_,
        )
        if seen_by(ctx.seat, event)
    )
    defense = bool(ctx.options.get("defense"))
    if taken >= declared and not defense:
        raise ServiceError(
            "conflict",
            ngettext(
                "%(name)s declared %(count)s action this round and has taken them: only a dodge "
                "or other defense may be rolled now",
                "%(name)s declared %(count)s actions this round and has taken them: only a dodge "
                "or other defense may be rolled now",
                declared,
            )
            % {"name": who.name, "count": declared},
            field="defense",
        )
    actions = max(declared, taken + 1)
    penalty = f"-{3 * (actions - 1)}D" if actions > 1 else "no penalty"
    extra = " (a defense beyond the declared actions)" if taken >= declared else ""
    kind = "defense" if defense else "action"
    roll_change(
        ctx,
        data={
            "action": "staged",
            "character": {"id": who.pk, "name": who.name},
            "round": round_,
            "taken": taken + 1,
            "declared": declared,
            "actions": actions,
            "defense": defense,
            "text": f"{who.name}'s {kind} {taken + 1} of {declared} declared{extra}: {penalty}",
        },
    )
    return {**request, "actions": actions}


table = D6ChanceTable()


def declare_actions(
    *, seat_id: int, character: int, actions: int, uow: UnitOfWork | None = None
) -> Event:
    """A character declares the actions it will take this round (its player, or the GM); the
    penalty of every roll of the round is taken from it. Once declared, it stands until the
    GM starts the next round."""
    seat = seat_of(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id, sent=uow.sent)
        who = character_for(seat=seat, character_id=character)
        session = GameSession.objects.get(pk=seat.session_id)
        state = dict(session.table_state or {})
        round_ = int(state.get("round") or 0)
        if not round_:
            raise conflict(_("actions are declared for a round: the GM has not started one"))
        if _declared(state, who.pk):
            raise conflict(
                _(
                    "%(name)s declared %(count)s actions for round %(round)s: the declaration "
                    "stands until the next round"
                )
                % {"name": who.name, "count": _declared(state, who.pk), "round": round_}
            )
        state["declared"] = {**(state.get("declared") or {}), str(who.pk): actions}
        save_table_state(session, state)
        penalty = f": -{3 * (actions - 1)}D on every roll" if actions > 1 else ""
        return seat_change(
            uow,
            seat,
            seq,
            data={
                "action": "declare",
                "character": {"id": who.pk, "name": who.name},
                "actions": actions,
                "round": round_,
                "table": state,
                "text": f"{who.name} declares {actions} action{'s' * (actions > 1)} "
                f"for round {round_}{penalty}",
            },
        )


def _new_round(uow: UnitOfWork, session: GameSession, state: dict[str, Any], *, seq: int) -> Begun:
    """Last round's declarations are over: each character declares again."""
    state.pop("declared", None)
    return Begun()


USES = {"survive": ResourceUse("character_points")}

commands = (
    begin_command(
        "round",
        _new_round,
        "a new round: last round's character points are used up, actions are declared again",
    ),
    Command(
        "actions.declare",
        (
            CHARACTER,
            Field("actions", "int", label="Actions this round", required=True, min=1, max=100),
        ),
        declare_actions,
        "declare a character's actions for the round (every roll of it takes their penalty)",
    ),
    resource_spend_command(USES),
    resource_award_command(tuple(resource_names(table.id))),
)
