"""Zoria action dice at the table (RULES.md section 3, "The pools"): dealing pools, awards,
using dice on open rolls, spend effects, lucky breaks, and expiry at the session's end."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F, Max

from rules.engines import FairStream
from rules.engines import zoria as rules

from ..models import Event, GameSession, Seat, SeatRole
from ..models.pools import OpenRoll, Pool, PoolKind, SeatPoolState
from ..selectors.events import Viewer, can_see
from ..selectors.pools import open_roll_summary
from .errors import conflict, forbidden, invalid, not_found
from .events import next_seq, record_event
from .pools import give_dice, pools_changed, record_pool_event, take_dice
from .seats import table_gm_seat

SPEND_EFFECTS = ("reroll", "reroll-botch", "activate-botch", "activate-critical", "insight")


def _count(value: Any, *, field: str = "count", low: int = 1, high: int = 100) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(f"a whole number from {low} to {high}", field=field)
    return value


def _state(seat: Seat) -> SeatPoolState:
    state, _ = SeatPoolState.objects.get_or_create(seat=seat)
    return state


def _levels(seat: Seat) -> list[int]:
    levels = []
    for character in seat.characters.all():
        level = character.sheet.get("level", 0) if isinstance(character.sheet, dict) else 0
        levels.append(int(level or 0))
    return levels


def _starting_pool(seat: Seat) -> list[tuple[int, int]]:
    settings = seat.session.campaign.settings or {}
    levels = _levels(seat)
    if not levels:
        return []
    return rules.ZORIA.starting_pool(levels, settings)


def deal_pool(*, seat: Seat, by: Seat | None = None) -> Event | None:
    """Give a player their session pool (at the start, or when they sit down later) and grow the
    GM's pool to match. Call inside a transaction; idempotent per seat."""
    if seat.is_gm or Pool.objects.filter(seat=seat, kind=PoolKind.ACTION_DICE).exists():
        return None
    stacks = _starting_pool(seat)
    if not stacks:
        return None
    seq = next_seq(session_id=seat.session_id)  # also locks the session row: GM growth is serial
    changed = []
    for count, sides in stacks:
        pool = Pool.objects.create(
            session_id=seat.session_id,
            seat=seat,
            kind=PoolKind.ACTION_DICE,
            sides=sides,
            remaining=count,
            initial=count,
        )
        changed.append(pool.pk)
    for bonus in _bonus_dice(seat):
        changed.append(bonus.pk)
    SeatPoolState.objects.update_or_create(
        seat=seat, defaults={"starting_dice": sum(c for c, _ in stacks)}
    )
    gm_pool = _grow_gm_pool(session=seat.session)
    changed.append(gm_pool.pk)
    return record_pool_event(
        session_id=seat.session_id,
        actor=by or seat,
        seq=seq,
        data={
            "action": "deal",
            "seat": seat.pk,
            "pools": pools_changed(changed),
            "text": f"{seat.name} gets {_dice_text(stacks)}; the GM's pool grows to match",
        },
    )


def _bonus_dice(seat: Seat) -> list[Pool]:
    """Class bonus dice written on a character's sheet, bound to that character."""
    made = []
    for character in seat.characters.all():
        by_sides: dict[int, int] = {}
        for die in (character.sheet or {}).get("class_bonus_dice", []) or []:
            by_sides[int(str(die)[1:])] = by_sides.get(int(str(die)[1:]), 0) + 1
        for sides, count in sorted(by_sides.items()):
            made.append(
                Pool.objects.create(
                    session_id=seat.session_id,
                    seat=seat,
                    character=character,
                    kind=PoolKind.BONUS_DICE,
                    sides=sides,
                    remaining=count,
                    initial=count,
                )
            )
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
        Pool.objects.filter(session=session, kind=PoolKind.ACTION_DICE)
        .exclude(seat=gm)
        .aggregate(m=Max("sides"))["m"]
    )
    size = players.count() + largest
    sides = rules.gm_die(highest_sides)
    pool = Pool.objects.filter(seat=gm, kind=PoolKind.ACTION_DICE).first()
    if pool is None:
        return Pool.objects.create(
            session=session,
            seat=gm,
            kind=PoolKind.ACTION_DICE,
            sides=sides,
            remaining=size,
            initial=size,
        )
    grow = max(0, size - pool.initial)
    Pool.objects.filter(pk=pool.pk).update(
        initial=F("initial") + grow, remaining=F("remaining") + grow, sides=max(sides, pool.sides)
    )
    pool.refresh_from_db()
    return pool


