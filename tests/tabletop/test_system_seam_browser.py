"""The seam's browser side is as wide as a new system: coin flips' own module (which lives only
in the tests, ``static/coin-flips.js``) is registered with the core's registry
(``static/tabletop/seam.js``) as a page registers its table's, and the core's reducer folds
coin flips' own key with it exactly as the server's does with its ``fold``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rules.engines import FairStream
from tabletop.models import Campaign, Character, GameSession
from tabletop.selectors.events import Viewer, events_after, for_viewer
from tabletop.selectors.room import apply_event, room_state
from tabletop.services.seats import gm_seat, join_session
from tabletop.services.sessions import create_session, start_session

from .coin_flips import ID, coin_flips
from .commands import send
from .reducer_js import fold_in_node

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.node,
]
MODULE = Path(__file__).resolve().parent / "static" / "coin-flips.js"


def _landing(session_id: int, coin: str) -> str:
    """A client seed whose next flip lands ``coin``."""
    session = GameSession.objects.get(pk=session_id)
    seq, server_seed = session.last_seq + 1, bytes(session.server_seed)
    side = 1 if coin == "heads" else 2
    return next(
        f"c{i}" for i in range(200) if FairStream(server_seed, f"c{i}", seq).roll(2) == side
    )


def test_the_browser_folds_a_system_it_has_never_heard_of_by_its_own_module(
    django_user_model, monkeypatch
):
    with coin_flips(monkeypatch):
        gm_user = django_user_model.objects.create(username="coin-gm")
        campaign = Campaign.objects.create(name="Coins", system=ID, gm=gm_user)
        flipper = Character.objects.create(campaign=campaign, name="Flipper", sheet={})
        session = start_session(session_id=create_session(campaign=campaign, title="Flips").pk)
        gm_seat(session=session, user=gm_user)
        ana = join_session(session=session, name="Ana", character_id=flipper.pk).seat
        viewer = Viewer(seat_id=ana.pk, is_gm=False)
        hello = json.loads(json.dumps(room_state(session=session, viewer=viewer)))
        for call in ("heads", "tails", "heads"):  # each called right: a streak of three
            send(ana, "coin.flip", call=call, client_seed=_landing(session.pk, call))
        events = [for_viewer(e, viewer) for e in events_after(session_id=session.pk, after=0)]
        events = [e for e in events if e["seq"] > session.last_seq]
        expected = hello
        for event in events:
            expected = apply_event(expected, event)
    flips = [e["data"]["streak"] for e in events if e["data"].get("action") == "flip"]
    assert flips == [1, 2, 3] and expected["streak"] == 3
    case = json.loads(json.dumps([(hello, events)]))
    [folded], declared = fold_in_node(case, modules={ID: MODULE})
    assert folded == json.loads(json.dumps(expected))
    # What it declared beyond its rule reaches the core's dice captions and tones.
    assert declared[ID]["roles"] == {"coin": ["coin", "the coin"]}
    assert declared[ID]["tones"] == {"called-right": "good"}
    # The streak moved by the module's rule, not the core's: without it, it stays as hello had it.
    [plain], _ = fold_in_node(case)
    assert plain["streak"] == hello["streak"] == 0
