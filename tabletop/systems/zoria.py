"""Zoria at the table: per-session pools of action dice dealt
by level, the GM's pool growing to match, every action die on a check paid from the roller's
pool, dice used on open checks, spend effects (re-rolls, botches, criticals, insight), awards,
refunds and the lucky break; a player's inspiration check waits for the GM's consent; the
initiative phase sets initiative rolls; open checks close and pools expire when the session
ends."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from functools import partial
from typing import Any, ClassVar

from django.db.models import F, Max, Q

from rules.engines import zoria as rules
from rules.engines.schema import Field

from ..models import Event, GameSession, Seat, SeatRole, Visibility
from ..models.pools import OpenRoll, Pool, PoolKind, SeatPoolState
from ..protocol import events as ev
from ..protocol.commands import ID, Command
from ..selectors.events import Viewer, can_see
from ..selectors.pools import open_roll_summary
from ..services.errors import conflict, forbidden, invalid, not_found
from ..services.events import UnitOfWork, change, next_seq
from ..services.pools import (
    give_dice,
    pools_changed,
    record_pool_event,
    take_dice,
)
from ..services.rolls import fair_stream, make_roll
from ..services.seats import table_gm_seat
from .base import (
    CLIENT_SEED,
    NOTE,
    SEQ,
    folded,
    gm_session,
    live_seq,
    resource_award,
    roll_change,
    save_table_state,
    seat_change,
    seat_of,
)
from .registry import RollContext, TableSystem

SPEND_EFFECTS = ("reroll", "reroll-botch", "activate-botch", "activate-critical", "insight")
BOTCHES = {"botch-threat", "special-botch-threat"}
POOL_KINDS = (PoolKind.SESSION_DICE, PoolKind.BONUS_DICE)
# How a check the initiative phase closed reads: its initiative phase number is set.
INITIATIVE_SET = "initiative phase number set"
# Inspiration checks one player may have asked for and not yet spent (asked or granted): the
# table's state carries them to every screen, so one seat cannot make it grow without end.
INSIGHT_ASKS_PER_SEAT = 8


def _touch(seat: Seat) -> None:
    """The seat has used or spent a die: no lucky break for it this session."""
    SeatPoolState.objects.get_or_create(seat=seat)
    SeatPoolState.objects.filter(seat=seat).update(touched=True)


def _lucky(seat: Seat) -> bool:
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
    gm = table_gm_seat(session=session)
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


# --- open checks ----------------------------------------------------------------------------


def _own(seat: Seat, roll: OpenRoll) -> bool:
    """A check is one's own if one rolled it, or it is one's character's (the GM may roll it)."""
    return roll.seat_id == seat.pk or (
        roll.character_id is not None and seat.characters.filter(pk=roll.character_id).exists()
    )


def _pick_stack(seat: Seat, pool_id: int | None, *, character_id: int | None) -> Pool:
    """The stack a die comes from: the one named, else the seat's biggest dice that are left."""
    stacks = Pool.objects.filter(seat=seat, kind__in=POOL_KINDS)
    if pool_id is not None:
        pool = stacks.filter(pk=pool_id).first()
        if pool is None:
            raise forbidden("that is not one of your pools")
        if pool.kind == PoolKind.BONUS_DICE and pool.character_id != character_id:
            raise forbidden("class bonus dice are only for the character they belong to")
        return pool
    pool = stacks.filter(kind=PoolKind.SESSION_DICE, remaining__gt=0).order_by("-sides").first()
    if pool is None:
        raise conflict("no action dice left in your pool")
    return pool


def _take(uow: UnitOfWork, pool: Pool, count: int = 1) -> None:
    if not take_dice(uow, pool_id=pool.pk, count=count):
        left = Pool.objects.values_list("remaining", flat=True).get(pk=pool.pk)
        raise conflict(f"only {left} d{pool.sides} left in that pool")


def _hidden_as(roll: OpenRoll) -> dict[str, Any]:
    """Events about a check are as hidden as the check, judged for its roller."""
    return {"visibility": roll.visibility, "owner": roll.seat}


