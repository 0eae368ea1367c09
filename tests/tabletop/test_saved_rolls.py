"""Saved rolls: a player keeps named rolls for their own characters on the server, renames,
changes and forgets them; nobody else's characters, nothing that would not roll."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tabletop.models import Character, SavedRoll

pytestmark = pytest.mark.django_db


def sit(session, name, character=None) -> Client:
    client = Client(enforce_csrf_checks=True)
    body = {"name": name, "character": character.pk if character else None}
    response = client.post(
        f"/play/{session.invite_code}/join", json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 200
    client.cookies.update(response.cookies)
    client.get(f"/play/{session.invite_code}/")  # the room page sets the CSRF cookie
    return client


def send(client, session, method, path="", body=None):
    token = client.cookies["csrftoken"].value
    return getattr(client, method)(
        f"/play/{session.invite_code}/saved{path}",
        json.dumps(body) if body is not None else None,
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )


def test_keep_rename_change_and_forget_a_roll(live_session, campaign):
    wren = Character.objects.create(campaign=campaign, name="Wren")
    ana = sit(live_session, "Ana", wren)
    answer = send(
        ana, live_session, "post", body={"character": wren.pk, "label": "Longsword",
                                          "request": {"notation": "1d20+5"}},
    )  # fmt: skip
    assert answer.status_code == 200, answer.content
    rolls = answer.json()["characters"][0]["rolls"]
    assert [(r["label"], r["system"], r["request"]["notation"]) for r in rolls] == [
        ("Longsword", "generic", "1d20+5")
    ]
    roll_id = rolls[0]["id"]
    answer = send(ana, live_session, "post", f"/{roll_id}", {"label": "Longsword attack"})
    assert answer.json()["characters"][0]["rolls"][0]["label"] == "Longsword attack"
    answer = send(
        ana, live_session, "post", f"/{roll_id}",
        {"label": "Greatsword", "request": {"notation": "2d6+5"}},
    )  # fmt: skip
    assert answer.json()["characters"][0]["rolls"][0]["request"]["notation"] == "2d6+5"
    assert send(ana, live_session, "get").json()["characters"][0]["name"] == "Wren"
    assert send(ana, live_session, "delete", f"/{roll_id}").status_code == 200
    assert not SavedRoll.objects.exists()


def test_refusals_name_the_field_and_keep_nothing(live_session, campaign):
    wren = Character.objects.create(campaign=campaign, name="Wren")
    other = Character.objects.create(campaign=campaign, name="Ossian")
    ana = sit(live_session, "Ana", wren)
    cases = [
        ({"character": other.pk, "label": "X", "request": {"notation": "1d6"}}, 403, None),
        ({"character": wren.pk, "label": "", "request": {"notation": "1d6"}}, 400, "label"),
        ({"character": wren.pk, "label": "X", "request": {"notation": "2d"}}, 400, "request"),
        ({"character": wren.pk, "label": "X", "system": "zoria", "request": {}}, 400, "system"),
        ({"character": "one", "label": "X", "request": {"notation": "1d6"}}, 400, "character"),
    ]
    for body, status, field in cases:
        answer = send(ana, live_session, "post", body=body)
        assert answer.status_code == status, (body, answer.content)
        if field:
            assert answer.json()["error"]["field"].startswith(field), body
    assert not SavedRoll.objects.exists()


@pytest.mark.parametrize(
    ("table", "takes"),
    [
        ("generic", "it takes only 'generic' rolls"),
        ("zoria", "it takes 'zoria' or 'generic' rolls"),
    ],
)
@pytest.mark.parametrize("system", ["zzz", "d6-chance"])
def test_a_roll_of_a_system_the_table_does_not_play_is_refused_naming_what_it_takes(
    live_session, campaign, table, takes, system
):
    type(campaign).objects.filter(pk=campaign.pk).update(system=table)
    wren = Character.objects.create(campaign=campaign, name="Wren")
    ana = sit(live_session, "Ana", wren)
    body = {"character": wren.pk, "label": "A", "system": system, "request": {"notation": "1d6"}}
    answer = send(ana, live_session, "post", body=body)
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert error["field"] == "system"
    assert error["message"] == f"System: '{system}' is not played at this table: {takes}"
    assert not SavedRoll.objects.exists()


def test_another_players_roll_is_not_theirs_to_change(live_session, campaign):
    wren = Character.objects.create(campaign=campaign, name="Wren")
    ossian = Character.objects.create(campaign=campaign, name="Ossian")
    ana = sit(live_session, "Ana", wren)
    bob = sit(live_session, "Bob", ossian)
    roll = send(
        ana, live_session, "post",
        body={"character": wren.pk, "label": "Sneak", "request": {"notation": "1d20"}},
    ).json()["characters"][0]["rolls"][0]  # fmt: skip
    assert send(bob, live_session, "delete", f"/{roll['id']}").status_code == 403
    assert send(bob, live_session, "post", f"/{roll['id']}", {"label": "Mine"}).status_code == 403
    assert SavedRoll.objects.get().label == "Sneak"


def test_outsiders_and_forged_posts_are_refused(live_session, campaign, client):
    assert client.get(f"/play/{live_session.invite_code}/saved").status_code == 403
    wren = Character.objects.create(campaign=campaign, name="Wren")
    ana = sit(live_session, "Ana", wren)
    body = {"character": wren.pk, "label": "X", "request": {"notation": "1d6"}}
    forged = ana.post(
        f"/play/{live_session.invite_code}/saved", json.dumps(body), content_type="application/json"
    )
    assert forged.status_code == 403  # no CSRF token: not from the room page
    assert not SavedRoll.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"label": "Axe", "request": {"notation": "1d8"}, "colour": "red"}, "colour"),
        ({"label": "Axe", "request": "1d8"}, "request"),
        ({"label": "\ud800", "request": {"notation": "1d8"}}, "label"),
        ({"label": "Axe", "request": {"notation": "1d8"}, "character": 1.5}, "character"),
        ({"request": {"notation": "1d8"}}, "label"),
    ],
)
def test_a_bad_body_is_refused_at_the_edge_naming_its_field(live_session, campaign, body, field):
    """The saved-roll body is declared (docs/protocol.md): unknown fields, wrong types and text
    that is not UTF-8 get a 400 naming the field, and nothing is kept."""
    wren = Character.objects.create(campaign=campaign, name="Wren")
    ana = sit(live_session, "Ana", wren)
    answer = send(ana, live_session, "post", body={"character": wren.pk, **body})
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"]["field"] == field
    assert not SavedRoll.objects.exists()


def test_a_sheet_body_takes_only_the_sheet(live_session, campaign):
    wren = Character.objects.create(campaign=campaign, name="Wren")
    ana = sit(live_session, "Ana", wren)
    token = ana.cookies["csrftoken"].value
    answer = ana.post(
        f"/play/{live_session.invite_code}/sheet/{wren.pk}",
        json.dumps({"sheet": {}, "owner": 1}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert answer.status_code == 400
    assert answer.json()["error"]["field"] == "owner"


def test_a_player_with_no_character_keeps_rolls_on_the_seat(live_session, campaign):
    cy = sit(live_session, "Cy")
    empty = send(cy, live_session, "get").json()["characters"]
    assert empty == [{"id": None, "name": "Cy", "rolls": []}]
    body = {"character": None, "label": "Fireball", "request": {"notation": "8d6"}}
    answer = send(cy, live_session, "post", body=body)
    assert answer.status_code == 200, answer.content
    (own,) = answer.json()["characters"]
    assert own["id"] is None and [r["label"] for r in own["rolls"]] == ["Fireball"]
    roll_id = own["rolls"][0]["id"]
    # Nobody else's: another seat can neither change nor forget it.
    wren = Character.objects.create(campaign=campaign, name="Wren")
    ana = sit(live_session, "Ana", wren)
    assert send(ana, live_session, "delete", f"/{roll_id}").status_code == 404
    assert send(ana, live_session, "post", f"/{roll_id}", {"label": "Mine"}).status_code == 404
    # A player with a character names whose roll it is.
    refused = send(ana, live_session, "post", body=body)
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "character"
    assert send(cy, live_session, "post", f"/{roll_id}", {"label": "Big boom"}).status_code == 200
    assert send(cy, live_session, "delete", f"/{roll_id}").status_code == 200
    assert not SavedRoll.objects.exists()


@pytest.mark.parametrize("padding", [20_000, 5_000_000])
def test_a_body_past_what_its_fields_could_hold_is_refused_in_json_unread(
    live_session, campaign, padding
):
    # A 5 MB body was read until Django's own cap refused it, answered with its HTML error page.
    ana = sit(live_session, "Ana")
    body = {"label": "Axe", "request": {"notation": "1d8"}, "pad": "x" * padding}
    answer = send(ana, live_session, "post", body=body)
    assert answer.status_code == 400 and answer["Content-Type"] == "application/json"
    assert answer.json()["error"]["message"].startswith(
        f"the body is {len(json.dumps(body)):,} bytes; at most 16,384 are read here"
    )
    assert not SavedRoll.objects.exists()


def test_a_write_asks_whether_its_player_was_removed_with_the_seats_own_read(
    live_session, campaign
):
    # The write services ask the seat's player again; read apart, that was one more query on
    # every save, rename and delete.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    wren = Character.objects.create(campaign=campaign, name="Wren")
    ana = sit(live_session, "Ana", wren)
    with CaptureQueriesContext(connection) as queries:
        body = {"character": wren.pk, "label": "Axe", "request": {"notation": "1d8"}}
        answer = send(ana, live_session, "post", body=body)
    assert answer.status_code == 200
    alone = [q["sql"] for q in queries if q["sql"].lstrip().startswith('SELECT "tabletop_player"')]
    assert not alone, alone