def deal_all(*, session: GameSession) -> None:
    for seat in session.seats.filter(role=SeatRole.PLAYER).prefetch_related("characters"):
        deal_pool(seat=seat)


def _dice_text(stacks: list[tuple[int, int]]) -> str:
    return " + ".join(f"{count}d{sides}" for count, sides in stacks)


def _pick_stack(seat: Seat, pool_id: Any, *, character_id: int | None = None) -> Pool:
    """The stack a die comes from: the one named, else the seat's biggest dice that are left."""
    stacks = Pool.objects.filter(seat=seat, kind__in=[PoolKind.ACTION_DICE, PoolKind.BONUS_DICE])
    if pool_id is not None:
        pool = stacks.filter(pk=pool_id).first() if isinstance(pool_id, int) else None
        if pool is None:
            raise forbidden("that is not one of your pools")
        if pool.kind == PoolKind.BONUS_DICE and pool.character_id != character_id:
            raise forbidden("class bonus dice are only for the character they belong to")
        return pool
    pool = stacks.filter(kind=PoolKind.ACTION_DICE, remaining__gt=0).order_by("-sides").first()
    if pool is None:
        raise conflict("no action dice left in your pool")
    return pool


def _take(pool: Pool, count: int = 1) -> None:
    if not take_dice(pool_id=pool.pk, count=count):
        left = Pool.objects.values_list("remaining", flat=True).get(pk=pool.pk)
        raise conflict(f"only {left} d{pool.sides} left in that pool")


def _hidden_as(roll: OpenRoll) -> dict[str, Any]:
    """Events about a roll are as hidden as the roll, judged for its roller."""
    return {"visibility": roll.visibility, "owner": roll.seat}


def _open_roll(seat: Seat, seq: Any) -> OpenRoll:
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise invalid("which roll (its seq)", field="roll")
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
    if roll is None:
        raise not_found(f"roll #{seq} is not a Zoria check of this session")
    viewer = Viewer(seat_id=seat.pk, is_gm=seat.is_gm)
    if not can_see(visibility=roll.visibility, actor_seat_id=roll.seat_id, viewer=viewer):
        raise not_found(f"roll #{seq} is not a Zoria check of this session")
    if not roll.is_open:
        raise conflict(f"roll #{seq} is closed: the GM has declared its result")
    return roll


def register_roll(
    *, seat: Seat, seq: int, character_id: int | None, result: dict[str, Any], visibility: str
) -> OpenRoll:
    """Every Zoria check stays open until the GM declares it."""
    return OpenRoll.objects.create(
        session_id=seat.session_id,
        seq=seq,
        seat=seat,
        character_id=character_id,
        total=result.get("total") or 0,
        flags=result.get("flags", []),
        dc=result["request"].get("dc"),
        visibility=visibility,
    )


