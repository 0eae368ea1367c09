"""Zoria's open checks: whose they are, which stack pays, what a re-roll carries over, and
the inspiration checks the GM has granted."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from rules.engines import zoria as rules

from ...models import Event, GameSession, Seat, SeatRole
from ...models.pools import OpenRoll, Pool, PoolKind
from ...selectors.events import Viewer, can_see
from ...services.errors import conflict, forbidden, not_found
from ...services.events import UnitOfWork
from ...services.pools import (
    take_dice,
)
from ..base import (
    folded,
    save_table_state,
)
from ..registry import RollContext
from .dealing import INITIATIVE_SET, POOL_KINDS

# --- open checks ----------------------------------------------------------------------------


def owns(seat: Seat, roll: OpenRoll) -> bool:
    """A check is one's own if one rolled it, or it is one's character's (the GM may roll it)."""
    return roll.seat_id == seat.pk or (
        roll.character_id is not None and seat.characters.filter(pk=roll.character_id).exists()
    )


def pick_stack(seat: Seat, pool_id: int | None, *, character_id: int | None) -> Pool:
    """The stack a die comes from: the one named, else the seat's biggest dice that are left."""
    stacks = Pool.objects.filter(seat=seat, kind__in=POOL_KINDS)
    if pool_id is not None:
        pool = stacks.filter(pk=pool_id).first()
        if pool is None:
            raise forbidden(_("that is not one of your pools"))
        if pool.kind == PoolKind.BONUS_DICE and pool.character_id != character_id:
            raise forbidden(_("class bonus dice are only for the character they belong to"))
        return pool
    pool = stacks.filter(kind=PoolKind.SESSION_DICE, remaining__gt=0).order_by("-sides").first()
    if pool is None:
        raise conflict(_("no action dice left in your pool"))
    return pool


def take_from(uow: UnitOfWork, pool: Pool, count: int = 1) -> None:
    if not take_dice(uow, pool_id=pool.pk, count=count):
        left = Pool.objects.values_list("remaining", flat=True).get(pk=pool.pk)
        raise conflict(
            _("only %(left)s d%(sides)s left in that pool") % {"left": left, "sides": pool.sides}
        )


def hidden_as(roll: OpenRoll) -> dict[str, Any]:
    """Events about a check are as hidden as the check, judged for its roller."""
    return {"visibility": roll.visibility, "owner": roll.seat}


def any_roll(seat: Seat, seq: int) -> OpenRoll:
    """A check of this session the seat can see, open or declared."""
    roll = (
        OpenRoll.objects.select_related("character")
        .filter(session_id=seat.session_id, seq=seq)
        .first()
    )
    if (
        roll is None
        and Event.objects.filter(session_id=seat.session_id, seq=seq, data__stat_roll=True).exists()
    ):
        raise forbidden(_("action dice never augment or re-roll statistics or ability increases"))
    viewer = Viewer(seat_id=seat.pk, is_gm=seat.is_gm)
    if roll is None or not can_see(
        visibility=roll.visibility, actor_seat_id=roll.seat_id, viewer=viewer
    ):
        raise not_found(_("roll #%(seq)s is not a Zoria check of this session") % {"seq": seq})
    return roll


def open_check(seat: Seat, seq: int) -> OpenRoll:
    """A check the seat can see that is still open (dice may be used and spent on it)."""
    roll = any_roll(seat, seq)
    if not roll.is_open and roll.declared == INITIATIVE_SET:
        raise conflict(
            _("roll #%(seq)s set an initiative phase number: once set it cannot be altered")
            % {"seq": seq}
        )
    if not roll.is_open:
        raise conflict(_("roll #%(seq)s is closed: its result is declared") % {"seq": seq})
    return roll


def botch_dice(check: OpenRoll) -> int:
    """The dice committed to a check's activated botch (its severity; 0: not activated)."""
    return int(check.marks.get("botch_dice", 0))


def commit_to_botch(check: OpenRoll, count: int) -> None:
    """Add ``count`` dice to the check's botch; the row is locked while its marks are read, so
    dice that several seats spend together all add up."""
    locked = OpenRoll.objects.select_for_update().only("marks").get(pk=check.pk)
    marks = {**locked.marks, "botch_dice": botch_dice(locked) + count}
    OpenRoll.objects.filter(pk=check.pk).update(marks=marks)


def fails_by_5(total: int, dc: int | None) -> bool:
    return dc is not None and total <= dc - rules.SPECIAL_BOTCH_MARGIN


def still_special(roll: OpenRoll) -> bool:
    """A special botch threat holds while the check, after the dice used on it, still fails
    by 5 or more."""
    return fails_by_5(roll.total, roll.dc)


def carried_over(ctx: RollContext, reroll_of: int | None) -> int:
    """What a re-rolled check's paid dice added (action dice on the request and dice used on
    it): they were paid for and rolled, and stay on the check that replaces it."""
    if reroll_of is None:
        return 0
    old = OpenRoll.objects.filter(session_id=ctx.session.pk, seq=reroll_of).first()
    first = Event.objects.filter(session_id=ctx.session.pk, seq=reroll_of).first()
    if old is None or first is None:
        return 0
    paid = sum(d["value"] for d in first.data.get("dice", []) if d.get("role") == "action")
    return old.added + paid


def subject_of(text: str) -> str:
    """An insight subject as compared (case, spacing and punctuation folded)."""
    return folded(text)


def in_initiative_phase(session: GameSession) -> bool:
    return bool((session.table_state or {}).get("initiative"))


def asks_of(state: dict[str, Any]) -> list[dict[str, Any]]:
    return list(state.get("insight_asks") or [])


def use_grant(seat: Seat, about: str) -> dict[str, Any]:
    """A player spends on insight only once the GM has agreed to the inspiration check on that
    subject; the spend uses the grant up. The table's new state, for the spend to carry."""
    session = GameSession.objects.get(pk=seat.session_id)
    state = dict(session.table_state or {})
    mine = [a for a in asks_of(state) if a["seat"] == seat.pk and subject_of(a["subject"]) == about]
    granted = next((a for a in mine if a["granted"]), None)
    if granted is None:
        waiting = " (your request is waiting for the GM)" if mine else ""
        raise conflict(
            "the GM agrees to an inspiration check before dice are spent on it: ask first" + waiting
        )
    state["insight_asks"] = [a for a in asks_of(state) if a["ask"] != granted["ask"]]
    save_table_state(session, state)
    return state


def dark_agenda(ctx: RollContext) -> bool:
    """An insight roll the GM makes for a villain: for nobody, or for a character no player at
    this table plays."""
    if not ctx.seat.is_gm:
        return False
    if ctx.character is None:
        return True
    return not Seat.objects.filter(
        session_id=ctx.session.pk,
        role=SeatRole.PLAYER,
        removed_at__isnull=True,
        characters=ctx.character,
    ).exists()
