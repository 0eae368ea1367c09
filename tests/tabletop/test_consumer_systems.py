"""Who may not do what at each system's table, over the room socket, with the error code: the
system's commands exist only at its own tables, GM-only ones refuse players, the seeds' rules
refuse the rest, and after the end nothing is accepted."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from rules.engines import FairStream
from tabletop.models import GameSession

from .test_consumer_pools import ask, drain, granted, seats, table

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def seed_for_natural(code: str, natural: int) -> str:
    """A client seed whose next check's natural d20 shows ``natural``."""
    session = GameSession.objects.get(invite_code=code)
    seq = session.last_seq + 1
    server_seed = bytes(session.server_seed)
    return next(
        f"n{i}" for i in range(3000) if FairStream(server_seed, f"n{i}", seq).roll(20) == natural
    )


async def test_zoria_refusals_over_the_socket():
    t = await table("zoria", {"Kael": {"level": 7}, "Ysolde": {"level": 12}})
    gm, [(ana, hello), (bo, _)] = await seats(t)
    kael = t["chars"][0].pk

    async def check(who, ref, natural=10, **request):
        seed = await seed_for_natural(t["code"], natural)
        message = {"type": "roll", "ref": ref, "character": kael, "client_seed": seed}
        return await ask(who, {**message, "request": {"check": "1d20", **request}})

    # Action dice the pool does not hold: refused, whoever asks.
    free = await ask(
        ana,
        {
            "type": "roll",
            "ref": "f",
            "character": kael,
            "request": {"check": "1d20", "action_dice": ["d24"]},
        },
    )
    assert free["code"] == "conflict"
    # A special botch (failing by 5 or more, no natural 1) is the GM's; never one's own.
    special = await check(ana, "s", natural=10, dc=20)
    assert special["data"]["flags"] == ["special-botch-threat"]
    botch = {"type": "pool.spend", "effect": "activate-botch", "roll": special["seq"]}
    assert (await ask(bo, {**botch, "ref": "b1"}))["code"] == "forbidden"
    assert (await ask(ana, {**botch, "ref": "b2"}))["code"] == "forbidden"
    natural = await check(ana, "n", natural=1)
    own = {"type": "pool.spend", "effect": "activate-botch", "roll": natural["seq"], "ref": "b3"}
    assert (await ask(ana, own))["code"] == "forbidden"
    assert (await ask(bo, {**own, "ref": "b4"}))["kind"] == "pool"
    # An activated botch cannot be re-rolled.
    reroll = {"type": "pool.spend", "effect": "reroll-botch", "roll": natural["seq"], "ref": "rb"}
    assert (await ask(ana, reroll))["code"] == "conflict"
    # The GM's tools refuse players.
    seat = hello["seat"]["id"]
    for message in (
        {"type": "pool.refund", "roll": natural["seq"]},
        {"type": "pool.undo-award"},
        {"type": "pool.award", "seat": seat},
    ):
        assert (await ask(bo, {**message, "ref": "g"}))["code"] == "forbidden"
    # Other systems' actions do not exist here.
    elsewhere = await ask(gm, {"type": "discord.roll", "ref": "d"})
    assert elsewhere["code"] == "invalid" and elsewhere["field"] == "type"
    # A self roll: the GM cannot see it to declare it; its roller closes it.
    mine = await ask(
        ana,
        {
            "type": "roll",
            "ref": "m",
            "visibility": "self",
            "character": kael,
            "request": {"check": "1d20"},
        },
    )
    close = {"type": "roll.close", "roll": mine["seq"]}
    assert (await ask(gm, {**close, "ref": "c1"}))["code"] == "not-found"
    assert (await ask(ana, {**close, "ref": "c2"}))["kind"] == "roll.close"
    # After the end nothing changes: no spend, no use, no reveal.
    await ask(gm, {"type": "session.end", "ref": "end"})
    assert (await ask(ana, {"type": "pool.spend", "ref": "x1", "effect": "insight", "note": "a"}))[
        "code"
    ] == "conflict"
    assert (await ask(ana, {"type": "pool.lucky-break", "ref": "x2"}))["code"] == "conflict"
    assert (await ask(ana, {"type": "reveal", "ref": "x3", "seq": mine["seq"]}))[
        "code"
    ] == "conflict"
    for comm in (gm, ana, bo):
        await comm.disconnect()


