"""``manage.py play`` sets up the demo table once and reuses it."""

from __future__ import annotations

import io
import re
import socket
import sys

import pytest
from django.conf import settings
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from rules.engines import system_ids
from tabletop.models import Campaign, GameSession, SessionStatus

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    """The demo GM's password file in a directory of the test's own; ALLOWED_HOSTS restored."""
    monkeypatch.setattr(settings, "DATA_DIR", tmp_path)
    monkeypatch.setattr(settings, "ALLOWED_HOSTS", list(settings.ALLOWED_HOSTS))


def run_play(*args: str) -> str:
    out = io.StringIO()
    real, sys.stdout = sys.stdout, out
    try:
        call_command("play", "--no-serve", *args)
    finally:
        sys.stdout = real
    return out.getvalue()


def test_play_prints_invites_and_a_working_login():
    text = run_play()
    for system in system_ids():
        assert re.search(
            rf"^{system} invite: http://127\.0\.0\.1:8000/play/[\w-]+/$", text, re.M
        ), system
        link = re.search(rf"^{system} campaign: http://127\.0\.0\.1:8000(/c/[\w-]+/)$", text, re.M)
        assert link, system
        # The campaign link opens the system's live demo session.
        room = Client().get(link[1])
        assert room.status_code == 302 and room["Location"].startswith("/play/")
        assert GameSession.objects.get(invite_code=room["Location"].split("/")[2]).status == "live"
    login = re.search(r"^gm login: (\S+) (\S+)$", text, re.M)
    assert login
    assert authenticate(username=login[1], password=login[2]) is not None
    assert GameSession.objects.filter(status=SessionStatus.LIVE).count() == len(system_ids())
    for session in GameSession.objects.all():
        assert len(session.commitment) == 64


def test_play_twice_reuses_the_demo_data():
    first = run_play()
    campaigns = Campaign.objects.count()
    second = run_play()
    assert Campaign.objects.count() == campaigns
    invites = lambda text: re.findall(r"invite: (\S+)", text)  # noqa: E731
    assert invites(first) == invites(second)


def test_home_page_joins_by_code(client):
    run_play()
    session = GameSession.objects.first()
    assert client.get("/").status_code == 200
    response = client.post("/join", {"code": f"http://127.0.0.1:8000/play/{session.invite_code}/"})
    assert response.status_code == 302 and response["Location"] == f"/play/{session.invite_code}/"
    response = client.post("/join", {"code": "no-such-code"})
    assert response.status_code == 404 and b"No table has that code" in response.content


def test_home_page_lists_a_gms_campaigns(client, gm, live_session):
    client.force_login(gm)
    page = client.get("/").content.decode()
    assert "Night Market" in page and f"/gm/{live_session.pk}/" in page


def test_play_again_keeps_the_gm_password():
    first = re.search(r"^gm login: (\S+) (\S+)$", run_play(), re.M)
    second = re.search(r"^gm login: (\S+) (\S+)$", run_play(), re.M)
    assert first[2] == second[2]
    assert authenticate(username="gm", password=first[2]) is not None
    assert oct((settings.DATA_DIR / "demo-gm-password").stat().st_mode & 0o777) == "0o600"


def test_a_password_the_gm_set_is_left_alone(django_user_model):
    run_play()
    gm = django_user_model.objects.get(username="gm")
    gm.set_password("my-own-password")
    gm.save()
    text = run_play()
    assert "gm login: gm (the password you set for it)" in text
    assert authenticate(username="gm", password="my-own-password") is not None


def test_a_busy_port_stops_play_before_anything_changes(django_user_model):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        with pytest.raises(CommandError, match="--port"):
            call_command("play", "--port", str(port))
    finally:
        taken.close()
    assert not django_user_model.objects.filter(username="gm").exists()
    assert not (settings.DATA_DIR / "demo-gm-password").exists()


def test_links_printed_for_another_address_answer_there(client):
    text = run_play("--host", "10.1.2.3", "--port", "8123")
    invite = re.search(r"^generic invite: http://10\.1\.2\.3:8123(/play/[\w-]+/)$", text, re.M)
    assert invite, text
    page = client.get(invite[1], HTTP_HOST="10.1.2.3:8123")
    assert page.status_code == 200  # the join form, not 400 Bad Request
    from tabletop.origin import origin_allowed

    scope = {
        "headers": [(b"host", b"10.1.2.3:8123"), (b"origin", b"http://10.1.2.3:8123")],
        "scheme": "ws",
    }
    assert origin_allowed(scope)
    assert not origin_allowed({"headers": [(b"origin", b"http://evil.example")], "scheme": "ws"})


def test_every_interface_prints_an_address_others_can_use():
    text = run_play("--host", "0.0.0.0")
    hosts = re.findall(r"^generic invite: http://([^/:]+|\[[^]]+\]):8000/", text, re.M)
    assert hosts and hosts[0] != "0.0.0.0"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "table.example"])
def test_play_beyond_this_machine_never_serves_debug_pages(host, monkeypatch):
    monkeypatch.setattr(settings, "DEBUG", True)
    text = run_play("--host", host)
    assert settings.DEBUG is False
    assert "debug pages: off (serving beyond this machine)" in text


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost"])
def test_play_on_loopback_keeps_the_developers_debug_setting(host, monkeypatch):
    monkeypatch.setattr(settings, "DEBUG", True)
    assert "debug pages" not in run_play("--host", host)
    assert settings.DEBUG is True


def test_production_never_turns_debug_on():
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.DEBUG)"],
        env={
            "PATH": "/usr/bin:/bin",
            "DJANGO_SETTINGS_MODULE": "tabletop.settings",
            "TABLETOP_ENV": "production",
            "SECRET_KEY": "x" * 50,
            "ALLOWED_HOSTS": "table.example",
            "DEBUG": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "False", done.stderr
