"""Sheets and settings from the forms: checked against the system's schema, a player's own
characters only, settings by the GM only; a bad value names its field and changes nothing."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from tabletop.models import Campaign, Character
from tabletop.selectors.room import table_states
from tabletop.services.sessions import create_session, start_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def zoria(gm):
    campaign = Campaign.objects.create(name="Zoria", system="zoria", gm=gm)
    session = start_session(session_id=create_session(campaign=campaign, title="One").pk)
    kael = Character.objects.create(campaign=campaign, name="Kael", sheet={"level": 7})
    pip = Character.objects.create(campaign=campaign, name="Pip", sheet={"level": 3})
    return session, kael, pip


def sit(session, name, character) -> Client:
    client = Client(enforce_csrf_checks=True)
    body = json.dumps({"name": name, "character": character.pk})
    response = client.post(
        f"/play/{session.invite_code}/join", body, content_type="application/json"
    )
    client.cookies.update(response.cookies)
    client.get(f"/play/{session.invite_code}/")
    return client


def page_json(response) -> dict:
    """What a room or dashboard page hands its scripts (its json_script)."""
    found = re.search(
        r'<script id="\w+-data" type="application/json">(.*?)</script>', response.text
    )
    assert found, "the page carries its data"
    return json.loads(found.group(1))


def post(client, url, body):
    return client.post(
        url,
        json.dumps(body),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )


def test_a_player_edits_their_own_sheet_only(zoria):
    session, kael, pip = zoria
    ana = sit(session, "Ana", kael)
    url = f"/play/{session.invite_code}/sheet/{kael.pk}"
    answer = post(ana, url, {"sheet": {"level": 8, "skills": {"Swords": 6}}})
    assert answer.status_code == 200, answer.content
    kael.refresh_from_db()
    assert kael.sheet["level"] == 8 and kael.sheet["skills"] == {"Swords": 6}
    bad = post(ana, url, {"sheet": {"level": -3}})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "sheet.level"
    kael.refresh_from_db()
    assert kael.sheet["level"] == 8
    other = post(ana, f"/play/{session.invite_code}/sheet/{pip.pk}", {"sheet": {"level": 9}})
    assert other.status_code == 403
    pip.refresh_from_db()
    assert pip.sheet["level"] == 3


def test_settings_are_the_gms(zoria, gm):
    session, kael, _ = zoria
    ana = sit(session, "Ana", kael)
    url = f"/play/{session.invite_code}/settings"
    assert post(ana, url, {"settings": {"multi_character": "divided"}}).status_code == 403
    boss = Client(enforce_csrf_checks=True)
    boss.force_login(gm)
    boss.get(f"/play/{session.invite_code}/")
    answer = post(boss, url, {"settings": {"multi_character": "divided"}})
    assert answer.status_code == 200, answer.content
    session.campaign.refresh_from_db()
    assert session.campaign.settings["multi_character"] == "divided"
    bad = post(boss, url, {"settings": {"multi_character": "everyone"}})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "settings.multi_character"


def test_a_sheet_past_its_limits_is_refused_in_plain_words_and_changes_nothing(zoria):
    session, kael, _ = zoria
    ana = sit(session, "Ana", kael)
    url = f"/play/{session.invite_code}/sheet/{kael.pk}"
    # 2.4 MB of skills: refused from the body's size, before it is read as JSON.
    huge = post(ana, url, {"sheet": {"skills": {f"Skill {i:06}": 1 for i in range(100_000)}}})
    assert huge.status_code == 400
    assert "at most 65,536 are read here" in huge.json()["error"]["message"]
    # Under the body's size but past a field's count: the field is named.
    many = post(ana, url, {"sheet": {"skills": {f"Skill {i}": 1 for i in range(201)}}})
    assert many.status_code == 400 and many.json()["error"]["field"] == "sheet.skills"
    assert "at most 200 entries" in many.json()["error"]["message"]
    kael.refresh_from_db()
    assert kael.sheet == {"level": 7}


def test_a_name_holding_nul_is_refused_in_plain_words_and_changes_nothing(zoria):
    session, kael, _ = zoria
    ana = sit(session, "Ana", kael)
    url = f"/play/{session.invite_code}/sheet/{kael.pk}"
    # PostgreSQL cannot keep it in a JSON key: it is refused before the database sees it.
    answer = post(ana, url, {"sheet": {"skills": {"Blast\x00er": 4}}})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "invalid" and error["field"] == "sheet.skills"
    assert "NUL" in error["message"]
    kael.refresh_from_db()
    assert kael.sheet == {"level": 7}


def test_the_room_page_shows_each_fields_size_in_the_sheet_schema(zoria):
    session, kael, _ = zoria
    ana = sit(session, "Ana", kael)
    page = ana.get(f"/play/{session.invite_code}/").content.decode()
    data = json.loads(
        page.split('id="room-data" type="application/json">', 1)[1].split("</script>")[0]
    )
    fields = {f["name"]: f for f in data["sheet_schema"]}
    assert fields["class"]["max_length"] == 100
    assert fields["skills"]["max_items"] == 200


def test_a_sheet_stored_before_the_limits_is_not_sent_whole_and_can_be_replaced(zoria, gm):
    session, kael, _pip = zoria
    # As a sheet saved before sheets had limits can be: megabytes, and no longer valid.
    legacy = {"level": 7, "notes": "x" * 2_400_000}
    Character.objects.filter(pk=kael.pk).update(sheet=legacy)
    ana = sit(session, "Ana", kael)
    room = ana.get(f"/play/{session.invite_code}/")
    client = Client()
    client.force_login(gm)
    dashboard = client.get(f"/gm/{session.pk}/")
    for page in (room, dashboard):
        assert page.status_code == 200
        assert len(page.content) < 200_000 and b"xxxxxxxxxx" not in page.content
    (mine,) = page_json(room)["sheets"]
    assert mine["sheet"] is None and mine["too_large"] == {"kib": 2344, "limit_kib": 64}
    shown = {c["name"]: c for c in page_json(dashboard)["characters"]}
    assert shown["Kael"]["too_large"]["kib"] == 2344 and shown["Pip"]["sheet"] == {"level": 3}
    # The socket's hello carries the room's characters: not that sheet either.
    (state,) = table_states([session]).values()
    assert len(json.dumps(state)) < 200_000
    # Its player (or the GM) saves a new sheet in its place; it is shown again.
    url = f"/play/{session.invite_code}/sheet/{kael.pk}"
    assert post(ana, url, {"sheet": {"level": 8}}).status_code == 200
    (mine,) = page_json(ana.get(f"/play/{session.invite_code}/"))["sheets"]
    assert mine["sheet"]["level"] == 8 and "too_large" not in mine


def test_quick_rolls_are_told_only_when_they_change(zoria, monkeypatch):
    from tabletop.services import sheets

    told = []
    monkeypatch.setattr(sheets, "notice_on_commit", lambda **kw: told.append(kw["notice"]["rolls"]))
    session, kael, _ = zoria
    ana = sit(session, "Ana", kael)
    url = f"/play/{session.invite_code}/sheet/{kael.pk}"
    sheet = {"level": 8, "skills": {"Swords": 6}}
    assert post(ana, url, {"sheet": sheet}).status_code == 200
    assert len(told) == 1 and "Swords" in [roll["label"] for roll in told[0]]
    # The same sheet again, then one whose change leaves the quick rolls as they were.
    assert post(ana, url, {"sheet": sheet}).status_code == 200
    answer = post(ana, url, {"sheet": {**sheet, "class": "Ranger"}})
    assert answer.status_code == 200 and answer.json()["sheet"]["class"] == "Ranger"
    kael.refresh_from_db()
    assert kael.sheet["class"] == "Ranger"
    assert len(told) == 1
    assert post(ana, url, {"sheet": {**sheet, "skills": {"Swords": 7}}}).status_code == 200
    assert len(told) == 2


def refused_for_saving_too_much(answer) -> int:
    """The seconds a 429 asks to wait, checking it says so in plain words."""
    assert answer.status_code == 429, answer.content
    error = answer.json()["error"]
    assert error["code"] == "rate-limited"
    assert "this seat has saved a lot" in error["message"]
    seconds = int(answer["Retry-After"])
    assert f"try again in {seconds} s" in error["message"]
    return seconds


def test_a_seat_saving_sheets_too_often_is_told_to_wait_and_changes_nothing(zoria, settings):
    settings.TABLETOP = {**settings.TABLETOP, "WRITES_PER_SECOND": 0.1, "WRITES_BURST": 3}
    session, kael, pip = zoria
    ana = sit(session, "Ana", kael)
    url = f"/play/{session.invite_code}/sheet/{kael.pk}"
    for level in (1, 2, 3):
        assert post(ana, url, {"sheet": {"level": level}}).status_code == 200
    assert refused_for_saving_too_much(post(ana, url, {"sheet": {"level": 4}})) == 10
    kael.refresh_from_db()
    assert kael.sheet["level"] == 3
    # Each seat has its own budget.
    bo = sit(session, "Bo", pip)
    assert post(bo, f"/play/{session.invite_code}/sheet/{pip.pk}", {"sheet": {}}).status_code == 200


def test_a_seat_sending_large_sheets_is_held_to_its_bytes(zoria, settings):
    settings.TABLETOP = {
        **settings.TABLETOP,
        "WRITE_BYTES_PER_SECOND": 1000,
        "WRITE_BYTES_BURST": 3000,
    }
    session, kael, _ = zoria
    ana = sit(session, "Ana", kael)
    url = f"/play/{session.invite_code}/sheet/{kael.pk}"
    skills = {f"Skill number {i:03}": 1 for i in range(150)}  # ~4.5 KB
    assert post(ana, url, {"sheet": {"skills": skills}}).status_code == 200
    assert refused_for_saving_too_much(post(ana, url, {"sheet": {"level": 1}})) >= 1
    kael.refresh_from_db()
    assert kael.sheet["skills"] == skills


def test_a_body_sent_without_its_length_counts_as_the_most_the_endpoint_reads(zoria, settings):
    # Charged from Content-Length alone, a body sent without one cost nothing of the budget.
    settings.TABLETOP = {
        **settings.TABLETOP,
        "WRITE_BYTES_PER_SECOND": 1,
        "WRITE_BYTES_BURST": 100_000,
    }
    session, kael, _ = zoria
    ana = sit(session, "Ana", kael)
    url = f"/play/{session.invite_code}/sheet/{kael.pk}"
    token = ana.cookies["csrftoken"].value
    unmeasured = {"content_type": "application/json", "HTTP_X_CSRFTOKEN": token}
    for _ in range(2):  # 64 KiB each, the most a sheet's body may be
        assert ana.post(url, "{}", CONTENT_LENGTH="", **unmeasured).status_code in (200, 400)
    assert refused_for_saving_too_much(ana.post(url, "{}", CONTENT_LENGTH="", **unmeasured)) >= 1


def test_settings_and_saved_rolls_share_the_seats_budget(zoria, gm, settings):
    from tabletop.models import SavedRoll

    settings.TABLETOP = {**settings.TABLETOP, "WRITES_PER_SECOND": 0.1, "WRITES_BURST": 2}
    session, kael, _ = zoria
    boss = Client(enforce_csrf_checks=True)
    boss.force_login(gm)
    boss.get(f"/play/{session.invite_code}/")
    url = f"/play/{session.invite_code}/settings"
    for value in ("divided", "divided"):
        assert post(boss, url, {"settings": {"multi_character": value}}).status_code == 200
    refused_for_saving_too_much(post(boss, url, {"settings": {"multi_character": "each"}}))
    session.campaign.refresh_from_db()
    assert session.campaign.settings["multi_character"] == "divided"

    ana = sit(session, "Ana", kael)
    saved = f"/play/{session.invite_code}/saved"
    roll = {"character": kael.pk, "label": "Swing", "request": {"check": "1d20+3"}}
    answer = post(ana, saved, roll)
    assert answer.status_code == 200, answer.content
    roll_id = answer.json()["characters"][0]["rolls"][0]["id"]
    assert post(ana, f"{saved}/{roll_id}", {"label": "Big swing"}).status_code == 200
    refused_for_saving_too_much(post(ana, saved, {**roll, "label": "Another"}))
    refused_for_saving_too_much(post(ana, f"{saved}/{roll_id}", {"label": "Huge swing"}))
    token = ana.cookies["csrftoken"].value
    refused_for_saving_too_much(ana.delete(f"{saved}/{roll_id}", HTTP_X_CSRFTOKEN=token))
    assert [r.label for r in SavedRoll.objects.all()] == ["Big swing"]
    # Reading them costs nothing.
    assert ana.get(saved).status_code == 200