async def test_round_and_resource_refusals_over_the_socket():
    t = await table("d6-chance", {"Sera": {"character_points": 1}})
    gm, [(ana, _)] = await seats(t)
    sera = t["chars"][0].pk
    assert (await ask(ana, {"type": "round.new", "ref": "r"}))["code"] == "forbidden"
    for kind in ("pool.use", "scene.new", "discord.roll", "extended.open"):
        refused = await ask(gm, {"type": kind, "ref": kind})
        assert (refused["code"], refused["field"]) == ("invalid", "type")
    award = {"type": "resource.award", "ref": "aw", "character": sera, "name": "character_points"}
    assert (await ask(ana, award))["code"] == "forbidden"
    await ask(gm, {"type": "session.end", "ref": "end"})
    spend = {"type": "resource.spend", "ref": "sp", "character": sera, "use": "survive"}
    assert (await ask(ana, spend))["code"] == "conflict"
    assert (await ask(gm, {"type": "round.new", "ref": "r2"}))["code"] == "conflict"
    for comm in (gm, ana):
        await comm.disconnect()


async def test_more_refusals_over_the_socket():
    # Zoria: no award after a lucky break; no second insight spend after a failed insight roll;
    # the GM's insight spend reaches the players only as a hidden event.
    t = await table("zoria", {"Kael": {"level": 7}, "Ysolde": {"level": 12}})
    gm, [(ana, _), (bo, _)] = await seats(t)
    kael = t["chars"][0].pk
    bo_seat = await database_sync_to_async(lambda: t["session"].seats.get(name="P1").pk)()
    assert (await ask(bo, {"type": "pool.lucky-break", "ref": "lb"}))["kind"] == "pool"
    award = {"type": "pool.award", "ref": "aw", "seat": bo_seat}
    assert (await ask(gm, award))["code"] == "conflict"
    await granted(gm, ana, "the seal")
    insight = {"type": "roll", "ref": "i", "character": kael, "insight": "the seal"}
    failed = await ask(ana, {**insight, "request": {"check": "1d20", "dc": 99}})
    await ask(gm, {"type": "roll.close", "ref": "c", "roll": failed["seq"]})
    again = {"type": "pool.spend", "ref": "s", "effect": "insight", "note": "The Seal"}
    assert (await ask(ana, again))["code"] == "conflict"
    secret = await ask(gm, {**again, "ref": "gm", "note": "the vizier's plan"})
    assert secret["visibility"] == "gm"
    seen = await ana.receive_json_from(timeout=5)
    while seen.get("seq") != secret["seq"]:
        seen = await ana.receive_json_from(timeout=5)
    assert seen["data"] == {"hidden": True}
    for comm in (gm, ana, bo):
        await comm.disconnect()

    # Discordian: the Discord Die once a round; protection needs the Instant Karma it may cost.
    t = await table("discordian", {"Eris": {"hero_dice": ["d6"], "instant_karma": 1}})
    gm, [(ana, _)] = await seats(t)
    eris = t["chars"][0].pk
    await ask(gm, {"type": "discord.roll", "ref": "d1"})
    assert (await ask(gm, {"type": "discord.roll", "ref": "d2"}))["code"] == "conflict"
    protect = {"pool": ["d6"], "tn": 5, "protect": 2}
    refused = await ask(ana, {"type": "roll", "ref": "p", "character": eris, "request": protect})
    assert refused["code"] == "conflict"
    for comm in (gm, ana):
        await comm.disconnect()

    # Action dice: a defense action names its opponent; no dice beyond the round's.
    t = await table("action-dice", {"Nadia": {"action_dice": 1}})
    gm, [(ana, _)] = await seats(t)
    nadia = t["chars"][0].pk
    await ask(gm, {"type": "round.new", "ref": "n"})
    roll = {"type": "roll", "character": nadia, "request": {"action_dice": 1, "skill_dice": 1}}
    unnamed = await ask(ana, {**roll, "ref": "d", "defense": "action"})
    assert (unnamed["code"], unnamed["field"]) == ("invalid", "opponent")
    assert (await ask(ana, {**roll, "ref": "a", "defense": "action", "opponent": "Orc"}))[
        "kind"
    ] == "roll"
    assert (await ask(ana, {**roll, "ref": "b"}))["code"] == "conflict"
    for comm in (gm, ana):
        await comm.disconnect()


