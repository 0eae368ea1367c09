"""The other systems' table rules (docs/rules.md, "Each system's reading") and what every system
owes the end of a session: rounds and scenes, the Discord Die once a round, a character point for
the round, NPCs' action dice, defense actions against named opponents, restricted action dice."""

from __future__ import annotations

import pytest

from rules.engines import FairStream
from tabletop.models import Character, Event, GameSession
from tabletop.models.pools import Pool, PoolKind
from tabletop.services.errors import ServiceError
from tabletop.services.seats import join_session
from tabletop.services.sessions import end_session
from tabletop.systems import registry
from tabletop.systems.roll_and_keep.models import ExtendedAction

from .commands import rolled, send
from .test_pools_resources import amount, code, setup_table

pytestmark = pytest.mark.django_db


def table_state(session):
    return GameSession.objects.get(pk=session.pk).table_state


# --- discordian -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["round", "scene"])
def test_the_discord_die_is_rolled_once_a_round_or_scene_not_at_will(gm, mode):
    session, _, _, gm_at = setup_table(gm, "discordian", {"Eris": {"hero_dice": ["d6"]}})
    session.campaign.settings = {"discord_mode": mode}
    session.campaign.save()
    GameSession.objects.filter(pk=session.pk).update(table_state={})
    send(gm_at, "discord.roll", client_seed="a")
    assert code(lambda: send(gm_at, "discord.roll", client_seed="b")) == "conflict"
    send(gm_at, "round.new")
    if mode == "round":  # rolled as the round began: not again this round
        assert code(lambda: send(gm_at, "discord.roll", client_seed="c")) == "conflict"
    else:
        assert code(lambda: send(gm_at, "discord.roll", client_seed="c")) == "conflict"
        send(gm_at, "scene.new")
        send(gm_at, "discord.roll", client_seed="c")


@pytest.mark.parametrize("mode", ["round", "scene"])
def test_a_wandered_discord_die_stays_away_until_the_next_scene(gm, mode):
    session, _, _, gm_at = setup_table(gm, "discordian", {"Eris": {"hero_dice": ["d6"]}})
    session.campaign.settings = {"discord_mode": mode}
    session.campaign.save()
    gone = {"value": None, "wandered": True, "scene": 0, "round": 0}
    GameSession.objects.filter(pk=session.pk).update(table_state={"discord": gone})
    send(gm_at, "round.new")
    assert code(lambda: send(gm_at, "discord.roll")) == "conflict"
    assert table_state(session)["discord"]["value"] is None
    send(gm_at, "scene.new")
    if mode == "round":
        send(gm_at, "discord.roll")
    else:  # in scene mode it is gone for the adventure
        assert code(lambda: send(gm_at, "discord.roll")) == "conflict"


def test_in_round_mode_the_discord_die_is_rolled_as_the_round_begins(gm):
    session, (eris,), (ana,), gm_at = setup_table(gm, "discordian", {"Eris": {"hero_dice": ["d6"]}})
    # A fixed server seed: with a fresh one, a Discord Die that wanders off (a 20, then a 3: one
    # roll in 400) before round 1 or 2 left that round with no die to check, now and then.
    GameSession.objects.filter(pk=session.pk).update(server_seed=bytes(range(32)))
    session.refresh_from_db()
    send(gm_at, "discord.roll", client_seed="a")  # before any round: once
    for number in (1, 2):
        began = send(gm_at, "round.new", client_seed=f"r{number}")
        stream = FairStream(bytes(session.server_seed), f"r{number}", began.seq)
        assert began.data["dice"][0]["value"] == stream.roll(20)
        discord = table_state(session)["discord"]
        assert (discord["seq"], discord["round"]) == (began.seq, number)
        assert began.data["discord"] == discord
        if discord["value"] is not None:
            roll = rolled(seat_id=ana.pk, request={"pool": ["d6"]}, character=eris.pk)
            assert roll.data["request"]["discord"] == discord["value"]
    # In scene mode the round leaves the scene's die as it is.
    session.campaign.settings = {"discord_mode": "scene"}
    session.campaign.save()
    before = table_state(session)["discord"]
    assert "dice" not in send(gm_at, "round.new").data
    assert table_state(session)["discord"] == before