def _any_roll(seat: Seat, seq: int) -> OpenRoll:
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
        raise forbidden("action dice never augment or re-roll statistics or ability increases")
    viewer = Viewer(seat_id=seat.pk, is_gm=seat.is_gm)
    if roll is None or not can_see(
        visibility=roll.visibility, actor_seat_id=roll.seat_id, viewer=viewer
    ):
        raise not_found(f"roll #{seq} is not a Zoria check of this session")
    return roll


def _open_roll(seat: Seat, seq: int) -> OpenRoll:
    """A check the seat can see that is still open (dice may be used and spent on it)."""
    roll = _any_roll(seat, seq)
    if not roll.is_open and roll.declared == INITIATIVE_SET:
        raise conflict(f"roll #{seq} set an initiative phase number: once set it cannot be altered")
    if not roll.is_open:
        raise conflict(f"roll #{seq} is closed: its result is declared")
    return roll


def _fails_by_5(total: int, dc: int | None) -> bool:
    return dc is not None and total <= dc - rules.SPECIAL_BOTCH_MARGIN


def _still_special(roll: OpenRoll) -> bool:
    """A special botch threat holds while the check, after the dice used on it, still fails
    by 5 or more."""
    return _fails_by_5(roll.total, roll.dc)


def _carried(ctx: RollContext, reroll_of: int | None) -> int:
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


def _subject(text: str) -> str:
    """An insight subject as compared (case, spacing and punctuation folded)."""
    return folded(text)


def _initiative_phase(session: GameSession) -> bool:
    return bool((session.table_state or {}).get("initiative"))


def _asks(state: dict[str, Any]) -> list[dict[str, Any]]:
    return list(state.get("insight_asks") or [])


def _use_grant(seat: Seat, about: str) -> dict[str, Any]:
    """A player spends on insight only once the GM has agreed to the inspiration check on that
    subject; the spend uses the grant up. The table's new state, for the spend to carry."""
    session = GameSession.objects.get(pk=seat.session_id)
    state = dict(session.table_state or {})
    mine = [a for a in _asks(state) if a["seat"] == seat.pk and _subject(a["subject"]) == about]
    granted = next((a for a in mine if a["granted"]), None)
    if granted is None:
        waiting = " (your request is waiting for the GM)" if mine else ""
        raise conflict(
            "the GM agrees to an inspiration check before dice are spent on it: ask first" + waiting
        )
    state["insight_asks"] = [a for a in _asks(state) if a["ask"] != granted["ask"]]
    save_table_state(session, state)
    return state


def _dark_agenda(ctx: RollContext) -> bool:
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


# --- the table system -----------------------------------------------------------------------


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
            if not _subject(ctx.options["insight"]):
                raise invalid("name what the insight roll is about", field="insight")
            if request.get("dc") is None:
                raise invalid("an insight roll needs the GM's DC", field="request.dc")
            if _dark_agenda(ctx) and ctx.visibility == Visibility.PUBLIC:
                # Dark Agenda: the GM's insight for a villain is noted, not announced (the GM
                # may reveal it later).
                ctx.visibility = Visibility.GM
        wanted = Counter(int(die[1:]) for die in request.get("action_dice") or [])
        if not wanted:
            return request
        if ctx.options.get("initiative") and _initiative_phase(ctx.session):
            raise invalid(
                "the initiative phase has begun: an initiative roll made now is set as it "
                "falls, with no action dice",
                field="request.action_dice",
            )
        if ctx.options.get("stat_roll"):
            raise invalid(
                "action dice never augment statistics or ability increases",
                field="request.action_dice",
            )
        character_id = ctx.character.pk if ctx.character else None
        taken = []
        for sides, count in sorted(wanted.items()):
            stacks = Pool.objects.filter(seat=ctx.seat, sides=sides, remaining__gt=0)
            bonus = stacks.filter(kind=PoolKind.BONUS_DICE, character_id=character_id).first()
            pool = stacks.filter(kind=PoolKind.SESSION_DICE).first()
            have = (bonus.remaining if bonus else 0) + (pool.remaining if pool else 0)
            if have < count:
                raise conflict(
                    f"your pool holds {have} d{sides}; this check asks for {count}: "
                    "action dice come out of your pool"
                )
            from_bonus = min(count, bonus.remaining) if bonus else 0
            for stack, n in ((bonus, from_bonus), (pool, count - from_bonus)):
                if stack is not None and n:
                    _take(ctx.uow, stack, n)
                    taken.append(stack.pk)
        _touch(ctx.seat)
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
            set_now = _initiative_phase(ctx.session)
        # The open check ``settle`` registers, as every screen will hold it (its seq is the
        # roll's): the roll event itself says that the check is open. A re-roll replaces the
        # roll, not the dice already paid and rolled onto it: they carry over.
        who = ctx.character
        carried = _carried(ctx, result.get("reroll_of"))
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
        if "special-botch-threat" in check["flags"] and not _fails_by_5(
            check["total"], check["dc"]
        ):
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
            insight_subject=_subject(ctx.options.get("insight") or ""),
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


