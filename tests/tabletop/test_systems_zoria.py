# ruff: noqa: F811 (the fixture imported from test_pools_zoria is each test's argument)
"""Zoria's table rules that guard against cheating and breakage (docs/rules.md, "Zoria action
dice"): action dice on a check paid from the pool, re-rolls, special botches, botches on one's own
character, lucky breaks, Dark Agenda, insight subjects, self rolls, the end of the session."""

from __future__ import annotations

import pytest

from rules.engines import FairStream
from tabletop.models import Character, Event, GameSession, Seat
from tabletop.models.pools import OpenRoll, Pool, PoolKind
from tabletop.selectors.events import Viewer, can_see
from tabletop.services.errors import ServiceError
from tabletop.services.sessions import end_session
from tabletop.systems import zoria

from .commands import granted, rolled
from .test_pools_zoria import code, gm_stack, sit, stacks, table  # noqa: F401

pytestmark = pytest.mark.django_db


def forced(seat: Seat, character, natural: int, visibility: str = "public", **request):
    """A check whose natural d20 shows ``natural``."""
    session = GameSession.objects.get(pk=seat.session_id)
    seq = session.last_seq + 1
    for i in range(3000):
        if FairStream(bytes(session.server_seed), f"f{i}", seq).roll(20) == natural:
            return rolled(
                seat_id=seat.pk,
                request={"check": "1d20", **request},
                character=character.pk,
                client_seed=f"f{i}",
                visibility=visibility,
            )
    raise AssertionError("no seed")


def test_action_dice_on_a_check_come_out_of_the_pool_die_for_die(table):
    ana = sit(table, "Ana", "Kael")  # 4d6
    kael = table["c"]["Kael"]
    before = GameSession.objects.get(pk=table["session"].pk).last_seq
    for asked in (["d8"], ["d6"] * 5, ["d24"] * 10):
        assert (
            code(
                lambda a=asked: rolled(
                    seat_id=ana.pk, request={"check": "1d20", "action_dice": a}, character=kael.pk
                )
            )
            == "conflict"
        )
    assert GameSession.objects.get(pk=table["session"].pk).last_seq == before  # nothing stored
    roll = rolled(
        seat_id=ana.pk, request={"check": "1d20", "action_dice": ["d6", "d6"]}, character=kael.pk
    )
    assert stacks(ana) == [(2, 6)]
    commit = Event.objects.get(session=table["session"], seq=roll.seq - 1)
    assert commit.data["action"] == "commit" and commit.data["count"] == 2
    assert len([d for d in roll.data["dice"] if d["role"] == "action"]) >= 2


def test_class_bonus_dice_pay_for_their_own_characters_check_first(table):
    ana = sit(table, "Ana", "Kael", "Ysolde")  # highest: 5d8, Ysolde's bonus d8
    rolled(
        seat_id=ana.pk,
        request={"check": "1d20", "action_dice": ["d8"]},
        character=table["c"]["Ysolde"].pk,
    )
    assert Pool.objects.get(seat=ana, kind=PoolKind.BONUS_DICE).remaining == 0
    assert stacks(ana) == [(5, 8)]


def test_a_reroll_never_adds_dice_that_were_not_paid_for(table):
    ana = sit(table, "Ana", "Kael")
    roll = rolled(
        seat_id=ana.pk,
        request={"check": "1d20", "action_dice": ["d6", "d6", "d6"]},
        character=table["c"]["Kael"].pk,
    )
    zoria.spend_dice(seat_id=ana.pk, effect="reroll", roll=roll.seq)
    new = Event.objects.get(session=table["session"], kind="roll", data__reroll_of=roll.seq)
    assert new.data["request"]["action_dice"] == []
    assert stacks(ana) == [(0, 6)]  # three paid with the check, one for the re-roll
    # The re-roll replaces the check's d20, not the action dice paid and rolled onto it.
    paid = sum(d["value"] for d in roll.data["dice"] if d["role"] == "action")
    check = OpenRoll.objects.get(seq=new.seq)
    assert (check.total, check.added) == (new.data["total"] + paid, paid)
    assert new.data["open_roll"]["total"] == check.total