async def zoria_table():
    """Kael (Ana) and Ysolde (Bo) at a live Zoria table, the GM's socket, and ``check``: a
    roll whose natural d20 is chosen."""
    t = await table("zoria", {"Kael": {"level": 7}, "Ysolde": {"level": 12}})
    gm, [(ana, _), (bo, hello_b)] = await seats(t)

    async def check(who, ref, natural, character, **fields):
        seed = await seed_for_natural(t["code"], natural)
        message = {"type": "roll", "ref": ref, "character": character, "client_seed": seed}
        return await ask(who, {"request": {"check": "1d20"}, **message, **fields})

    kael, ysolde = (c.pk for c in t["chars"])
    return gm, ana, bo, hello_b["seat"]["id"], kael, ysolde, check


async def test_zoria_an_activated_botch_survives_every_reroll_over_the_socket():
    gm, ana, bo, _, _, ysolde, check = await zoria_table()
    botch = await check(bo, "b", 1, ysolde)
    spend = {"type": "pool.spend", "roll": botch["seq"]}
    await ask(gm, {**spend, "ref": "ab", "effect": "activate-botch"})
    for effect in ("reroll", "reroll-botch"):
        assert (await ask(bo, {**spend, "ref": effect, "effect": effect}))["code"] == "conflict"
    for comm in (gm, ana, bo):
        await comm.disconnect()


async def test_zoria_dice_on_a_check_the_gm_rolled_for_ones_character_over_the_socket():
    gm, ana, bo, _, kael, _, check = await zoria_table()
    for_kael = await check(gm, "gk", 10, kael)
    used = await ask(ana, {"type": "pool.use", "ref": "u", "roll": for_kael["seq"]})
    assert used["data"]["action"] == "use"
    assert (await ask(bo, {"type": "pool.use", "ref": "x", "roll": for_kael["seq"]}))[
        "code"
    ] == "forbidden"
    for comm in (gm, ana, bo):
        await comm.disconnect()


async def test_zoria_a_failed_insight_roll_for_ones_character_blocks_over_the_socket():
    gm, ana, bo, _, kael, _, check = await zoria_table()
    await granted(gm, ana, "The Seal", "ga")
    await granted(gm, bo, "The Seal", "gb")
    insight = await check(gm, "i", 2, kael, request={"check": "1d20", "dc": 30}, insight="The Seal")
    await ask(gm, {"type": "roll.close", "ref": "c", "roll": insight["seq"]})
    again = {"type": "pool.spend", "ref": "s", "effect": "insight", "note": "the seal."}
    assert (await ask(ana, again))["code"] == "conflict"
    assert (await ask(bo, {**again, "ref": "s2"}))["kind"] == "pool"
    for comm in (gm, ana, bo):
        await comm.disconnect()


async def test_zoria_refunds_only_the_critical_dice_to_their_spender_over_the_socket():
    gm, ana, bo, bo_seat, _, ysolde, check = await zoria_table()
    critical = await check(bo, "cr", 20, ysolde)
    refund = {"type": "pool.refund", "roll": critical["seq"]}
    assert (await ask(gm, {**refund, "ref": "r0"}))["code"] == "conflict"
    await ask(bo, {"type": "pool.spend", "ref": "ac", "effect": "activate-critical",
                   "roll": critical["seq"], "count": 2})  # fmt: skip
    assert (await ask(gm, {**refund, "ref": "r1", "count": 3}))["code"] == "conflict"
    back = await ask(gm, {**refund, "ref": "r2", "count": 2})
    assert (back["data"]["seat"], back["data"]["count"]) == (bo_seat, 2)
    assert (await ask(gm, {**refund, "ref": "r3"}))["code"] == "conflict"
    await ask(gm, {"type": "session.end", "ref": "end"})
    assert (await ask(gm, {**refund, "ref": "r4"}))["code"] == "conflict"
    for comm in (gm, ana, bo):
        await comm.disconnect()


