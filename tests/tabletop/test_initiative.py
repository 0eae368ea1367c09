"""Turn order: rolls marked initiative and the GM's NPCs sorted by result (ties: who was there
first), whose turn it is, rounds (the system's own where it keeps rounds: one round, started
once), delay and act, and who may do what."""

from __future__ import annotations

import pytest

from tabletop.models import Campaign, Character, GameSession
from tabletop.services.errors import ServiceError
from tabletop.services.initiative import place
from tabletop.services.seats import gm_seat, join_session
from tabletop.services.sessions import create_session, end_session, start_session

from .commands import send

pytestmark = pytest.mark.django_db


def order(session: GameSession) -> list[tuple[str, int]]:
    session.refresh_from_db()
    turns = session.table_state.get("turns") or {"entries": []}
    return [(e["name"], e["value"]) for e in turns["entries"]]


def whose(session: GameSession) -> tuple[int, str | None]:
    session.refresh_from_db()
    state = session.table_state
    turns = state.get("turns") or {"entries": [], "current": None}
    name = next((e["name"] for e in turns["entries"] if e["id"] == turns["current"]), None)
    return int(state.get("round") or 0), name


@pytest.fixture
def table(live_session, gm):
    seats = {
        "ana": join_session(session=live_session, name="Ana").seat,
        "bo": join_session(session=live_session, name="Bo").seat,
        "gm": gm_seat(session=live_session, user=gm),
    }
    return live_session, seats


def test_ties_keep_the_order_entries_came_in_and_higher_goes_first():
    turns = {"entries": [], "current": None, "next_id": 1}
    for i, value in enumerate([12, 15, 12, 20, 15]):
        place(turns, {"id": i + 1, "name": f"e{i + 1}", "value": value, "delayed": False})
    assert [e["id"] for e in turns["entries"]] == [4, 2, 5, 1, 3]


def test_a_roll_marked_initiative_enters_its_roller_and_a_reroll_replaces_it(table):
    session, seats = table
    roll = send(seats["ana"], "chat", text="/r 1d20+2 #init Quick")
    assert roll.kind == "roll" and roll.data["label"] == "Quick"  # Ana's entry is still Ana
    assert order(session) == [("Ana", roll.data["total"])]
    by_button = send(seats["bo"], "roll", request={"notation": "1d2*0+30"}, turn_order=True)
    again = send(seats["ana"], "roll", request={"notation": "1d2*0+40"}, turn_order=True)
    assert order(session) == [("Ana", 40), ("Bo", 30)]
    assert by_button.data["total"] == 30 and again.data["total"] == 40
    entry = session.events.filter(kind="turns").latest("seq")
    assert entry.data["action"] == "enter" and entry.data["roll"] == again.seq
    # The GM's rolls enter under what they were for: one entry per name.
    send(seats["gm"], "chat", text="/r 1d2*0+12 #init Goblins")
    send(seats["gm"], "roll", request={"notation": "1d2*0+5 Wolves"}, turn_order=True)
    send(seats["gm"], "chat", text="/r 1d2*0+3 #init Goblins")
    assert order(session) == [("Ana", 40), ("Bo", 30), ("Wolves", 5), ("Goblins", 3)]


def test_a_hidden_roll_cannot_enter_the_turn_order_and_changes_nothing(table):
    session, seats = table
    before = session.events.count()
    with pytest.raises(ServiceError) as caught:
        send(seats["ana"], "roll", request={"notation": "1d20"}, visibility="gm", turn_order=True)
    assert caught.value.field == "visibility"
    assert session.events.count() == before


