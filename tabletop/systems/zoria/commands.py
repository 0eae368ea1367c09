"""Zoria's socket commands: using and spending pool dice on open checks, declaring results,
awards and their undoing, refunds, the lucky break, inspiration checks asked and answered,
and the initiative phase."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db.models import F, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from rules.engines import zoria as rules
from rules.engines.schema import Field

from ...models import Event, GameSession, Seat, SeatRole, Visibility
from ...models.pools import OpenRoll, Pool, PoolKind
from ...protocol.commands import ID, Command
from ...selectors.pools import open_roll_summary
from ...services.errors import conflict, forbidden, invalid, not_found
from ...services.events import UnitOfWork, change, sent_by
from ...services.pools import (
    give_dice,
    pools_changed,
    take_dice,
)
from ...services.rolls import check_roll, fair_stream, make_roll
from ...services.round_trips import Unit
from ...services.seats import seat_gm
from ..base import (
    CLIENT_SEED,
    NOTE,
    SEQ,
    gm_session,
    live_seq,
    save_table_state,
    seat_change,
    seat_of,
)
from .checks import (
    any_roll,
    asks_of,
    botch_dice,
    commit_to_botch,
    hidden_as,
    open_check,
    owns,
    pick_stack,
    still_special,
    subject_of,
    take_from,
    use_grant,
)
from .dealing import (
    BOTCHES,
    INITIATIVE_SET,
    INSIGHT_ASKS_PER_SEAT,
    POOL_KINDS,
    SPEND_EFFECTS,
    took_lucky_break,
    touch,
)
from .models import SeatPoolState
from .table import table

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
    seat = seat_of(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id, sent=uow.sent)
        check = open_check(seat, roll)
        if not owns(seat, check):
            raise forbidden(_("action dice are used only on your own character's rolls"))
        stack = pick_stack(seat, pool, character_id=check.character_id)
        take_from(uow, stack)
        touch(seat)
        stream, client_seed = fair_stream(
            server_seed=GameSession.objects.only("server_seed").get(pk=seat.session_id).seed,
            client_seed=client_seed,
            seq=seq,
        )
        dice = rules.roll_action_die(stack.sides, stream)
        added = sum(d["value"] for d in dice)
        OpenRoll.objects.filter(pk=check.pk).update(
            total=F("total") + added, added=F("added") + added
        )
        check.refresh_from_db()
        if "special-botch-threat" in check.flags and not still_special(check):
            # Lifted out of the special botch: the threat is gone.
            check.flags = [f for f in check.flags if f != "special-botch-threat"]
            OpenRoll.objects.filter(pk=check.pk).update(flags=check.flags)
        return seat_change(
            uow,
            seat,
            seq,
            **hidden_as(check),
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
        raise invalid(_("a re-roll costs one die"), field="count")
    if effect != "insight" and roll is None:
        raise invalid(_("which roll (its seq)"), field="roll")
    seat = seat_of(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id, sent=uow.sent)
        check = open_check(seat, roll) if roll is not None and effect != "insight" else None
        about = ""
        table_now: dict[str, Any] | None = None
        if check is not None:
            _check_effect(seat, effect, check)
        else:
            about = subject_of(subject if subject is not None else note)
            _check_insight(seat, about)
            if not seat.is_gm:
                table_now = use_grant(seat, about)
        stack = pick_stack(seat, pool, character_id=check.character_id if check else None)
        take_from(uow, stack, count)
        touch(seat)
        text = f"{seat.name} spends {count}d{stack.sides}: {effect.replace('-', ' ')}"
        checked = (
            OpenRoll.objects.filter(pk=check.pk) if check is not None else OpenRoll.objects.none()
        )
        if effect == "activate-botch" and check is not None:
            commit_to_botch(check, count)
        elif effect == "activate-critical":
            checked.update(critical_dice=F("critical_dice") + count)
        elif effect in {"reroll", "reroll-botch"}:
            # The re-roll (made just below) replaces this check.
            checked.update(is_open=False, declared="re-rolled")
        hidden: dict[str, Any] = {}
        if check is not None:
            check.refresh_from_db()
            hidden = hidden_as(check)
            text += f" on roll #{check.seq}"
            if effect == "activate-botch":
                text += f" (severity {botch_dice(check)})"
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
        if effect in {"reroll", "reroll-botch"} and check is not None:
            _reroll(uow, seat=seat, check=check)
        return event


def _check_effect(seat: Seat, effect: str, check: OpenRoll) -> None:
    own = owns(seat, check)
    flags = set(check.flags)
    if effect == "reroll":
        if not own:
            raise forbidden(_("you can re-roll only your own character's roll"))
        latest = OpenRoll.objects.filter(
            session_id=seat.session_id,
            seat=check.seat_id,
            character_id=check.character_id,  # type: ignore[misc]  # None: rows with no character (IS NULL); the stubs refuse it
        )
        if latest.order_by("-seq").values_list("seq", flat=True).first() != check.seq:
            raise conflict(_("only the last roll of your character can be re-rolled"))
        if botch_dice(check):
            # A re-roll would throw the activated botch away (and the dice spent on it).
            raise conflict(
                _("the botch on roll #%(seq)s is activated: a re-roll cannot undo it")
                % {"seq": check.seq}
            )
    elif effect == "reroll-botch":
        if not own:
            raise forbidden(_("you can re-roll only your own character's botch threat"))
        if not flags & BOTCHES:
            raise conflict(_("roll #%(seq)s has no botch threat") % {"seq": check.seq})
        if botch_dice(check):
            raise conflict(
                _("the botch on roll #%(seq)s is activated: it can no longer be re-rolled")
                % {"seq": check.seq}
            )
    elif effect == "activate-botch":
        natural = "botch-threat" in flags
        special = "special-botch-threat" in flags and still_special(check)
        if not natural and not special:
            raise conflict(_("roll #%(seq)s has no botch threat to activate") % {"seq": check.seq})
        if not seat.is_gm:
            if own:
                raise forbidden(_("a botch is activated on another character, never your own"))
            if not natural:
                raise forbidden(_("a special botch (failing by 5 or more) is the GM's to activate"))
    elif effect == "activate-critical":
        if not own and not seat.is_gm:
            raise forbidden(_("you can activate only your own character's critical threat"))
        if "critical-threat" not in flags:
            raise conflict(
                _("roll #%(seq)s has no critical threat to activate") % {"seq": check.seq}
            )


def _check_insight(seat: Seat, about: str) -> None:
    """After a failed insight roll, the same player cannot spend again for the same subject:
    a roll the player made, or one made for any of the player's characters (the GM may roll
    it for them)."""
    if not about:
        raise invalid(_("name what you want to learn"), field="note")
    failed = (
        OpenRoll.objects.filter(session_id=seat.session_id, is_open=False, total__lt=F("dc"))
        .filter(Q(seat=seat) | Q(character__in=seat.characters.all()))
        .exclude(subject="")
        .exclude(declared="re-rolled")
    )
    if any(subject_of(s) == about for s in failed.values_list("subject", flat=True)):
        raise conflict(_("your insight roll on that subject failed: another player may try"))


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
    # Checked as any roll is (the stored request with no action dice is a request anew).
    again = check_roll(
        table=table.id,
        request={**original.data["request"], "action_dice": []},
        visibility=original.visibility,
        character=check.character_id,
        client_seed=original.data.get("client_seed", ""),
        options=options,
    )
    return make_roll(seat_id=check.seat_id, roll=again, reroll_of=check.seq, uow=uow)


def declare(*, seat_id: int, roll: int, result: str = "", uow: UnitOfWork | None = None) -> Event:
    """The GM declares an open check's result; no more dice can be used on it. A ``self``
    check is its roller's alone: the roller closes it (or reveals it for the GM to declare)."""
    seat = seat_of(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id, sent=uow.sent)
        check = open_check(seat, roll)
        if not seat.is_gm and not (
            check.seat_id == seat.pk and check.visibility == Visibility.SELF
        ):
            raise forbidden(_("only the GM declares results (a self roll's roller may close it)"))
        if not OpenRoll.objects.filter(pk=check.pk, is_open=True).update(
            is_open=False, declared=result or "declared"
        ):
            raise conflict(_("roll #%(seq)s is already closed") % {"seq": check.seq})
        check.refresh_from_db()
        who = "GM declares" if seat.is_gm else f"{seat.name} closes"
        return uow.record(
            session_id=seat.session_id,
            kind="roll.close",
            actor=seat,
            seq=seq,
            **hidden_as(check),
            data={
                "roll": check.seq,
                "result": result,
                "open_roll": open_roll_summary(check),
                "text": f"{who} roll #{check.seq}: {result or 'closed'} (total {check.total})",
            },
        )


