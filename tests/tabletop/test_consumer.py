"""The room socket, message by message (docs/protocol.md)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any
from unittest import mock

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth import get_user_model

from tabletop import timing
from tabletop.asgi import application
from tabletop.models import Campaign, GameSession
from tabletop.services.errors import human_field
from tabletop.services.seats import join_session
from tabletop.services.sessions import create_session, start_session

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]
ORIGIN = (b"origin", b"http://localhost")


@database_sync_to_async
def make_table(system: str = "generic") -> dict[str, Any]:
    user_model = get_user_model()
    gm = user_model.objects.create_user(f"gm-{system}", password="pw-for-tests-only")
    campaign = Campaign.objects.create(name="Table", system=system, gm=gm)
    session = start_session(session_id=create_session(campaign=campaign, title="Tonight").pk)
    return {"gm": gm, "session": session, "code": session.invite_code}


@database_sync_to_async
def seat_token(session: GameSession, name: str) -> str:
    return join_session(session=session, name=name).token


@database_sync_to_async
def login_cookie(user: Any) -> bytes:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def connect(
    code: str,
    *,
    token: str | None = None,
    after: int | None = None,
    headers: list[tuple[bytes, bytes]] | None = None,
    batch: bool = False,
) -> tuple[WebsocketCommunicator, dict]:
    query = []
    if token:
        query.append(f"token={token}")
    if after is not None:
        query.append(f"after={after}")
    if batch:
        query.append("replay=batch")
    path = f"/ws/play/{code}/" + ("?" + "&".join(query) if query else "")
    comm = WebsocketCommunicator(
        application, path, headers=headers if headers is not None else [ORIGIN]
    )
    connected, _ = await comm.connect()
    assert connected, f"refused: {path}"
    hello = await comm.receive_json_from(timeout=5)
    assert hello["type"] == "hello"
    return comm, hello


async def refused(
    code: str, query: str = "", headers: list[tuple[bytes, bytes]] | None = None
) -> bool:
    comm = WebsocketCommunicator(
        application, f"/ws/play/{code}/{query}", headers=headers or [ORIGIN]
    )
    connected, _ = await comm.connect()
    await comm.disconnect()
    return not connected


async def next_event(comm: WebsocketCommunicator, timeout: float = 5) -> dict:
    while True:
        message = await comm.receive_json_from(timeout=timeout)
        if message["type"] == "event":
            return message


async def roll(comm: WebsocketCommunicator, ref: str = "r1", **fields: Any) -> None:
    await comm.send_json_to(
        {
            "type": "roll",
            "ref": ref,
            "system": "generic",
            "request": {"notation": "2d6+1"},
            **fields,
        }
    )


async def test_hello_carries_seat_role_last_seq_and_fairness():
    table = await make_table()
    token = await seat_token(table["session"], "Ana")
    comm, hello = await connect(table["code"], token=token)
    assert hello["role"] == "player" and hello["seat"]["name"] == "Ana"
    assert hello["last_seq"] == 2  # session.start, seat.join
    state = hello["state"]
    assert state["fairness"] == {"commitment": table["session"].commitment, "server_seed": None}
    # (the room's list leaves out a seat's keys at their defaults: a player's role, no characters)
    assert state["seats"][0]["role"] == "gm" and state["seats"][1] == {
        "id": hello["seat"]["id"],
        "name": "Ana",
    }
    assert state["session"]["status"] == "live" and "pools" in state and "open_rolls" in state
    await comm.disconnect()


timed: list[str] = []


def remember_step(step: str, ms: float) -> None:
    timed.append(step)


async def test_a_connect_times_its_seat_lookup_and_its_hello():
    """With the timing hook on, a connect records its two reads, each the wait for the
    database thread included (docs/benchmarks.md, "Joins")."""
    table = await make_table()
    token = await seat_token(table["session"], "Ana")
    timed.clear()
    try:
        with mock.patch.dict(settings.TABLETOP, {"TIMING": f"{__name__}.remember_step"}):
            timing.reset()
            comm, _ = await connect(table["code"], token=token)
            await comm.disconnect()
    finally:
        timing.reset()
    assert [step for step in timed if step in {"access", "hello"}] == ["access", "hello"]


async def test_outsiders_wrong_tokens_and_other_sessions_tokens_are_refused():
    table = await make_table()
    other = await make_table("zoria")
    other_token = await seat_token(other["session"], "Bo")
    assert await refused(table["code"])
    assert await refused(table["code"], "?token=not-a-token")
    assert await refused(table["code"], f"?token={other_token}")
    assert await refused("no-such-code", f"?token={other_token}")
    assert await refused(table["code"], "?token=" + other_token + "&after=x")


async def test_gm_connects_with_login_session_and_foreign_origins_are_refused():
    table = await make_table()
    cookie = await login_cookie(table["gm"])
    comm, hello = await connect(table["code"], headers=[ORIGIN, (b"cookie", cookie)])
    assert hello["role"] == "gm"
    await comm.disconnect()
    # A script with the GM's cookie and no Origin is not a browser: let in.
    comm, hello = await connect(table["code"], headers=[(b"cookie", cookie)])
    assert hello["role"] == "gm"
    await comm.disconnect()
    # A browser page from another site riding on the GM's cookie: refused.
    assert await refused(
        table["code"], headers=[(b"origin", b"http://evil.example"), (b"cookie", cookie)]
    )


async def test_seat_cookie_authenticates_browsers():
    table = await make_table()
    token = await seat_token(table["session"], "Ana")
    cookie = f"seat_{table['code']}={token}".encode()
    comm, hello = await connect(table["code"], headers=[ORIGIN, (b"cookie", cookie)])
    assert hello["seat"]["name"] == "Ana"
    await comm.disconnect()


async def test_token_sockets_need_no_origin():
    table = await make_table()
    token = await seat_token(table["session"], "Bot")
    comm, hello = await connect(table["code"], token=token, headers=[])
    assert hello["role"] == "player"
    await comm.disconnect()


async def test_a_roll_reaches_everyone_with_ref_only_for_the_roller():
    table = await make_table()
    ana, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    bo, _ = await connect(table["code"], token=await seat_token(table["session"], "Bo"))
    await next_event(ana)  # Bo's seat.join
    await roll(ana, client_seed="lucky")
    mine, theirs = await next_event(ana), await next_event(bo)
    assert mine["ref"] == "r1" and "ref" not in theirs
    assert mine["seq"] == theirs["seq"] == 4 and mine["kind"] == "roll"
    data = theirs["data"]
    assert data["client_seed"] == "lucky" and data["request"]["notation"] == "2d6+1"
    assert data["total"] == sum(d["value"] for d in data["dice"]) + 1
    assert theirs["actor"]["name"] == "Ana" and theirs["visibility"] == "public"
    await ana.disconnect()
    await bo.disconnect()


@pytest.mark.parametrize(
    ("payload", "code", "field"),
    [
        ("{not json", "invalid", None),
        ("[1, 2]", "invalid", None),
        (json.dumps({"type": "juggle", "ref": "x"}), "unknown-type", None),
        (
            json.dumps(
                {"type": "roll", "ref": "x", "system": "generic", "request": {"notation": "2d"}}
            ),
            "invalid",
            "request.notation",
        ),
        (
            json.dumps(
                {"type": "roll", "ref": "x", "system": "generic", "request": {"notation": "1001d6"}}
            ),
            "invalid",
            "request.notation",
        ),
        (
            json.dumps({"type": "roll", "ref": "x", "system": "generic", "request": {}}),
            "invalid",
            "request.notation",
        ),
        (
            json.dumps({"type": "roll", "ref": "x", "system": "discordian", "request": {}}),
            "invalid",
            "system",
        ),
        (
            json.dumps(
                {
                    "type": "roll",
                    "ref": "x",
                    "system": "generic",
                    "request": {"notation": "d6"},
                    "visibility": "everyone",
                }
            ),
            "invalid",
            "visibility",
        ),
        (
            json.dumps(
                {
                    "type": "roll",
                    "ref": "x",
                    "system": "generic",
                    "request": {"notation": "d6"},
                    "character": 999,
                }
            ),
            "forbidden",
            None,
        ),
        (json.dumps({"type": "session.end", "ref": "x"}), "forbidden", None),
        (json.dumps({"type": "reveal", "ref": "x", "seq": 1}), "not-found", None),
        (
            json.dumps({"type": "roll", "ref": "x", "request": {"notation": "d6" + "+1" * 9000}}),
            "too-large",
            None,
        ),
    ],
)
async def test_bad_messages_get_an_error_and_the_socket_stays_open(payload, code, field):
    table = await make_table()
    comm, hello = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    await comm.send_to(text_data=payload)
    error = await comm.receive_json_from(timeout=5)
    assert error["type"] == "error" and error["code"] == code, error
    if field:
        # the path travels in "field"; the message leads with the field's name in words
        assert error["field"] == field and error["message"].startswith(human_field(field))
    if code not in {"invalid", "too-large"} or '"ref"' in payload:
        assert error["ref"] in {"x", None}
    # still open, and nothing was recorded
    await comm.send_json_to({"type": "ping", "ref": "p"})
    assert await comm.receive_json_from(timeout=5) == {
        "type": "pong",
        "ref": "p",
        "last_seq": hello["last_seq"],
    }
    await comm.disconnect()


async def test_rate_limit_allows_bursts_of_40_then_refuses():
    table = await make_table()
    comm, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    for i in range(80):
        await comm.send_json_to({"type": "ping", "ref": i})
    replies = [await comm.receive_json_from(timeout=5) for _ in range(80)]
    pongs = [r for r in replies if r["type"] == "pong"]
    limited = [r for r in replies if r.get("code") == "rate-limited"]
    assert len(pongs) >= 40 and limited
    assert all(isinstance(r["ref"], int) for r in limited), "refusals carry the message's ref"
    await comm.disconnect()


async def test_an_action_that_waited_past_its_deadline_is_refused_busy_and_changes_nothing():
    table = await make_table()
    comm, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    other, _ = await connect(table["code"], token=await seat_token(table["session"], "Bo"))
    last = (await next_event(comm))["seq"]  # Bo joined
    release = threading.Event()
    # Hold the process's one ORM thread, as a flood of other actions would.
    held = asyncio.ensure_future(database_sync_to_async(release.wait)(5))
    with mock.patch.dict(settings.TABLETOP, {"ACTION_DEADLINE_SECONDS": 0.2}):
        await roll(comm, ref="late")
        # A message that needs no database does not wait for the ORM thread.
        await other.send_json_to({"type": "ping", "ref": "p"})
        assert (await other.receive_json_from(timeout=2))["type"] == "pong"
        await asyncio.sleep(0.4)
        release.set()
        await held
        refusal = await comm.receive_json_from(timeout=5)
    assert refusal["type"] == "error" and refusal["code"] == "busy" and refusal["ref"] == "late"
    assert await comm.receive_nothing(timeout=0.2)
    session = await database_sync_to_async(GameSession.objects.get)(pk=table["session"].pk)
    assert session.last_seq == last
    await roll(comm, ref="on-time")
    assert (await next_event(comm))["ref"] == "on-time"
    await comm.disconnect()
    await other.disconnect()


async def test_replay_after_k_then_live_without_gaps_or_duplicates():
    table = await make_table()
    token = await seat_token(table["session"], "Ana")
    ana, _ = await connect(table["code"], token=token)
    for i in range(5):
        await roll(ana, ref=f"r{i}")
        await next_event(ana)
    await ana.disconnect()
    again, hello = await connect(table["code"], token=token, after=3)
    assert hello["last_seq"] == 7
    replayed = [await next_event(again) for _ in range(4)]
    assert [e["seq"] for e in replayed] == [4, 5, 6, 7]
    await roll(again, ref="live")
    live = await next_event(again)
    assert live["seq"] == 8 and live["ref"] == "live"
    assert await again.receive_nothing(timeout=0.2)
    await again.disconnect()


async def test_a_batched_replay_comes_many_events_a_frame_then_live_ones_one_a_frame():
    table = await make_table()
    token = await seat_token(table["session"], "Ana")
    ana, _ = await connect(table["code"], token=token)
    for i in range(5):
        await roll(ana, ref=f"r{i}")
        await next_event(ana)
    await ana.disconnect()
    again, hello = await connect(table["code"], token=token, after=3, batch=True)
    assert hello["last_seq"] == 7
    frame = await again.receive_json_from(timeout=5)
    assert frame["type"] == "replay"
    assert [e["seq"] for e in frame["events"]] == [4, 5, 6, 7]
    assert {e["type"] for e in frame["events"]} == {"event"}
    await roll(again, ref="live")
    live = await next_event(again)
    assert live["seq"] == 8 and live["ref"] == "live"
    assert await again.receive_nothing(timeout=0.2)
    await again.disconnect()


async def test_replay_while_others_roll_has_no_gap_and_no_duplicate():
    table = await make_table()
    roller, _ = await connect(table["code"], token=await seat_token(table["session"], "Roller"))
    watcher_token = await seat_token(table["session"], "Watcher")

    async def keep_rolling(n: int) -> None:
        for i in range(n):
            await roll(roller, ref=f"r{i}")
            await asyncio.sleep(0.005)

    rolling = asyncio.create_task(keep_rolling(40))
    await asyncio.sleep(0.05)
    watcher, _ = await connect(table["code"], token=watcher_token, after=0)
    await rolling
    final = 3 + 40  # session.start, two seat.joins, 40 rolls
    seen = []
    while not seen or seen[-1] < final:
        seen.append((await next_event(watcher))["seq"])
    assert seen == list(range(1, final + 1))
    await roller.disconnect()
    await watcher.disconnect()


async def test_a_dropped_broadcast_is_filled_from_the_store():
    table = await make_table()
    ana, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    with mock.patch("tabletop.consumers.hub.publish", new=mock.AsyncMock()):
        await roll(ana, ref="lost")  # stored, never sent
        await asyncio.sleep(0.3)
    await roll(ana, ref="next")
    first, second = await next_event(ana), await next_event(ana)
    assert (first["seq"], second["seq"]) == (3, 4)
    assert first["ref"] == "lost" and second["ref"] == "next"
    await ana.disconnect()


async def _three_seats() -> tuple[
    dict, WebsocketCommunicator, WebsocketCommunicator, WebsocketCommunicator
]:
    table = await make_table()
    gm_cookie = await login_cookie(table["gm"])
    gm, _ = await connect(table["code"], headers=[ORIGIN, (b"cookie", gm_cookie)])
    ana, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    bo, _ = await connect(table["code"], token=await seat_token(table["session"], "Bo"))
    for comm, joins in ((gm, 2), (ana, 1)):
        for _ in range(joins):
            await next_event(comm)
    return table, gm, ana, bo


VISIBLE = {  # visibility -> (roller sees, other player sees, GM sees)
    "public": (True, True, True),
    "gm": (True, False, True),
    "blind": (False, False, True),
    "self": (True, False, False),
}


@pytest.mark.parametrize("visibility", list(VISIBLE))
async def test_hidden_rolls_are_redacted_live_and_on_replay(visibility):
    table, gm, ana, bo = await _three_seats()
    await roll(ana, visibility=visibility)
    views = [await next_event(ana), await next_event(bo), await next_event(gm)]
    for view, sees in zip(views, VISIBLE[visibility], strict=True):
        assert view["seq"] == views[0]["seq"] and view["kind"] == "roll"
        assert view["visibility"] == visibility and view["actor"]["name"] == "Ana"
        assert ("dice" in view["data"]) is sees
        if not sees:
            assert view["data"] == {"hidden": True}
    seq = views[0]["seq"]
    for comm in (gm, ana, bo):
        await comm.disconnect()
    # replay: same redaction
    bo_token = await seat_token(table["session"], "Late")
    late, _ = await connect(table["code"], token=bo_token, after=seq - 1)
    replayed = await next_event(late)
    assert replayed["seq"] == seq
    assert ("dice" in replayed["data"]) is (visibility == "public")
    await late.disconnect()


async def test_gm_reveals_a_blind_roll_to_the_room():
    _, gm, ana, bo = await _three_seats()
    await roll(ana, visibility="blind")
    hidden = [await next_event(c) for c in (gm, ana, bo)]
    seq = hidden[0]["seq"]
    await bo.send_json_to({"type": "reveal", "ref": "no", "seq": seq})
    assert (await bo.receive_json_from())["code"] == "forbidden"
    await gm.send_json_to({"type": "reveal", "ref": "rv", "seq": seq})
    reveals = [await next_event(c) for c in (gm, ana, bo)]
    for reveal in reveals:
        assert reveal["kind"] == "roll.reveal" and reveal["visibility"] == "public"
        assert reveal["data"]["seq"] == seq and reveal["data"]["roll"] == hidden[0]["data"]
    await gm.send_json_to({"type": "reveal", "ref": "again", "seq": seq})
    assert (await gm.receive_json_from())["code"] == "conflict"
    for comm in (gm, ana, bo):
        await comm.disconnect()


async def test_gm_ends_the_session_and_the_seed_is_revealed():
    table, gm, ana, bo = await _three_seats()
    await gm.send_json_to({"type": "session.end", "ref": "end"})
    ends = [await next_event(c) for c in (gm, ana, bo)]
    seed = ends[0]["data"]["server_seed"]
    import hashlib

    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == table["session"].commitment
    assert all(e["kind"] == "session.end" and e["data"]["server_seed"] == seed for e in ends)
    await roll(ana, ref="late")
    assert (await ana.receive_json_from())["code"] == "conflict"
    for comm in (gm, ana, bo):
        await comm.disconnect()
    token = await seat_token_or_none(table["session"])
    assert token is None  # nobody joins an ended session
    cookie = await login_cookie(table["gm"])
    comm, hello = await connect(table["code"], headers=[ORIGIN, (b"cookie", cookie)])
    assert hello["state"]["fairness"]["server_seed"] == seed
    await comm.disconnect()


@database_sync_to_async
def seat_token_or_none(session: GameSession) -> str | None:
    from tabletop.services.errors import ServiceError

    session.refresh_from_db()
    try:
        return join_session(session=session, name="Late").token
    except ServiceError:
        return None


async def test_one_room_subscription_per_process_however_many_sockets():
    from channels.layers import InMemoryChannelLayer, get_channel_layer

    table = await make_table()
    layer = get_channel_layer()
    in_memory = isinstance(layer, InMemoryChannelLayer)  # it shows its group membership
    socks = [
        (await connect(table["code"], token=await seat_token(table["session"], f"P{i}")))[0]
        for i in range(6)
    ]
    group = f"room.{table['session'].pk}"
    if in_memory:
        assert len(layer.groups[group]) == 1
    for comm in socks[:-1]:  # each has seat.join events of the later ones to skip
        while True:
            event = await next_event(comm)
            if event["data"].get("seat", {}).get("name") == "P5":
                break
    await roll(socks[0], ref="r")
    events = [await next_event(comm) for comm in socks]
    assert {e["seq"] for e in events} == {8}  # session.start, 6 seat.joins, the roll
    assert events[0]["ref"] == "r" and all("ref" not in e for e in events[1:])
    for comm in socks:
        await comm.disconnect()
    if in_memory:
        assert group not in layer.groups


async def test_a_short_message_is_prechecked_on_the_loop_a_long_one_on_a_thread_alike(
    monkeypatch,
):
    """The same refused roll, once short and once padded past the size checked on the event
    loop: the short one never leaves the loop, the long one goes to the precheck thread, and
    both are answered alike, in the reader's language."""
    from tabletop import consumers

    threaded: list[bool] = []
    submit = consumers._prechecks.submit

    def counted_submit(*args: Any, **kwargs: Any) -> Any:
        threaded.append(True)
        return submit(*args, **kwargs)

    monkeypatch.setattr(consumers._prechecks, "submit", counted_submit)
    table = await make_table()
    token = await seat_token(table["session"], "Ana")
    answers = {}
    for language in ("en", "de"):
        comm, _ = await connect(
            table["code"], token=token, headers=[ORIGIN, (b"accept-language", language.encode())]
        )
        for size, seed in (("short", ""), ("long", "s" * 120)):
            message = {
                "type": "roll",
                "ref": size,
                "system": "zoria",
                "request": {"check": "1d20"},
                "client_seed": seed,
            }
            raw = json.dumps(message)
            assert (len(raw.encode()) <= consumers.PRECHECK_ON_THE_LOOP_BYTES) == (size == "short")
            before = len(threaded)
            await comm.send_to(text_data=raw)
            error = await comm.receive_json_from(timeout=5)
            assert error["type"] == "error" and error["code"] == "invalid"
            assert error["ref"] == size and error["field"] == "system"
            assert len(threaded) - before == (size == "long")
            answers[language, size] = error["message"]
        await comm.disconnect()
    assert answers["de", "short"] == answers["de", "long"] != answers["en", "long"]
    assert answers["en", "short"] == answers["en", "long"]