def use_die(*, seat: Seat, roll_seq: Any, pool_id: Any = None, client_seed: Any = "") -> Event:
    """Roll a die from one's pool (cascading) and add it to an open roll of one's own."""
    if not isinstance(client_seed, str) or len(client_seed) > 200:
        raise invalid("text of at most 200 characters", field="client_seed")
    with transaction.atomic():
        seq = next_seq(session_id=seat.session_id)
        roll = _open_roll(seat, roll_seq)
        if roll.seat_id != seat.pk:
            raise forbidden("action dice are used only on your own character's rolls")
        pool = _pick_stack(seat, pool_id, character_id=roll.character_id)
        _take(pool)
        _state(seat)
        SeatPoolState.objects.filter(seat=seat).update(touched=True)
        server_seed = bytes(
            GameSession.objects.values_list("server_seed", flat=True).get(pk=seat.session_id)
        )
        dice = rules.roll_action_die(pool.sides, FairStream(server_seed, client_seed, seq))
        added = sum(d["value"] for d in dice)
        OpenRoll.objects.filter(pk=roll.pk).update(
            total=F("total") + added, added=F("added") + added
        )
        roll.refresh_from_db()
        return record_pool_event(
            session_id=seat.session_id,
            actor=seat,
            seq=seq,
            **_hidden_as(roll),
            data={
                "action": "use",
                "roll": roll.seq,
                "dice": dice,
                "client_seed": client_seed,
                "added": added,
                "open_roll": open_roll_summary(roll),
                "pools": pools_changed([pool.pk]),
                "text": f"{seat.name} adds a d{pool.sides} to roll #{roll.seq}: "
                f"+{added} (total {roll.total})",
            },
        )


def spend_dice(
    *,
    seat: Seat,
    effect: Any,
    roll_seq: Any = None,
    count: Any = 1,
    pool_id: Any = None,
    note: Any = "",
) -> Event:
    """Spend dice for an effect (no die rolled). Re-rolls make a new roll event too."""
    if effect not in SPEND_EFFECTS:
        raise invalid(f"one of {list(SPEND_EFFECTS)}", field="effect")
    count = _count(count)
    if effect in {"reroll", "reroll-botch"} and count != 1:
        raise invalid("a re-roll costs one die", field="count")
    if not isinstance(note, str) or len(note) > 200:
        raise invalid("text of at most 200 characters", field="note")
    with transaction.atomic():
        seq = next_seq(session_id=seat.session_id)
        roll = _open_roll(seat, roll_seq) if effect != "insight" else None
        if roll is not None:
            _check_effect(seat, effect, roll)
        pool = _pick_stack(seat, pool_id, character_id=roll.character_id if roll else None)
        _take(pool, count)
        _state(seat)
        SeatPoolState.objects.filter(seat=seat).update(touched=True)
        text = f"{seat.name} spends {count}d{pool.sides}: {effect.replace('-', ' ')}"
        if effect == "activate-botch":
            OpenRoll.objects.filter(pk=roll.pk).update(botch_dice=F("botch_dice") + count)
        elif effect == "activate-critical":
            OpenRoll.objects.filter(pk=roll.pk).update(critical_dice=F("critical_dice") + count)
        elif effect in {"reroll", "reroll-botch"}:
            # The re-roll (made just below) replaces this roll.
            OpenRoll.objects.filter(pk=roll.pk).update(is_open=False, declared="re-rolled")
        if roll is not None:
            roll.refresh_from_db()
            text += f" on roll #{roll.seq}"
            if effect == "activate-botch":
                text += f" (severity {roll.botch_dice})"
            if effect == "activate-critical":
                text += f" ({roll.critical_dice} dice on the critical)"
        if note:
            text += f": {note}"
        event = record_pool_event(
            session_id=seat.session_id,
            actor=seat,
            seq=seq,
            **(_hidden_as(roll) if roll is not None else {}),
            data={
                "action": "spend",
                "effect": effect,
                "roll": roll.seq if roll else None,
                "count": count,
                "note": note,
                "open_roll": open_roll_summary(roll) if roll else None,
                "pools": pools_changed([pool.pk]),
                "text": text,
            },
        )
        if effect in {"reroll", "reroll-botch"}:
            _reroll(seat=seat, roll=roll)
        return event


