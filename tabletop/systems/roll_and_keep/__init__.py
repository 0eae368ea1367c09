"""Mana roll-and-keep at the table: extended actions, a GM-set number of successes that rolls
add up toward until it is reached or the GM closes it (and, when the GM sets it, a number each
round of rolling must reach to count); and botched actions, which their character cannot
repeat."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django.db.models import F
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from rules.engines.schema import Field

from ...models import Event
from ...protocol import events as ev
from ...protocol.commands import ID, Command
from ...services.errors import ServiceError, conflict, invalid
from ...services.events import UnitOfWork, change, sent_by
from ..base import folded, gm_session, roll_change, seat_change, seat_of, seen_by
from ..registry import RollContext, TableSystem
from .models import ExtendedAction

EXTENDED = Field("extended", "int", label="Extended action", nullable=True, default=None, **ID)
EXTENDED_STATE = ev.obj_field("extended", help="the extended action's new state")


def extended_summary(action: ExtendedAction) -> dict[str, Any]:
    return {
        "id": action.pk,
        "label": action.label,
        "target": action.target,
        "each": action.each,
        "progress": action.progress,
        "open": action.is_open,
    }


# The events of extended actions.
EVENTS: tuple[ev.EventType, ...] = (
    ev.EventType(
        "pool",
        "botch",
        (
            ev.ACTION,
            ev.ROLL_SEQ,
            ev.CHARACTER,
            Field("what", "text", max_length=200, help="the botched action (the roll's label)"),
            Field("folded", "text", max_length=200, help="`what` as compared"),
            ev.TEXT,
        ),
        ev.ANY,
        ev.POOL_RULE,
        "a botched roll: its character cannot repeat the action",
    ),
    ev.EventType(
        "pool",
        "extended-open",
        (ev.ACTION, EXTENDED_STATE, ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "the GM opened an extended action",
    ),
    ev.EventType(
        "pool",
        "extended-close",
        (ev.ACTION, EXTENDED_STATE, ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "the GM closed an extended action",
    ),
    ev.EventType(
        "pool",
        "extended-progress",
        (ev.ACTION, ev.ROLL_SEQ, ev.int_field("gained", min=0), EXTENDED_STATE, ev.TEXT),
        ev.ANY,
        ev.POOL_RULE,
        "a roll's successes counted toward an extended action",
    ),
)


class RollAndKeepTable(TableSystem):
    events = EVENTS
    id = "roll-and-keep"
    roll_options = (EXTENDED,)
    public_options = ("extended",)
    state_keys: ClassVar[Mapping[str, Any]] = {"extended": []}  # the open extended actions

    def room_state(self, session_ids: list[int]) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {pk: {"extended": []} for pk in session_ids}
        for action in ExtendedAction.objects.filter(
            session_id__in=session_ids, is_open=True
        ).order_by("pk"):
            out[action.session_id]["extended"].append(extended_summary(action))
        return out

    def fold(self, state: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        """An extended action's new state: listed while open (by id), gone once closed."""
        extended = (message.get("data") or {}).get("extended")
        if not extended:
            return state
        rest = [x for x in state["extended"] if x["id"] != extended["id"]]
        kept = rest + [extended] * extended["open"]
        return {**state, "extended": sorted(kept, key=lambda x: x["id"])}

    demo_characters = (
        {
            "name": "Mirela",
            "sheet": {
                "attributes": {
                    "Strength": 3,
                    "Finesse": 4,
                    "Endurance": 3,
                    "Intelligence": 5,
                    "Cunning": 4,
                    "Acuity": 3,
                    "Charisma": 2,
                },
                "specialities": {"Lore": 2, "Swordplay": 1},
                "mana": {"blue": 3, "black": 2},
            },
        },
        {
            "name": "Tobiah",
            "sheet": {
                "attributes": {
                    "Strength": 5,
                    "Finesse": 3,
                    "Endurance": 4,
                    "Intelligence": 2,
                    "Cunning": 3,
                    "Acuity": 3,
                    "Charisma": 3,
                },
                "specialities": {"Brawling": 2},
                "mana": {"red": 4},
            },
        },
    )

    def prepare(self, ctx: RollContext, request: dict[str, Any]) -> dict[str, Any]:
        """A botched action cannot be repeated: a roll of the same character for the same
        action (its "what for", compared with case, spacing and punctuation folded) is refused.
        A botch on a hidden roll binds the rolls of whoever sees it, until it is revealed."""
        what = folded(ctx.label)
        if ctx.character is None or not what:
            return request
        for mark in botches_of(ctx.session.pk, ctx.character.pk, what):
            if seen_by(ctx.seat, mark):
                raise ServiceError(
                    "conflict",
                    _("%(name)s botched %(what)s (roll #%(roll)s): that action cannot be repeated")
                    % {
                        "name": ctx.character.name,
                        "what": repr(mark.data["what"]),
                        "roll": mark.data["roll"],
                    },
                    field="label",
                )
        return request

    def settle(self, ctx: RollContext, roll: Event) -> None:
        self._progress(ctx, roll)
        if "botch" in (roll.data.get("flags") or ()) and ctx.character is not None:
            _mark_botch(ctx, roll)

    def _progress(self, ctx: RollContext, roll: Event) -> None:
        """A roll toward an extended action adds its successes to the running sum; one that
        falls short of the successes the GM asks of each round of rolling adds nothing."""
        action_id = ctx.options.get("extended")
        if action_id is None:
            return
        action = ExtendedAction.objects.filter(pk=action_id, session=ctx.session).first()
        if action is None:
            raise invalid(_("no such extended action at this table"), field="extended")
        rolled = max(0, roll.data.get("successes") or 0)
        short = action.each is not None and rolled < action.each
        gained = 0 if short else rolled
        if not ExtendedAction.objects.filter(pk=action.pk, is_open=True).update(
            progress=F("progress") + gained
        ):
            raise conflict(
                _("the extended action %(label)s is closed") % {"label": repr(action.label)}
            )
        action.refresh_from_db()
        completed = action.progress >= action.target
        if completed:
            ExtendedAction.objects.filter(pk=action.pk).update(is_open=False)
            action.is_open = False
        roll_change(
            ctx,
            data={
                "action": "extended-progress",
                "roll": roll.seq,
                "gained": gained,
                "extended": extended_summary(action),
                "text": f"{action.label}: +{gained} → {action.progress}/{action.target}"
                + (f" (short of the {action.each} needed this round)" if short else "")
                + (" — complete!" if completed else ""),
            },
        )


