"""Zoria's pools: dealt by level at the start (or when a player sits down later), the GM's
growing to match, and the per-seat facts the pool rules depend on."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db.models import F, Max

from rules.engines import zoria as rules

from ...models import Event, GameSession, Seat
from ...models.pools import Pool, PoolKind
from ...services.events import UnitOfWork, next_seq
from ...services.pools import (
    pools_changed,
    record_pool_event,
)
from ...services.seats import seat_gm
from .models import SeatPoolState

SPEND_EFFECTS = ("reroll", "reroll-botch", "activate-botch", "activate-critical", "insight")
BOTCHES = {"botch-threat", "special-botch-threat"}
POOL_KINDS = (PoolKind.SESSION_DICE, PoolKind.BONUS_DICE)
# How a check the initiative phase closed reads: its initiative phase number is set.
INITIATIVE_SET = "initiative phase number set"
# Inspiration checks one player may have asked for and not yet spent (asked or granted): the
# table's state carries them to every screen, so one seat cannot make it grow without end.
INSIGHT_ASKS_PER_SEAT = 8


def touch(seat: Seat) -> None:
    """The seat has used or spent a die: no lucky break for it this session."""
    SeatPoolState.objects.get_or_create(seat=seat)
    SeatPoolState.objects.filter(seat=seat).update(touched=True)


def took_lucky_break(seat: Seat) -> bool:
    return SeatPoolState.objects.filter(seat=seat, lucky_break=True).exists()


# --- dealing --------------------------------------------------------------------------------


def _starting_pool(seat: Seat) -> list[tuple[int, int]]:
    levels = [int((c.sheet or {}).get("level", 0) or 0) for c in seat.characters.all()]
    if not levels:
        return []
    return rules.ZORIA.starting_pool(levels, seat.session.campaign.settings or {})


def _stack(seat: Seat, kind: str, count: int, sides: int, **bound: Any) -> Pool:
    """A new stack of ``count`` d``sides`` held by ``seat`` (``character=`` binds it to one)."""
    return Pool.objects.create(
        session_id=seat.session_id,
        seat=seat,
        kind=kind,
        sides=sides,
        remaining=count,
        initial=count,
        **bound,
    )


def deal_pool(uow: UnitOfWork, *, seat: Seat, by: Seat | None = None) -> Event | None:
    """Give a player their session pool (at the start, or when they sit down later) and grow the
    GM's pool to match. Call inside a transaction; idempotent per seat."""
    if seat.is_gm or Pool.objects.filter(seat=seat, kind=PoolKind.SESSION_DICE).exists():
        return None
    stacks = _starting_pool(seat)
    if not stacks:
        return None
    uow.begin()  # a change of its own begins: nothing before it carries over
    seq = next_seq(session_id=seat.session_id)  # also locks the session row: GM growth is serial
    changed = [_stack(seat, PoolKind.SESSION_DICE, count, sides).pk for count, sides in stacks]
    changed += [bonus.pk for bonus in _bonus_dice(seat)]
    SeatPoolState.objects.update_or_create(
        seat=seat, defaults={"starting_dice": sum(c for c, _ in stacks)}
    )
    changed.append(_grow_gm_pool(session=seat.session).pk)
    dealt = " + ".join(f"{count}d{sides}" for count, sides in stacks)
    return record_pool_event(
        uow,
        session_id=seat.session_id,
        actor=by or seat,
        seq=seq,
        data={
            "action": "deal",
            "seat": seat.pk,
            "pools": pools_changed(changed),
            "text": f"{seat.name} gets {dealt}; the GM's pool grows to match",
        },
    )


def _bonus_dice(seat: Seat) -> list[Pool]:
    """Class bonus dice written on a character's sheet, bound to that character."""
    made = []
    for character in seat.characters.all():
        by_sides = Counter(
            int(str(die)[1:]) for die in (character.sheet or {}).get("class_bonus_dice", []) or []
        )
        made += [
            _stack(seat, PoolKind.BONUS_DICE, count, sides, character=character)
            for sides, count in sorted(by_sides.items())
        ]
    return made


def _grow_gm_pool(*, session: GameSession) -> Pool:
    """GM pool = players + the largest starting pool, die type from the highest player die;
    a late player counts as if present at the start: it grows, never shrinks."""
    gm = seat_gm(session=session)
    players = SeatPoolState.objects.filter(seat__session=session, starting_dice__gt=0).exclude(
        seat=gm
    )
    largest = players.aggregate(m=Max("starting_dice"))["m"] or 0
    highest_sides = (
        Pool.objects.filter(session=session, kind=PoolKind.SESSION_DICE)
        .exclude(seat=gm)
        .aggregate(m=Max("sides"))["m"]
    )
    size = players.count() + largest
    sides = rules.gm_die(highest_sides)
    pool = Pool.objects.filter(seat=gm, kind=PoolKind.SESSION_DICE).first()
    if pool is None:
        return _stack(gm, PoolKind.SESSION_DICE, size, sides)
    grow = max(0, size - pool.initial)
    Pool.objects.filter(pk=pool.pk).update(
        initial=F("initial") + grow, remaining=F("remaining") + grow, sides=max(sides, pool.sides)
    )
    pool.refresh_from_db()
    return pool