# --- socket commands ------------------------------------------------------------------------


def use_die(
    *,
    seat_id: int,
    roll: int,
    pool: int | None = None,
    client_seed: str = "",
    uow: UnitOfWork | None = None,
) -> Event:
    """Roll a die from one's pool (cascading) and add it to an open check of one's own."""
    seat = seat_of(seat_id)
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id)
        check = _open_roll(seat, roll)
        if not _own(seat, check):
            raise forbidden("action dice are used only on your own character's rolls")
        stack = _pick_stack(seat, pool, character_id=check.character_id)
        _take(uow, stack)
        _touch(seat)
        server_seed = bytes(
            GameSession.objects.values_list("server_seed", flat=True).get(pk=seat.session_id)
        )
        stream, client_seed = fair_stream(server_seed=server_seed, client_seed=client_seed, seq=seq)
        dice = rules.roll_action_die(stack.sides, stream)
        added = sum(d["value"] for d in dice)
        OpenRoll.objects.filter(pk=check.pk).update(
            total=F("total") + added, added=F("added") + added
        )
        check.refresh_from_db()
        if "special-botch-threat" in check.flags and not _still_special(check):
            # Lifted out of the special botch: the threat is gone.
            check.flags = [f for f in check.flags if f != "special-botch-threat"]
            OpenRoll.objects.filter(pk=check.pk).update(flags=check.flags)
        return seat_change(
            uow,
            seat,
            seq,
            **_hidden_as(check),
            data={
                "action": "use",
                "roll": check.seq,
                "dice": dice,
                "client_seed": client_seed,
                "added": added,
                "open_roll": open_roll_summary(check),
                "pools": pools_changed([stack.pk]),
                "text": f"{seat.name} adds a d{stack.sides} to roll #{check.seq}: "
                f"+{added} (total {check.total})",
            },
        )


def spend_dice(
    *,
    seat_id: int,
    effect: str,
    roll: int | None = None,
    count: int = 1,
    pool: int | None = None,
    note: str = "",
    subject: str | None = None,
    uow: UnitOfWork | None = None,
) -> Event:
    """Spend dice for an effect (no die rolled). Re-rolls make a new roll event too."""
    if effect in {"reroll", "reroll-botch"} and count != 1:
        raise invalid("a re-roll costs one die", field="count")
    if effect != "insight" and roll is None:
        raise invalid("which roll (its seq)", field="roll")
    seat = seat_of(seat_id)
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id)
        check = _open_roll(seat, roll) if effect != "insight" else None
        about = ""
        table_now: dict[str, Any] | None = None
        if check is not None:
            _check_effect(seat, effect, check)
        else:
            about = _subject(subject if subject is not None else note)
            _check_insight(seat, about)
            if not seat.is_gm:
                table_now = _use_grant(seat, about)
        stack = _pick_stack(seat, pool, character_id=check.character_id if check else None)
        _take(uow, stack, count)
        _touch(seat)
        text = f"{seat.name} spends {count}d{stack.sides}: {effect.replace('-', ' ')}"
        if effect == "activate-botch":
            OpenRoll.objects.filter(pk=check.pk).update(botch_dice=F("botch_dice") + count)
        elif effect == "activate-critical":
            OpenRoll.objects.filter(pk=check.pk).update(critical_dice=F("critical_dice") + count)
        elif effect in {"reroll", "reroll-botch"}:
            # The re-roll (made just below) replaces this check.
            OpenRoll.objects.filter(pk=check.pk).update(is_open=False, declared="re-rolled")
        hidden: dict[str, Any] = {}
        if check is not None:
            check.refresh_from_db()
            hidden = _hidden_as(check)
            text += f" on roll #{check.seq}"
            if effect == "activate-botch":
                text += f" (severity {check.botch_dice})"
            if effect == "activate-critical":
                text += f" ({check.critical_dice} dice on the critical)"
        elif seat.is_gm:
            # Dark Agenda: the GM's insight for villains is noted for the GM alone.
            hidden = {"visibility": Visibility.GM, "owner": seat}
        if note:
            text += f": {note}"
        event = seat_change(
            uow,
            seat,
            seq,
            **hidden,
            data={
                "action": "spend",
                "effect": effect,
                "roll": check.seq if check else None,
                "count": count,
                "note": note,
                "open_roll": open_roll_summary(check) if check else None,
                "pools": pools_changed([stack.pk]),
                **({"table": table_now} if table_now is not None else {}),
                "text": text,
            },
        )
        if effect in {"reroll", "reroll-botch"}:
            _reroll(uow, seat=seat, check=check)
        return event


