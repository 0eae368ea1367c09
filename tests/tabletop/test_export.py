"""A session's record to take away: JSON that docs/fairness.md's verifier checks offline,
Markdown and printable HTML, from the room, the watch link and ``manage.py export``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from tabletop.services.rolls import reveal_roll
from tabletop.services.seats import gm_seat, join_session
from tabletop.services.sessions import end_session
from tabletop.services.watch import create_watch_link
from tabletop.storage import KeptRecords

from .commands import body, rolled

pytestmark = pytest.mark.django_db
DOCS = Path(__file__).resolve().parents[2] / "docs" / "fairness.md"


def documented_verifier() -> str:
    """The script printed in docs/fairness.md, exactly as a player would copy it."""
    text = DOCS.read_text()
    section = text.split("## Check it with your own script", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def run_verifier(record_text: str, tmp_path: Path) -> list[str]:
    (tmp_path / "record.json").write_text(record_text)
    (tmp_path / "verify.py").write_text(documented_verifier())
    done = subprocess.run(
        [sys.executable, "verify.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[:-1]


@pytest.fixture
def played(live_session, gm):
    ana = join_session(session=live_session, name="Ana")
    bo = join_session(session=live_session, name="Bo")
    gm_at_table = gm_seat(session=live_session, user=gm)
    rolls = {
        "public": rolled(seat_id=ana.seat.pk, request={"notation": "4d6kh3+2"}, client_seed="a1"),
        "fudge": rolled(seat_id=bo.seat.pk, request={"notation": "4dF"}, client_seed="b1"),
        "big": rolled(seat_id=ana.seat.pk, request={"notation": "2d1000"}),
        "gm": rolled(
            seat_id=ana.seat.pk,
            request={"notation": "d20"},
            visibility="gm",
            client_seed="ana-secret",
        ),
        "self": rolled(
            seat_id=bo.seat.pk,
            request={"notation": "d8"},
            visibility="self",
            client_seed="bo-secret",
        ),
        "blind": rolled(
            seat_id=gm_at_table.pk,
            request={"notation": "d12"},
            visibility="blind",
            client_seed="gm-secret",
        ),
    }
    reveal_roll(seat=gm_at_table, seq=rolls["blind"].seq)
    end_session(session_id=live_session.pk)
    live_session.refresh_from_db()
    return {"session": live_session, "ana": ana, "bo": bo, "rolls": rolls}


def test_a_players_json_export_verifies_offline_with_the_documented_script(
    client, played, tmp_path
):
    code = played["session"].invite_code
    answer = client.get(f"/play/{code}/export.json", {"token": played["ana"].token})
    assert answer.status_code == 200 and answer["Content-Type"].startswith("application/json")
    assert "attachment" in answer["Content-Disposition"]
    record = json.loads(body(answer))
    assert record["fairness"]["server_seed"] == played["session"].revealed_seed
    lines = run_verifier(body(answer).decode(), tmp_path)
    rolls = played["rolls"]
    # Ana sees her own "gm" roll, the public ones; not Bo's "self" roll, nor the blind one's dice
    # at the roll itself (its reveal carries them, which the script does not read).
    assert lines == [f"{rolls[k].seq} ok" for k in ("public", "fudge", "big", "gm")]
    text = body(answer).decode()
    assert "bo-secret" not in text and "gm-secret" in text  # revealed by the GM


def test_a_tampered_export_fails_the_documented_script(client, played, tmp_path):
    code = played["session"].invite_code
    record = json.loads(
        body(client.get(f"/play/{code}/export.json", {"token": played["ana"].token}))
    )
    roll = next(e for e in record["events"] if e["seq"] == played["rolls"]["public"].seq)
    roll["data"]["dice"][0]["value"] = roll["data"]["dice"][0]["value"] % 6 + 1
    lines = run_verifier(json.dumps(record), tmp_path)
    assert f"{roll['seq']} MISMATCH" in lines


def test_the_spectators_export_holds_public_dice_only(client, played, gm, tmp_path):
    link = create_watch_link(session=played["session"], user=gm)
    answer = client.get(f"/watch/{link.code}/export.json")
    text = body(answer).decode()
    assert played["session"].invite_code not in text + answer["Content-Disposition"]
    for secret in ("ana-secret", "bo-secret"):
        assert secret not in text
    hidden = [e for e in json.loads(text)["events"] if e["visibility"] != "public"]
    assert hidden and all(e["data"] == {"hidden": True} for e in hidden)
    rolls = played["rolls"]
    assert run_verifier(text, tmp_path) == [
        f"{rolls[k].seq} ok" for k in ("public", "fudge", "big")
    ]


def test_markdown_and_printable_html(client, played):
    code = played["session"].invite_code
    md = client.get(f"/play/{code}/export.md", {"token": played["bo"].token})
    assert md["Content-Type"].startswith("text/markdown")
    text = body(md).decode()
    assert text.startswith("# Session one\n")
    assert f"- **#{played['rolls']['public'].seq}**" in text and "Ana: " in text
    assert "a hidden roll" in text  # Ana's gm roll, as Bo sees it
    html = client.get(f"/play/{code}/export.html", {"token": played["bo"].token})
    assert html["Content-Type"].startswith("text/html") and "Content-Disposition" not in html
    page = body(html).decode()
    assert "<title>Session one · session log</title>" in page and "@media print" in page
    assert "ana-secret" not in page
    assert "<s>" in page and "~~" not in page  # the dropped die of 4d6kh3, struck through


def test_outsiders_and_unknown_formats_get_nothing(client, played):
    code = played["session"].invite_code
    assert client.get(f"/play/{code}/export.json").status_code == 403
    assert client.get(f"/play/{code}/export.pdf", {"token": played["ana"].token}).status_code == 404
    asked = client.get(
        f"/play/{code}/export.pdf", {"token": played["ana"].token}, HTTP_ACCEPT="application/json"
    )
    assert asked.status_code == 404 and asked.json()["error"] == {
        "code": "not-found",
        "message": "no such export: it is .json, .md or .html",
        "field": None,
    }
    assert client.get("/watch/not-a-link/export.json").status_code == 404


def test_manage_py_export_writes_a_verifiable_file(played, tmp_path):
    code = played["session"].invite_code
    out = tmp_path / "all.json"
    call_command("export", code, "--as", "all", "--output", str(out))
    lines = run_verifier(out.read_text(), tmp_path)
    assert len(lines) == 6 and all(line.endswith(" ok") for line in lines)  # every roll, hidden too
    call_command(
        "export", code, "--format", "md", "--as", "spectator", "--output", str(tmp_path / "s.md")
    )
    assert "bo-secret" not in (tmp_path / "s.md").read_text()


def test_the_gm_exports_from_the_dashboard_with_their_login(client, played, gm, tmp_path):
    client.force_login(gm)
    answer = client.get(f"/play/{played['session'].invite_code}/export.json")
    record = json.loads(body(answer))
    assert record["viewer"] == "GM"
    rolls = played["rolls"]
    # The GM sees GM-only and blind rolls, never a roll its roller kept to themselves.
    lines = run_verifier(body(answer).decode(), tmp_path)
    assert lines == [f"{rolls[k].seq} ok" for k in ("public", "fudge", "big", "gm", "blind")]


HOSTILE_NAMES = [
    '<img src=x onerror="alert(1)">',
    "[here](https://evil.example)",
    "**Ana** `code` ~~x~~",
    "# Heading | table |",
    "<script>x</script> www.evil.example",
]


def test_the_markdown_export_shows_hostile_names_and_labels_as_typed_text(client, live_session):
    seats = [join_session(session=live_session, name=name) for name in HOSTILE_NAMES]
    for joined in seats:
        rolled(seat_id=joined.seat.pk, request={"notation": "2d6"})
    answer = client.get(f"/play/{live_session.invite_code}/export.md", {"token": seats[0].token})
    text = body(answer).decode()
    # No HTML a Markdown reader would render, no link, image or code span made of what was typed.
    for raw in ("<img", "<script", "](https://", "](http://", "`code`", "**Ana**", "~~x~~"):
        assert raw not in text, raw
    assert '&lt;img src=x onerror="alert(1)"&gt;' in text
    assert "\\[here\\](https\\://evil.example)" in text
    assert "www\\.evil.example" in text
    # The engines' own marks are still Markdown: the roll lines are untouched in their numbers.
    assert all(f"- **#{n}**" in text for n in range(2, 2 + len(seats)))


def fetched(answer) -> bytes:
    """A download that was made (a 429's plain-words body is not empty either)."""
    assert answer.status_code == 200, answer.status_code
    return body(answer)


@pytest.fixture
def reads(monkeypatch) -> list[int | None]:
    """The limit of each read a record makes of the store, as it makes them."""
    from tabletop.services import export

    made: list[int | None] = []
    read = export.events_after

    def counted(*, session_id: int, after: int, limit: int | None = None) -> list:
        made.append(limit)
        return read(session_id=session_id, after=after, limit=limit)

    monkeypatch.setattr(export, "events_after", counted)
    return made


def test_a_long_record_is_read_a_page_at_a_time_and_streamed(client, live_session, reads):
    from tabletop.services import export

    from .bulk import add_rolls

    last = add_rolls(live_session, 2 * export.EXPORT_PAGE + 10)
    joined = join_session(session=live_session, name="Reader")
    answer = client.get(f"/play/{live_session.invite_code}/export.json", {"token": joined.token})
    assert answer.streaming
    record = json.loads(body(answer))
    assert [e["seq"] for e in record["events"]] == list(range(1, last + 2))  # and the join
    assert reads and set(reads) == {export.EXPORT_PAGE} and len(reads) == 4


def test_an_ended_sessions_record_is_made_once_and_kept(client, played, monkeypatch, settings):
    from tabletop.services import export

    code, token = played["session"].invite_code, played["ana"].token
    first = body(client.get(f"/play/{code}/export.md", {"token": token}))
    kept = KeptRecords(settings.TABLETOP["EXPORT_DIR"]).folder(played["session"])
    assert [p.name for p in kept.iterdir()] == [f"seat-{played['ana'].seat.pk}.md"]

    def no_reading(*args, **kwargs):
        raise AssertionError("the store was read again for a kept record")

    monkeypatch.setattr(export, "events_after", no_reading)
    assert body(client.get(f"/play/{code}/export.md", {"token": token})) == first


def test_downloads_are_rate_limited_per_viewer_and_per_link(client, played, gm, settings):
    settings.TABLETOP = {
        **settings.TABLETOP,
        "EXPORTS_PER_MINUTE": 2,
        "LINK_EXPORTS_PER_MINUTE": 3,
    }
    code, token = played["session"].invite_code, played["ana"].token
    for _ in range(2):
        fetched(client.get(f"/play/{code}/export.json", {"token": token}))
    refused = client.get(f"/play/{code}/export.json", {"token": token})
    assert refused.status_code == 429 and 20 <= int(refused["Retry-After"]) <= 30
    assert refused["Content-Type"].startswith("text/plain")
    assert refused.content.decode().startswith(
        "Too many downloads of this record: one viewer may download 2 a minute. Try again in"
    )
    # Another seat has its own budget.
    fetched(client.get(f"/play/{code}/export.md", {"token": played["bo"].token}))
    # Spectators: each address its own, and the link's all of theirs together.
    link = create_watch_link(session=played["session"], user=gm)
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        fetched(client.get(f"/watch/{link.code}/export.json", REMOTE_ADDR=address))
    refused = client.get(f"/watch/{link.code}/export.json", REMOTE_ADDR="10.0.0.4")
    assert (
        refused.status_code == 429 and "one watch link may download 3" in refused.content.decode()
    )


def test_a_process_makes_a_few_records_at_once(client, played, settings):
    from tabletop.views import export

    settings.TABLETOP = {**settings.TABLETOP, "EXPORTS_IN_FLIGHT": 1}
    code = played["session"].invite_code
    answer = client.get(f"/play/{code}/export.json", {"token": played["ana"].token})
    # The first is still being made (not read yet): the next waits its turn.
    busy = client.get(f"/play/{code}/export.html", {"token": played["bo"].token})
    assert busy.status_code == 503 and busy["Retry-After"] == "5"
    assert "making other records" in busy.content.decode()
    body(answer)  # (read to its end: the server closes the response, its turn is given back)
    assert export._making.taken == 0
    again = client.get(f"/play/{code}/export.html", {"token": played["bo"].token})
    assert again.status_code == 200 and body(again)


@pytest.mark.django_db(transaction=True)
def test_daphne_streams_a_long_record_and_then_sends_the_kept_one(live_session, gm, tmp_path):
    import urllib.request

    from tests.servers import daphne_servers

    from .bulk import add_rolls

    last = add_rolls(live_session, 700, pad=500)
    end_session(session_id=live_session.pk)
    link = create_watch_link(session=live_session, user=gm)
    env = {"TABLETOP_EXPORT_DIR": str(tmp_path / "kept")}
    with daphne_servers(1, env=env) as (port,):
        url = f"http://127.0.0.1:{port}/watch/{link.code}/export.json"
        texts = []
        for _ in range(2):
            with urllib.request.urlopen(url, timeout=30) as answer:
                assert answer.headers.get("Transfer-Encoding") == "chunked"  # streamed
                texts.append(answer.read())
    made, kept = (json.loads(text) for text in texts)
    assert [e["seq"] for e in made["events"]][:last] == list(range(1, last + 1))
    assert made == kept  # the second came from the file the first left
    kept_file = KeptRecords(tmp_path / "kept").path(live_session, "spectator", "json")
    assert kept_file.read_bytes() == texts[0]


def test_every_export_keeps_a_rolls_character_and_what_it_was_for(client, live_session, gm):
    from tabletop.models import Character

    ana = join_session(session=live_session, name="Ana")
    kael = Character.objects.create(campaign=live_session.campaign, name="Kael")
    ana.seat.characters.add(kael)
    gm_at_table = gm_seat(session=live_session, user=gm)
    shown = rolled(
        seat_id=ana.seat.pk, request={"notation": "2d6+3"}, label="Attack", character=kael.pk
    )
    hidden = rolled(
        seat_id=ana.seat.pk,
        request={"notation": "1d20"},
        label="Sneak",
        character=kael.pk,
        visibility="gm",
    )
    reveal = reveal_roll(seat=gm_at_table, seq=hidden.seq)
    code = live_session.invite_code
    text = body(client.get(f"/play/{code}/export.md", {"token": ana.token})).decode()
    assert f"Ana as Kael (Attack): {shown.data['text']}" in text
    assert f"GM reveals roll \\#{hidden.seq} by Ana as Kael (Sneak): " in text  # (# escaped)
    page = body(client.get(f"/play/{code}/export.html", {"token": ana.token})).decode()
    assert "Ana as Kael (Attack): " in page and "by Ana as Kael (Sneak): " in page
    assert reveal.seq > hidden.seq


def test_the_record_the_verify_page_reads_is_the_seats_export_under_its_budgets(
    client, live_session, reads, settings
):
    # It was one JSON answer of every event, built in memory (about 0.5 MB of the process's
    # memory per roll of 1000d1000), with no budget of its own.
    from tabletop.services import export

    from .bulk import add_rolls

    last = add_rolls(live_session, export.EXPORT_PAGE + 10)
    settings.TABLETOP = {**settings.TABLETOP, "EXPORTS_PER_MINUTE": 2}
    joined = join_session(session=live_session, name="Reader")
    code = live_session.invite_code
    answer = client.get(f"/play/{code}/record", {"token": joined.token})
    assert answer.streaming and not answer.has_header("Content-Disposition")
    record = json.loads(body(answer))
    assert [e["seq"] for e in record["events"]] == list(range(1, last + 2))
    assert record["fairness"]["commitment"] == live_session.commitment
    assert set(reads) == {export.EXPORT_PAGE}
    fetched(client.get(f"/play/{code}/export.json", {"token": joined.token}))
    refused = client.get(f"/play/{code}/record", {"token": joined.token})
    assert refused.status_code == 429


def test_a_session_that_takes_an_earlier_ones_id_is_not_served_its_kept_records(tmp_path):
    # Kept by id alone, a record outlived its database: a session made afresh with the same id
    # was sent the earlier session's file.
    from tabletop.models import GameSession

    kept = KeptRecords(tmp_path)
    earlier = GameSession(pk=1, commitment="a" * 64)
    later = GameSession(pk=1, commitment="b" * 64)
    assert kept.path(earlier, "seat-2", "json") != kept.path(later, "seat-2", "json")
    assert kept.path(earlier, "seat-2", "json").parent == kept.folder(earlier)
