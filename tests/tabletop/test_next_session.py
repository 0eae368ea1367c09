"""After the end, the GM's "Next session": a new planned session of the same campaign, with a new
invite, made once however often the button is pressed."""

from __future__ import annotations

import pytest

from tabletop.models import GameSession, SessionStatus
from tabletop.services.next_session import next_title
from tabletop.services.sessions import end_session

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("title", "following"),
    [
        ("Session 3", "Session 4"),
        ("Session one", "Session two"),
        ("session eleven", "session twelve"),
        ("The heist", "The heist (next)"),
    ],
)
def test_next_title(title, following):
    assert next_title(title) == following


def test_next_session_after_the_end(client, gm, live_session):
    client.force_login(gm)
    url = f"/gm/{live_session.pk}/next"
    assert client.post(url).status_code == 302  # not ended: back to the dashboard
    assert GameSession.objects.count() == 1
    end_session(session_id=live_session.pk)
    page = client.get(f"/gm/{live_session.pk}/")
    assert b'id="next-session"' in page.content and b"Next session" in page.content
    first = client.post(url)
    again = client.post(url)
    assert first["Location"] == again["Location"], "one click or two: one next session"
    following = GameSession.objects.exclude(pk=live_session.pk).get()
    assert first["Location"] == f"/gm/{following.pk}/"
    assert following.status == SessionStatus.PLANNED
    assert following.campaign_id == live_session.campaign_id
    assert following.title == "Session two"
    assert following.invite_code != live_session.invite_code
    assert client.get(first["Location"]).status_code == 200


def test_only_the_campaigns_gm(client, django_user_model, live_session):
    end_session(session_id=live_session.pk)
    other = django_user_model.objects.create_user("other", password="pw-for-tests-only")
    client.force_login(other)
    assert client.post(f"/gm/{live_session.pk}/next").status_code == 403
    assert client.get(f"/gm/{live_session.pk}/next").status_code == 405
    assert GameSession.objects.count() == 1