def test_a_re_roll_is_checked_as_any_roll_is_and_refused_whole(table, monkeypatch):
    """The re-roll is a request anew: it goes through ``check_roll`` before ``make_roll``, so
    one the table can no longer hold is refused clearly and nothing is paid or stored."""
    import importlib

    from tabletop.services import rolls

    commands = importlib.import_module("tabletop.systems.zoria.commands")

    ana = sit(table, "Ana", "Kael")
    roll = rolled(seat_id=ana.pk, request={"check": "1d20"}, character=table["c"]["Kael"].pk)
    before = GameSession.objects.get(pk=table["session"].pk).last_seq
    paid = stacks(ana)
    checked = []
    check = commands.check_roll
    monkeypatch.setattr(commands, "check_roll", lambda **kw: checked.append(kw) or check(**kw))
    monkeypatch.setattr(rolls, "MAX_ROLL_DICE", 0)
    with pytest.raises(ServiceError) as caught:
        zoria.spend_dice(seat_id=ana.pk, effect="reroll", roll=roll.seq)
    assert caught.value.code == "too-large" and "nothing was rolled" in caught.value.message
    assert [c["request"]["action_dice"] for c in checked] == [[]]
    assert GameSession.objects.get(pk=table["session"].pk).last_seq == before
    assert stacks(ana) == paid


def test_dice_used_on_a_check_stay_on_its_re_roll(table):
    ana = sit(table, "Ana", "Kael")
    roll = rolled(seat_id=ana.pk, request={"check": "1d20"}, character=table["c"]["Kael"].pk)
    used = zoria.use_die(seat_id=ana.pk, roll=roll.seq).data["added"]
    zoria.spend_dice(seat_id=ana.pk, effect="reroll", roll=roll.seq)
    new = Event.objects.get(session=table["session"], kind="roll", data__reroll_of=roll.seq)
    assert OpenRoll.objects.get(seq=new.seq).total == new.data["total"] + used


def test_a_stat_roll_takes_no_action_dice(table):
    ana = sit(table, "Ana", "Kael")
    assert (
        code(
            lambda: rolled(
                seat_id=ana.pk,
                request={"check": "3d6", "action_dice": ["d6"]},
                character=table["c"]["Kael"].pk,
                options={"stat_roll": True},
            )
        )
        == "invalid"
    )
    assert stacks(ana) == [(4, 6)]


def test_a_special_botch_is_the_gms_and_only_while_the_check_still_fails_by_5(table):
    ana, bo = sit(table, "Ana", "Kael"), sit(table, "Bo", "Ysolde")
    gm = gm_stack(table)[1]
    roll = forced(bo, table["c"]["Ysolde"], 15, dc=20)  # 15 <= 20 - 5: special, no natural botch
    assert roll.data["flags"] == ["special-botch-threat"]
    spend = dict(effect="activate-botch", roll=roll.seq)
    assert code(lambda: zoria.spend_dice(seat_id=ana.pk, **spend)) == "forbidden"
    zoria.use_die(seat_id=bo.pk, roll=roll.seq)  # any die lifts it to 16 or more
    assert code(lambda: zoria.spend_dice(seat_id=gm.pk, **spend)) == "conflict"
    assert "special-botch-threat" not in OpenRoll.objects.get(seq=roll.seq).flags
    still = forced(bo, table["c"]["Ysolde"], 10, dc=20)
    zoria.spend_dice(seat_id=gm.pk, effect="activate-botch", roll=still.seq)
    assert OpenRoll.objects.get(seq=still.seq).marks["botch_dice"] == 1