def botches_of(session_id: int, character_id: int, what: str) -> list[Event]:
    """The marks of a character's botched action (``what`` folded) in this session."""
    return list(
        Event.objects.filter(
            session_id=session_id,
            kind="pool",
            data__action="botch",
            data__character__id=character_id,
            data__folded=what,
        ).order_by("seq")
    )


def _mark_botch(ctx: RollContext, roll: Event) -> None:
    """A botched roll marks its action as one its character cannot repeat (as hidden as the
    roll). A roll with no "what for" names no action: its botch is marked, matching none."""
    who = ctx.character
    assert who is not None
    what = str(roll.data.get("label") or "")
    roll_change(
        ctx,
        data={
            "action": "botch",
            "roll": roll.seq,
            "character": {"id": who.pk, "name": who.name},
            "what": what,
            "folded": folded(what),
            "text": f"{who.name} botches {what!r}: that action cannot be repeated"
            if what
            else f"{who.name} botches (roll #{roll.seq} names no action to bar)",
        },
    )


table = RollAndKeepTable()


def open_extended(
    *, seat_id: int, label: str, target: int, each: int | None = None, uow: UnitOfWork | None = None
) -> Event:
    """The GM opens an extended action: ``target`` successes in all, and, if the GM says so,
    at least ``each`` in every round of rolling (a roll short of it adds nothing)."""
    if not label.strip():
        raise invalid(_("a name of 1 to 120 characters"), field="label")
    if each is not None and each > target:
        raise invalid(
            _("at most the %(target)s successes needed in all") % {"target": target}, field="each"
        )
    seat = seat_of(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        session, seq = gm_session(seat, sent=uow.sent)
        action = ExtendedAction.objects.create(
            session=session, label=label.strip(), target=target, each=each, opened_seq=seq
        )
        per_round = f", at least {each} in each round of rolling" if each else ""
        return seat_change(
            uow,
            seat,
            seq,
            data={
                "action": "extended-open",
                "extended": extended_summary(action),
                "text": f"Extended action {action.label!r}: {target} successes needed{per_round}",
            },
        )


def close_extended(*, seat_id: int, extended: int, uow: UnitOfWork | None = None) -> Event:
    seat = seat_of(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        session, seq = gm_session(seat, sent=uow.sent)
        action = ExtendedAction.objects.filter(pk=extended, session=session).first()
        if action is None:
            raise invalid(_("no such extended action at this table"), field="extended")
        if not ExtendedAction.objects.filter(pk=action.pk, is_open=True).update(is_open=False):
            raise conflict(_("%(label)s is already closed") % {"label": repr(action.label)})
        action.is_open = False
        return seat_change(
            uow,
            seat,
            seq,
            data={
                "action": "extended-close",
                "extended": extended_summary(action),
                "text": f"GM closes {action.label!r} at {action.progress}/{action.target}",
            },
        )


commands = (
    Command(
        "extended.open",
        (
            Field("label", "text", label="Name", required=True, max_length=120),
            Field("target", "int", label="Successes needed", required=True, min=1, max=1000),
            Field(
                "each",
                "int",
                label="At least, each round of rolling",
                help="a roll with fewer successes adds nothing (none: every roll counts)",
                nullable=True,
                default=None,
                min=1,
                max=1000,
            ),
        ),
        open_extended,
        "open an extended action: a number of successes rolls add up toward",
        gm_only=True,
        refusal=gettext_noop("only the GM opens an extended action"),
    ),
    Command(
        "extended.close",
        (Field("extended", "int", label="Extended action", required=True, **ID),),
        close_extended,
        "close an extended action where it stands",
        gm_only=True,
        refusal=gettext_noop("only the GM closes an extended action"),
    ),
)