# What a player is told of the GM's own changes: declared with each command (the socket
# refuses from there) and said by the service itself to any other caller, in one wording.
ONLY_GM_AWARDS = gettext_noop("only the GM awards dice")
ONLY_GM_UNDOES_AWARDS = gettext_noop("only the GM takes back awards")
ONLY_GM_REFUNDS = gettext_noop("only the GM gives back spent dice")
ONLY_GM_ANSWERS_INSIGHT = gettext_noop("only the GM answers a request for an inspiration check")
ONLY_GM_BEGINS_INITIATIVE = gettext_noop("only the GM begins the initiative phase")
ONLY_GM_ENDS_INITIATIVE = gettext_noop("only the GM ends the initiative phase")


def _gm(seat_id: int, refusal: str, *, sent: Unit | None = None) -> Seat:
    """The GM's seat, refused for anyone else with ``refusal`` (one of the sentences above,
    said in the reader's language: a verb put into "only the GM %s" would stay English);
    ``sent``: the unit's way of sending (``uow.sent``, read with ``sent_by``), so that this
    read carries the unit's BEGIN."""
    seat = seat_of(seat_id, sent=sent)
    if not seat.is_gm:
        raise forbidden(_(refusal))
    return seat


def _player(gm: Seat, seat: int) -> Seat:
    player = Seat.objects.filter(pk=seat, session_id=gm.session_id, role=SeatRole.PLAYER).first()
    if player is None:
        raise invalid(_("a player's seat at this table"), field="seat")
    if took_lucky_break(player):
        raise conflict(
            _("%(player)s took a lucky break: no dice this session") % {"player": player.name}
        )
    return player