def test_never_a_botch_on_ones_own_character(table):
    ana = sit(table, "Ana", "Kael")
    gm = gm_stack(table)[1]
    mine = forced(ana, table["c"]["Kael"], 1)
    assert "botch-threat" in mine.data["flags"]
    assert (
        code(lambda: zoria.spend_dice(seat_id=ana.pk, effect="activate-botch", roll=mine.seq))
        == "forbidden"
    )
    # Rolled by the GM for Kael, still Kael's: Ana may not activate it either.
    for_kael = forced(gm, table["c"]["Kael"], 1)
    assert (
        code(lambda: zoria.spend_dice(seat_id=ana.pk, effect="activate-botch", roll=for_kael.seq))
        == "forbidden"
    )


def test_an_activated_botch_can_no_longer_be_rerolled(table):
    ana, bo = sit(table, "Ana", "Kael"), sit(table, "Bo", "Ysolde")
    roll = forced(bo, table["c"]["Ysolde"], 1)
    zoria.spend_dice(seat_id=ana.pk, effect="activate-botch", roll=roll.seq)
    assert (
        code(lambda: zoria.spend_dice(seat_id=bo.pk, effect="reroll-botch", roll=roll.seq))
        == "conflict"
    )
    assert stacks(bo) == [(5, 8)]


def test_no_refunds_after_a_lucky_break(table):
    ana = sit(table, "Ana", "Kael")
    gm = gm_stack(table)[1]
    critical = forced(ana, table["c"]["Kael"], 20)
    zoria.lucky_break(seat_id=ana.pk)
    # A lucky break needs a pool never spent from: nothing of it was spent on a critical.
    assert code(lambda: zoria.refund(seat_id=gm.pk, roll=critical.seq)) == "conflict"
    assert code(lambda: zoria.award(seat_id=gm.pk, seat=ana.pk)) == "conflict"
    assert stacks(ana) == [(0, 6)]


def test_the_gms_insight_spends_are_the_gms_alone(table):
    ana = sit(table, "Ana", "Kael")
    gm = gm_stack(table)[1]
    event = zoria.spend_dice(seat_id=gm.pk, effect="insight", count=2, note="the vizier's plan")
    assert event.visibility == "gm"
    player = Viewer(seat_id=ana.pk, is_gm=False)
    assert not can_see(visibility=event.visibility, actor_seat_id=gm.pk, viewer=player)
    # What it took from the GM's stack is the GM's too, until the session ends.
    note = Event.objects.get(session=table["session"], seq=event.seq + 1)
    assert note.visibility == "gm" and note.data["action"] == "counts"
    assert [m["moved"] for m in note.data["withheld"]] == [-2]
    granted(ana, "the seal")
    mine = zoria.spend_dice(seat_id=ana.pk, effect="insight", note="the seal")
    assert mine.visibility == "public"


def test_after_a_failed_insight_roll_the_same_player_cannot_spend_on_that_subject(table):
    ana, bo = sit(table, "Ana", "Kael"), sit(table, "Bo", "Ysolde")
    gm = gm_stack(table)[1]
    granted(ana, "the seal", "the vizier")  # the GM agreed before the roll failed
    granted(bo, "the seal")
    assert (
        code(
            lambda: rolled(
                seat_id=ana.pk,
                request={"check": "1d20+1"},
                character=table["c"]["Kael"].pk,
                options={"insight": "The Seal"},
            )
        )
        == "invalid"
    )  # an insight roll needs the GM's DC
    roll = rolled(
        seat_id=ana.pk,
        request={"check": "1d20+1", "dc": 30},
        character=table["c"]["Kael"].pk,
        options={"insight": "The Seal"},
    )
    zoria.declare(seat_id=gm.pk, roll=roll.seq, result="nothing learned")
    refused = code(lambda: zoria.spend_dice(seat_id=ana.pk, effect="insight", note=" the  seal "))
    assert refused == "conflict"
    zoria.spend_dice(seat_id=ana.pk, effect="insight", note="the vizier")  # another subject
    zoria.spend_dice(seat_id=bo.pk, effect="insight", note="the seal")  # another player