def _check_effect(seat: Seat, effect: str, check: OpenRoll) -> None:
    own = _own(seat, check)
    flags = set(check.flags)
    if effect == "reroll":
        if not own:
            raise forbidden("you can re-roll only your own character's roll")
        latest = OpenRoll.objects.filter(
            session_id=seat.session_id, seat=check.seat_id, character_id=check.character_id
        )
        if latest.order_by("-seq").values_list("seq", flat=True).first() != check.seq:
            raise conflict("only the last roll of your character can be re-rolled")
        if check.botch_dice:
            # A re-roll would throw the activated botch away (and the dice spent on it).
            raise conflict(f"the botch on roll #{check.seq} is activated: a re-roll cannot undo it")
    elif effect == "reroll-botch":
        if not own:
            raise forbidden("you can re-roll only your own character's botch threat")
        if not flags & BOTCHES:
            raise conflict(f"roll #{check.seq} has no botch threat")
        if check.botch_dice:
            raise conflict(
                f"the botch on roll #{check.seq} is activated: it can no longer be re-rolled"
            )
    elif effect == "activate-botch":
        natural = "botch-threat" in flags
        special = "special-botch-threat" in flags and _still_special(check)
        if not natural and not special:
            raise conflict(f"roll #{check.seq} has no botch threat to activate")
        if not seat.is_gm:
            if own:
                raise forbidden("a botch is activated on another character, never your own")
            if not natural:
                raise forbidden("a special botch (failing by 5 or more) is the GM's to activate")
    elif effect == "activate-critical":
        if not own and not seat.is_gm:
            raise forbidden("you can activate only your own character's critical threat")
        if "critical-threat" not in flags:
            raise conflict(f"roll #{check.seq} has no critical threat to activate")


def _check_insight(seat: Seat, about: str) -> None:
    """After a failed insight roll, the same player cannot spend again for the same subject:
    a roll the player made, or one made for any of the player's characters (the GM may roll
    it for them)."""
    if not about:
        raise invalid("name what you want to learn", field="note")
    failed = (
        OpenRoll.objects.filter(session_id=seat.session_id, is_open=False, total__lt=F("dc"))
        .filter(Q(seat=seat) | Q(character__in=seat.characters.all()))
        .exclude(insight_subject="")
        .exclude(declared="re-rolled")
    )
    if any(_subject(s) == about for s in failed.values_list("insight_subject", flat=True)):
        raise conflict("your insight roll on that subject failed: another player may try")


def _reroll(uow: UnitOfWork, *, seat: Seat, check: OpenRoll) -> Event:
    """The re-roll replaces the open check; the new result stands even if lower. The action
    dice paid for the first roll are not rolled again (a re-roll adds no unpaid dice): what
    they and the dice used on it added carries over to the new check."""
    original = Event.objects.get(session_id=seat.session_id, seq=check.seq)
    options: dict[str, Any] = (
        {"insight": original.data["insight"]} if original.data.get("insight") else {}
    )
    if original.data.get("initiative"):
        options["initiative"] = True
    return make_roll(
        seat_id=check.seat_id,
        request={**original.data["request"], "action_dice": []},
        system=table.id,
        visibility=original.visibility,
        character=check.character_id,
        client_seed=original.data.get("client_seed", ""),
        options=options,
        reroll_of=check.seq,
        uow=uow,
    )