def test_a_pvp_opponents_protection_costs_the_opponents_instant_karma(gm):
    sheets = {
        "Eris": {"hero_dice": ["d6"], "instant_karma": 1},
        "Bob": {"hero_dice": ["d6"], "instant_karma": 1},
    }
    session, (eris, bob), (ana, _), gm_at = setup_table(gm, "discordian", sheets)
    GameSession.objects.filter(pk=session.pk).update(table_state={"discord": {"value": 3}})
    guarded = {"pool": ["d6"], "opponent": {"pool": ["d6"], "protect": 2}}
    # Whose Instant Karma would it be? The roll must name the opponent's character.
    with pytest.raises(ServiceError) as unnamed:
        rolled(seat_id=gm_at.pk, request=guarded, character=eris.pk)
    assert unnamed.value.field == "opponent_character"
    versus = {"opponent_character": bob.pk}
    # Bob holds 1 Instant Karma: protecting 2 dice is refused before any die is drawn.
    assert (
        code(lambda: rolled(seat_id=gm_at.pk, request=guarded, character=eris.pk, options=versus))
        == "conflict"
    )
    # Ana cannot spend Bob's Instant Karma; Bob's player (or the GM) can.
    once = {"pool": ["d6"], "opponent": {"pool": ["d6"], "protect": 1}}
    assert (
        code(lambda: rolled(seat_id=ana.pk, request=once, character=eris.pk, options=versus))
        == "forbidden"
    )
    seq = GameSession.objects.get(pk=session.pk).last_seq + 1
    server_seed = bytes(session.server_seed)
    seed = next(  # Eris's d6 shows 4, Bob's shows 3: the Discord Die meets Bob's
        f"p{i}"
        for i in range(20000)
        if (lambda d: d.roll(6) == 4 and d.roll(6) == 3)(FairStream(server_seed, f"p{i}", seq))
    )
    roll = rolled(
        seat_id=gm_at.pk, request=once, character=eris.pk, options=versus, client_seed=seed
    )
    assert roll.data["opponent"]["protected"] == 1
    assert (amount(bob, "instant_karma"), amount(eris, "instant_karma")) == (0, 1)
    spend = Event.objects.get(session=session, kind="pool", data__use="protect")
    assert spend.data["character"]["id"] == bob.pk and spend.data["amount"] == 1


def test_a_characters_roll_is_checked_against_its_sheet(gm):
    sheets = {
        "Eris": {
            "hero_dice": ["d6", "d8"],
            "tropes": {"Trickster": 8},
            "trademarks": {"Lockpicks": 6},
            "luck_die": "d10",
            "instant_karma": 0,
        },
        "Bob": {"hero_dice": ["d6"], "infinite_fives": True},
    }
    session, (eris, bob), (ana, bo), gm_at = setup_table(gm, "discordian", sheets)
    before = GameSession.objects.get(pk=session.pk).last_seq

    def roll(request, seat=ana, who=eris, **options):
        return rolled(seat_id=seat.pk, request=request, character=who.pk, options=options)

    def refused(request, seat=ana, who=eris, **options):
        with pytest.raises(ServiceError) as err:
            roll(request, seat, who, **options)
        return err.value.code, err.value.field

    # The reproduced cheat: one character's pool and Infinite Fives taken as given.
    cheat = {"pool": ["d6", "d8", "d8", "d12", "d12"], "infinite_fives": True}
    assert refused(cheat) == ("invalid", "request.pool")
    assert refused({"pool": ["d6"]}) == ("invalid", "request.pool")  # every Hero Die
    assert refused({"pool": ["d6", "d8", "d8", "d8"]}) == ("invalid", "request.pool")
    assert refused({"pool": ["d6", "d8"], "infinite_fives": True}) == (
        "invalid",
        "request.infinite_fives",
    )
    # Luck dice cost 1 Instant Karma each: Eris has none.
    assert refused({"pool": ["d6", "d8"]}, luck_dice=1) == ("conflict", None)
    # The GM's roll for Eris is checked the same way.
    assert refused(cheat, seat=gm_at) == ("invalid", "request.pool")
    assert GameSession.objects.get(pk=session.pk).last_seq == before  # nothing stored
    # What the sheet allows: Hero Dice, a trope die, a trademark die; its own luck die.
    full = roll({"pool": ["d8", "d6", "d8", "d6"], "luck_die": "d12"})
    assert full.data["request"]["luck_die"] == "d10"
    assert roll({"pool": ["d6"], "infinite_fives": True}, seat=bo, who=bob).data["infinite_fives"]
    # The GM's roll for nobody (an NPC's pool as the GM makes it) is the GM's.
    free = rolled(seat_id=gm_at.pk, request=cheat)
    assert free.data["request"]["pool"] == cheat["pool"]