async def test_zoria_the_gms_insight_roll_for_a_villain_is_hidden_over_the_socket():
    gm, ana, bo, _, _, _, _ = await zoria_table()
    villain = await ask(gm, {"type": "roll", "ref": "v", "insight": "the heroes",
                             "request": {"check": "1d20+4", "dc": 15}})  # fmt: skip
    assert villain["visibility"] == "gm"
    seen = await ana.receive_json_from(timeout=5)
    while seen.get("seq") != villain["seq"]:
        seen = await ana.receive_json_from(timeout=5)
    assert seen["data"] == {"hidden": True}
    for comm in (gm, ana, bo):
        await comm.disconnect()


async def test_d6_outside_rounds_a_character_point_lasts_one_roll_over_the_socket():
    t = await table("d6-chance", {"Sera": {"character_points": 2}})
    gm, [(ana, _)] = await seats(t)
    roll = {"type": "roll", "character": t["chars"][0].pk}
    first = await ask(ana, {**roll, "ref": "a", "request": {"dice": 2, "character_point": True}})
    assert first["data"]["request"]["character_point"] is True
    for ref in "bc":
        later = await ask(ana, {**roll, "ref": ref, "request": {"dice": 2}})
        assert later["data"]["request"]["character_point"] is False
    for comm in (gm, ana):
        await comm.disconnect()


async def test_action_dice_a_roll_naming_nobody_pays_from_the_seats_character_over_the_socket():
    t = await table("action-dice", {"Nadia": {"action_dice": 1}})
    gm, [(ana, _)] = await seats(t)
    await ask(gm, {"type": "round.new", "ref": "n"})
    roll = {"type": "roll", "request": {"action_dice": 1, "skill_dice": 1}}
    first = await ask(ana, {**roll, "ref": "a"})
    assert first["data"]["character"]["id"] == t["chars"][0].pk
    assert (await ask(ana, {**roll, "ref": "b"}))["code"] == "conflict"
    attack = {**roll, "ref": "c", "request": {"action_dice": 0, "skill_dice": 1}, "group_extra": 3}
    assert (await ask(ana, attack))["code"] == "conflict"
    nobody = await ask(gm, {**roll, "ref": "d"})
    assert (nobody["code"], nobody["field"]) == ("invalid", "character")
    for comm in (gm, ana):
        await comm.disconnect()


async def test_discordian_the_discord_die_is_rolled_as_the_round_begins_over_the_socket():
    t = await table("discordian", {"Eris": {"hero_dice": ["d6"]}})
    gm, [(ana, _)] = await seats(t)
    began = await ask(gm, {"type": "round.new", "ref": "r", "client_seed": "mine"})
    assert began["data"]["dice"][0]["die"] == "d20" and began["data"]["client_seed"] == "mine"
    assert began["data"]["table"]["discord"]["round"] == 1
    assert (await ask(gm, {"type": "discord.roll", "ref": "d"}))["code"] == "conflict"
    seen = await ask(ana, {"type": "roll", "ref": "x", "character": t["chars"][0].pk,
                           "request": {"pool": ["d6"]}})  # fmt: skip
    assert seen["data"]["request"]["discord"] == began["data"]["discord"]["value"]
    for comm in (gm, ana):
        await comm.disconnect()


