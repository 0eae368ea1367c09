"""Sheets and settings from the forms: checked against the system's schema, a player's own
characters only, settings by the GM only; a bad value names its field and changes nothing."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tabletop.models import Campaign, Character
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
