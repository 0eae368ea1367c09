"""Dice anyone can verify: commitment first, seed last, every die recomputable."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from rules.engines.fair import FairStream
from tabletop.models import Event, Seat
from tabletop.services.events import change
from tabletop.services.rolls import reveal_roll
from tabletop.services.seats import gm_seat, join_session
from tabletop.services.sessions import end_session

from .commands import body, rolled

pytestmark = pytest.mark.django_db


def play_a_session(session, gm) -> list[Event]:
    ana = join_session(session=session, name="Ana").seat
    gm_at_table = gm_seat(session=session, user=gm)
    rolls = [
        rolled(seat_id=ana.pk, request={"notation": "4d6kh3+2"}, client_seed="ana-1"),
        rolled(seat_id=ana.pk, request={"notation": "4dF"}, client_seed="fudge"),
        rolled(seat_id=ana.pk, request={"notation": "2d1000+d300"}),  # > 256 sides: 4-byte draws
        rolled(seat_id=ana.pk, request={"notation": "10d10!>9"}, visibility="self"),
        rolled(seat_id=gm_at_table.pk, request={"notation": "d20"}, visibility="blind"),
    ]
    reveal_roll(seat=gm_at_table, seq=rolls[-1].seq)
    return rolls


def verify(code: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify", code, stdout=out)
    except CommandError as exc:
        return 1, out.getvalue() + str(exc)
    return 0, out.getvalue()


def test_dice_come_from_the_published_stream(live_session, gm):
    rolls = play_a_session(live_session, gm)
    seed = bytes(live_session.server_seed)
    first = rolls[0].data
    stream = FairStream(seed, "ana-1", rolls[0].seq)
    assert [d["value"] for d in first["dice"]] == [stream.roll(d["sides"]) for d in first["dice"]]
    assert all("sides" in d for r in rolls for d in r.data["dice"])


def test_an_honest_session_verifies(live_session, gm):
    play_a_session(live_session, gm)
    end_session(session_id=live_session.pk)
    status, text = verify(live_session.invite_code)
    assert status == 0, text
    assert "seed matches the commitment" in text
    assert "5 of 5 events with dice verified" in text  # the reveal repeats a roll; it draws none
    assert "every die verified" in text


def test_tampering_with_one_die_is_caught_and_named(live_session, gm):
    rolls = play_a_session(live_session, gm)
    end_session(session_id=live_session.pk)
    target = rolls[2]
    data = json.loads(json.dumps(target.data))
    data["dice"][1]["value"] = data["dice"][1]["value"] % 1000 + 1
    Event.objects.filter(pk=target.pk).update(data=data)  # what a cheating server would do
    status, text = verify(live_session.invite_code)
    assert status == 1
    assert f"MISMATCH event #{target.seq}" in text
    assert text.count("MISMATCH") == 1


def test_a_swapped_seed_is_caught(live_session, gm):
    play_a_session(live_session, gm)
    end_session(session_id=live_session.pk)
    type(live_session).objects.filter(pk=live_session.pk).update(server_seed=b"\x00" * 32)
    status, text = verify(live_session.invite_code)
    assert status == 1 and "DOES NOT MATCH" in text


def test_verify_refuses_a_live_session(live_session):
    status, text = verify(live_session.invite_code)
    assert status == 1 and "has not ended" in text


def test_the_commitment_is_published_before_the_first_roll(client, live_session):
    joined = client.post(
        f"/play/{live_session.invite_code}/join",
        json.dumps({"name": "Ana"}),
        content_type="application/json",
    ).json()
    answer = client.get(f"/play/{live_session.invite_code}/record", {"token": joined["token"]})
    record = json.loads(body(answer))
    assert record["fairness"] == {"commitment": live_session.commitment, "server_seed": None}
    assert not any(e["kind"] == "roll" for e in record["events"])
    assert hashlib.sha256(bytes(live_session.server_seed)).hexdigest() == live_session.commitment


def test_the_seed_appears_nowhere_before_the_end(client, live_session, gm, caplog):
    caplog.set_level(logging.DEBUG)
    seed_hex = bytes(live_session.server_seed).hex()
    play_a_session(live_session, gm)
    code = live_session.invite_code
    seen = []
    player = client.__class__()
    player.post(f"/play/{code}/join", {"name": "Bo"})
    for url in (f"/play/{code}/", f"/play/{code}/record", f"/play/{code}/verify", "/"):
        seen.append(body(player.get(url)).decode())
    client.force_login(gm)
    gm.is_superuser = True
    gm.save()
    for url in (
        f"/play/{code}/",
        f"/play/{code}/record",
        f"/gm/{live_session.pk}/",
        "/",
        f"/admin/tabletop/gamesession/{live_session.pk}/change/",
        "/admin/tabletop/gamesession/",
        "/admin/tabletop/event/",
    ):
        seen.append(body(client.get(url)).decode())
    for event in Event.objects.filter(session=live_session):
        seen.append(client.get(f"/admin/tabletop/event/{event.pk}/change/").content.decode())
        seen.append(json.dumps(event.data))
    seen.append(caplog.text)
    assert not any(seed_hex in text or seed_hex.upper() in text for text in seen)
    # ...and after the end it is everywhere it should be
    end_session(session_id=live_session.pk)
    assert seed_hex in body(client.get(f"/play/{code}/record")).decode()


def test_the_record_redacts_what_a_seat_may_not_see(client, live_session, gm):
    play_a_session(live_session, gm)
    code = live_session.invite_code
    client.post(f"/play/{code}/join", {"name": "Bo"})
    events = json.loads(body(client.get(f"/play/{code}/record")))["events"]
    self_roll = next(e for e in events if e["visibility"] == "self")
    assert self_roll["data"] == {"hidden": True}
    assert Seat.objects.filter(session=live_session).count() == 3


@pytest.mark.parametrize("sides", [2, 3, 4, 6, 8, 10, 12, 20, 100, 1000])
def test_each_common_die_is_uniform_chi_square(sides):
    # 600 draws per face from one fixed seed; critical values at p = 0.001 (Wilson-Hilferty).
    per_face = 600
    counts = [0] * sides
    seed = hashlib.sha256(b"chi-square").digest()
    draws = 0
    seq = 0
    while draws < per_face * sides:
        seq += 1
        stream = FairStream(seed, "chi", seq)
        for _ in range(50):
            counts[stream.roll(sides) - 1] += 1
            draws += 1
    expected = draws / sides
    chi2 = sum((c - expected) ** 2 / expected for c in counts)
    k = sides - 1
    z = 3.090  # one-sided 0.001
    critical = k * (1 - 2 / (9 * k) + z * (2 / (9 * k)) ** 0.5) ** 3
    assert chi2 < critical, (sides, chi2, critical)


def dice_of(data: dict) -> list[int]:
    return [d["value"] for d in data["dice"]]


def recomputed(seed: bytes, client_seed: str, seq: int, data: dict) -> list[int]:
    stream = FairStream(seed, client_seed, seq)
    return [stream.roll(d["sides"]) for d in data["dice"]]


def test_a_roll_sent_without_a_client_seed_gets_a_fresh_one_as_hidden_as_the_roll(
    client, live_session, gm
):
    ana = join_session(session=live_session, name="Ana")
    bo = join_session(session=live_session, name="Bo")
    hidden = [
        rolled(seat_id=ana.seat.pk, request={"notation": "4d20"}, visibility="gm") for _ in range(3)
    ]
    public = rolled(seat_id=ana.seat.pk, request={"notation": "4d20"})
    seeds = [e.data["client_seed"] for e in [*hidden, public]]
    assert all(re.fullmatch(r"[0-9a-f]{32}", s) for s in seeds) and len(set(seeds)) == 4
    end_session(session_id=live_session.pk)
    code = live_session.invite_code
    theirs = body(client.get(f"/play/{code}/record", {"token": bo.token})).decode()
    seed = bytes.fromhex(json.loads(theirs)["fairness"]["server_seed"])
    # Bo (and any spectator) holds the revealed seed, but not the hidden rolls' client seeds:
    # the default seed "" no longer recomputes them.
    for event in hidden:
        assert event.data["client_seed"] not in theirs
        assert recomputed(seed, "", event.seq, event.data) != dice_of(event.data)
    # The roller (and the GM) verify them, the public roll anyone.
    record = json.loads(body(client.get(f"/play/{code}/record", {"token": ana.token})))
    mine = {e["seq"]: e["data"] for e in record["events"] if e["kind"] == "roll"}
    for event in [*hidden, public]:
        data = mine[event.seq]
        assert recomputed(seed, data["client_seed"], event.seq, data) == dice_of(event.data)
    status, text = verify(code)
    assert status == 0 and "4 of 4 events with dice verified" in text, text


def test_every_table_path_that_draws_dice_draws_a_fresh_client_seed_when_none_is_sent(gm):
    from tabletop.models import Campaign, Character
    from tabletop.services.sessions import create_session, start_session
    from tabletop.systems import discordian, zoria

    def table(system, sheet):
        campaign = Campaign.objects.create(name=system, system=system, gm=gm)
        hero = Character.objects.create(campaign=campaign, name="Hero", sheet=sheet)
        session = start_session(session_id=create_session(campaign=campaign, title="T").pk)
        seat = join_session(session=session, name="Ana", character_id=hero.pk).seat
        return session, hero, seat, gm_seat(session=session, user=gm)

    session, _, _, gm_at = table("discordian", {"hero_dice": ["d6"]})
    discord = discordian.roll_discord_die(seat_id=gm_at.pk)
    session, hero, ana, _ = table("zoria", {"level": 7})
    with change(None) as uow:
        zoria.deal_pool(uow, seat=Seat.objects.select_related("session__campaign").get(pk=ana.pk))
    check = rolled(seat_id=ana.pk, request={"check": "1d20"}, character=hero.pk)
    used = zoria.use_die(seat_id=ana.pk, roll=check.seq)
    for event in (discord, check, used):
        assert re.fullmatch(r"[0-9a-f]{32}", event.data["client_seed"]), event.data
        seed = bytes(type(session).objects.get(pk=event.session_id).server_seed)
        assert recomputed(seed, event.data["client_seed"], event.seq, event.data) == dice_of(
            event.data
        )