def test_several_luck_dice_at_one_instant_karma_each(gm):
    session, (eris,), (ana,), _ = setup_table(
        gm, "discordian", {"Eris": {"hero_dice": ["d6"], "luck_die": "d8", "instant_karma": 3}}
    )
    roll = rolled(
        seat_id=ana.pk, request={"pool": ["d6"]}, character=eris.pk, options={"luck_dice": 3}
    )
    assert roll.data["request"]["pool"] == ["d6", "d8", "d8", "d8"]
    assert amount(eris, "instant_karma") == 0
    spend = Event.objects.get(session=session, seq=roll.seq - 1)
    assert (spend.data["use"], spend.data["amount"]) == ("add-luck-die", 3)
    with pytest.raises(ServiceError) as err:
        rolled(
            seat_id=ana.pk, request={"pool": ["d6"]}, character=eris.pk, options={"luck_dice": 1}
        )
    assert err.value.code == "conflict"


def test_the_gms_bonus_dice_join_the_characters_next_roll(gm):
    _, (eris,), (ana,), gm_at = setup_table(gm, "discordian", {"Eris": {"hero_dice": ["d6"]}})
    assert code(lambda: send(ana, "bonus.award", character=eris.pk, dice=["d8"])) == "forbidden"
    award = send(gm_at, "bonus.award", character=eris.pk, dice=["d8", "d12", "d8"])
    assert award.data["count"] == 3 and award.visibility == "public"
    stacks = Pool.objects.filter(character=eris, kind=PoolKind.BONUS_DICE)
    assert {(s.sides, s.remaining, s.seat_id) for s in stacks} == {(8, 2, ana.pk), (12, 1, ana.pk)}
    first = rolled(seat_id=ana.pk, request={"pool": ["d6"]}, character=eris.pk)
    assert sorted(first.data["request"]["pool"]) == ["d12", "d6", "d8", "d8"]
    assert sum(s.remaining for s in stacks.all()) == 0
    nxt = rolled(seat_id=ana.pk, request={"pool": ["d6"]}, character=eris.pk)
    assert nxt.data["request"]["pool"] == ["d6"]
    send(gm_at, "bonus.award", character=eris.pk, dice=["d4"])
    send(gm_at, "bonus.take-back", character=eris.pk)
    assert rolled(seat_id=ana.pk, request={"pool": ["d6"]}, character=eris.pk).data["request"][
        "pool"
    ] == ["d6"]
    assert code(lambda: send(gm_at, "bonus.take-back", character=eris.pk)) == "conflict"


# --- roll-and-keep -----------------------------------------------------------------------


def test_an_extended_action_may_ask_successes_of_each_round_of_rolling(gm):
    session, (mirela,), (ana,), gm_at = setup_table(gm, "roll-and-keep", {"Mirela": {}})
    with pytest.raises(ServiceError) as err:
        send(gm_at, "extended.open", label="Research", target=3, each=4)
    assert err.value.field == "each"
    send(gm_at, "extended.open", label="Research", target=6, each=2)
    action = ExtendedAction.objects.get(session=session)
    counted = 0
    for i in range(60):
        roll = rolled(
            seat_id=ana.pk,
            request={"roll": 4, "keep": 2, "difficulty": 7},
            character=mirela.pk,
            client_seed=f"e{i}",
            options={"extended": action.pk},
        )
        progress = Event.objects.get(session=session, kind="pool", seq=roll.seq + 1)
        successes = roll.data["successes"]
        assert progress.data["gained"] == (successes if successes >= 2 else 0)
        counted += progress.data["gained"]
        if successes < 2:
            assert "short of the 2 needed this round" in progress.data["text"]
        action.refresh_from_db()
        if not action.is_open:
            break
    assert action.progress == counted >= 6 and not action.is_open


# --- d6-chance ------------------------------------------------------------------------------


