"""Dice statistics from the event store: what each viewer may count, the endpoints, the command,
and a roll made over the socket showing up in the figures."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from tabletop.selectors.events import Viewer
from tabletop.services.export import viewer_for_seat
from tabletop.services.rolls import reveal_roll
from tabletop.services.seats import gm_seat, join_session
from tabletop.services.sessions import end_session
from tabletop.services.stats import session_stats
from tabletop.services.watch import SPECTATOR, create_watch_link

from .commands import rolled

pytestmark = pytest.mark.django_db


def figures(report) -> dict[tuple[str, str], int]:
    return {(s["who"], d["die"]): d["n"] for s in report["seats"] for d in s["dice"]}


@pytest.fixture
def table(live_session, gm):
    ana = join_session(session=live_session, name="Ana")
    bo = join_session(session=live_session, name="Bo")
    gm_at = gm_seat(session=live_session, user=gm)
    rolled(seat_id=ana.seat.pk, request={"notation": "3d6"})
    rolled(seat_id=bo.seat.pk, request={"notation": "d20"}, visibility="self")
    blind = rolled(seat_id=gm_at.pk, request={"notation": "2d20"}, visibility="blind")
    rolled(seat_id=ana.seat.pk, request={"notation": "d20"}, visibility="gm")
    return {"session": live_session, "ana": ana, "bo": bo, "gm": gm_at, "blind": blind}


def test_each_viewer_counts_only_the_dice_it_may_see(table):
    session = table["session"]
    ana = figures(session_stats(session=session, viewer=viewer_for_seat(table["ana"].seat)))
    assert ana == {
        ("Whole table", "d6"): 3,
        ("Whole table", "d20"): 1,
        ("Ana", "d6"): 3,
        ("Ana", "d20"): 1,
    }
    bo = figures(session_stats(session=session, viewer=viewer_for_seat(table["bo"].seat)))
    assert bo == {
        ("Whole table", "d6"): 3,
        ("Whole table", "d20"): 1,
        ("Ana", "d6"): 3,
        ("Bo", "d20"): 1,
    }
    spectator = session_stats(session=session, viewer=SPECTATOR)
    assert figures(spectator) == {("Whole table", "d6"): 3, ("Ana", "d6"): 3}
    assert spectator["hidden"] == 3 and spectator["rolls"] == 1
    # The GM sees gm and blind rolls while live; every die once the session has ended.
    live_gm = figures(session_stats(session=session, viewer=viewer_for_seat(table["gm"])))
    assert live_gm[("Whole table", "d20")] == 3 and ("Bo", "d20") not in live_gm
    end_session(session_id=session.pk)
    session.refresh_from_db()
    ended_gm = figures(session_stats(session=session, viewer=viewer_for_seat(table["gm"])))
    assert ended_gm[("Whole table", "d20")] == 4 and ended_gm[("Bo", "d20")] == 1
    # A player still counts only what was theirs to see.
    assert figures(session_stats(session=session, viewer=viewer_for_seat(table["ana"].seat))) == ana


def test_a_revealed_roll_counts_once(table):
    reveal_roll(seat=table["gm"], seq=table["blind"].seq)
    session = table["session"]
    for viewer in (SPECTATOR, viewer_for_seat(table["gm"]), viewer_for_seat(table["ana"].seat)):
        counted = figures(session_stats(session=session, viewer=viewer))
        assert counted[("GM", "d20")] == 2


def test_the_endpoints_answer_seats_spectators_and_the_gm(client, table, gm):
    code = table["session"].invite_code
    assert client.get(f"/play/{code}/stats").status_code == 403
    mine = client.get(f"/play/{code}/stats", {"token": table["ana"].token}).json()
    assert mine["scope"] == "session" and mine["seats"][0]["who"] == "Whole table"
    link = create_watch_link(session=table["session"], user=gm)
    assert figures(client.get(f"/watch/{link.code}/stats").json()) == {
        ("Whole table", "d6"): 3,
        ("Ana", "d6"): 3,
    }
    assert client.get(f"/gm/{table['session'].pk}/stats").status_code == 302  # log in first
    client.force_login(gm)
    campaign = client.get(f"/gm/{table['session'].pk}/stats", {"scope": "campaign"}).json()
    assert campaign["scope"] == "campaign" and campaign["title"] == "Night Market"
    assert client.get(f"/gm/{table['session'].pk}/stats", {"scope": "x"}).status_code == 400


def test_manage_py_dicestats_for_a_session_and_a_campaign(table):
    session = table["session"]
    end_session(session_id=session.pk)
    out = io.StringIO()
    call_command("dicestats", session.invite_code, stdout=out)
    text = out.getvalue()
    assert "4 rolls counted" in text and "Whole table" in text and "Bo" in text
    assert "4 d20s: too few rolls to tell: about " in text
    out = io.StringIO()
    call_command("dicestats", str(session.campaign_id), "--json", stdout=out)
    assert '"scope": "campaign"' in out.getvalue()


def test_a_viewer_of_nothing_gets_an_empty_report(live_session):
    report = session_stats(session=live_session, viewer=Viewer(seat_id=None, is_gm=False))
    assert report == {
        "scope": "session",
        "title": "Session one",
        "rolls": 0,
        "hidden": 0,
        "seats": [],
    }


def test_a_refresh_counts_only_what_is_new(table, django_assert_num_queries):
    session, ana = table["session"], viewer_for_seat(table["ana"].seat)
    first = figures(session_stats(session=session, viewer=ana))
    rolled(seat_id=table["ana"].seat.pk, request={"notation": "2d6"})
    with django_assert_num_queries(1):  # the events after the last one counted, nothing more
        again = figures(session_stats(session=session, viewer=ana))
    assert again[("Ana", "d6")] == first[("Ana", "d6")] + 2
    # A reveal of a roll counted before as hidden still counts once.
    reveal_roll(seat=table["gm"], seq=table["blind"].seq)
    assert figures(session_stats(session=session, viewer=ana))[("GM", "d20")] == 2


def test_manage_py_verify_can_report_every_die_once_the_session_has_ended(table):
    session = table["session"]
    end_session(session_id=session.pk)
    out = io.StringIO()
    call_command("verify", session.invite_code, "--stats", stdout=out)
    text = out.getvalue()
    assert "every die verified" in text and "4 rolls counted" in text
    assert "hidden rolls not counted" not in text


def test_each_seat_says_how_many_of_its_rolls_were_counted(table):
    report = session_stats(session=table["session"], viewer=viewer_for_seat(table["ana"].seat))
    rolls = {s["who"]: s["rolls"] for s in report["seats"]}
    assert rolls == {"Whole table": 2, "Ana": 2}
    assert report["rolls"] == 2


def test_a_viewer_and_a_watch_link_spend_at_most_their_seconds_a_minute(
    client, table, gm, settings
):
    # A budget of a millionth of a second a minute: the first request is answered (the budget
    # starts full), what it took puts it in debt, and the next is refused until that is paid.
    settings.TABLETOP = {
        **settings.TABLETOP,
        "STATS_SECONDS_PER_MINUTE": 1e-6,
        "LINK_STATS_SECONDS_PER_MINUTE": 1e-6,
    }
    code, token = table["session"].invite_code, table["ana"].token
    assert client.get(f"/play/{code}/stats", {"token": token}).status_code == 200
    refused = client.get(f"/play/{code}/stats", {"token": token})
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert refused.json()["error"]["code"] == "rate-limited"
    assert "one viewer may use 1e-06 s of it a minute" in refused.json()["error"]["message"]
    # Another seat has a budget of its own.
    assert client.get(f"/play/{code}/stats", {"token": table["bo"].token}).status_code == 200
    # A watch link's spectators share one, whatever address they come from.
    link = create_watch_link(session=table["session"], user=gm)
    assert client.get(f"/watch/{link.code}/stats", REMOTE_ADDR="10.0.0.1").status_code == 200
    shared = client.get(f"/watch/{link.code}/stats", REMOTE_ADDR="10.0.0.2")
    assert shared.status_code == 429 and "one watch link" in shared.json()["error"]["message"]


def test_a_process_works_out_a_few_reports_at_once(client, table, settings):
    settings.TABLETOP = {**settings.TABLETOP, "STATS_IN_FLIGHT": 0}
    code, token = table["session"].invite_code, table["ana"].token
    busy = client.get(f"/play/{code}/stats", {"token": token})
    assert busy.status_code == 503 and busy["Retry-After"] == "2"
    assert busy.json()["error"] == {
        "code": "busy",
        "message": "The server is working out other statistics just now. "
        "Try again in a few seconds.",
        "field": None,
    }
    settings.TABLETOP = {**settings.TABLETOP, "STATS_IN_FLIGHT": 1}
    assert client.get(f"/play/{code}/stats", {"token": token}).status_code == 200
    assert client.get(f"/play/{code}/stats", {"token": token}).status_code == 200  # given back