def declare(*, seat_id: int, roll: int, result: str = "", uow: UnitOfWork | None = None) -> Event:
    """The GM declares an open check's result; no more dice can be used on it. A ``self``
    check is its roller's alone: the roller closes it (or reveals it for the GM to declare)."""
    seat = seat_of(seat_id)
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id)
        check = _open_roll(seat, roll)
        if not seat.is_gm and not (
            check.seat_id == seat.pk and check.visibility == Visibility.SELF
        ):
            raise forbidden("only the GM declares results (a self roll's roller may close it)")
        if not OpenRoll.objects.filter(pk=check.pk, is_open=True).update(
            is_open=False, declared=result or "declared"
        ):
            raise conflict(f"roll #{check.seq} is already closed")
        check.refresh_from_db()
        who = "GM declares" if seat.is_gm else f"{seat.name} closes"
        return uow.record(
            session_id=seat.session_id,
            kind="roll.close",
            actor=seat,
            seq=seq,
            **_hidden_as(check),
            data={
                "roll": check.seq,
                "result": result,
                "open_roll": open_roll_summary(check),
                "text": f"{who} roll #{check.seq}: {result or 'closed'} (total {check.total})",
            },
        )


def _gm(seat_id: int, does: str) -> Seat:
    seat = seat_of(seat_id)
    if not seat.is_gm:
        raise forbidden(f"only the GM {does}")
    return seat


def _player(gm: Seat, seat: int) -> Seat:
    player = Seat.objects.filter(pk=seat, session_id=gm.session_id, role=SeatRole.PLAYER).first()
    if player is None:
        raise invalid("a player's seat at this table", field="seat")
    if _lucky(player):
        raise conflict(f"{player.name} took a lucky break: no dice this session")
    return player


def _session_stack(seat: Seat) -> Pool:
    stack = Pool.objects.filter(seat=seat, kind=PoolKind.SESSION_DICE).order_by("-sides").first()
    if stack is None:
        raise conflict(f"{seat.name} has no pool (no character at the table)")
    return stack


def award(*, seat_id: int, seat: int, count: int = 1, uow: UnitOfWork | None = None) -> Event:
    """The GM awards dice: the player's own die type; each also adds one to the GM's pool."""
    gm = _gm(seat_id, "awards dice")
    with change(uow) as uow:
        seq = live_seq(session_id=gm.session_id)
        player = _player(gm, seat)
        stack = _session_stack(player)
        gm_pool = _session_stack(table_gm_seat(session=gm.session))
        give_dice(uow, pool_id=stack.pk, count=count)
        give_dice(uow, pool_id=gm_pool.pk, count=count)
        return seat_change(
            uow,
            gm,
            seq,
            data={
                "action": "award",
                "seat": player.pk,
                "count": count,
                "pools": pools_changed([stack.pk, gm_pool.pk]),
                "text": f"GM awards {player.name} {count}d{stack.sides} "
                f"(and the GM's pool grows by {count})",
            },
        )


def undo_award(*, seat_id: int, uow: UnitOfWork | None = None) -> Event:
    """Take back the GM's last award that has not been undone, if its dice are still there."""
    gm = _gm(seat_id, "takes back awards")
    with change(uow) as uow:
        seq = live_seq(session_id=gm.session_id)
        events = Event.objects.filter(session_id=gm.session_id, kind="pool").order_by("-seq")
        undone = set(
            events.filter(data__action="undo-award").values_list("data__undoes", flat=True)
        )
        last = next(
            (
                e
                for e in events.filter(data__action="award", data__seat__isnull=False)
                if e.seq not in undone and "count" in e.data
            ),
            None,
        )
        if last is None:
            raise conflict("no award to undo")
        player_pool_id, gm_pool_id = (p["id"] for p in last.data["pools"])
        count = last.data["count"]
        if not take_dice(uow, pool_id=player_pool_id, count=count):
            raise conflict("the awarded dice are already used or spent")
        if not take_dice(uow, pool_id=gm_pool_id, count=count):
            raise conflict("the GM's matching dice are already used or spent")
        return seat_change(
            uow,
            gm,
            seq,
            data={
                "action": "undo-award",
                "undoes": last.seq,
                "seat": last.data["seat"],
                "count": count,
                "pools": pools_changed([player_pool_id, gm_pool_id]),
                "text": f"GM takes back the award of #{last.seq}",
            },
        )