def test_a_character_point_lasts_the_round_and_is_paid_once(gm):
    _, (sera,), (ana,), gm_at = setup_table(gm, "d6-chance", {"Sera": {"character_points": 3}})
    send(gm_at, "round.new")
    first = rolled(seat_id=ana.pk, request={"dice": 3, "character_point": True}, character=sera.pk)
    second = rolled(seat_id=ana.pk, request={"dice": 3}, character=sera.pk)
    assert first.data["request"]["character_point"] and second.data["request"]["character_point"]
    assert amount(sera, "character_points") == 2
    send(gm_at, "round.new")
    plain = rolled(seat_id=ana.pk, request={"dice": 3}, character=sera.pk)
    assert not plain.data["request"]["character_point"]
    rolled(seat_id=ana.pk, request={"dice": 3, "character_point": True}, character=sera.pk)
    assert amount(sera, "character_points") == 1


def test_a_character_point_for_a_long_action_lasts_that_roll(gm):
    _, (sera,), (ana,), gm_at = setup_table(gm, "d6-chance", {"Sera": {"character_points": 3}})
    send(gm_at, "round.new")
    long = rolled(
        seat_id=ana.pk,
        request={"dice": 3, "character_point": True},
        character=sera.pk,
        options={"long_action": True},
    )
    after = rolled(seat_id=ana.pk, request={"dice": 3}, character=sera.pk)
    assert long.data["request"]["character_point"] and not after.data["request"]["character_point"]
    assert amount(sera, "character_points") == 2


# --- action-dice ----------------------------------------------------------------------------


def test_npcs_the_gm_runs_get_their_action_dice_each_round(gm):
    session, _, _, gm_at = setup_table(gm, "action-dice", {"Nadia": {"action_dice": 3}})
    orc = Character.objects.create(campaign=session.campaign, name="Orc", sheet={"action_dice": 2})
    send(gm_at, "round.new")
    stack = Pool.objects.get(character=orc, kind=PoolKind.ROUND_DICE)
    assert stack.seat_id == gm_at.pk and stack.remaining == 2
    rolled(seat_id=gm_at.pk, request={"action_dice": 2, "skill_dice": 1}, character=orc.pk)
    stack.refresh_from_db()
    assert stack.remaining == 0
    assert (
        code(
            lambda: rolled(
                seat_id=gm_at.pk, request={"action_dice": 1, "skill_dice": 1}, character=orc.pk
            )
        )
        == "conflict"
    )


def test_a_player_sitting_down_mid_round_does_not_refill_dice_the_gm_spent_for_them(gm):
    session, _, _, gm_at = setup_table(gm, "action-dice", {"Nadia": {"action_dice": 3}})
    kit = Character.objects.create(campaign=session.campaign, name="Kit", sheet={"action_dice": 2})
    send(gm_at, "round.new")  # Kit has no player yet: the GM runs Kit this round
    rolled(seat_id=gm_at.pk, request={"action_dice": 2, "skill_dice": 1}, character=kit.pk)
    session.refresh_from_db()
    late = join_session(session=session, name="Kit's player", character_id=kit.pk).seat
    stack = Pool.objects.get(character=kit, kind=PoolKind.ROUND_DICE)
    assert (stack.seat_id, stack.remaining) == (late.pk, 0)


def test_defense_actions_name_their_opponents_and_a_second_does_not_replace_the_first(gm):
    session, (nadia,), (ana,), gm_at = setup_table(gm, "action-dice", {"Nadia": {"action_dice": 4}})
    send(gm_at, "round.new")

    def defend(**options):
        return rolled(
            seat_id=ana.pk,
            request={"action_dice": 1, "skill_dice": 2},
            character=nadia.pk,
            options=options,
        )

    with pytest.raises(ServiceError) as unnamed:
        defend(defense="action")
    assert unnamed.value.field == "opponent"
    orc = defend(defense="action", opponent="Orc")
    troll = defend(defense="action", opponent="Troll")
    mine = table_state(session)["defense"][str(nadia.pk)]
    assert mine["actions"] == {"Orc": orc.data["total"], "Troll": troll.data["total"]}
    general = defend(defense="general")
    mine = table_state(session)["defense"][str(nadia.pk)]
    half = general.data["total"] // 2
    assert mine["against_everyone_else"] == half
    assert mine["against_opponent"] == {
        "Orc": max(orc.data["total"], half),
        "Troll": max(troll.data["total"], half),
    }


