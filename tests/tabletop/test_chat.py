"""Talk at the table: messages, emotes, inline rolls from the fair stream, slash commands and
whispers that no third seat ever reads (live, in the store's replay, in exports, on a watch link,
in the admin), the campaign's talk settings, webhooks and limits."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tabletop.models import Campaign, Event
from tabletop.protocol.commands import Decoded, Refused
from tabletop.protocol.events import check_event
from tabletop.protocol.wire import decode, precheck
from tabletop.selectors.events import Viewer, events_after, for_viewer
from tabletop.services import chat
from tabletop.services.chat import MAX_INLINE_ROLLS, read_line, set_talk
from tabletop.services.errors import ServiceError
from tabletop.services.events import message_payload, room_payload
from tabletop.services.export import (
    event_line,
    render,
    session_record,
    spectator_record,
)
from tabletop.services.seats import gm_seat, join_session
from tabletop.services.sessions import end_session
from tabletop.services.stats import campaign_stats_for_gm, session_stats
from tabletop.services.watch import SPECTATOR
from tabletop.webhooks import chat as webhook_chat
from tabletop.webhooks.sender import should_send

from .commands import send
from .test_export import run_verifier

pytestmark = pytest.mark.django_db


@pytest.fixture
def table(live_session, gm):
    seats = {
        "ana": join_session(session=live_session, name="Ana").seat,
        "bo": join_session(session=live_session, name="Bo").seat,
        "cy": join_session(session=live_session, name="Cy").seat,
        "gm": gm_seat(session=live_session, user=gm),
    }
    return live_session, seats


def viewer(seat) -> Viewer:
    return Viewer(seat_id=seat.pk, is_gm=seat.is_gm)


def shown(session, seat) -> list[dict]:
    return [for_viewer(e, viewer(seat)) for e in events_after(session_id=session.pk, after=0)]


# --- reading the box --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "what", "text", "visibility", "initiative"),
    [
        ("hello there", "say", "hello there", "public", False),
        ("//shrug", "say", "/shrug", "public", False),
        ("//", "say", "/", "public", False),
        ("/me ducks", "me", "ducks", "public", False),
        ("/r 1d20+2 #init", "roll", "1d20+2", "public", True),
        ("/ROLL 2d6 Damage", "roll", "2d6 Damage", "public", False),
        ("/gmr 1d100", "roll", "1d100", "gm", False),
        ("/w Bo psst", "whisper", "Bo psst", "public", False),
    ],
)
def test_a_line_reads_as_roll20_users_type_it(line, what, text, visibility, initiative):
    said = read_line(line)
    assert (said.what, said.text, said.visibility, said.initiative) == (
        what,
        text,
        visibility,
        initiative,
    )


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("   ", "write something"),
        ("/dance", "no /dance command"),
        ("/w", "/w NAME TEXT"),
        ("/gmr 1d20 #init", "initiative roll is public"),
        ("/help", "answered by the page"),
        ("/", "name a command right after the /"),
        ("  /  ", "name a command right after the /"),
        ("/ hello", "name a command right after the /"),
    ],
)
def test_a_line_that_asks_for_nothing_is_refused_naming_the_field(line, why):
    with pytest.raises(ServiceError) as caught:
        read_line(line)
    assert caught.value.field == "text" and why in caught.value.message


# --- messages and inline rolls ---------------------------------------------------------------


def test_a_message_with_two_inline_rolls_is_two_fair_rolls_that_verify_after_the_end(
    table, tmp_path
):
    session, seats = table
    said = send(
        seats["ana"], "chat", text="I swing [[1d20+5]] and hit for [[2d6+3]]", client_seed="ana-1"
    )
    assert said.kind == "chat" and said.visibility == "public"
    rolls = said.data["rolls"]
    assert [r["notation"] for r in rolls] == ["1d20+5", "2d6+3"]
    assert [r["seq"] for r in rolls] == [said.seq - 2, said.seq - 1]
    for made in rolls:
        roll = Event.objects.get(session=session, seq=made["seq"])
        assert roll.kind == "roll" and roll.data["in_message"] is True
        assert roll.data["client_seed"] == "ana-1"  # the sender's own randomness
        assert roll.data["total"] == made["total"]
        check_event(kind="roll", visibility=roll.visibility, data=roll.data)
    check_event(kind="chat", visibility="public", data=said.data)
    line = f"Ana: I swing [{rolls[0]['total']}] and hit for [{rolls[1]['total']}]"
    assert event_line(for_viewer(room_payload(said)["event"], viewer(seats["bo"]))) == line
    end_session(session_id=session.pk)
    session.refresh_from_db()
    record = session_record(session=session, viewer=viewer(seats["bo"]), viewer_label="Bo")
    lines = run_verifier(render(record, "json"), tmp_path)
    assert lines == [f"{r['seq']} ok" for r in rolls]


def test_an_emote_reads_as_one(table):
    _, seats = table
    said = send(seats["bo"], "chat", text="/me ducks behind the cart")
    assert said.data == {"message": "ducks behind the cart", "me": True}
    line = event_line(for_viewer(room_payload(said)["event"], viewer(seats["ana"])))
    assert line == "* Bo ducks behind the cart"


def test_slash_rolls_are_rolls_and_gmr_is_for_the_gm(table):
    _, seats = table
    public = send(seats["ana"], "chat", text="/roll 2d6 Damage")
    secret = send(seats["ana"], "chat", text="/gmr 1d100")
    assert (public.kind, public.visibility, public.data["label"]) == ("roll", "public", "Damage")
    assert (secret.kind, secret.visibility) == ("roll", "gm")
    assert for_viewer(room_payload(secret)["event"], viewer(seats["bo"]))["data"] == {
        "hidden": True
    }


def test_limits_refuse_a_message_whole_and_store_nothing(table):
    session, seats = table
    before = session.events.count()
    too_many = " ".join(["[[d6]]"] * (MAX_INLINE_ROLLS + 1))
    for text, field in ((too_many, "text"), ("x" * 1001, "text"), ("[[9999d6]]", "text")):
        with pytest.raises(ServiceError) as caught:
            send(seats["ana"], "chat", text=text)
        assert caught.value.field == field
    with pytest.raises(ServiceError) as caught:
        send(seats["ana"], "chat", text="roll [[d6]] then [[bogus]]")
    assert "inline roll 2" in caught.value.message
    assert session.events.count() == before


def test_an_ended_session_keeps_its_log(table):
    session, seats = table
    end_session(session_id=session.pk)
    with pytest.raises(ServiceError) as caught:
        send(seats["ana"], "chat", text="anyone there?")
    assert caught.value.code == "conflict"


# --- whispers --------------------------------------------------------------------------------


def test_a_whisper_reaches_its_two_seats_and_no_third_anywhere(client, table, gm):
    session, seats = table
    said = send(seats["ana"], "chat", text="/w bo meet me out back [[1d6]]")
    assert said.visibility == "whisper" and said.data["to"] == {
        "seat": seats["bo"].pk,
        "name": "Bo",
    }
    assert said.data["gm_reads"] is False
    roll = Event.objects.get(session=session, seq=said.data["rolls"][0]["seq"])
    assert roll.visibility == "whisper" and roll.data["to"]["seat"] == seats["bo"].pk
    secret = "meet me out back"
    for name in ("ana", "bo"):
        assert secret in json.dumps(shown(session, seats[name]))
    for name in ("cy", "gm"):
        seen = [e for e in shown(session, seats[name]) if e["seq"] in (said.seq, roll.seq)]
        # Its seq alone: not what, not who, not to whom.
        assert (
            seen == [{**e, "actor": None, "data": {"hidden": True}} for e in seen]
            and len(seen) == 2
        )
        assert secret not in json.dumps(shown(session, seats[name]))
    # Dice statistics: the recipient counts the whisper's die; a third seat not even as hidden.
    assert session_stats(session=session, viewer=viewer(seats["bo"]))["rolls"] == 1
    assert session_stats(session=session, viewer=viewer(seats["cy"]))["hidden"] == 0
    assert session_stats(session=session, viewer=viewer(seats["cy"]))["rolls"] == 0
    # Live: the one payload every socket of the room gets carries the redacted copy ready made.
    payload = room_payload(said)
    assert secret not in payload["hidden_text"] and "Ana" not in payload["hidden_text"]
    # Exports: the third seat's and the watch link's, every format.
    end_session(session_id=session.pk)
    session.refresh_from_db()
    for record in (
        session_record(session=session, viewer=viewer(seats["cy"]), viewer_label="Cy"),
        spectator_record(session),
    ):
        for text in (render(record, "json"), render(record, "md"), render(record, "html")):
            assert secret not in text and "whispers to" not in text
    assert SPECTATOR.seat_id is None
    # The admin shows the GM (a staff GM, with the table's permissions) what the GM's socket
    # shows: not what, not who.
    gm.user_permissions.set(Permission.objects.filter(content_type__app_label="tabletop"))
    client.force_login(gm)
    answer = client.get(f"/admin/tabletop/event/{said.pk}/change/")
    page = answer.content.decode()
    assert answer.status_code == 200 and secret not in page and "Ana" not in page
    listed = client.get("/admin/tabletop/event/", {"q": "Ana"}).content.decode()
    joined = Event.objects.get(session=session, actor_name="Ana", kind="seat.join")
    assert f"/admin/tabletop/event/{joined.pk}/change/" in listed  # Ana's other events
    assert f"/admin/tabletop/event/{said.pk}/change/" not in listed
    assert f"/admin/tabletop/event/{roll.pk}/change/" not in listed
    everything = client.get("/admin/tabletop/event/").content.decode()
    assert f"/admin/tabletop/event/{said.pk}/change/" in everything
    # Nor does a filter in the address name the sender: the admin refuses it.
    for lookup in ({"actor_name": "Ana"}, {"actor": seats["ana"].pk}, {"owner__isnull": "0"}):
        assert client.get("/admin/tabletop/event/", lookup).status_code == 400


def test_the_gm_reads_whispers_to_the_gm_and_between_players_only_when_the_campaign_says(table):
    session, seats = table
    to_gm = send(seats["cy"], "chat", text="/w GM I pocket the ring")
    assert to_gm.data["to"]["seat"] == seats["gm"].pk and to_gm.data["gm_reads"] is True
    assert for_viewer(room_payload(to_gm)["event"], viewer(seats["gm"]))["data"]["message"]
    setting = send(seats["gm"], "chat.settings", gm_reads_whispers=True)
    assert setting.data["talk"] == {"gm_reads_whispers": True, "to_webhooks": False}
    assert "the GM can read whispers between players" in setting.data["text"]
    read = send(seats["ana"], "chat", text="/w Bo psst")
    assert for_viewer(room_payload(read)["event"], viewer(seats["gm"]))["data"]["gm_reads"]
    assert for_viewer(room_payload(read)["event"], viewer(seats["cy"]))["data"] == {"hidden": True}
    send(seats["gm"], "chat.settings", gm_reads_whispers=False)
    earlier = Event.objects.get(pk=read.pk)  # a whisper keeps what it said when it was sent
    assert for_viewer(room_payload(earlier)["event"], viewer(seats["gm"]))["data"]["gm_reads"]
    later = send(seats["ana"], "chat", text="/w Bo psst again")
    assert for_viewer(room_payload(later)["event"], viewer(seats["gm"]))["data"] == {"hidden": True}
    assert Campaign.objects.get(pk=session.campaign_id).talk["gm_reads_whispers"] is False


@pytest.mark.parametrize("text", ["/w Bo psst", "/w Bo psst [[1d6]]"])
def test_a_whisper_says_whether_the_gm_reads_it_as_the_log_stood_where_it_was_sent(
    table, monkeypatch, text
):
    session, seats = table
    find_recipient = chat._recipient

    def gm_changes_the_setting_meanwhile(seat, rest):
        """The GM lets the GM read whispers after the whisper's seat was read, before its
        session is locked: the setting comes earlier in the log than the whisper."""
        found = find_recipient(seat, rest)
        set_talk(seat_id=seats["gm"].pk, gm_reads_whispers=True)
        return found

    monkeypatch.setattr(chat, "_recipient", gm_changes_the_setting_meanwhile)
    whisper = send(seats["ana"], "chat", text=text)
    setting = Event.objects.get(session=session, kind="chat.settings")
    assert setting.seq < whisper.seq and whisper.data["gm_reads"] is True
    for roll in Event.objects.filter(session=session, kind="roll"):
        assert setting.seq < roll.seq and roll.data["gm_reads"] is True
    assert for_viewer(room_payload(whisper)["event"], viewer(seats["gm"]))["data"]["message"]


def test_after_the_end_the_gm_counts_no_whispered_dice_the_gm_could_not_read(client, table, gm):
    session, seats = table
    send(seats["ana"], "chat", text="/w bo meet me out back [[1d6]]")  # between players
    send(seats["cy"], "chat", text="/w GM I pocket the ring [[1d8]]")  # to the GM: the GM's
    send(seats["bo"], "chat", text="we open the door [[1d4]]")
    end_session(session_id=session.pk)
    session.refresh_from_db()

    def dice(report: dict) -> set[str]:
        return {d["die"] for s in report["seats"] for d in s["dice"]}

    gm_view = viewer(seats["gm"])
    for report in (
        session_stats(session=session, viewer=gm_view),
        session_stats(session=session, viewer=None),  # manage.py verify's
        campaign_stats_for_gm(campaign=session.campaign),
    ):
        assert dice(report) == {"d8", "d4"} and report["rolls"] == 2
        assert report["hidden"] == 0  # not even counted as hidden
    client.force_login(gm)
    answer = client.get(f"/gm/{session.pk}/stats?scope=campaign").json()
    assert dice(answer) == {"d8", "d4"}
    # The sender and the recipient still count it.
    assert "d6" in dice(session_stats(session=session, viewer=viewer(seats["bo"])))
    # The GM's record after the end: the whisper's seq alone.
    record = session_record(session=session, viewer=gm_view, viewer_label="GM")
    for text in (render(record, "json"), render(record, "md"), render(record, "html")):
        assert "meet me out back" not in text and "pocket the ring" in text


def test_a_whisper_to_nobody_at_the_table_is_refused(table):
    _, seats = table
    with pytest.raises(ServiceError) as caught:
        send(seats["ana"], "chat", text="/w Zed hello")
    assert caught.value.field == "text" and "Zed" in caught.value.message
    with pytest.raises(ServiceError):
        send(seats["ana"], "chat", text="/w Bo")


@pytest.mark.parametrize(
    ("sender", "text"), [("ana", "/w Ana hi"), ("ana", "/w ana"), ("gm", "/w GM hi")]
)
def test_a_whisper_to_oneself_is_refused_saying_so(table, sender, text):
    session, seats = table
    before = session.events.count()
    with pytest.raises(ServiceError) as caught:
        send(seats[sender], "chat", text=text)
    assert caught.value.code == "invalid" and caught.value.field == "text"
    assert caught.value.message == "Text: you cannot whisper to yourself"
    assert session.events.count() == before


def test_a_whisper_goes_to_another_seat_whose_name_starts_with_the_senders(live_session):
    ana = join_session(session=live_session, name="Ana").seat
    anabel = join_session(session=live_session, name="Ana Bel").seat
    said = send(ana, "chat", text="/w Ana Bel hi")
    assert said.data["to"]["seat"] == anabel.pk and said.data["message"] == "hi"


def test_only_the_gm_changes_the_talk_settings(table):
    _, seats = table
    with pytest.raises(ServiceError) as caught:
        send(seats["ana"], "chat.settings", gm_reads_whispers=True)
    assert caught.value.code == "forbidden"


# --- webhooks --------------------------------------------------------------------------------


def test_public_messages_go_to_webhooks_only_when_the_gm_ticks_it_with_mentions_neutralised(
    table,
):
    _, seats = table
    quiet = send(seats["ana"], "chat", text="@everyone look [here](https://evil.example)")
    assert not should_send(quiet)
    send(seats["gm"], "chat.settings", to_webhooks=True)
    loud = send(seats["ana"], "chat", text="@everyone look [here](https://evil.example)")
    whisper = send(seats["ana"], "chat", text="/w Bo @here secret")
    assert should_send(loud) and not should_send(whisper)
    body = json.loads(webhook_chat.body(loud, delivery=1))
    assert "@everyone" not in body["content"] and "@\u200beveryone" in body["content"]
    # No masked link: Discord's brackets escaped, Slack's "](" split.
    assert "\\[here\\](" in body["content"] and "](" not in body["text"]
    assert body["allowed_mentions"] == {"parse": []}


def test_hidden_payloads_never_name_a_whispers_sender():
    message = {
        "type": "event",
        "seq": 4,
        "kind": "chat",
        "at": "2026-01-01T00:00:00Z",
        "actor": {"seat": 1, "name": "Ana"},
        "visibility": "whisper",
        "data": {"message": "x", "to": {"seat": 2, "name": "Bo"}, "gm_reads": False},
    }
    hidden = json.loads(message_payload(message)["hidden_text"])
    assert hidden["actor"] is None and hidden["data"] == {"hidden": True}
    assert for_viewer(message, Viewer(seat_id=2, is_gm=False))["data"]["message"] == "x"
    assert for_viewer(message, Viewer(seat_id=3, is_gm=True))["actor"] is None


# --- fuzz: whatever is typed in the box gets an event or one plain refusal ---------------------

PIECES = st.sampled_from(
    ["/w ", "/r ", "/gmr ", "/me ", "/", "//", "[[", "]]", "d6", "1d20+5", "#init", "Bo", "GM",
     " ", "x", "@everyone", "<b>", "\u202e", "Ana"]
)  # fmt: skip


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(PIECES | st.text(max_size=8), max_size=12).map("".join))
def test_any_line_stores_its_events_or_is_refused_whole(table, line):
    session, seats = table
    before = session.events.count()
    try:
        made = send(seats["ana"], "chat", text=line)
    except ServiceError as exc:
        assert exc.code in ("invalid", "too-large", "conflict") and exc.message
        assert session.events.count() == before
        return
    assert made is not None
    for event in session.events.filter(seq__gt=before):
        check_event(kind=event.kind, visibility=event.visibility, data=event.data)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[[d6]] then [[9999d6]]", "inline roll 2"),
        ("/r 5000d6!", "dice"),
        ("/dance", "/help"),
        (" ".join(["[[d4]]"] * 6), "at most 5"),
    ],
)
def test_what_needs_no_database_is_refused_before_the_line_waits_for_it(text, why):
    decoded = decode(
        json.dumps({"type": "chat", "ref": 1, "text": text}), system="zoria", is_gm=False
    )
    refused = precheck(decoded, system="zoria")
    assert isinstance(refused, Refused), refused
    assert refused.field == "text" and why in refused.message, refused
    fine = decode(
        json.dumps({"type": "chat", "text": "hi [[1d20+5]]"}), system="zoria", is_gm=False
    )
    checked = precheck(fine, system="zoria")
    assert isinstance(checked, Decoded) and checked.prechecked
    (inline,) = checked.values["line"].rolls.values()  # what the handler rolls, checked
    assert inline.request["notation"] == "1d20+5"


def test_a_line_sent_by_a_service_is_checked_by_the_same_check_as_the_socket():
    """``send_message`` takes a checked line: a caller that is not the socket checks it with
    ``check_line`` first, and a bad roll in it is refused the same way, naming it."""
    from tabletop.services.chat import check_line

    with pytest.raises(ServiceError) as caught:
        check_line(table="generic", text="ouch [[2d]]")
    assert caught.value.code == "invalid" and caught.value.field == "text"
    assert "inline roll 1 ([[2d]])" in caught.value.message
    with pytest.raises(ServiceError) as caught:
        check_line(table="generic", text="/gmr 150d100!>2")
    assert caught.value.code == "too-large" and "the roll '150d100!>2'" in caught.value.message


def test_a_public_message_with_a_roll_locks_its_session_no_more_than_its_statements_need(table):
    # Its talk settings go with the statement that takes its seq: the session was locked a
    # second time, ahead of the rolls, as only a whisper's rolls need (they carry gm_reads).
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _, seats = table
    with CaptureQueriesContext(connection) as queries:
        send(seats["ana"], "chat", text="hello [[1d6]]")
    # The settings come with the UPDATE that takes the message's seq (on PostgreSQL sent as a
    # prepared statement's EXECUTE), not a read of their own.
    sqls = [q["sql"] for q in queries]
    ahead = [q for q in sqls if q.startswith('SELECT "tabletop_gamesession"."status"')]
    assert not ahead, ahead
