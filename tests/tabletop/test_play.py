"""``manage.py play`` sets up the demo table once and reuses it."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from rules.engines import system_ids
from tabletop.models import Campaign, GameSession, SessionStatus

pytestmark = pytest.mark.django_db


def run_play() -> str:
    out = io.StringIO()
    import sys

    real, sys.stdout = sys.stdout, out
    try:
        call_command("play", "--no-serve")
    finally:
        sys.stdout = real
    return out.getvalue()


def test_play_prints_invites_and_a_working_login():
    text = run_play()
    for system in system_ids():
        assert re.search(
            rf"^{system} invite: http://127\.0\.0\.1:8000/play/[\w-]+/$", text, re.M
        ), system
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