def test_restricted_action_dice_only_for_rolls_naming_their_class_or_skill(gm):
    _, (nadia,), (ana,), gm_at = setup_table(
        gm, "action-dice", {"Nadia": {"action_dice": 1, "restricted_dice": {"Fencing": 2}}}
    )
    send(gm_at, "round.new")
    stacks = Pool.objects.filter(character=nadia, kind=PoolKind.ROUND_DICE)
    assert {(s.label, s.remaining) for s in stacks} == {("", 1), ("Fencing", 2)}

    def roll(dice, **options):
        return rolled(
            seat_id=ana.pk,
            request={"action_dice": dice, "skill_dice": 1},
            character=nadia.pk,
            options=options,
        )

    assert code(lambda: roll(2)) == "conflict"  # a roll naming no class: general dice only
    roll(2, restricted="Fencing")  # the restricted dice first
    assert {(s.label, s.remaining) for s in stacks.all()} == {("", 1), ("Fencing", 0)}
    roll(1, restricted="Fencing")  # then the general one
    assert sum(s.remaining for s in stacks.all()) == 0


def test_a_group_attack_reads_as_words_in_the_log(gm):
    session, (nadia,), (ana,), gm_at = setup_table(gm, "action-dice", {"Nadia": {"action_dice": 3}})
    send(gm_at, "round.new")
    roll = rolled(
        seat_id=ana.pk,
        request={"action_dice": 1, "skill_dice": 2},
        character=nadia.pk,
        options={"group_extra": 1},
    )
    attack = Event.objects.get(session=session, kind="pool", data__action="group-attack")
    assert attack.data["per_member"] == roll.data["total"] // 2
    assert "{" not in attack.data["text"] and "x2 targets" in attack.data["text"]


# --- every system: nothing changes after the end --------------------------------------------

AFTER_THE_END = [
    ("zoria", "pool.use", {"roll": 1}),
    ("zoria", "pool.spend", {"effect": "insight", "note": "x"}),
    ("zoria", "pool.award", {"seat": 0}),
    ("zoria", "pool.undo-award", {}),
    ("zoria", "pool.refund", {"roll": 1}),
    ("zoria", "pool.lucky-break", {}),
    ("zoria", "roll.close", {"roll": 1}),
    ("zoria", "insight.ask", {"subject": "the seal"}),
    ("zoria", "insight.answer", {"ask": 1, "grant": True}),
    ("zoria", "initiative.begin", {}),
    ("zoria", "initiative.end", {}),
    ("discordian", "discord.roll", {}),
    ("discordian", "round.new", {}),
    ("discordian", "scene.new", {}),
    ("discordian", "resource.spend", {"character": 0, "use": "extra-success", "roll": 1}),
    ("discordian", "resource.award", {"character": 0, "name": "luck"}),
    ("discordian", "bonus.award", {"character": 0, "dice": ["d8"]}),
    ("discordian", "bonus.take-back", {"character": 0}),
    ("d6-chance", "round.new", {}),
    ("d6-chance", "resource.spend", {"character": 0, "use": "survive"}),
    ("d6-chance", "resource.award", {"character": 0, "name": "character_points"}),
    ("d6-chance", "actions.declare", {"character": 0, "actions": 2}),
    ("action-dice", "round.new", {}),
    ("roll-and-keep", "extended.open", {"label": "Climb", "target": 3}),
    ("roll-and-keep", "extended.close", {"extended": 1}),
]


def test_every_system_command_is_covered_here():
    declared = {(s, c.type) for s in registry._SYSTEMS for c in registry.commands_for(s)}
    assert declared == {(s, kind) for s, kind, _ in AFTER_THE_END}