def _critical_dice_left(seat: Seat, check: OpenRoll) -> dict[int, dict[int, int]]:
    """Dice spent on a check's critical and not refunded yet: seat -> stack -> dice, the
    latest spend's stack first."""
    events = Event.objects.filter(session_id=seat.session_id, kind="pool", data__roll=check.seq)
    left: dict[int, dict[int, int]] = {}
    for spend in events.filter(data__action="spend", data__effect="activate-critical").order_by(
        "-seq"
    ):
        stacks = left.setdefault(spend.actor_id, {})
        stack = spend.data["pools"][0]["id"]
        stacks[stack] = stacks.get(stack, 0) + spend.data["count"]
    for back in events.filter(data__action="refund"):
        stacks = left.get(back.data["seat"], {})
        for returned in back.data.get("returned", []):
            stacks[returned["pool"]] = stacks.get(returned["pool"], 0) - returned["count"]
    return {s: {k: n for k, n in stacks.items() if n > 0} for s, stacks in left.items()}


def refund(
    *,
    seat_id: int,
    roll: int,
    seat: int | None = None,
    count: int = 1,
    note: str = "",
    uow: UnitOfWork | None = None,
) -> Event:
    """The GM gives back dice spent on a critical that could have no effect ("in effect, it was
    never spent"): at most the dice spent on that roll's critical, to the seat that spent
    them, into the stacks they came from."""
    gm = _gm(seat_id, "refunds dice")
    with change(uow) as uow:
        seq = live_seq(session_id=gm.session_id)
        check = _any_roll(gm, roll)
        spenders = _critical_dice_left(gm, check)
        if seat is None:
            waiting = [s for s, stacks in spenders.items() if stacks]
            if not waiting:
                raise conflict(f"no dice spent on roll #{check.seq}'s critical are left to refund")
            if len(waiting) > 1:
                raise invalid(
                    f"several seats spent dice on roll #{check.seq}'s critical: name one",
                    field="seat",
                )
            seat = waiting[0]
        if seat not in spenders:
            raise invalid(f"that seat spent no dice on roll #{check.seq}'s critical", field="seat")
        # (A seat that spent a die can take no lucky break: a refund never reaches one.)
        target = Seat.objects.get(pk=seat)
        stacks = spenders[seat]
        if count > sum(stacks.values()):
            raise conflict(
                f"{target.name} has {sum(stacks.values())} dice on roll #{check.seq}'s critical "
                f"to refund, not {count}"
            )
        returned, need = [], count
        for stack, spent in stacks.items():
            n = min(need, spent)
            if n:
                give_dice(uow, pool_id=stack, count=n)
                returned.append({"pool": stack, "count": n})
                need -= n
        OpenRoll.objects.filter(pk=check.pk).update(critical_dice=F("critical_dice") - count)
        check.refresh_from_db()
        sides = Pool.objects.get(pk=returned[0]["pool"]).sides
        return seat_change(
            uow,
            gm,
            seq,
            **_hidden_as(check),
            data={
                "action": "refund",
                "roll": check.seq,
                "seat": target.pk,
                "count": count,
                "returned": returned,
                "note": note,
                "open_roll": open_roll_summary(check),
                "pools": pools_changed([r["pool"] for r in returned]),
                "text": f"GM refunds {target.name} {count}d{sides} spent on roll #{check.seq}'s "
                "critical" + (f": {note}" if note else ""),
            },
        )


