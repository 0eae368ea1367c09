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

from tabletop.services.rolls import make_roll, reveal_roll
from tabletop.services.seats import gm_seat, join_session
from tabletop.services.sessions import end_session
from tabletop.services.watch import create_watch_link

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
        "public": make_roll(
            seat_id=ana.seat.pk, request={"notation": "4d6kh3+2"}, client_seed="a1"
        ),
        "fudge": make_roll(seat_id=bo.seat.pk, request={"notation": "4dF"}, client_seed="b1"),
        "big": make_roll(seat_id=ana.seat.pk, request={"notation": "2d1000"}),
        "gm": make_roll(
            seat_id=ana.seat.pk,
            request={"notation": "d20"},
            visibility="gm",
            client_seed="ana-secret",
        ),
        "self": make_roll(
            seat_id=bo.seat.pk,
            request={"notation": "d8"},
            visibility="self",
            client_seed="bo-secret",
        ),
        "blind": make_roll(
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
    record = json.loads(answer.content)
    assert record["fairness"]["server_seed"] == played["session"].revealed_seed
    lines = run_verifier(answer.content.decode(), tmp_path)
    rolls = played["rolls"]
    # Ana sees her own "gm" roll, the public ones; not Bo's "self" roll, nor the blind one's dice
    # at the roll itself (its reveal carries them, which the script does not read).
    assert lines == [f"{rolls[k].seq} ok" for k in ("public", "fudge", "big", "gm")]
    text = answer.content.decode()
    assert "bo-secret" not in text and "gm-secret" in text  # revealed by the GM


def test_a_tampered_export_fails_the_documented_script(client, played, tmp_path):
    code = played["session"].invite_code
    record = client.get(f"/play/{code}/export.json", {"token": played["ana"].token}).json()
    roll = next(e for e in record["events"] if e["seq"] == played["rolls"]["public"].seq)
    roll["data"]["dice"][0]["value"] = roll["data"]["dice"][0]["value"] % 6 + 1
    lines = run_verifier(json.dumps(record), tmp_path)
    assert f"{roll['seq']} MISMATCH" in lines


def test_the_spectators_export_holds_public_dice_only(client, played, gm, tmp_path):
    link = create_watch_link(session=played["session"], user=gm)
    answer = client.get(f"/watch/{link.code}/export.json")
    text = answer.content.decode()
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
    body = md.content.decode()
    assert body.startswith("# Session one\n")
    assert f"- **#{played['rolls']['public'].seq}**" in body and "Ana: " in body
    assert "a hidden roll" in body  # Ana's gm roll, as Bo sees it
    html = client.get(f"/play/{code}/export.html", {"token": played["bo"].token})
    assert html["Content-Type"].startswith("text/html") and "Content-Disposition" not in html
    page = html.content.decode()
    assert "<title>Session one · session log</title>" in page and "@media print" in page
    assert "ana-secret" not in page
    assert "<s>" in page and "~~" not in page  # the dropped die of 4d6kh3, struck through


def test_outsiders_and_unknown_formats_get_nothing(client, played):
    code = played["session"].invite_code
    assert client.get(f"/play/{code}/export.json").status_code == 403
    assert client.get(f"/play/{code}/export.pdf", {"token": played["ana"].token}).status_code == 404
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
    record = json.loads(answer.content)
    assert record["viewer"] == "GM"
    rolls = played["rolls"]
    # The GM sees GM-only and blind rolls, never a roll its roller kept to themselves.
    lines = run_verifier(answer.content.decode(), tmp_path)
    assert lines == [f"{rolls[k].seq} ok" for k in ("public", "fudge", "big", "gm", "blind")]
