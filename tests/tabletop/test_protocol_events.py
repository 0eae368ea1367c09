"""Events out: the log line a person reads comes from the catalogue, in the players' words."""

from __future__ import annotations

import pytest

from tabletop.protocol.events import catalogue, log_line, use_words, with_log_line
from tabletop.services.seats import join_session

from .commands import rolled

pytestmark = pytest.mark.django_db

SPEND = {
    "action": "spend",
    "character": {"id": 1, "name": "Sera"},
    "amount": 1,
    "resources": [{"character": 1, "name": "luck", "amount": 1}],
    "text": "Sera spends 1 luck: avoid costly luck",
}


USES = (
    "survive",
    "avoid-costly",
    "avoid-costly-luck",
    "extra-success",
    "double-base",
    "add-luck-die",
    "protect",
)


@pytest.mark.parametrize("use", USES)
def test_a_spend_reads_in_the_players_words_never_an_internal_id(use):
    assert use_words(use) is not None  # the system declared them
    text = with_log_line(kind="pool", data={**SPEND, "use": use}, actor="Ana")["text"]
    assert text.startswith("Sera spends 1 Luck") and "-" not in text


def test_a_take_back_names_what_and_from_whom():
    data = {**SPEND, "action": "award", "amount": -2, "resources": [{**SPEND["resources"][0]}]}
    data["text"] = "x"
    assert with_log_line(kind="pool", data=data, actor="GM")["text"] == (
        "GM takes back 2 Luck from Sera"
    )


def test_a_rolls_stored_text_is_the_engines_and_its_log_line_names_the_roller_once(live_session):
    seat = join_session(session=live_session, name="Kira").seat
    roll = rolled(seat_id=seat.pk, request={"notation": "4d6kh3"})
    assert not roll.data["text"].startswith("Kira")
    line = log_line(kind="roll", data=roll.data, actor="Kira")
    assert line == f"Kira: {roll.data['text']}"


def test_every_kind_says_who_sees_it_and_what_it_records():
    for definition in catalogue():
        assert definition.visibilities and definition.rule and definition.doc, definition.name