def test_a_self_check_is_closed_by_its_roller_and_every_open_check_at_the_end(table):
    ana = sit(table, "Ana", "Kael")
    gm = gm_stack(table)[1]
    kael = table["c"]["Kael"].pk
    mine = rolled(seat_id=ana.pk, request={"check": "1d20"}, character=kael, visibility="self")
    assert code(lambda: zoria.declare(seat_id=gm.pk, roll=mine.seq)) == "not-found"
    zoria.declare(seat_id=ana.pk, roll=mine.seq, result="I give up")
    assert not OpenRoll.objects.get(seq=mine.seq).is_open
    shown = rolled(seat_id=ana.pk, request={"check": "1d20"}, character=kael, visibility="gm")
    assert code(lambda: zoria.declare(seat_id=ana.pk, roll=shown.seq)) == "forbidden"
    left = [rolled(seat_id=ana.pk, request={"check": "1d20"}, character=kael).seq for _ in "ab"]
    end_session(session_id=table["session"].pk)
    assert not OpenRoll.objects.filter(session=table["session"], is_open=True).exists()
    close = Event.objects.get(session=table["session"], kind="pool", data__action="close")
    assert close.data["rolls"] == [shown.seq, *left]
    last = Event.objects.filter(session=table["session"]).order_by("-seq").first()
    assert last.kind == "session.end"


# --- the seed to the last rule ----------------------------------------------------------------


def test_a_plain_reroll_cannot_undo_an_activated_botch(table):
    ana, bo = sit(table, "Ana", "Kael"), sit(table, "Bo", "Ysolde")
    gm = gm_stack(table)[1]
    roll = forced(bo, table["c"]["Ysolde"], 1)
    zoria.spend_dice(seat_id=gm.pk, effect="activate-botch", roll=roll.seq, count=2)
    for effect in ("reroll", "reroll-botch"):
        assert code(lambda e=effect: zoria.spend_dice(seat_id=bo.pk, effect=e, roll=roll.seq)) == (
            "conflict"
        )
    assert stacks(bo) == [(5, 8)]
    check = OpenRoll.objects.get(seq=roll.seq)
    assert (check.is_open, check.marks["botch_dice"]) == (True, 2)
    # Before the GM activates it, the plain re-roll is still the player's.
    fresh = forced(ana, table["c"]["Kael"], 1)
    zoria.spend_dice(seat_id=ana.pk, effect="reroll", roll=fresh.seq)


def test_a_player_uses_dice_on_a_check_the_gm_rolled_for_their_character(table):
    ana, bo = sit(table, "Ana", "Kael"), sit(table, "Bo", "Ysolde")
    gm = gm_stack(table)[1]
    for_kael = rolled(seat_id=gm.pk, request={"check": "1d20"}, character=table["c"]["Kael"].pk)
    used = zoria.use_die(seat_id=ana.pk, roll=for_kael.seq)
    assert (
        OpenRoll.objects.get(seq=for_kael.seq).total == for_kael.data["total"] + used.data["added"]
    )
    assert stacks(ana) == [(3, 6)]
    # Not another player's: Kael is not Bo's.
    assert code(lambda: zoria.use_die(seat_id=bo.pk, roll=for_kael.seq)) == "forbidden"


def test_a_failed_insight_roll_made_for_a_character_blocks_its_player_whatever_the_spelling(
    table,
):
    ana, bo = sit(table, "Ana", "Kael"), sit(table, "Bo", "Ysolde")
    gm = gm_stack(table)[1]
    granted(ana, "The Seal")
    granted(bo, "The Seal.")
    roll = rolled(
        seat_id=gm.pk,
        request={"check": "1d20", "dc": 99},
        character=table["c"]["Kael"].pk,
        options={"insight": "The Seal"},
    )
    zoria.declare(seat_id=gm.pk, roll=roll.seq, result="nothing learned")
    for spelling in ("The Seal.", "the  SEAL!", "«the seal»", "The-Seal"):
        assert (
            code(lambda s=spelling: zoria.spend_dice(seat_id=ana.pk, effect="insight", note=s))
            == "conflict"
        ), spelling
    assert stacks(ana) == [(4, 6)]
    zoria.spend_dice(seat_id=bo.pk, effect="insight", note="The Seal.")  # another player may


