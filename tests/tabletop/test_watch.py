"""Watch links: spectators see public events live and on replay, never hidden ones, and cannot
act; the GM creates and revokes links (docs/protocol.md, "Watching a table")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model

from tabletop.asgi import application
from tabletop.models import Campaign, WatchLink
from tabletop.services.errors import ServiceError
from tabletop.services.sessions import create_session, start_session
from tabletop.services.watch import create_watch_link, revoke_watch_link

from .bulk import add_rolls
from .test_consumer import connect, next_event, roll, seat_token

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def make_watched_table() -> dict[str, Any]:
    gm = get_user_model().objects.create_user("gm-watch", password="pw-for-tests-only")
    campaign = Campaign.objects.create(name="Streamed", system="generic", gm=gm)
    session = start_session(session_id=create_session(campaign=campaign, title="On air").pk)
    link = create_watch_link(session=session, user=gm, label="stream")
    return {"gm": gm, "session": session, "code": session.invite_code, "link": link}


async def watch(code: str, after: int | None = None) -> tuple[WebsocketCommunicator, dict]:
    path = f"/ws/watch/{code}/" + (f"?after={after}" if after is not None else "")
    comm = WebsocketCommunicator(application, path)
    connected, _ = await comm.connect()
    assert connected, path
    hello = await comm.receive_json_from(timeout=5)
    assert hello["type"] == "hello"
    return comm, hello


async def watch_refused(
    code: str, reason: str = "this watch link is unknown or was revoked"
) -> bool:
    """Refused as docs/protocol.md says: the handshake succeeds (a browser cannot tell a refused
    handshake from a network fault), then a close 4403 with a reason the page shows."""
    comm = WebsocketCommunicator(application, f"/ws/watch/{code}/")
    connected, _ = await comm.connect()
    assert connected, "refused at the handshake (HTTP 403) instead of a close 4403"
    closed = await comm.receive_output(timeout=5)
    await comm.disconnect()
    return closed == {"type": "websocket.close", "code": 4403, "reason": reason}


async def test_a_spectator_sees_public_rolls_and_hidden_ones_exactly_as_an_uninvolved_player():
    table = await make_watched_table()
    ana, _ = await connect(table["code"], token=await seat_token(table["session"], "Ana"))
    cy, _ = await connect(table["code"], token=await seat_token(table["session"], "Cy"))
    await next_event(ana)  # Cy's seat.join
    spectator, hello = await watch(table["link"].code)
    assert hello["role"] == "spectator" and hello["seat"] is None
    assert table["code"] not in json.dumps(hello)  # the invite would let them sit down
    assert hello["state"]["fairness"]["commitment"] == table["session"].commitment
    seen = []
    for ref, visibility in [("p", "public"), ("g", "gm"), ("b", "blind"), ("s", "self")]:
        await roll(ana, ref=ref, visibility=visibility, client_seed=f"secret-{visibility}")
        await next_event(ana)
        uninvolved, watched = await next_event(cy), await next_event(spectator)
        assert watched == uninvolved
        seen.append(watched)
    assert seen[0]["data"]["client_seed"] == "secret-public"
    for hidden in seen[1:]:
        assert hidden["data"] == {"hidden": True}
    assert "secret-gm" not in json.dumps(seen)
    # Replay from the start: the same, message for message, as the uninvolved player's replay.
    again, _ = await watch(table["link"].code, after=0)
    cy_again, _ = await connect(table["code"], token=await seat_token(table["session"], "Dee"))
    replayed = [await next_event(again) for _ in range(hello["last_seq"] + 4)]
    for message in replayed:
        assert "secret-gm" not in json.dumps(message) and "secret-self" not in json.dumps(message)
    assert replayed[-4:] == seen
    for comm in (ana, cy, spectator, again, cy_again):
        await comm.disconnect()


async def test_a_spectator_cannot_act():
    table = await make_watched_table()
    spectator, _ = await watch(table["link"].code)
    attempts = [
        {"type": "roll", "ref": "r", "system": "generic", "request": {"notation": "1d20"}},
        {"type": "session.end", "ref": "e"},
        {"type": "reveal", "ref": "v", "seq": 1},
        {"type": "pool.spend", "ref": "p", "effect": "bonus"},
        {"type": "resource.award", "ref": "a", "character": 1, "name": "luck"},
        {"type": "juggle", "ref": "j"},
    ]
    for attempt in attempts:
        await spectator.send_json_to(attempt)
        answer = await spectator.receive_json_from(timeout=5)
        assert answer == {
            "type": "error",
            "ref": attempt["ref"],
            "code": "forbidden",
            "message": "spectators watch the table; they cannot act",
        }
    await spectator.send_json_to({"type": "ping", "ref": "hb"})
    assert (await spectator.receive_json_from(timeout=5))["type"] == "pong"
    session = table["session"]
    await database_sync_to_async(session.refresh_from_db)()
    assert session.last_seq == 1 and session.status == "live"
    await spectator.disconnect()


async def test_a_revoked_link_is_refused_and_its_open_sockets_are_closed():
    table = await make_watched_table()
    spectator, _ = await watch(table["link"].code)
    await database_sync_to_async(revoke_watch_link)(
        session=table["session"], user=table["gm"], link_id=table["link"].pk
    )
    farewell = await spectator.receive_json_from(timeout=5)
    assert farewell["code"] == "forbidden" and "revoked" in farewell["message"]
    assert await spectator.receive_output(timeout=5) == {
        "type": "websocket.close",
        "code": 4403,
        "reason": "this watch link was revoked",
    }
    assert await watch_refused(table["link"].code)
    assert await watch_refused("no-such-link")
    # The invite code is not a watch code, nor the other way round.
    assert await watch_refused(table["code"])


@database_sync_to_async
def _link_rules(table: dict[str, Any]) -> None:
    other = get_user_model().objects.create_user("not-the-gm", password="pw-for-tests-only")
    with pytest.raises(ServiceError) as refused:
        create_watch_link(session=table["session"], user=other)
    assert refused.value.code == "forbidden"
    with pytest.raises(ServiceError) as refused:
        revoke_watch_link(session=table["session"], user=other, link_id=table["link"].pk)
    assert refused.value.code == "forbidden"
    with pytest.raises(ServiceError) as refused:
        create_watch_link(session=table["session"], user=table["gm"], label="x" * 81)
    assert refused.value.field == "label"
    assert WatchLink.objects.filter(session=table["session"]).count() == 1


async def test_only_the_gm_makes_and_revokes_links():
    await _link_rules(await make_watched_table())


async def test_a_link_revoked_while_its_socket_connects_is_refused(monkeypatch):
    from tabletop import watch_consumer

    table = await make_watched_table()
    found_then_revoked = watch_consumer.watched_session

    def lookup_then_revoke(*, code):
        found = found_then_revoked(code=code)  # found live, then revoked at once
        revoke_watch_link(session=table["session"], user=table["gm"], link_id=table["link"].pk)
        return found

    monkeypatch.setattr(watch_consumer, "watched_session", lookup_then_revoke)
    assert await watch_refused(table["link"].code)


async def test_a_link_holds_at_most_its_cap_of_sockets_on_a_process(settings):
    settings.TABLETOP = {**settings.TABLETOP, "WATCHERS_PER_LINK": 2}
    table = await make_watched_table()
    first, _ = await watch(table["link"].code)
    second, _ = await watch(table["link"].code)
    third = WebsocketCommunicator(application, f"/ws/watch/{table['link'].code}/")
    assert (await third.connect())[0]
    closed = await third.receive_output(timeout=5)
    assert closed["code"] == 4429 and "2 spectators" in closed["reason"]
    await third.disconnect()
    # One leaves: a place is free again.
    await first.disconnect()
    again, hello = await watch(table["link"].code)
    assert hello["type"] == "hello"
    for comm in (second, again):
        await comm.disconnect()


async def test_a_long_replay_waits_for_a_turn_and_past_the_deadline_is_told_busy(settings):
    from tabletop import replays
    from tabletop.delivery import REPLAY_PAGE

    settings.TABLETOP = {
        **settings.TABLETOP,
        "REPLAYS_IN_FLIGHT": 1,
        "ACTION_DEADLINE_SECONDS": 0.2,
    }
    table = await make_watched_table()
    await database_sync_to_async(add_rolls)(table["session"], REPLAY_PAGE + 2)
    taken = replays.slots()
    assert taken.try_take()  # another replay holds the process's only turn
    try:
        # A short catch-up needs no turn; a long replay waits, then is told busy with 4503.
        near, _ = await watch(table["link"].code, after=REPLAY_PAGE)
        assert (await next_event(near))["seq"] == REPLAY_PAGE + 1
        far, _ = await watch(table["link"].code, after=0)
        refusal = await far.receive_json_from(timeout=5)
        assert refusal["code"] == "busy" and "reconnect" in refusal["message"]
        closed = await far.receive_output(timeout=5)
        assert closed["code"] == 4503 and closed["reason"] == refusal["message"]
    finally:
        taken.give_back()
    # With the turn free the same replay goes through, every seq once, in order.
    far, hello = await watch(table["link"].code, after=0)
    seqs = [(await next_event(far))["seq"] for _ in range(hello["last_seq"])]
    assert seqs == list(range(1, hello["last_seq"] + 1))
    for comm in (near, far):
        await comm.disconnect()
