"""The seam is as wide as a new system: coin flips (``coin_flips.py``), which lives only in the
tests, plays over the real room socket with its own command, event, log wording, resource and
room state, and with no change to any module outside ``tests/``."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from rules.engines import FairStream
from tabletop.models import Event, GameSession
from tabletop.protocol.events import check_event, log_line
from tabletop.selectors.room import apply_event

from .coin_flips import ID, coin_flips
from .test_consumer_pools import ask, seats, table

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def seed_for(code: str, coin: str) -> str:
    """A client seed whose next flip lands ``coin``."""
    session = GameSession.objects.get(invite_code=code)
    seq, server_seed = session.last_seq + 1, bytes(session.server_seed)
    side = 1 if coin == "heads" else 2
    return next(
        f"c{i}" for i in range(200) if FairStream(server_seed, f"c{i}", seq).roll(2) == side
    )


@database_sync_to_async
def stored(seq: int) -> Event:
    return Event.objects.get(session__campaign__system=ID, seq=seq)


async def test_a_system_declared_only_in_the_tests_plays_over_the_socket(monkeypatch):
    with coin_flips(monkeypatch):
        t = await table(ID, {"Flipper": {"reflips": 2}})
        gm, [(ana, hello)] = await seats(t)
        flipper = t["chars"][0].pk
        # Its own key of the room state, as its system reads it.
        assert hello["state"]["streak"] == 0
        state = hello["state"]

        async def flip(ref: str, call: str, lands: str) -> dict:
            seed = await seed_for(t["code"], lands)
            message = {"type": "coin.flip", "ref": ref, "call": call, "client_seed": seed}
            return await ask(ana, message)

        right = await flip("a", "heads", "heads")
        again = await flip("b", "tails", "tails")
        # Its own event, checked against what it declared, with the line it words.
        assert right["kind"] == "pool" and right["data"]["action"] == "flip"
        assert again["data"]["text"] == "P0 calls tails: the coin lands tails (2 right in a row)"
        event = await stored(again["seq"])
        check_event(kind=event.kind, visibility=event.visibility, data=event.data)
        # Its reducer rule folds its state, as a fresh hello reads it.
        for message in (right, again):
            state = apply_event(state, message)
        assert state["streak"] == 2
        _, later = await seats(t)
        assert later[0][1]["state"]["streak"] == 2
        wrong = await flip("c", "heads", "tails")
        assert wrong["data"]["streak"] == 0 and apply_event(state, wrong)["streak"] == 0
        # Its resource, spent with the shared command, in its own words.
        spent = await ask(
            ana,
            {"type": "resource.spend", "ref": "s", "character": flipper, "use": "reflip"},
        )
        assert spent["data"]["text"] == "Flipper spends 1 reflip to flip again"
        assert spent["data"]["resources"][0]["amount"] == 1
        award = await ask(
            gm,
            {"type": "resource.award", "ref": "w", "character": flipper, "name": "reflips"},
        )
        assert log_line(kind="pool", data=award["data"], actor="GM") == (
            "GM awards Flipper 1 reflip"
        )
        # Another system's command is refused at its table, as at any table not its own.
        refused = await ask(gm, {"type": "round.new", "ref": "r"})
        assert refused["code"] in {"invalid", "unknown-type"}
        for comm in (gm, ana, *(c for c, _ in later)):
            await comm.disconnect()