def _session_stack(seat: Seat) -> Pool:
    stack = Pool.objects.filter(seat=seat, kind=PoolKind.SESSION_DICE).order_by("-sides").first()
    if stack is None:
        raise conflict(_("%(seat)s has no pool (no character at the table)") % {"seat": seat.name})
    return stack


def award(*, seat_id: int, seat: int, count: int = 1, uow: UnitOfWork | None = None) -> Event:
    """The GM awards dice: the player's own die type; each also adds one to the GM's pool."""
    gm = _gm(seat_id, ONLY_GM_AWARDS, sent=sent_by(uow))
    with change(uow) as uow:
        seq = live_seq(session_id=gm.session_id, sent=uow.sent)
        player = _player(gm, seat)
        stack = _session_stack(player)
        gm_pool = _session_stack(seat_gm(session=gm.session))
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
    gm = _gm(seat_id, ONLY_GM_UNDOES_AWARDS, sent=sent_by(uow))
    with change(uow) as uow:
        seq = live_seq(session_id=gm.session_id, sent=uow.sent)
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
            raise conflict(_("no award to undo"))
        player_pool_id, gm_pool_id = (p["id"] for p in last.data["pools"])
        count = last.data["count"]
        if not take_dice(uow, pool_id=player_pool_id, count=count):
            raise conflict(_("the awarded dice are already used or spent"))
        if not take_dice(uow, pool_id=gm_pool_id, count=count):
            raise conflict(_("the GM's matching dice are already used or spent"))
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
        if spend.actor_id is None:  # (a spend is always a seat's; the column allows none)
            continue
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
    gm = _gm(seat_id, ONLY_GM_REFUNDS, sent=sent_by(uow))
    with change(uow) as uow:
        seq = live_seq(session_id=gm.session_id, sent=uow.sent)
        check = any_roll(gm, roll)
        spenders = _critical_dice_left(gm, check)
        if seat is None:
            waiting = [s for s, stacks in spenders.items() if stacks]
            if not waiting:
                raise conflict(
                    _("no dice spent on roll #%(seq)s's critical are left to refund")
                    % {"seq": check.seq}
                )
            if len(waiting) > 1:
                raise invalid(
                    _("several seats spent dice on roll #%(seq)s's critical: name one")
                    % {"seq": check.seq},
                    field="seat",
                )
            seat = waiting[0]
        if seat not in spenders:
            raise invalid(
                _("that seat spent no dice on roll #%(seq)s's critical") % {"seq": check.seq},
                field="seat",
            )
        # (A seat that spent a die can take no lucky break: a refund never reaches one.)
        target = Seat.objects.get(pk=seat)
        stacks = spenders[seat]
        if count > sum(stacks.values()):
            raise conflict(
                _("%(name)s has %(dice)s dice on roll #%(seq)s's critical to refund, not %(count)s")
                % {
                    "name": target.name,
                    "dice": sum(stacks.values()),
                    "seq": check.seq,
                    "count": count,
                }
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
            **hidden_as(check),
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
    seat = seat_of(seat_id, sent=sent_by(uow))
    if seat.is_gm:
        raise forbidden(_("the lucky break is a player's"))
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id, sent=uow.sent)
        SeatPoolState.objects.get_or_create(seat=seat)
        if not SeatPoolState.objects.filter(seat=seat, touched=False, lucky_break=False).update(
            lucky_break=True
        ):
            raise conflict(
                _("a lucky break needs an untouched pool: you have used or spent dice, or took one")
            )
        stacks = list(Pool.objects.filter(seat=seat, kind__in=POOL_KINDS))
        given_up = sum(p.remaining for p in stacks)
        if given_up == 0:
            raise conflict(_("your pool is empty"))
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
    seat = seat_of(seat_id, sent=sent_by(uow))
    if seat.is_gm:
        raise forbidden(_("the GM spends on insight without asking anyone"))
    about = subject_of(subject)
    if not about:
        raise invalid(_("name what you want to learn"), field="subject")
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id, sent=uow.sent)
        _check_insight(seat, about)
        session = GameSession.objects.get(pk=seat.session_id)
        state = dict(session.table_state or {})
        mine = [a for a in asks_of(state) if a["seat"] == seat.pk]
        if any(subject_of(a["subject"]) == about for a in mine):
            raise conflict(_("you have asked about that subject already: the GM has it"))
        if len(mine) >= INSIGHT_ASKS_PER_SEAT:
            raise conflict(
                _(
                    "you have %(count)s inspiration checks asked for and not spent: spend one, "
                    "or wait for the GM's answers"
                )
                % {"count": len(mine)}
            )
        ask = {"ask": seq, "seat": seat.pk, "name": seat.name, "subject": subject.strip(),
               "granted": False}  # fmt: skip
        state["insight_asks"] = [*asks_of(state), ask]
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
    gm = _gm(seat_id, ONLY_GM_ANSWERS_INSIGHT, sent=sent_by(uow))
    with change(uow) as uow:
        session, seq = gm_session(gm, sent=uow.sent)
        state = dict(session.table_state or {})
        asked = next((a for a in asks_of(state) if a["ask"] == ask), None)
        if asked is None:
            raise not_found(
                _("no request #%(ask)s for an inspiration check is waiting") % {"ask": ask}
            )
        if asked["granted"]:
            raise conflict(
                _("request #%(ask)s is granted already: it waits for its spend") % {"ask": ask}
            )
        if grant:
            state["insight_asks"] = [
                {**a, "granted": True} if a["ask"] == ask else a for a in asks_of(state)
            ]
        else:
            state["insight_asks"] = [a for a in asks_of(state) if a["ask"] != ask]
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
    refusal = ONLY_GM_BEGINS_INITIATIVE if on else ONLY_GM_ENDS_INITIATIVE
    gm = _gm(seat_id, refusal, sent=sent_by(uow))
    with change(uow) as uow:
        session, seq = gm_session(gm, sent=uow.sent)
        state = dict(session.table_state or {})
        if bool(state.get("initiative")) == on:
            raise conflict(
                _("the initiative phase has begun already")
                if on
                else _("the initiative phase has not begun already")
            )
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
                **hidden_as(check),
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
        refusal=ONLY_GM_AWARDS,
    ),
    Command(
        "pool.undo-award",
        (),
        undo_award,
        "take back the last award",
        gm_only=True,
        refusal=ONLY_GM_UNDOES_AWARDS,
    ),
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
        refusal=ONLY_GM_REFUNDS,
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
        refusal=ONLY_GM_ANSWERS_INSIGHT,
    ),
    Command(
        "initiative.begin",
        (),
        partial(initiative_phase, on=True),
        "begin the initiative phase: initiative rolls are set and can no longer be altered",
        gm_only=True,
        refusal=ONLY_GM_BEGINS_INITIATIVE,
    ),
    Command(
        "initiative.end",
        (),
        partial(initiative_phase, on=False),
        "end the initiative phase (the next initiative rolls may be augmented as they are made)",
        gm_only=True,
        refusal=ONLY_GM_ENDS_INITIATIVE,
    ),
    Command(
        "roll.close",
        (SEQ, Field("result", "text", label="Result", default="", max_length=200)),
        declare,
        "declare an open check's result (the GM; a self roll's roller closes it)",
    ),
)