def lucky_break(*, seat_id: int, uow: UnitOfWork | None = None) -> Event:
    """Give up the whole pool at once: only with nothing used or spent; no dice afterwards."""
    seat = seat_of(seat_id)
    if seat.is_gm:
        raise forbidden("the lucky break is a player's")
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id)
        SeatPoolState.objects.get_or_create(seat=seat)
        if not SeatPoolState.objects.filter(seat=seat, touched=False, lucky_break=False).update(
            lucky_break=True
        ):
            raise conflict(
                "a lucky break needs an untouched pool: you have used or spent dice, or took one"
            )
        stacks = list(Pool.objects.filter(seat=seat, kind__in=POOL_KINDS))
        given_up = sum(p.remaining for p in stacks)
        if given_up == 0:
            raise conflict("your pool is empty")
        Pool.objects.filter(pk__in=[p.pk for p in stacks]).update(remaining=0)
        return seat_change(
            uow,
            seat,
            seq,
            data={
                "action": "lucky-break",
                "seat": seat.pk,
                "given_up": given_up,
                "pools": pools_changed([p.pk for p in stacks]),
                "text": f"{seat.name} gives up {given_up} dice for a lucky break",
            },
        )


def ask_insight(*, seat_id: int, subject: str, uow: UnitOfWork | None = None) -> Event:
    """A player asks the GM to make an inspiration check on a subject; the GM grants or
    refuses it (``answer_insight``), and only a granted one can be spent on."""
    seat = seat_of(seat_id)
    if seat.is_gm:
        raise forbidden("the GM spends on insight without asking anyone")
    about = _subject(subject)
    if not about:
        raise invalid("name what you want to learn", field="subject")
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id)
        _check_insight(seat, about)
        session = GameSession.objects.get(pk=seat.session_id)
        state = dict(session.table_state or {})
        mine = [a for a in _asks(state) if a["seat"] == seat.pk]
        if any(_subject(a["subject"]) == about for a in mine):
            raise conflict("you have asked about that subject already: the GM has it")
        if len(mine) >= INSIGHT_ASKS_PER_SEAT:
            raise conflict(
                f"you have {len(mine)} inspiration checks asked for and not spent: spend one, "
                "or wait for the GM's answers"
            )
        ask = {"ask": seq, "seat": seat.pk, "name": seat.name, "subject": subject.strip(),
               "granted": False}  # fmt: skip
        state["insight_asks"] = [*_asks(state), ask]
        save_table_state(session, state)
        return seat_change(
            uow,
            seat,
            seq,
            data={
                "action": "insight-ask",
                "seat": seat.pk,
                "subject": ask["subject"],
                "table": state,
                "text": f"{seat.name} asks the GM for an inspiration check: {ask['subject']}",
            },
        )


def answer_insight(*, seat_id: int, ask: int, grant: bool, uow: UnitOfWork | None = None) -> Event:
    """The GM agrees to an inspiration check (the player may now spend on it) or refuses it."""
    gm = _gm(seat_id, "answers a request for an inspiration check")
    with change(uow) as uow:
        session, seq = gm_session(gm)
        state = dict(session.table_state or {})
        asked = next((a for a in _asks(state) if a["ask"] == ask), None)
        if asked is None:
            raise not_found(f"no request #{ask} for an inspiration check is waiting")
        if asked["granted"]:
            raise conflict(f"request #{ask} is granted already: it waits for its spend")
        if grant:
            state["insight_asks"] = [
                {**a, "granted": True} if a["ask"] == ask else a for a in _asks(state)
            ]
        else:
            state["insight_asks"] = [a for a in _asks(state) if a["ask"] != ask]
        save_table_state(session, state)
        verdict = "agrees to" if grant else "refuses"
        return seat_change(
            uow,
            gm,
            seq,
            data={
                "action": "insight-answer",
                "ask": ask,
                "seat": asked["seat"],
                "granted": grant,
                "table": state,
                "text": f"GM {verdict} {asked['name']}'s inspiration check: {asked['subject']}",
            },
        )


