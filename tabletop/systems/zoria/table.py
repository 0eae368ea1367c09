"""Zoria's table rules around a roll, a seat's joining and the session's start and end, and
its part of the room state."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

from django.utils.translation import gettext as _

from rules.engines.schema import Field

from ...models import Event, GameSession, Seat, SeatRole, Visibility
from ...models.pools import OpenRoll, Pool, PoolKind
from ...services.errors import conflict, invalid
from ...services.events import UnitOfWork
from ...services.pools import (
    pools_changed,
    record_pool_event,
)
from ..base import (
    roll_change,
)
from ..registry import RollContext, TableSystem
from .checks import (
    carried_over,
    dark_agenda,
    fails_by_5,
    in_initiative_phase,
    subject_of,
    take_from,
)
from .dealing import INITIATIVE_SET, deal_pool, touch
from .events import EVENTS
from .models import SeatPoolState


class ZoriaTable(TableSystem):
    state_keys: ClassVar[Mapping[str, Any]] = {"lucky_breaks": []}  # seats that took theirs

    def room_state(self, session_ids: list[int]) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {pk: {"lucky_breaks": []} for pk in session_ids}
        for session_id, seat_id in (
            SeatPoolState.objects.filter(seat__session_id__in=session_ids, lucky_break=True)
            .order_by("seat_id")
            .values_list("seat__session_id", "seat_id")
        ):
            out[session_id]["lucky_breaks"].append(seat_id)
        return out

    def fold(self, state: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        """Checks closed at the session's end leave the open rolls; a lucky break is kept."""
        data = message.get("data") or {}
        if message["kind"] != "pool":
            return state
        if data.get("action") == "close":
            rolls = [r for r in state["open_rolls"] if r["seq"] not in data["rolls"]]
            return {**state, "open_rolls": rolls}
        if data.get("action") == "lucky-break":
            return {**state, "lucky_breaks": sorted({*state["lucky_breaks"], data["seat"]})}
        return state

    events = EVENTS
    id = "zoria"
    roll_options = (
        Field(
            "stat_roll",
            "bool",
            label="Statistic or ability increase",
            help="Never augmented or re-rolled with action dice.",
            default=False,
        ),
        Field(
            "insight",
            "text",
            label="Insight roll for",
            help="The subject of an insight roll the GM asked for (needs a DC).",
            nullable=True,
            default=None,
            max_length=200,
        ),
        Field(
            "initiative",
            "bool",
            label="Initiative roll",
            help="Augmented only as it is made, before the initiative phase: then it is set.",
            default=False,
        ),
    )
    demo_characters = (
        {
            "name": "Kael the Bold",
            "sheet": {
                "level": 7,
                "class": "Fighter",
                "abilities": {"Strength": 3, "Reason": 1},
                "skills": {"Swords": 6},
            },
        },
        {
            "name": "Ysolde",
            "sheet": {
                "level": 12,
                "class": "Mage",
                "abilities": {"Reason": 4, "Knowledge": 3},
                "skills": {"Arcana": 9},
                "class_bonus_dice": ["d8"],
            },
        },
        {"name": "Pip", "sheet": {"level": 3, "class": "Thief", "skills": {"Stealth": 7}}},
    )

    def prepare(self, ctx: RollContext, request: dict[str, Any]) -> dict[str, Any]:
        """Every action die on a check comes out of the roller's pool, die for die."""
        if ctx.options.get("insight") is not None:
            if not subject_of(ctx.options["insight"]):
                raise invalid(_("name what the insight roll is about"), field="insight")
            if request.get("dc") is None:
                raise invalid(_("an insight roll needs the GM's DC"), field="request.dc")
            if dark_agenda(ctx) and ctx.visibility == Visibility.PUBLIC:
                # Dark Agenda: the GM's insight for a villain is noted, not announced (the GM
                # may reveal it later).
                ctx.visibility = Visibility.GM
        wanted = Counter(int(die[1:]) for die in request.get("action_dice") or [])
        if not wanted:
            return request
        if ctx.options.get("initiative") and in_initiative_phase(ctx.session):
            raise invalid(
                _(
                    "the initiative phase has begun: an initiative roll made now is set as it "
                    "falls, with no action dice"
                ),
                field="request.action_dice",
            )
        if ctx.options.get("stat_roll"):
            raise invalid(
                _("action dice never augment statistics or ability increases"),
                field="request.action_dice",
            )
        character_id = ctx.character.pk if ctx.character else None
        taken = []
        for sides, count in sorted(wanted.items()):
            stacks = Pool.objects.filter(seat=ctx.seat, sides=sides, remaining__gt=0)
            bonus = stacks.filter(
                kind=PoolKind.BONUS_DICE,
                character_id=character_id,  # type: ignore[misc]  # None: rows with no character (IS NULL); the stubs refuse it
            ).first()
            pool = stacks.filter(kind=PoolKind.SESSION_DICE).first()
            have = (bonus.remaining if bonus else 0) + (pool.remaining if pool else 0)
            if have < count:
                raise conflict(
                    _(
                        "your pool holds %(have)s d%(sides)s; this check asks for %(count)s: "
                        "action dice come out of your pool"
                    )
                    % {"have": have, "sides": sides, "count": count}
                )
            from_bonus = min(count, bonus.remaining) if bonus else 0
            for stack, n in ((bonus, from_bonus), (pool, count - from_bonus)):
                if stack is not None and n:
                    take_from(ctx.uow, stack, n)
                    taken.append(stack.pk)
        touch(ctx.seat)
        dice = ", ".join(f"{n}d{s}" for s, n in sorted(wanted.items()))
        roll_change(
            ctx,
            data={
                "action": "commit",
                **(
                    {"character": {"id": ctx.character.pk, "name": ctx.character.name}}
                    if ctx.character
                    else {}
                ),
                "count": sum(wanted.values()),
                "pools": pools_changed(taken),
                "text": f"{ctx.seat.name} takes {dice} from the pool for the check",
            },
        )
        return request

    def annotate(self, ctx: RollContext, result: dict[str, Any]) -> None:
        if ctx.options.get("stat_roll"):
            result["stat_roll"] = True
            return
        if ctx.options.get("insight") is not None:
            result["insight"] = ctx.options["insight"]
        set_now = False
        if ctx.options.get("initiative"):
            result["initiative"] = True
            set_now = in_initiative_phase(ctx.session)
        # The open check ``settle`` registers, as every screen will hold it (its seq is the
        # roll's): the roll event itself says that the check is open. A re-roll replaces the
        # roll, not the dice already paid and rolled onto it: they carry over.
        who = ctx.character
        carried = carried_over(ctx, result.get("reroll_of"))
        check = {
            "seat": ctx.seat.pk,
            "character": {"id": who.pk, "name": who.name} if who else None,
            "total": (result.get("total") or 0) + carried,
            "added": carried,
            "dc": result["request"].get("dc"),
            "flags": result.get("flags", []),
            "botch_dice": 0,
            "critical_dice": 0,
            "open": not set_now,
            "declared": INITIATIVE_SET if set_now else "",
        }
        if "special-botch-threat" in check["flags"] and not fails_by_5(check["total"], check["dc"]):
            check["flags"] = [f for f in check["flags"] if f != "special-botch-threat"]
        result["open_roll"] = check

    def settle(self, ctx: RollContext, roll: Event) -> None:
        """Every check stays open (dice may be used on it) until its result is declared."""
        if ctx.options.get("stat_roll"):
            return  # statistics and ability increases are never augmented or re-rolled
        check = roll.data["open_roll"]
        OpenRoll.objects.create(
            session_id=ctx.session.pk,
            seq=roll.seq,
            seat=ctx.seat,
            character=ctx.character,
            total=check["total"],
            added=check["added"],
            flags=check["flags"],
            dc=check["dc"],
            visibility=roll.visibility,
            subject=subject_of(ctx.options.get("insight") or ""),
            marks={"botch_dice": 0},  # (shown with the check: its severity once activated)
            is_open=check["open"],
            declared=check["declared"],
        )

    def seat_joined(self, uow: UnitOfWork, seat: Seat) -> None:
        deal_pool(uow, seat=seat)

    def session_started(self, uow: UnitOfWork, session: GameSession) -> None:
        for seat in session.seats.filter(role=SeatRole.PLAYER).prefetch_related("characters"):
            deal_pool(uow, seat=seat)

    def session_ended(self, uow: UnitOfWork, session: GameSession, by: Seat) -> None:
        """Open checks close as they stand: no die can be used on them any more."""
        still_open = OpenRoll.objects.filter(session=session, is_open=True)
        seqs = sorted(still_open.values_list("seq", flat=True))
        if not seqs:
            return
        still_open.update(is_open=False, declared="the session ended")
        record_pool_event(
            uow,
            session_id=session.pk,
            actor=by,
            data={
                "action": "close",
                "rolls": seqs,
                "text": f"The session ends: {len(seqs)} open checks close as they stand",
            },
        )


table = ZoriaTable()