@pytest.mark.parametrize(("system", "kind", "fields"), AFTER_THE_END)
def test_after_the_end_no_system_command_changes_anything(gm, system, kind, fields):
    sheet = {"level": 3, "character_points": 2, "luck": 2, "hero_dice": ["d6"]}
    session, (hero,), (ana,), gm_at = setup_table(gm, system, {"Hero": sheet})
    roll = rolled(seat_id=ana.pk, request=REQUESTS[system], character=hero.pk, visibility="gm")
    ids = {"roll": roll.seq, "seat": ana.pk, "character": hero.pk, "extended": 1}
    fields = {k: ids.get(k, v) for k, v in fields.items()}
    end_session(session_id=session.pk)
    before = GameSession.objects.get(pk=session.pk).last_seq
    sender = gm_at if registry.command(system, kind).gm_only or kind == "roll.close" else ana
    assert code(lambda: send(sender, kind, **fields)) == "conflict"
    assert code(lambda: send(gm_at, "reveal", seq=roll.seq)) == "conflict"
    assert GameSession.objects.get(pk=session.pk).last_seq == before


REQUESTS = {
    "zoria": {"check": "1d20"},
    "discordian": {"pool": ["d6"], "tn": 4},
    "d6-chance": {"dice": 2},
    "action-dice": {"action_dice": 1, "skill_dice": 1},
    "roll-and-keep": {"roll": 3, "keep": 2, "difficulty": 6},
}


def test_outside_rounds_a_character_point_lasts_one_roll(gm):
    _, (sera,), (ana,), gm_at = setup_table(gm, "d6-chance", {"Sera": {"character_points": 3}})
    first = rolled(seat_id=ana.pk, request={"dice": 3, "character_point": True}, character=sera.pk)
    later = [rolled(seat_id=ana.pk, request={"dice": 3}, character=sera.pk) for _ in "ab"]
    assert first.data["request"]["character_point"]
    assert not any(r.data["request"]["character_point"] for r in later)
    assert amount(sera, "character_points") == 2
    # Once the GM runs rounds, a point lasts the round.
    send(gm_at, "round.new")
    rolled(seat_id=ana.pk, request={"dice": 3, "character_point": True}, character=sera.pk)
    again = rolled(seat_id=ana.pk, request={"dice": 3}, character=sera.pk)
    assert again.data["request"]["character_point"] and amount(sera, "character_points") == 1


def test_every_action_dice_roll_is_some_characters_and_pays_from_its_round_dice(gm):
    session, (nadia, kit), (ana, bo), gm_at = setup_table(
        gm, "action-dice", {"Nadia": {"action_dice": 2}, "Kit": {"action_dice": 2}}
    )
    request = {"action_dice": 2, "skill_dice": 1}
    # Outside rounds too the roll is the character's (no round dice to pay from then).
    assert rolled(seat_id=ana.pk, request=request).data["character"]["id"] == nadia.pk
    send(gm_at, "round.new")
    # Naming nobody, the seat's only character rolls and pays.
    roll = rolled(seat_id=ana.pk, request=request)
    assert roll.data["character"] == {"id": nadia.pk, "name": "Nadia"}
    assert Pool.objects.get(character=nadia, kind=PoolKind.ROUND_DICE).remaining == 0
    before = GameSession.objects.get(pk=session.pk).last_seq
    group = {"action_dice": 1, "skill_dice": 1}
    assert code(lambda: rolled(seat_id=ana.pk, request=request)) == "conflict"
    attack = dict(request=group, options={"group_extra": 3})
    assert code(lambda: rolled(seat_id=ana.pk, **attack)) == "conflict"
    assert GameSession.objects.get(pk=session.pk).last_seq == before  # nothing stored
    # A seat with several characters names one; the GM always names one.
    bo.characters.add(nadia)
    with pytest.raises(ServiceError) as several:
        rolled(seat_id=bo.pk, request=group)
    assert several.value.field == "character"
    with pytest.raises(ServiceError) as nobody:
        rolled(seat_id=gm_at.pk, request=group)
    assert nobody.value.field == "character"
    assert rolled(seat_id=bo.pk, request=group, character=kit.pk).data["character"]["id"] == (
        kit.pk
    )