def test_a_refund_returns_at_most_the_critical_dice_to_the_seat_that_spent_them(table):
    ana, bo = sit(table, "Ana", "Kael"), sit(table, "Bo", "Ysolde")
    (gm_dice, gm) = gm_stack(table)
    plain = forced(bo, table["c"]["Ysolde"], 10)
    # Nothing spent on a critical: nothing to refund, to anyone, the GM's own pool included.
    for target, refused in ((bo.pk, "invalid"), (gm.pk, "invalid"), (None, "conflict")):
        assert code(lambda t=target: zoria.refund(seat_id=gm.pk, roll=plain.seq, seat=t)) == (
            refused
        )
    assert stacks(bo) == [(5, 8)]
    critical = forced(bo, table["c"]["Ysolde"], 20)
    zoria.spend_dice(seat_id=bo.pk, effect="activate-critical", roll=critical.seq, count=2)
    zoria.spend_dice(seat_id=gm.pk, effect="activate-critical", roll=critical.seq, count=1)
    assert stacks(bo) == [(3, 8)]
    # Two seats spent on it: the refund names one; never more than that seat spent.
    assert code(lambda: zoria.refund(seat_id=gm.pk, roll=critical.seq)) == "invalid"
    assert code(lambda: zoria.refund(seat_id=gm.pk, roll=critical.seq, seat=ana.pk)) == "invalid"
    too_many = dict(roll=critical.seq, seat=bo.pk, count=3)
    assert code(lambda: zoria.refund(seat_id=gm.pk, **too_many)) == "conflict"
    event = zoria.refund(seat_id=gm.pk, roll=critical.seq, seat=bo.pk, count=2, note="no effect")
    assert stacks(bo) == [(5, 8)] and event.data["returned"][0]["count"] == 2
    assert OpenRoll.objects.get(seq=critical.seq).critical_dice == 1
    assert code(lambda: zoria.refund(seat_id=gm.pk, roll=critical.seq, seat=bo.pk)) == "conflict"
    zoria.refund(seat_id=gm.pk, roll=critical.seq)  # the GM's own die, the only one left
    assert gm_stack(table)[0] == gm_dice
    assert code(lambda: zoria.refund(seat_id=gm.pk, roll=critical.seq)) == "conflict"


def test_a_refund_on_a_hidden_check_is_as_hidden_as_the_check(table):
    bo = sit(table, "Bo", "Ysolde")
    gm = gm_stack(table)[1]
    critical = forced(bo, table["c"]["Ysolde"], 20, visibility="gm")
    zoria.spend_dice(seat_id=bo.pk, effect="activate-critical", roll=critical.seq)
    event = zoria.refund(seat_id=gm.pk, roll=critical.seq)
    assert (event.visibility, event.owner_id) == ("gm", bo.pk)


def test_the_gms_insight_roll_for_a_villain_is_the_gms_alone(table):
    ana = sit(table, "Ana", "Kael")
    gm = gm_stack(table)[1]
    vizier = Character.objects.create(campaign=table["campaign"], name="Vizier", sheet={})
    insight = dict(request={"check": "1d20+5", "dc": 15}, options={"insight": "the heroes"})
    for villain in (vizier.pk, None):
        roll = rolled(seat_id=gm.pk, character=villain, **insight)
        assert roll.visibility == "gm"
        player = Viewer(seat_id=ana.pk, is_gm=False)
        assert not can_see(visibility=roll.visibility, actor_seat_id=gm.pk, viewer=player)
    # For a player's character the GM's insight roll is as the GM chose; a player's stays theirs.
    assert rolled(seat_id=gm.pk, character=table["c"]["Kael"].pk, **insight).visibility == (
        "public"
    )
    assert rolled(seat_id=ana.pk, character=table["c"]["Kael"].pk, **insight).visibility == (
        "public"
    )
    # A plain check of the GM's is not an insight roll: as chosen.
    assert rolled(seat_id=gm.pk, request={"check": "1d20"}, character=vizier.pk).visibility == (
        "public"
    )