def initiative_phase(*, seat_id: int, on: bool, uow: UnitOfWork | None = None) -> Event:
    """The GM begins (or ends) the initiative phase. Beginning it sets every initiative roll
    still open: its phase number can no longer be altered (no die used on it, no re-roll);
    an initiative roll made during the phase is set as it falls."""
    gm = _gm(seat_id, "runs the initiative phase")
    with change(uow) as uow:
        session, seq = gm_session(gm)
        state = dict(session.table_state or {})
        if bool(state.get("initiative")) == on:
            raise conflict(f"the initiative phase has {'begun' if on else 'not begun'} already")
        state["initiative"] = on
        save_table_state(session, state)
        still_open = list(
            OpenRoll.objects.select_related("seat").filter(session=session, is_open=True)
        )
        initiative_seqs = set(
            Event.objects.filter(session=session, kind="roll", seq__in=[c.seq for c in still_open])
            .filter(data__initiative=True)
            .values_list("seq", flat=True)
        )
        event = seat_change(
            uow,
            gm,
            seq,
            data={
                "action": "initiative",
                "phase": on,
                "table": state,
                "text": "The initiative phase begins: initiative rolls are set"
                if on
                else "The initiative phase ends",
            },
        )
        for check in sorted(
            (c for c in still_open if c.seq in initiative_seqs), key=lambda c: c.seq
        ):
            OpenRoll.objects.filter(pk=check.pk).update(is_open=False, declared=INITIATIVE_SET)
            check.is_open, check.declared = False, INITIATIVE_SET
            uow.record(
                session_id=session.pk,
                kind="roll.close",
                actor=gm,
                **_hidden_as(check),
                data={
                    "roll": check.seq,
                    "result": INITIATIVE_SET,
                    "open_roll": open_roll_summary(check),
                    "text": f"Roll #{check.seq} sets an initiative phase number: {check.total}",
                },
            )
        return event


POOL = Field("pool", "int", label="Pool (stack id)", nullable=True, default=None, **ID)
COUNT = Field("count", "int", label="Dice", default=1, min=1, max=100)
AWARD_COUNT = Field("count", "int", label="Dice", default=1, min=1, max=20)
PLAYER = Field("seat", "int", label="Player's seat", required=True, **ID)

commands = (
    Command(
        "pool.use",
        (SEQ, POOL, CLIENT_SEED),
        use_die,
        "roll a die from your pool (cascading) onto an open check of your own",
    ),
    Command(
        "pool.spend",
        (
            Field("effect", "choice", label="Effect", required=True, choices=SPEND_EFFECTS),
            Field("roll", "int", label="Roll (its seq)", nullable=True, default=None, **ID),
            COUNT,
            POOL,
            NOTE,
            Field("subject", "text", label="Insight subject", nullable=True, default=None),
        ),
        spend_dice,
        "spend dice for an effect: " + ", ".join(SPEND_EFFECTS),
    ),
    Command(
        "pool.award",
        (PLAYER, AWARD_COUNT),
        award,
        "award a player dice of their own type (the GM's pool grows by as many)",
        gm_only=True,
    ),
    Command("pool.undo-award", (), undo_award, "take back the last award", gm_only=True),
    Command(
        "pool.refund",
        (
            SEQ,
            Field("seat", "int", label="Seat that spent them", nullable=True, default=None, **ID),
            COUNT,
            NOTE,
        ),
        refund,
        "give back dice spent on a roll's critical that could have no effect (to the seat "
        "that spent them, at most what it spent)",
        gm_only=True,
    ),
    Command("pool.lucky-break", (), lucky_break, "give up your whole untouched pool"),
    Command(
        "insight.ask",
        (Field("subject", "text", label="What you want to learn", required=True, max_length=200),),
        ask_insight,
        "ask the GM to make an inspiration check (the GM agrees before dice are spent on it)",
    ),
    Command(
        "insight.answer",
        (
            Field("ask", "int", label="Request (its seq)", required=True, **ID),
            Field("grant", "bool", label="Agree", required=True),
        ),
        answer_insight,
        "agree to (or refuse) a player's inspiration check",
        gm_only=True,
    ),
    Command(
        "initiative.begin",
        (),
        partial(initiative_phase, on=True),
        "begin the initiative phase: initiative rolls are set and can no longer be altered",
        gm_only=True,
    ),
    Command(
        "initiative.end",
        (),
        partial(initiative_phase, on=False),
        "end the initiative phase (the next initiative rolls may be augmented as they are made)",
        gm_only=True,
    ),
    Command(
        "roll.close",
        (SEQ, Field("result", "text", label="Result", default="", max_length=200)),
        declare,
        "declare an open check's result (the GM; a self roll's roller closes it)",
    ),
)