def _check_effect(seat: Seat, effect: str, roll: OpenRoll) -> None:
    own = roll.seat_id == seat.pk
    flags = set(roll.flags)
    if effect == "reroll":
        if not own:
            raise forbidden("you can re-roll only your own character's roll")
        latest = OpenRoll.objects.filter(
            session_id=seat.session_id, seat=seat, character_id=roll.character_id
        )
        if latest.order_by("-seq").values_list("seq", flat=True).first() != roll.seq:
            raise conflict("only the last roll of your character can be re-rolled")
    elif effect == "reroll-botch":
        if not own:
            raise forbidden("you can re-roll only your own character's botch threat")
        if not flags & {"botch-threat", "special-botch-threat"}:
            raise conflict(f"roll #{roll.seq} has no botch threat")
    elif effect == "activate-botch":
        if not flags & {"botch-threat", "special-botch-threat"}:
            raise conflict(f"roll #{roll.seq} has no botch threat to activate")
    elif effect == "activate-critical":
        if not own and not seat.is_gm:
            raise forbidden("you can activate only your own character's critical threat")
        if "critical-threat" not in flags:
            raise conflict(f"roll #{roll.seq} has no critical threat to activate")


def _reroll(*, seat: Seat, roll: OpenRoll) -> Event:
    """The re-roll replaces the open roll; the new result stands even if lower."""
    from .rolls import make_roll  # rolls register open rolls through this module

    original = Event.objects.get(session_id=seat.session_id, seq=roll.seq)
    return make_roll(
        seat_id=seat.pk,
        request=original.data["request"],
        system="zoria",
        visibility=original.visibility,
        character=roll.character_id,
        client_seed=original.data.get("client_seed", ""),
        reroll_of=roll.seq,
    )


def declare(*, seat: Seat, roll_seq: Any, result: Any = "") -> Event:
    """The GM declares an open roll's result; no more dice can be used on it."""
    if not seat.is_gm:
        raise forbidden("only the GM declares results")
    if not isinstance(result, str) or len(result) > 200:
        raise invalid("text of at most 200 characters", field="result")
    with transaction.atomic():
        seq = next_seq(session_id=seat.session_id)
        roll = _open_roll(seat, roll_seq)
        if not OpenRoll.objects.filter(pk=roll.pk, is_open=True).update(
            is_open=False, declared=result or "declared"
        ):
            raise conflict(f"roll #{roll.seq} is already closed")
        roll.refresh_from_db()
        return record_event(
            session_id=seat.session_id,
            kind="roll.close",
            actor=seat,
            seq=seq,
            **_hidden_as(roll),
            data={
                "roll": roll.seq,
                "result": result,
                "open_roll": open_roll_summary(roll),
                "text": f"GM declares roll #{roll.seq}: {result or 'closed'} (total {roll.total})",
            },
        )


def award(*, seat: Seat, to_seat: Any, count: Any = 1) -> Event:
    """The GM awards dice: the player's own die type; each also adds one to the GM's pool."""
    if not seat.is_gm:
        raise forbidden("only the GM awards dice")
    count = _count(count, high=20)
    with transaction.atomic():
        seq = next_seq(session_id=seat.session_id)
        player = (
            Seat.objects.filter(
                pk=to_seat, session_id=seat.session_id, role=SeatRole.PLAYER
            ).first()
            if isinstance(to_seat, int) and not isinstance(to_seat, bool)
            else None
        )
        if player is None:
            raise invalid("a player's seat at this table", field="seat")
        if _state(player).lucky_break:
            raise conflict(f"{player.name} took a lucky break: no awards this session")
        stack = (
            Pool.objects.filter(seat=player, kind=PoolKind.ACTION_DICE).order_by("-sides").first()
        )
        if stack is None:
            raise conflict(f"{player.name} has no pool (no character at the table)")
        gm_pool = Pool.objects.get(
            seat=table_gm_seat(session=seat.session), kind=PoolKind.ACTION_DICE
        )
        give_dice(pool_id=stack.pk, count=count)
        give_dice(pool_id=gm_pool.pk, count=count)
        return record_pool_event(
            session_id=seat.session_id,
            actor=seat,
            seq=seq,
            data={
                "action": "award",
                "seat": player.pk,
                "count": count,
                "pools": pools_changed([stack.pk, gm_pool.pk]),
                "text": f"GM awards {player.name} {count}d{stack.sides} "
                f"(and the GM's pool grows by {count})",
            },
        )