# --- the GM's consent before an inspiration spend -------------------------------------------


def test_a_player_spends_on_insight_only_once_the_gm_agrees(table):
    ana, bo = sit(table, "Ana", "Kael"), sit(table, "Bo", "Ysolde")
    gm = gm_stack(table)[1]
    session = table["session"]

    def state():
        return GameSession.objects.get(pk=session.pk).table_state

    # Unasked: refused, nothing spent.
    assert code(lambda: zoria.spend_dice(seat_id=ana.pk, effect="insight", note="the seal")) == (
        "conflict"
    )
    assert stacks(ana) == [(4, 6)]
    asked = zoria.ask_insight(seat_id=ana.pk, subject="The Seal")
    assert asked.visibility == "public"
    assert state()["insight_asks"] == [
        {"ask": asked.seq, "seat": ana.pk, "name": "Ana", "subject": "The Seal", "granted": False}
    ]
    assert asked.data["table"] == state()
    # Asked, not yet answered: still refused; the same subject cannot be asked twice.
    assert code(lambda: zoria.spend_dice(seat_id=ana.pk, effect="insight", note="the seal")) == (
        "conflict"
    )
    assert code(lambda: zoria.ask_insight(seat_id=ana.pk, subject="the seal.")) == "conflict"
    # Only the GM answers; the GM asks no one.
    assert code(lambda: zoria.answer_insight(seat_id=bo.pk, ask=asked.seq, grant=True)) == (
        "forbidden"
    )
    assert code(lambda: zoria.ask_insight(seat_id=gm.pk, subject="the vizier")) == "forbidden"
    answer = zoria.answer_insight(seat_id=gm.pk, ask=asked.seq, grant=True)
    assert answer.data["granted"] is True and state()["insight_asks"][0]["granted"] is True
    # Bo cannot ride on Ana's grant; Ana spends it once (any spelling), and it is used up.
    assert code(lambda: zoria.spend_dice(seat_id=bo.pk, effect="insight", note="The Seal")) == (
        "conflict"
    )
    spent = zoria.spend_dice(seat_id=ana.pk, effect="insight", count=2, note="THE SEAL!")
    assert spent.data["table"]["insight_asks"] == [] == state()["insight_asks"]
    assert stacks(ana) == [(2, 6)]
    assert code(lambda: zoria.spend_dice(seat_id=ana.pk, effect="insight", note="the seal")) == (
        "conflict"
    )
    # A refused request is gone: nothing to spend on.
    refused = zoria.ask_insight(seat_id=bo.pk, subject="the vizier")
    zoria.answer_insight(seat_id=gm.pk, ask=refused.seq, grant=False)
    assert state()["insight_asks"] == []
    assert code(lambda: zoria.spend_dice(seat_id=bo.pk, effect="insight", note="the vizier")) == (
        "conflict"
    )
    assert code(lambda: zoria.answer_insight(seat_id=gm.pk, ask=refused.seq, grant=True)) == (
        "not-found"
    )


def test_a_player_has_a_bounded_number_of_inspiration_checks_waiting(table):
    ana = sit(table, "Ana", "Kael")
    for i in range(zoria.INSIGHT_ASKS_PER_SEAT):
        zoria.ask_insight(seat_id=ana.pk, subject=f"clue {i}")
    assert code(lambda: zoria.ask_insight(seat_id=ana.pk, subject="one more")) == "conflict"