async def test_discordian_a_pvp_opponents_protection_is_charged_over_the_socket():
    t = await table(
        "discordian",
        {"Eris": {"hero_dice": ["d6"]}, "Bob": {"hero_dice": ["d6"], "instant_karma": 1}},
    )
    gm, [(ana, _), (bo, _)] = await seats(t)
    eris, bob = (c.pk for c in t["chars"])
    roll = {"type": "roll", "character": eris,
            "request": {"pool": ["d6"], "opponent": {"pool": ["d6"], "protect": 1}}}  # fmt: skip
    unnamed = await ask(gm, {**roll, "ref": "a"})
    assert (unnamed["code"], unnamed["field"]) == ("invalid", "opponent_character")
    named = {**roll, "opponent_character": bob}
    assert (await ask(ana, {**named, "ref": "b"}))["code"] == "forbidden"  # not Ana's to spend
    twice = {**named, "request": {"pool": ["d6"], "opponent": {"pool": ["d6"], "protect": 2}}}
    assert (await ask(gm, {**twice, "ref": "c"}))["code"] == "conflict"  # Bob holds 1
    assert (await ask(gm, {**named, "ref": "d"}))["kind"] == "roll"
    for comm in (gm, ana, bo):
        await comm.disconnect()


async def test_discordian_pool_infinite_fives_and_luck_dice_from_the_sheet_over_the_socket():
    sheet = {"hero_dice": ["d6"], "luck_die": "d8", "instant_karma": 2}
    t = await table("discordian", {"Eris": sheet})
    gm, [(ana, _)] = await seats(t)
    roll = {"type": "roll", "character": t["chars"][0].pk}
    cheat = {"pool": ["d6", "d8", "d8", "d12", "d12"], "infinite_fives": True}
    refused = await ask(ana, {**roll, "ref": "a", "request": cheat})
    assert (refused["code"], refused["field"]) == ("invalid", "request.pool")
    fives = await ask(
        ana, {**roll, "ref": "b", "request": {"pool": ["d6"], "infinite_fives": True}}
    )
    assert (fives["code"], fives["field"]) == ("invalid", "request.infinite_fives")
    too_many = await ask(ana, {**roll, "ref": "c", "request": {"pool": ["d6"]}, "luck_dice": 3})
    assert too_many["code"] == "conflict"
    lucky = await ask(ana, {**roll, "ref": "d", "request": {"pool": ["d6"]}, "luck_dice": 2})
    assert lucky["data"]["request"]["pool"] == ["d6", "d8", "d8"]
    for comm in (gm, ana):
        await comm.disconnect()


@database_sync_to_async
def seed_for_d6(code: str, value: int) -> str:
    """A client seed whose next roll's first d6 shows ``value``."""
    session = GameSession.objects.get(invite_code=code)
    seq, server_seed = session.last_seq + 1, bytes(session.server_seed)
    return next(
        f"d{i}" for i in range(3000) if FairStream(server_seed, f"d{i}", seq).roll(6) == value
    )


async def test_a_hidden_protected_roll_looks_the_same_to_others_over_the_socket():
    """Bo (no part in Ana's hidden roll) receives the same events, in number and kind, whether
    or not a die of it met the Discord Die; and the same after the GM's next award."""
    seen = []
    for shows in (3, 4):  # the Discord Die is 3: the d6 meets it, or not
        t = await table(
            "discordian",
            {"Eris": {"hero_dice": ["d6"], "instant_karma": 2}, "Bob": {"hero_dice": ["d6"]}},
        )
        await database_sync_to_async(
            lambda t=t: GameSession.objects.filter(pk=t["session"].pk).update(
                table_state={"discord": {"value": 3}}
            )
        )()
        gm, [(ana, _), (bo, _)] = await seats(t)
        eris = t["chars"][0].pk
        seed = await seed_for_d6(t["code"], shows)
        roll = await ask(ana, {"type": "roll", "ref": "r", "character": eris, "visibility": "gm",
                               "client_seed": seed,
                               "request": {"pool": ["d6"], "protect": 1}})  # fmt: skip
        award = await ask(gm, {"type": "resource.award", "ref": "a", "character": eris,
                               "name": "instant_karma"})  # fmt: skip
        events = []
        while not events or events[-1]["seq"] < award["seq"]:
            message = await bo.receive_json_from(timeout=5)
            if message["type"] == "event" and message["seq"] >= roll["seq"]:
                events.append(message)
        await drain(bo)
        seen.append(  # the two tables' ids differ: what they show, amounts included
            [
                (
                    e["seq"] - roll["seq"],
                    e["kind"],
                    e["visibility"],
                    e["data"].get("hidden"),
                    e["data"].get("text"),
                    [r["amount"] for r in e["data"].get("resources") or ()],
                )
                for e in events
            ]
        )
        for comm in (gm, ana, bo):
            await comm.disconnect()
        rename = t["gm"].username + f"-{shows}"  # the next table's GM takes the name
        await database_sync_to_async(
            lambda t=t, name=rename: (
                type(t["gm"]).objects.filter(pk=t["gm"].pk).update(username=name)
            )
        )()
    met, missed = seen
    assert met == missed
    assert [e[1:3] for e in met][:3] == [("roll", "gm"), ("pool", "gm"), ("pool", "gm")]


