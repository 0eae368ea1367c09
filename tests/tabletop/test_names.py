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


# Spellings of the GM's title a player must not sit down under: look-alike letters of other
# scripts, small capitals, full-width and mathematical letters, fillers and invisible
# characters around or inside it, an article before it.
HANGUL_FILLER, CHOSEONG_FILLER, HALFWIDTH_FILLER = "\u3164", "\u115f", "\uffa0"
GM_SPELLINGS = [
    "GM",
    "gm",
    "G M",
    "G.M.",
    f"G{CYRILLIC_EM}",  # Cyrillic capital EM
    "G\u043c",  # Cyrillic small em: a small-capital M
    "\u050cM",  # Cyrillic KOMI SJE
    "\u13c0\u13b7",  # Cherokee GE, LU
    "\u0262\u1d0d",  # small capitals
    "\uff27\uff2d",  # full width
    "\U0001d406\U0001d40c",  # mathematical bold
    "\u210a\U0001d4c2",  # script small g, m
    "\u24d6\u24dc",  # circled
    "G\u1d39",  # modifier capital M
    f"GM{HANGUL_FILLER}",
    f"{CHOSEONG_FILLER}GM",
    f"G{HALFWIDTH_FILLER}M",
    "G\u200bM",  # zero-width space
    "GM\u200d",  # zero-width joiner
    "\u2060GM",  # word joiner
    "G\u034fM",  # combining grapheme joiner
    "GM\ufe0f",  # variation selector
    "G\u00adM",  # soft hyphen
    "G\u0308M",  # a mark on the G
    "Grn",  # r n reads as m
    "The GM",
    "the gm",
    f"The{HANGUL_FILLER}GM",
    "\uff34\uff48\uff45 \uff27\uff2d",
    "Your DM",
    "Game Master",
    "the Game-Master",
    "DM",
    "Dungeon Master",
]


@pytest.mark.parametrize("name", GM_SPELLINGS)
def test_no_spelling_of_the_gms_title_is_a_players_name(name):
    with pytest.raises(ServiceError) as caught:
        check_player_name(clean_name(name), taken=[])
    assert caught.value.field == "name" and "GM's title" in caught.value.message


@pytest.mark.parametrize(
    "name",
    ["Gemma", "Ma Gm", "Theo", "Gus Mayer", "The Bard", "Amelia", "Sam", "\u0417\u043e\u044f"],
)
def test_names_near_the_title_but_not_it_are_fine(name):
    check_player_name(clean_name(name), taken=["Ana"])


@pytest.mark.parametrize(
    "same",
    [
        f"Ana{HANGUL_FILLER}",
        f"{CHOSEONG_FILLER}Ana",
        "A\u200bna",
        "\u0410na",  # Cyrillic A
        "\u0391na",  # Greek Alpha
        "\u1d00na",  # small capital A
        "\uff21\uff4e\uff41",
        "ANA",
        "A n a",
    ],
)
def test_another_seats_name_with_a_filler_or_look_alike_is_taken(same):
    with pytest.raises(ServiceError) as caught:
        check_player_name(clean_name(same), taken=["Ana"])
    assert "already" in caught.value.message


@pytest.mark.parametrize(
    "blank", [HANGUL_FILLER, CHOSEONG_FILLER, HALFWIDTH_FILLER, "\u2800", "\u180e"]
)
def test_a_name_of_fillers_alone_is_refused(blank):
    with pytest.raises(ServiceError) as caught:
        clean_name(blank * 3)
    assert caught.value.field == "name"


def test_fillers_leave_the_shown_name():
    assert clean_name(f"Bo{HANGUL_FILLER}b{CHOSEONG_FILLER}") == "Bo b"
    assert clean_name("Bo\u200bb\u2060") == "Bob"


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