def test_after_a_failed_insight_roll_the_player_cannot_even_ask_again(table):
    ana = sit(table, "Ana", "Kael")
    gm = gm_stack(table)[1]
    roll = rolled(
        seat_id=gm.pk,
        request={"check": "1d20", "dc": 99},
        character=table["c"]["Kael"].pk,
        options={"insight": "The Seal"},
    )
    zoria.declare(seat_id=gm.pk, roll=roll.seq)
    assert code(lambda: zoria.ask_insight(seat_id=ana.pk, subject="the seal")) == "conflict"


# --- the initiative phase: an initiative roll is set once the phase begins ------------------


def test_initiative_rolls_are_augmented_only_before_the_initiative_phase(table):
    ana, bo = sit(table, "Ana", "Kael"), sit(table, "Bo", "Ysolde")
    gm = gm_stack(table)[1]
    session = table["session"]
    kael, ysolde = table["c"]["Kael"], table["c"]["Ysolde"]
    first = rolled(
        seat_id=ana.pk,
        request={"check": "1d20+2", "action_dice": ["d6"]},
        character=kael.pk,
        options={"initiative": True},
    )
    assert first.data["initiative"] is True and first.data["open_roll"]["open"]
    zoria.use_die(seat_id=ana.pk, roll=first.seq)  # before the phase: as it is made
    hidden = rolled(
        seat_id=bo.pk,
        request={"check": "1d20"},
        character=ysolde.pk,
        options={"initiative": True},
        visibility="gm",
    )
    attack = rolled(seat_id=bo.pk, request={"check": "1d20"}, character=ysolde.pk)
    # Players do not run the phase.
    assert code(lambda: zoria.initiative_phase(seat_id=ana.pk, on=True)) == "forbidden"
    began = zoria.initiative_phase(seat_id=gm.pk, on=True)
    assert began.data["table"]["initiative"] is True
    closes = Event.objects.filter(session=session, kind="roll.close", seq__gt=began.seq)
    assert [(e.data["roll"], e.visibility) for e in closes.order_by("seq")] == [
        (first.seq, "public"),
        (hidden.seq, "gm"),  # as hidden as the check
    ]
    # Set: no die used on it, no re-roll; other checks stay open to augment.
    for call in (
        lambda: zoria.use_die(seat_id=ana.pk, roll=first.seq),
        lambda: zoria.spend_dice(seat_id=ana.pk, effect="reroll", roll=first.seq),
        lambda: zoria.use_die(seat_id=bo.pk, roll=hidden.seq),
    ):
        with pytest.raises(ServiceError) as refused:
            call()
        assert refused.value.code == "conflict" and "initiative" in refused.value.message
    zoria.use_die(seat_id=bo.pk, roll=attack.seq)
    # An initiative roll made during the phase is set as it falls: no action dice on it.
    late = {"request": {"check": "1d20"}, "character": kael.pk, "options": {"initiative": True}}
    with pytest.raises(ServiceError) as augmented:
        rolled(seat_id=ana.pk, **{**late, "request": {"check": "1d20", "action_dice": ["d6"]}})
    assert augmented.value.field == "request.action_dice"
    set_now = rolled(seat_id=ana.pk, **late)
    assert set_now.data["open_roll"]["open"] is False
    assert not OpenRoll.objects.get(session=session, seq=set_now.seq).is_open
    assert code(lambda: zoria.use_die(seat_id=ana.pk, roll=set_now.seq)) == "conflict"
    assert code(lambda: zoria.initiative_phase(seat_id=gm.pk, on=True)) == "conflict"
    # After the phase, the next initiative roll may be augmented as it is made again.
    zoria.initiative_phase(seat_id=gm.pk, on=False)
    again = rolled(seat_id=ana.pk, **late)
    zoria.use_die(seat_id=ana.pk, roll=again.seq)
