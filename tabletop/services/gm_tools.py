"""The GM's table tools outside Zoria pools: the Discord Die, extended actions, rounds."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from rules.engines import FairStream
from rules.engines import action_dice as action_rules
from rules.engines import discordian as discord_rules

from ..models import GameSession, Seat, SeatRole
from ..models.pools import ExtendedAction, Pool, PoolKind
from ..selectors.pools import extended_summary
from .errors import conflict, forbidden, invalid
from .events import next_seq
from .pools import pools_changed, record_pool_event


def _gm_locked(seat: Seat, system: str) -> GameSession:
    if not seat.is_gm:
        raise forbidden("only the GM does that")
    session = (
        GameSession.objects.select_for_update().select_related("campaign").get(pk=seat.session_id)
    )
    if session.campaign.system != system:
        raise invalid(f"this table plays {session.campaign.system}, not {system}", field="type")
    if not session.is_live:
        raise conflict(f"the session is {session.status}")
    return session


def roll_discord_die(*, seat: Seat, client_seed: Any = "") -> Any:
    """The GM rolls the Discord Die for the round (or scene); it applies to every roll after."""
    if not isinstance(client_seed, str) or len(client_seed) > 200:
        raise invalid("text of at most 200 characters", field="client_seed")
    with transaction.atomic():
        session = _gm_locked(seat, "discordian")
        mode = (session.campaign.settings or {}).get("discord_mode", "round")
        state = dict(session.table_state or {})
        current = state.get("discord") or {}
        if mode == "scene" and current.get("wandered"):
            raise conflict("the Discord Die wandered off: it is gone for the rest of the adventure")
        seq = next_seq(session_id=session.pk)
        rolled = discord_rules.roll_discord_die(
            FairStream(bytes(session.server_seed), client_seed, seq)
        )
        state["discord"] = {
            "value": rolled["value"],
            "wandered": rolled["wandered"],
            "mode": mode,
            "seq": seq,
        }
        GameSession.objects.filter(pk=session.pk).update(table_state=state)
        return record_pool_event(
            session_id=session.pk,
            actor=seat,
            seq=seq,
            data={
                "action": "discord",
                "dice": rolled["dice"],
                "client_seed": client_seed,
                "discord": state["discord"],
                "table": state,
                "text": rolled["text"],
            },
        )


def open_extended(*, seat: Seat, label: Any, target: Any) -> Any:
    if not isinstance(label, str) or not label.strip() or len(label) > 120:
        raise invalid("a name of 1 to 120 characters", field="label")
    if isinstance(target, bool) or not isinstance(target, int) or not 1 <= target <= 1000:
        raise invalid("a number of successes from 1 to 1000", field="target")
    with transaction.atomic():
        session = _gm_locked(seat, "roll-and-keep")
        seq = next_seq(session_id=session.pk)
        action = ExtendedAction.objects.create(
            session=session, label=label.strip(), target=target, opened_seq=seq
        )
        return record_pool_event(
            session_id=session.pk,
            actor=seat,
            seq=seq,
            data={
                "action": "extended-open",
                "extended": extended_summary(action),
                "text": f"Extended action {action.label!r}: {target} successes needed",
            },
        )


def close_extended(*, seat: Seat, extended: Any) -> Any:
    with transaction.atomic():
        session = _gm_locked(seat, "roll-and-keep")
        seq = next_seq(session_id=session.pk)
        action = (
            ExtendedAction.objects.filter(pk=extended, session=session).first()
            if isinstance(extended, int) and not isinstance(extended, bool)
            else None
        )
        if action is None:
            raise invalid("no such extended action at this table", field="extended")
        if not ExtendedAction.objects.filter(pk=action.pk, is_open=True).update(is_open=False):
            raise conflict(f"{action.label!r} is already closed")
        action.is_open = False
        return record_pool_event(
            session_id=session.pk,
            actor=seat,
            seq=seq,
            data={
                "action": "extended-close",
                "extended": extended_summary(action),
                "text": f"GM closes {action.label!r} at {action.progress}/{action.target}",
            },
        )


def deal_round_dice(*, seat: Seat) -> list[int]:
    """Each of the seat's characters gets its action dice for the round; returns the pool ids."""
    changed = []
    for character in seat.characters.all():
        dice = action_rules.new_round(character.sheet or {})
        pool, _ = Pool.objects.update_or_create(
            seat=seat,
            character=character,
            kind=PoolKind.ROUND_DICE,
            sides=6,
            defaults={"session_id": seat.session_id, "remaining": dice, "initial": dice},
        )
        changed.append(pool.pk)
    return changed


def new_round(*, seat: Seat) -> Any:
    """A new round: every seated character's action dice reset; defenses start over."""
    with transaction.atomic():
        session = _gm_locked(seat, "action-dice")
        seq = next_seq(session_id=session.pk)
        state = dict(session.table_state or {})
        state["round"] = int(state.get("round") or 0) + 1
        state["defense"] = {}
        changed = []
        for player in session.seats.filter(role=SeatRole.PLAYER).prefetch_related("characters"):
            changed += deal_round_dice(seat=player)
        GameSession.objects.filter(pk=session.pk).update(table_state=state)
        return record_pool_event(
            session_id=session.pk,
            actor=seat,
            seq=seq,
            data={
                "action": "round",
                "round": state["round"],
                "table": state,
                "pools": pools_changed(changed),
                "text": f"Round {state['round']} begins: action dice reset",
            },
        )