def test_a_three_round_order_with_an_npc_a_delay_and_a_removal(table):
    session, seats = table
    send(seats["ana"], "roll", request={"notation": "1d2*0+14"}, turn_order=True)
    send(seats["bo"], "roll", request={"notation": "1d2*0+9"}, turn_order=True)
    goblin = send(seats["gm"], "turns.add", name="Goblin", value=14)
    # A tie with Ana: Ana was there first, so she acts first.
    assert goblin.data["action"] == "add"
    send(seats["gm"], "turns.add", name="Wolf", value=14)
    wolf = session.events.latest("seq").data["entry"]
    assert order(session) == [("Ana", 14), ("Goblin", 14), ("Wolf", 14), ("Bo", 9)]
    send(seats["gm"], "turns.remove", entry=wolf)
    assert order(session) == [("Ana", 14), ("Goblin", 14), ("Bo", 9)]
    turns = []
    for _ in range(3 * 3):
        event = send(seats["gm"], "turns.next")
        turns.append(whose(session))
        assert event.kind == "turns"
    assert turns == [
        (1, "Ana"), (1, "Goblin"), (1, "Bo"),
        (2, "Ana"), (2, "Goblin"), (2, "Bo"),
        (3, "Ana"), (3, "Goblin"), (3, "Bo"),
    ]  # fmt: skip
    # Bo ends his own turn; the round is over, which only the GM moves past.
    with pytest.raises(ServiceError) as caught:
        send(seats["bo"], "turns.next")
    assert "GM starts the next one" in caught.value.message
    send(seats["gm"], "turns.next")
    assert whose(session) == (4, "Ana")
    ana_entry = session.table_state["turns"]["current"]
    send(seats["ana"], "turns.delay", entry=ana_entry)
    assert whose(session) == (4, "Goblin")
    send(seats["gm"], "turns.next")
    assert whose(session) == (4, "Bo")
    send(seats["ana"], "turns.act", entry=ana_entry)  # Ana acts before Bo finishes
    assert whose(session) == (4, "Ana")
    assert [n for n, _ in order(session)] == ["Goblin", "Bo", "Ana"]
    send(seats["gm"], "turns.remove", entry=goblin.data["entry"])
    send(seats["gm"], "turns.next", round=True)
    assert whose(session) == (5, "Bo")
    with pytest.raises(ServiceError) as caught:
        send(seats["ana"], "turns.remove", entry=session.table_state["turns"]["current"])
    assert caught.value.code == "forbidden"


def test_only_the_gm_sets_the_turn_and_adds_npcs(table):
    session, seats = table
    send(seats["ana"], "roll", request={"notation": "1d20"}, turn_order=True)
    entry = session.events.filter(kind="turns").latest("seq").data["entry"]
    for kind, fields in (("turns.set", {"entry": entry}), ("turns.clear", {})):
        with pytest.raises(ServiceError) as caught:
            send(seats["ana"], kind, **fields)
        assert caught.value.code == "forbidden"
    send(seats["gm"], "turns.set", entry=entry)
    assert whose(session) == (0, "Ana")
    send(seats["gm"], "turns.clear")
    assert order(session) == [] and whose(session) == (0, None)
    end_session(session_id=session.pk)
    with pytest.raises(ServiceError) as caught:
        send(seats["gm"], "turns.add", name="Late", value=3)
    assert caught.value.code == "conflict"


@pytest.mark.parametrize("system", ["action-dice", "d6-chance", "discordian"])
def test_a_systems_round_is_the_round_the_tracker_shows(django_user_model, system):
    gm_user = django_user_model.objects.create_user(f"gm-{system}")
    campaign = Campaign.objects.create(name=f"Rounds {system}", system=system, gm=gm_user)
    Character.objects.create(campaign=campaign, name="Kel", sheet={})
    session = start_session(session_id=create_session(campaign=campaign, title="Fight").pk)
    gm = gm_seat(session=session, user=gm_user)
    ana = join_session(session=session, name="Ana").seat
    send(gm, "turns.add", name="Orc", value=8)
    send(ana, "roll", request={"notation": "1d2*0+11"}, system="generic", turn_order=True)
    # The tracker's first round is the system's round.new: one event, one round.
    started = send(gm, "turns.next")
    assert (started.kind, started.data["action"], started.data["round"]) == ("pool", "round", 1)
    assert whose(session) == (1, "Ana")
    send(gm, "turns.next")
    assert whose(session) == (1, "Orc")
    # The system's own round.new puts the tracker at the top of the order.
    began = send(gm, "round.new")
    assert began.data["table"]["round"] == 2 and whose(session) == (2, "Ana")
    assert (
        began.data["table"]["turns"]["current"] == began.data["table"]["turns"]["entries"][0]["id"]
    )
    assert session.events.filter(kind="pool", data__action="round").count() == 2