def undo_award(*, seat: Seat) -> Event:
    """Take back the GM's last award that has not been undone, if its dice are still there."""
    if not seat.is_gm:
        raise forbidden("only the GM undoes awards")
    with transaction.atomic():
        seq = next_seq(session_id=seat.session_id)
        events = Event.objects.filter(session_id=seat.session_id, kind="pool").order_by("-seq")
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
        if not take_dice(pool_id=player_pool_id, count=count):
            raise conflict("the awarded dice are already used or spent")
        if not take_dice(pool_id=gm_pool_id, count=count):
            raise conflict("the GM's matching dice are already used or spent")
        return record_pool_event(
            session_id=seat.session_id,
            actor=seat,
            seq=seq,
            data={
                "action": "undo-award",
                "undoes": last.seq,
                "seat": last.data["seat"],
                "count": count,
                "pools": pools_changed([player_pool_id, gm_pool_id]),
                "text": f"GM takes back the award of #{last.seq}",
            },
        )


def refund(*, seat: Seat, to_seat: Any, count: Any = 1, note: Any = "") -> Event:
    """The GM gives dice back (a critical that could have no effect)."""
    if not seat.is_gm:
        raise forbidden("only the GM refunds dice")
    count = _count(count, high=20)
    if not isinstance(note, str) or len(note) > 200:
        raise invalid("text of at most 200 characters", field="note")
    with transaction.atomic():
        seq = next_seq(session_id=seat.session_id)
        target = (
            Seat.objects.filter(pk=to_seat, session_id=seat.session_id).first()
            if isinstance(to_seat, int) and not isinstance(to_seat, bool)
            else None
        )
        if target is None:
            raise invalid("a seat at this table", field="seat")
        stack = (
            Pool.objects.filter(seat=target, kind=PoolKind.ACTION_DICE).order_by("-sides").first()
        )
        if stack is None:
            raise conflict(f"{target.name} has no pool")
        give_dice(pool_id=stack.pk, count=count)
        return record_pool_event(
            session_id=seat.session_id,
            actor=seat,
            seq=seq,
            data={
                "action": "refund",
                "seat": target.pk,
                "count": count,
                "note": note,
                "pools": pools_changed([stack.pk]),
                "text": f"GM refunds {target.name} {count}d{stack.sides}"
                + (f": {note}" if note else ""),
            },
        )


def lucky_break(*, seat: Seat) -> Event:
    """Give up the whole pool at once: only with nothing used or spent; no awards afterwards."""
    if seat.is_gm:
        raise forbidden("the lucky break is a player's")
    with transaction.atomic():
        seq = next_seq(session_id=seat.session_id)
        _state(seat)
        if not SeatPoolState.objects.filter(seat=seat, touched=False, lucky_break=False).update(
            lucky_break=True
        ):
            raise conflict(
                "a lucky break needs an untouched pool: you have used or spent dice, or took one"
            )
        stacks = list(
            Pool.objects.filter(seat=seat, kind__in=[PoolKind.ACTION_DICE, PoolKind.BONUS_DICE])
        )
        given_up = sum(p.remaining for p in stacks)
        if given_up == 0:
            raise conflict("your pool is empty")
        Pool.objects.filter(pk__in=[p.pk for p in stacks]).update(remaining=0)
        return record_pool_event(
            session_id=seat.session_id,
            actor=seat,
            seq=seq,
            data={
                "action": "lucky-break",
                "seat": seat.pk,
                "given_up": given_up,
                "pools": pools_changed([p.pk for p in stacks]),
                "text": f"{seat.name} gives up {given_up} dice for a lucky break",
            },
        )
