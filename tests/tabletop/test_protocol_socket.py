"""Bad input over a real socket and the JSON endpoints: every bad message gets exactly one
``error`` with its ``ref`` (never ``server-error``), the socket stays open, nothing is stored,
and the table still rolls afterwards with gapless seqs. Bounded: a few seconds."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import pytest
from channels.db import database_sync_to_async
from django.conf import settings

from rules.engines import system_ids
from tabletop.models import GameSession

from .test_consumer import ORIGIN, connect, login_cookie, make_table, seat_token
from .test_protocol_commands import bad_message, collect

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

# Messages that pass their declaration but that the table must still refuse (wrong ids, not
# yours, not now): the service answers, once, with the ref.
REFUSED_BY_THE_TABLE = [
    {"type": "reveal", "seq": 10**9},
    {"type": "roll", "request": {"notation": "2d"}},
    {"type": "roll", "request": {"notation": "d6"}, "character": 10**9},
    {"type": "roll", "system": "zoria", "request": {"notation": "d6"}},
    {"type": "session.start"},
]


@database_sync_to_async
def last_seq(session: GameSession) -> int:
    return GameSession.objects.get(pk=session.pk).last_seq


async def answers(comm: Any, until_ref: str) -> list[dict[str, Any]]:
    """Everything the socket sends until the pong carrying ``until_ref``."""
    await comm.send_json_to({"type": "ping", "ref": until_ref})
    out = []
    while True:
        message = await comm.receive_json_from(timeout=10)
        if message.get("type") == "pong" and message.get("ref") == until_ref:
            return out
        out.append(message)


UNLIMITED = {
    "RATE_PER_SECOND": 10**6,
    "RATE_BURST": 10**6,
    "SEAT_WORK_PER_SECOND": 10**9,
    "SEAT_WORK_BURST": 10**9,
    "ROOM_WORK_PER_SECOND": 10**9,
    "ROOM_WORK_BURST": 10**9,
}


async def test_every_bad_message_gets_one_error_with_its_ref_and_the_table_rolls_on():
    cases = collect(bad_message(), 120)
    by_system: dict[str, list[tuple[str, str]]] = {}
    for system, _as_gm, ref, raw in cases:
        by_system.setdefault(system, []).append((ref, raw))
    for i, message in enumerate(REFUSED_BY_THE_TABLE):
        by_system.setdefault("generic", []).append(
            (f"t{i}", json.dumps({**message, "ref": f"t{i}"}))
        )
    assert set(by_system) == set(system_ids()), "every system's message types are fuzzed"
    with mock.patch.dict(settings.TABLETOP, UNLIMITED):
        for system, sent in sorted(by_system.items()):
            table = await make_table(system)
            player, _ = await connect(
                table["code"], token=await seat_token(table["session"], "Ana")
            )
            gm, _ = await connect(
                table["code"], headers=[ORIGIN, (b"cookie", await login_cookie(table["gm"]))]
            )
            before = await last_seq(table["session"])
            for _ref, raw in sent:
                await gm.send_to(text_data=raw)
            replies = await answers(gm, "done")
            errors = [m for m in replies if m["type"] == "error"]
            assert all(m["type"] == "error" for m in replies), replies
            assert sorted(m["ref"] for m in errors) == sorted(ref for ref, _ in sent)
            assert not [m for m in errors if m["code"] == "server-error"]
            assert await last_seq(table["session"]) == before, "a refusal stores nothing"
            # the table still rolls, with the next seq, for everyone
            roll = {
                "type": "roll",
                "ref": "after",
                "system": "generic",
                "request": {"notation": "d6"},
            }
            await player.send_json_to(roll)
            rolled = await player.receive_json_from(timeout=5)
            assert (rolled.get("ref"), rolled.get("seq")) == ("after", before + 1), rolled
            seen = await gm.receive_json_from(timeout=5)
            assert (seen["type"], seen["seq"]) == ("event", before + 1)
            await gm.disconnect()
            await player.disconnect()