def test_after_the_end_no_roll_option_spends_anything(gm):
    sheets = {"Eris": {"hero_dice": ["d6"], "instant_karma": 3}, "Bob": {"instant_karma": 3}}
    session, (eris, bob), (ana, _), gm_at = setup_table(gm, "discordian", sheets)
    send(gm_at, "bonus.award", character=eris.pk, dice=["d8"])
    end_session(session_id=session.pk)
    before = GameSession.objects.get(pk=session.pk).last_seq
    pvp = {"pool": ["d6"], "protect": 1, "opponent": {"pool": ["d6"], "protect": 1}}
    for seat, options in ((ana, {"luck_dice": 2}), (gm_at, {"opponent_character": bob.pk})):
        with pytest.raises(ServiceError) as ended:
            rolled(seat_id=seat.pk, request=pvp, character=eris.pk, options=options)
        assert ended.value.code == "conflict"
    assert GameSession.objects.get(pk=session.pk).last_seq == before
    assert (amount(eris, "instant_karma"), amount(bob, "instant_karma")) == (3, 3)


# --- roll-and-keep: a botched action cannot be repeated -------------------------------------


def seed_for(session, *values, sides=10):
    """A client seed whose next roll's first dice show ``values``."""
    seq = GameSession.objects.get(pk=session.pk).last_seq + 1
    server_seed = bytes(session.server_seed)
    return next(
        f"v{i}"
        for i in range(20000)
        if (lambda s: all(s.roll(sides) == v for v in values))(
            FairStream(server_seed, f"v{i}", seq)
        )
    )


def test_a_botched_action_cannot_be_repeated_by_its_character(gm):
    session, (mirela, tobiah), (ana, bo), gm_at = setup_table(
        gm, "roll-and-keep", {"Mirela": {}, "Tobiah": {}}
    )
    hopeless = {"roll": 1, "keep": 1, "difficulty": 11}
    botched = rolled(
        seat_id=ana.pk,
        request=hopeless,
        character=mirela.pk,
        label="Climb the wall",
        client_seed=seed_for(session, 1),
    )
    assert botched.data["flags"] == ["botch"]
    mark = Event.objects.get(session=session, seq=botched.seq + 1)
    assert mark.data["action"] == "botch" and mark.data["what"] == "Climb the wall"
    before = GameSession.objects.get(pk=session.pk).last_seq
    # The same action, however it is spelt, is refused, by whoever rolls for her.
    for seat, label in ((ana, "climb the  wall!"), (gm_at, "CLIMB THE WALL")):
        with pytest.raises(ServiceError) as again:
            rolled(seat_id=seat.pk, request=hopeless, character=mirela.pk, label=label)
        assert (again.value.code, again.value.field) == ("conflict", "label")
        assert "cannot be repeated" in again.value.message
    assert GameSession.objects.get(pk=session.pk).last_seq == before
    # Another action, or another character's climb, goes ahead; a plain failure bars nothing.
    rolled(seat_id=ana.pk, request=hopeless, character=mirela.pk, label="Swim the moat")
    rolled(seat_id=bo.pk, request=hopeless, character=tobiah.pk, label="Climb the wall")
    failed = rolled(
        seat_id=bo.pk,
        request=hopeless,
        character=tobiah.pk,
        label="Pick the lock",
        client_seed=seed_for(session, 5),
    )
    assert failed.data["flags"] == []
    rolled(seat_id=bo.pk, request=hopeless, character=tobiah.pk, label="Pick the lock")


def test_a_botch_on_a_hidden_roll_bars_only_whoever_sees_it_until_revealed(gm):
    session, (mirela,), (ana,), gm_at = setup_table(gm, "roll-and-keep", {"Mirela": {}})
    hopeless = {"roll": 1, "keep": 1, "difficulty": 11}
    botched = rolled(
        seat_id=gm_at.pk,
        request=hopeless,
        character=mirela.pk,
        label="Climb",
        visibility="gm",
        client_seed=seed_for(session, 1),
    )
    mark = Event.objects.get(session=session, seq=botched.seq + 1)
    assert mark.visibility == "gm" and mark.data["action"] == "botch"
    # Ana cannot see the GM's roll: her climb is not refused (that would tell of the botch).
    rolled(seat_id=ana.pk, request=hopeless, character=mirela.pk, label="Climb")
    assert (
        code(lambda: rolled(seat_id=gm_at.pk, request=hopeless, character=mirela.pk, label="Climb"))
        == "conflict"
    )
    send(gm_at, "reveal", seq=botched.seq)
    assert (
        code(lambda: rolled(seat_id=ana.pk, request=hopeless, character=mirela.pk, label="Climb"))
        == "conflict"
    )


# --- d6-chance: actions declared per round --------------------------------------------------