async def test_roll_and_keep_a_round_of_rolling_short_of_its_minimum_adds_nothing_over_the_socket():
    t = await table("roll-and-keep", {"Mirela": {}})
    gm, [(ana, _)] = await seats(t)
    opened = await ask(gm, {"type": "extended.open", "ref": "o", "label": "Climb", "target": 9,
                            "each": 9})  # fmt: skip
    assert opened["data"]["extended"]["each"] == 9
    roll = await ask(ana, {"type": "roll", "ref": "r", "character": t["chars"][0].pk,
                           "request": {"roll": 2, "keep": 2, "difficulty": 6},
                           "extended": opened["data"]["extended"]["id"]})  # fmt: skip
    progress = await ana.receive_json_from(timeout=5)
    while progress.get("seq") != roll["seq"] + 1:
        progress = await ana.receive_json_from(timeout=5)
    assert progress["data"]["gained"] == 0 and progress["data"]["extended"]["progress"] == 0
    for comm in (gm, ana):
        await comm.disconnect()


@database_sync_to_async
def seed_for_d10(code: str, value: int) -> str:
    session = GameSession.objects.get(invite_code=code)
    seq = session.last_seq + 1
    server_seed = bytes(session.server_seed)
    return next(
        f"t{i}" for i in range(3000) if FairStream(server_seed, f"t{i}", seq).roll(10) == value
    )


async def test_roll_and_keep_a_botched_action_cannot_be_repeated_over_the_socket():
    t = await table("roll-and-keep", {"Mirela": {}})
    gm, [(ana, _)] = await seats(t)
    roll = {"type": "roll", "character": t["chars"][0].pk, "label": "Climb the wall",
            "request": {"roll": 1, "keep": 1, "difficulty": 11}}  # fmt: skip
    seed = await seed_for_d10(t["code"], 1)
    botched = await ask(ana, {**roll, "ref": "a", "client_seed": seed})
    assert botched["data"]["flags"] == ["botch"]
    again = await ask(ana, {**roll, "ref": "b", "label": "climb the wall."})
    assert (again["code"], again["field"]) == ("conflict", "label")
    assert (await ask(ana, {**roll, "ref": "c", "label": "Swim"}))["kind"] == "roll"
    await ask(gm, {"type": "session.end", "ref": "end"})
    assert (await ask(ana, {**roll, "ref": "d", "label": "Swim"}))["code"] == "conflict"
    for comm in (gm, ana):
        await comm.disconnect()


