"""Pool and resource messages over the room socket (docs/protocol.md, "Pools and resources")."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from tabletop.models import Campaign, Character
from tabletop.models.pools import Pool, PoolKind
from tabletop.services.seats import join_session
from tabletop.services.sessions import create_session, start_session

from .test_consumer import ORIGIN, connect, login_cookie, next_event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def table(system: str, sheets: dict[str, dict]) -> dict:
    gm = get_user_model().objects.create_user(f"gm-{system}", password="pw-for-tests-only")
    campaign = Campaign.objects.create(name=system, system=system, gm=gm)
    chars = [
        Character.objects.create(campaign=campaign, name=n, sheet=s) for n, s in sheets.items()
    ]
    session = start_session(session_id=create_session(campaign=campaign, title="t").pk)
    tokens = [
        join_session(session=session, name=f"P{i}", character_id=c.pk).token
        for i, c in enumerate(chars)
    ]
    return {
        "gm": gm,
        "session": session,
        "code": session.invite_code,
        "chars": chars,
        "tokens": tokens,
    }


async def seats(t):
    gm, _ = await connect(t["code"], headers=[ORIGIN, (b"cookie", await login_cookie(t["gm"]))])
    players = []
    for token in t["tokens"]:
        comm, hello = await connect(t["code"], token=token)
        players.append((comm, hello))
    return gm, players


async def drain(comm):
    while not await comm.receive_nothing(timeout=0.15):
        await comm.receive_json_from()


async def ask(comm, message):
    """Send and return the first event carrying our ref, or the error."""
    await comm.send_json_to(message)
    while True:
        reply = await comm.receive_json_from(timeout=5)
        if reply["type"] == "error" or reply.get("ref") == message.get("ref"):
            return reply


async def granted(gm, player, subject, ref="g"):
    """The player asks for an inspiration check on ``subject``; the GM agrees."""
    asked = await ask(player, {"type": "insight.ask", "ref": f"{ref}q", "subject": subject})
    assert asked["data"]["action"] == "insight-ask", asked
    answer = {"type": "insight.answer", "ref": f"{ref}a", "ask": asked["seq"], "grant": True}
    assert (await ask(gm, answer))["data"]["granted"] is True


async def test_zoria_messages_from_roll_to_declare():
    t = await table("zoria", {"Kael": {"level": 7}, "Ysolde": {"level": 12}})
    gm, [(ana, hello_a), (bo, _)] = await seats(t)
    pools = {p["seat"]: p for p in hello_a["state"]["pools"]}
    assert pools[hello_a["seat"]["id"]]["remaining"] == 4
    kael = t["chars"][0].pk
    roll = await ask(
        ana,
        {"type": "roll", "ref": "r", "request": {"check": "1d20+2", "dc": 12}, "character": kael},
    )
    assert roll["kind"] == "roll"
    use = await ask(ana, {"type": "pool.use", "ref": "u", "roll": roll["seq"]})
    assert (
        use["kind"] == "pool"
        and use["data"]["action"] == "use"
        and use["data"]["pools"][0]["remaining"] == 3
    )
    assert (await ask(bo, {"type": "pool.use", "ref": "x", "roll": roll["seq"]}))[
        "code"
    ] == "forbidden"
    await granted(gm, ana, "The seal")
    spend = await ask(
        ana, {"type": "pool.spend", "ref": "s", "effect": "insight", "count": 1, "note": "the seal"}
    )
    assert spend["data"]["effect"] == "insight"
    award = await ask(gm, {"type": "pool.award", "ref": "a", "seat": hello_a["seat"]["id"]})
    assert award["data"]["action"] == "award"
    assert (await ask(ana, {"type": "pool.award", "ref": "a2", "seat": hello_a["seat"]["id"]}))[
        "code"
    ] == "forbidden"
    undo = await ask(gm, {"type": "pool.undo-award", "ref": "ua"})
    assert undo["data"]["action"] == "undo-award"
    # Nothing was spent on a critical of this roll: nothing to refund.
    refund = await ask(gm, {"type": "pool.refund", "ref": "rf", "roll": roll["seq"], "count": 1})
    assert refund["code"] == "conflict"
    lucky = await ask(bo, {"type": "pool.lucky-break", "ref": "lb"})
    assert lucky["data"]["given_up"] == 5
    close = await ask(gm, {"type": "roll.close", "ref": "c", "roll": roll["seq"], "result": "hit"})
    assert close["kind"] == "roll.close"
    assert (await ask(ana, {"type": "pool.use", "ref": "late", "roll": roll["seq"]}))[
        "code"
    ] == "conflict"
    assert (await ask(ana, {"type": "pool.spend", "ref": "bad", "effect": "juggle"}))[
        "field"
    ] == "effect"
    # every seat saw every one of these as events, in order
    await drain(bo)
    for comm in (gm, ana, bo):
        await comm.disconnect()


async def test_two_sockets_spend_the_last_die_at_once():
    t = await table("zoria", {"Kael": {"level": 7}})
    gm, [(ana, hello)] = await seats(t)
    await database_sync_to_async(
        lambda: Pool.objects.filter(seat_id=hello["seat"]["id"], kind=PoolKind.SESSION_DICE).update(
            remaining=1
        )
    )()
    token = t["tokens"][0]
    ana2, _ = await connect(t["code"], token=token)
    await granted(gm, ana, "a", "ga")
    await granted(gm, ana, "b", "gb")
    results = await asyncio.gather(
        ask(ana, {"type": "pool.spend", "ref": "one", "effect": "insight", "note": "a"}),
        ask(ana2, {"type": "pool.spend", "ref": "two", "effect": "insight", "note": "b"}),
    )
    kinds = sorted(r["type"] for r in results)
    assert kinds == ["error", "event"]
    assert next(r for r in results if r["type"] == "error")["code"] == "conflict"
    for comm in (gm, ana, ana2):
        await comm.disconnect()


async def test_resources_discord_die_and_luck():
    t = await table("discordian", {"Eris": {"hero_dice": ["d6"], "luck": 1, "instant_karma": 1}})
    gm, [(ana, hello)] = await seats(t)
    eris = t["chars"][0].pk
    assert {(r["name"], r["amount"]) for r in hello["state"]["resources"]} == {
        ("luck", 1),
        ("instant_karma", 1),
    }
    assert (await ask(ana, {"type": "discord.roll", "ref": "d"}))["code"] == "forbidden"
    discord = await ask(gm, {"type": "discord.roll", "ref": "d"})
    assert discord["data"]["action"] == "discord" and discord["data"]["dice"]
    roll = await ask(
        ana,
        {
            "type": "roll",
            "ref": "r",
            "character": eris,
            "request": {"pool": ["d6"], "tn": 5},
            "luck_dice": 1,
        },
    )
    assert roll["data"]["request"]["discord"] == discord["data"]["discord"]["value"]
    award = await ask(
        gm, {"type": "resource.award", "ref": "aw", "character": eris, "name": "luck", "amount": 2}
    )
    assert award["data"]["resources"] == [{"character": eris, "name": "luck", "amount": 3}]
    bad = await ask(ana, {"type": "resource.spend", "ref": "sp", "character": eris, "use": "nope"})
    assert bad["code"] == "invalid" and bad["field"] == "use"
    for comm in (gm, ana):
        await comm.disconnect()


async def test_extended_actions_and_rounds_over_the_socket():
    t = await table("roll-and-keep", {"Mirela": {}})
    gm, [(ana, _)] = await seats(t)
    opened = await ask(gm, {"type": "extended.open", "ref": "o", "label": "Ritual", "target": 50})
    ext = opened["data"]["extended"]["id"]
    roll = await ask(
        ana,
        {
            "type": "roll",
            "ref": "r",
            "request": {"roll": 5, "keep": 3, "difficulty": 4},
            "extended": ext,
        },
    )
    assert roll["kind"] == "roll"
    progress = await next_event(ana)
    assert progress["data"]["action"] == "extended-progress"
    closed = await ask(gm, {"type": "extended.close", "ref": "c", "extended": ext})
    assert closed["data"]["extended"]["open"] is False
    assert (await ask(gm, {"type": "round.new", "ref": "n"}))[
        "code"
    ] == "invalid"  # not an action-dice table
    for comm in (gm, ana):
        await comm.disconnect()

    t2 = await table("action-dice", {"Nadia": {"action_dice": 2}})
    gm2, [(bo, _)] = await seats(t2)
    new_round = await ask(gm2, {"type": "round.new", "ref": "n"})
    assert new_round["data"]["round"] == 1 and new_round["data"]["pools"][0]["remaining"] == 2
    for comm in (gm2, bo):
        await comm.disconnect()


async def test_hidden_zoria_rolls_stay_hidden_through_pool_events_and_state():
    t = await table("zoria", {"Kael": {"level": 7}, "Ysolde": {"level": 12}})
    gm, [(ana, _), (bo, _)] = await seats(t)
    kael = t["chars"][0].pk
    roll = await ask(
        ana,
        {
            "type": "roll",
            "ref": "r",
            "visibility": "gm",
            "character": kael,
            "request": {"check": "1d20+2", "dc": 12},
        },
    )
    seq = roll["seq"]
    # Bo cannot see the roll, cannot act on it, and its state does not list it
    assert (await next_event(bo))["data"] == {"hidden": True}
    bo_again, bo_hello = await connect(t["code"], token=t["tokens"][1])
    assert [r["seq"] for r in bo_hello["state"]["open_rolls"]] == []
    # Ana, connecting at the same last_seq, shares Bo's read of the room but sees her own roll
    ana_again, ana_hello = await connect(t["code"], token=t["tokens"][0])
    assert ana_hello["last_seq"] == bo_hello["last_seq"]
    assert [r["seq"] for r in ana_hello["state"]["open_rolls"]] == [seq]
    await ana_again.disconnect()
    spend = await ask(
        bo, {"type": "pool.spend", "ref": "b", "effect": "activate-botch", "roll": seq}
    )
    assert spend["code"] == "not-found"
    # Ana uses a die: she and the GM see the dice and the new count; Bo sees hidden events
    # only, and his count stays as it was (live and on reconnect) until the roll is revealed.
    use = await ask(ana, {"type": "pool.use", "ref": "u", "roll": seq})
    assert use["visibility"] == "gm" and use["data"]["dice"]
    hidden, note = await next_event(bo), await next_event(bo)
    assert hidden["seq"] == use["seq"] and hidden["data"] == {"hidden": True}
    assert note["seq"] == use["seq"] + 1 and note["data"] == {"hidden": True}
    pool = use["data"]["pools"][0]
    assert pool["remaining"] == 3

    def remaining(hello):
        return {p["id"]: p["remaining"] for p in hello["state"]["pools"]}[pool["id"]]

    bo_late, bo_hello = await connect(t["code"], token=t["tokens"][1])
    ana_late, ana_hello = await connect(t["code"], token=t["tokens"][0])
    cookie = (b"cookie", await login_cookie(t["gm"]))
    gm_late, gm_hello = await connect(t["code"], headers=[ORIGIN, cookie])
    assert (remaining(bo_hello), remaining(ana_hello), remaining(gm_hello)) == (4, 3, 3)
    for comm in (bo_late, ana_late, gm_late):
        await comm.disconnect()
    # the GM declares it: the roller sees the declaration, Bo does not
    close = await ask(gm, {"type": "roll.close", "ref": "c", "roll": seq, "result": "hit"})
    assert close["visibility"] == "gm"
    mine = await next_event(ana)
    while mine["kind"] != "roll.close":
        mine = await next_event(ana)
    assert mine["data"]["roll"] == seq
    theirs = await next_event(bo)
    while theirs["kind"] != "roll.close":
        theirs = await next_event(bo)
    assert theirs["data"] == {"hidden": True}
    # Revealed: the reveal carries the count to the room, and every hello agrees with the store.
    await ask(gm, {"type": "reveal", "ref": "v", "seq": seq})
    shown = await next_event(bo)
    while shown["kind"] != "roll.reveal":
        shown = await next_event(bo)
    assert [p["remaining"] for p in shown["data"]["pools"]] == [3]
    bo_late, bo_hello = await connect(t["code"], token=t["tokens"][1])
    stored = await database_sync_to_async(Pool.objects.get)(pk=pool["id"])
    assert remaining(bo_hello) == stored.remaining == 3
    for comm in (gm, ana, bo, bo_again, bo_late):
        await comm.disconnect()