def test_every_roll_of_a_round_takes_the_penalty_of_the_declared_actions(gm):
    session, (sera,), (ana,), gm_at = setup_table(gm, "d6-chance", {"Sera": {}})
    # Outside rounds there is nothing to declare for.
    assert code(lambda: send(ana, "actions.declare", character=sera.pk, actions=2)) == "conflict"
    send(gm_at, "round.new")
    declared = send(ana, "actions.declare", character=sera.pk, actions=2)
    assert table_state(session)["declared"] == {str(sera.pk): 2}
    assert declared.data["table"]["declared"] == {str(sera.pk): 2}
    # The declaration stands for the round: no second one.
    assert code(lambda: send(ana, "actions.declare", character=sera.pk, actions=1)) == "conflict"
    # Both declared actions take the 3D penalty of two actions, whatever the roll asked.
    first = rolled(seat_id=ana.pk, request={"dice": 6, "actions": 1}, character=sera.pk)
    dodge = rolled(
        seat_id=ana.pk, request={"dice": 6}, character=sera.pk, options={"defense": True}
    )
    assert [r.data["request"]["actions"] for r in (first, dodge)] == [2, 2]
    assert first.data["base_dice"] == dodge.data["base_dice"] == 3
    staged = Event.objects.get(session=session, seq=dodge.seq - 1)
    assert (staged.data["taken"], staged.data["declared"], staged.data["defense"]) == (2, 2, True)
    # Both taken (the dodge was one of them): a third action is refused, nothing stored ...
    before = GameSession.objects.get(pk=session.pk).last_seq
    with pytest.raises(ServiceError) as third:
        rolled(seat_id=ana.pk, request={"dice": 6}, character=sera.pk)
    assert (third.value.code, third.value.field) == ("conflict", "defense")
    assert GameSession.objects.get(pk=session.pk).last_seq == before
    # ... but a defense is allowed, at the penalty of one action more, then one more again.
    for actions in (3, 4):
        extra = rolled(
            seat_id=ana.pk, request={"dice": 12}, character=sera.pk, options={"defense": True}
        )
        assert extra.data["request"]["actions"] == actions
    # A defense that would leave no base dice cannot be made, even with bonuses.
    with pytest.raises(ServiceError) as none_left:
        rolled(
            seat_id=ana.pk,
            request={"dice": 12, "bonus": 3},
            character=sera.pk,
            options={"defense": True},
        )
    assert none_left.value.field == "request.actions"
    # The next round starts over: no declaration, the roll's own actions.
    send(gm_at, "round.new")
    assert "declared" not in table_state(session)
    free = rolled(seat_id=ana.pk, request={"dice": 6, "actions": 1}, character=sera.pk)
    assert free.data["request"]["actions"] == 1


def test_a_player_declares_only_for_their_own_character_and_the_gm_for_any(gm):
    session, (_, dorrik), (ana, _), gm_at = setup_table(gm, "d6-chance", {"Sera": {}, "Dorrik": {}})
    send(gm_at, "round.new")
    assert code(lambda: send(ana, "actions.declare", character=dorrik.pk, actions=2)) == (
        "forbidden"
    )
    send(gm_at, "actions.declare", character=dorrik.pk, actions=3)
    assert table_state(session)["declared"] == {str(dorrik.pk): 3}


def test_an_action_taken_by_a_hidden_roll_counts_for_whoever_sees_it(gm):
    session, (sera,), (ana,), gm_at = setup_table(gm, "d6-chance", {"Sera": {}})
    send(gm_at, "round.new")
    send(gm_at, "actions.declare", character=sera.pk, actions=1)
    secret = rolled(seat_id=gm_at.pk, request={"dice": 4}, character=sera.pk, visibility="gm")
    staged = Event.objects.get(session=session, seq=secret.seq - 1)
    assert staged.data["action"] == "staged" and staged.visibility == "gm"
    # Ana does not see the GM's roll: her action is her first (refusing it would tell).
    assert (
        rolled(seat_id=ana.pk, request={"dice": 4}, character=sera.pk).data["request"]["actions"]
        == 1
    )
    # The GM saw both: only a defense now.
    assert (
        code(lambda: rolled(seat_id=gm_at.pk, request={"dice": 4}, character=sera.pk)) == "conflict"
    )