async def test_d6_declared_actions_set_every_rolls_penalty_over_the_socket():
    t = await table("d6-chance", {"Sera": {}})
    gm, [(ana, _)] = await seats(t)
    sera = t["chars"][0].pk
    declare = {"type": "actions.declare", "character": sera, "actions": 2}
    assert (await ask(ana, {**declare, "ref": "early"}))["code"] == "conflict"
    await ask(gm, {"type": "round.new", "ref": "n"})
    declared = await ask(ana, {**declare, "ref": "d"})
    assert declared["data"]["table"]["declared"] == {str(sera): 2}
    roll = {"type": "roll", "character": sera, "request": {"dice": 6}}
    for ref, defense in (("a", False), ("b", True)):
        done = await ask(ana, {**roll, "ref": ref, "defense": defense})
        assert done["data"]["request"]["actions"] == 2
    third = await ask(ana, {**roll, "ref": "c"})
    assert (third["code"], third["field"]) == ("conflict", "defense")
    short = await ask(ana, {**roll, "ref": "s", "defense": True})  # 6D - 6D: no base left
    assert (short["code"], short["field"]) == ("invalid", "request.actions")
    extra = await ask(ana, {**roll, "ref": "e", "defense": True, "request": {"dice": 7}})
    assert extra["data"]["request"]["actions"] == 3
    await ask(gm, {"type": "session.end", "ref": "end"})
    await ask(gm, {"type": "round.new", "ref": "late"})
    assert (await ask(ana, {**declare, "ref": "after"}))["code"] == "conflict"
    for comm in (gm, ana):
        await comm.disconnect()


async def test_zoria_an_inspiration_check_waits_for_the_gms_consent_over_the_socket():
    gm, ana, bo, _, _, _, _ = await zoria_table()
    spend = {"type": "pool.spend", "effect": "insight", "note": "the seal"}
    assert (await ask(ana, {**spend, "ref": "s0"}))["code"] == "conflict"
    asked = await ask(ana, {"type": "insight.ask", "ref": "q", "subject": "The Seal"})
    assert asked["data"]["table"]["insight_asks"][0]["granted"] is False
    answer = {"type": "insight.answer", "ask": asked["seq"], "grant": True}
    assert (await ask(bo, {**answer, "ref": "a0"}))["code"] == "forbidden"
    assert (await ask(ana, {**spend, "ref": "s1"}))["code"] == "conflict"
    granted = await ask(gm, {**answer, "ref": "a1"})
    assert granted["data"]["table"]["insight_asks"][0]["granted"] is True
    spent = await ask(ana, {**spend, "ref": "s2"})
    assert spent["data"]["effect"] == "insight" and spent["data"]["table"]["insight_asks"] == []
    assert (await ask(ana, {**spend, "ref": "s3"}))["code"] == "conflict"
    waiting = await ask(bo, {"type": "insight.ask", "ref": "q2", "subject": "the vizier"})
    await ask(gm, {"type": "session.end", "ref": "end"})
    late = {**answer, "ask": waiting["seq"], "ref": "a2"}
    assert (await ask(gm, late))["code"] == "conflict"
    assert (await ask(bo, {"type": "insight.ask", "ref": "q3", "subject": "x"}))["code"] == (
        "conflict"
    )
    for comm in (gm, ana, bo):
        await comm.disconnect()


async def test_zoria_the_initiative_phase_sets_initiative_rolls_over_the_socket():
    gm, ana, bo, _, kael, ysolde, check = await zoria_table()
    first = await check(ana, "i1", 10, kael, initiative=True)
    assert first["data"]["initiative"] is True
    assert (await ask(ana, {"type": "pool.use", "ref": "u1", "roll": first["seq"]}))[
        "kind"
    ] == "pool"
    assert (await ask(ana, {"type": "initiative.begin", "ref": "p"}))["code"] == "forbidden"
    began = await ask(gm, {"type": "initiative.begin", "ref": "b"})
    assert began["data"]["table"]["initiative"] is True
    closed = await ana.receive_json_from(timeout=5)
    while closed.get("kind") != "roll.close":
        closed = await ana.receive_json_from(timeout=5)
    assert closed["data"]["roll"] == first["seq"] and closed["data"]["open_roll"]["open"] is False
    refused = await ask(ana, {"type": "pool.use", "ref": "u2", "roll": first["seq"]})
    assert refused["code"] == "conflict" and "initiative" in refused["message"]
    late = await check(bo, "i2", 10, ysolde, initiative=True)
    assert late["data"]["open_roll"]["open"] is False
    await ask(gm, {"type": "session.end", "ref": "end"})
    assert (await ask(gm, {"type": "initiative.end", "ref": "e"}))["code"] == "conflict"
    for comm in (gm, ana, bo):
        await comm.disconnect()
