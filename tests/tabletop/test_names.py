"""Names at the table: shown as typed minus what hides or reorders text; the GM's title and a
name already taken (or one that looks the same) are refused, with the field named."""

from __future__ import annotations

import json

import pytest

from tabletop.models import Seat
from tabletop.services.errors import ServiceError
from tabletop.services.names import check_player_name, clean_name, skeleton

pytestmark = pytest.mark.django_db

RLO = "\u202e"  # right-to-left override: reverses the rest of a log line
CYRILLIC_EM = "\u041c"


def join(client, session, name):
    return client.post(
        f"/play/{session.invite_code}/join",
        json.dumps({"name": name}),
        content_type="application/json",
    )


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        (f"Ana{RLO}lived", "Analived"),
        ("Bo\u200bb", "Bob"),  # zero-width space
        ("  Cy\tril\u00a0 Lee ", "Cy ril Lee"),
        ("\u2066Dee\u2069", "Dee"),  # isolates
        ("Zo\u00eb", "Zo\u00eb"),
    ],
)
def test_names_lose_what_hides_or_reorders_text(typed, shown):
    assert clean_name(typed) == shown


def test_a_name_of_nothing_shown_is_refused():
    with pytest.raises(ServiceError) as caught:
        clean_name(f"{RLO}\u200b ")
    assert caught.value.field == "name"


@pytest.mark.parametrize(
    "name", ["GM", "gm", "G M", "G.M.", f"G{CYRILLIC_EM}", "\uff27\uff2d", "Game Master", "DM"]
)
def test_nobody_sits_down_as_the_gm(name):
    with pytest.raises(ServiceError) as caught:
        check_player_name(clean_name(name), taken=[])
    assert caught.value.field == "name"


def test_look_alikes_share_a_skeleton():
    assert skeleton("Ana") == skeleton("ANA") == skeleton("\uff21na") == skeleton("\u0410na")
    assert skeleton("Ana") != skeleton("Anna")


def test_a_name_at_the_table_is_refused_when_joining(client, live_session):
    assert join(client, live_session, "Ana").status_code == 200
    for same in ("ana", " ANA ", "\u0410na", f"A{RLO}na"):
        response = join(client.__class__(), live_session, same)
        assert response.status_code == 400, same
        error = response.json()["error"]
        assert error["field"] == "name" and "already" in error["message"]
    response = join(client.__class__(), live_session, "GM")
    assert response.status_code == 400 and response.json()["error"]["field"] == "name"
    assert list(Seat.objects.filter(role="player").values_list("name", flat=True)) == ["Ana"]


def test_the_log_shows_the_cleaned_name(client, live_session):
    body = join(client, live_session, f"Eve{RLO}dam").json()
    assert body["seat"]["name"] == "Evedam"
