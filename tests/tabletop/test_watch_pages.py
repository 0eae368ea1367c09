"""The watch link's pages (spectator page, stream overlay) and the GM's forms to make and revoke
links on the dashboard."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tabletop.models import GameSession, WatchLink
from tabletop.services.errors import ServiceError
from tabletop.services.watch import create_watch_link, revoke_watch_link

pytestmark = pytest.mark.django_db


def test_the_watch_page_and_overlay_open_with_a_live_link_only(client, live_session, gm):
    link = create_watch_link(session=live_session, user=gm, label="Stream")
    page = client.get(f"/watch/{link.code}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'"socket": "/ws/watch/{link.code}/"' in html and "spectator" in html
    assert live_session.invite_code not in html  # the watch page never hands out the invite
    overlay = client.get(f"/watch/{link.code}/overlay", {"rolls": "3"})
    assert overlay.status_code == 200 and b"overlay.css" in overlay.content
    assert b'"rolls": 3' in overlay.content and b'"after": 0' in overlay.content
    GameSession.objects.filter(pk=live_session.pk).update(last_seq=1234)
    assert b'"after": 1034' in client.get(f"/watch/{link.code}/overlay").content
    revoke_watch_link(session=live_session, user=gm, link_id=link.pk)
    for url in (f"/watch/{link.code}/", f"/watch/{link.code}/overlay", f"/watch/{link.code}/stats"):
        assert client.get(url).status_code == 404
    # A program asking for the record of a revoked link is told in JSON (it got the page).
    for url in (f"/watch/{link.code}/export.json", f"/watch/{link.code}/stats"):
        answer = client.get(url, HTTP_ACCEPT="application/json")
        assert answer.status_code == 404 and answer.json()["error"] == {
            "code": "not-found",
            "message": "no such watch link (revoked?)",
            "field": None,
        }
    page = client.get(f"/watch/{link.code}/export.json", HTTP_ACCEPT="text/html")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


def test_the_gm_makes_and_revokes_links_from_the_dashboard(client, live_session, gm):
    client.force_login(gm)
    answer = client.post(f"/gm/{live_session.pk}/watch", {"label": "Big screen"})
    assert answer.status_code == 302 and answer["Location"].endswith("#watch")
    link = WatchLink.objects.get(session=live_session)
    dashboard = client.get(f"/gm/{live_session.pk}/").content.decode()
    assert f"/watch/{link.code}/overlay" in dashboard and "Big screen" in dashboard
    client.post(f"/gm/{live_session.pk}/watch/{link.pk}/revoke")
    link.refresh_from_db()
    assert link.revoked_at is not None
    assert f"/watch/{link.code}/" not in client.get(f"/gm/{live_session.pk}/").content.decode()
    too_long = client.post(f"/gm/{live_session.pk}/watch", {"label": "x" * 81})
    assert "watch_error=" in too_long["Location"]


def test_a_label_no_database_can_keep_is_refused_on_the_dashboard(client, live_session, gm):
    client.force_login(gm)
    answer = client.post(f"/gm/{live_session.pk}/watch", {"label": "Big\x00screen"})
    assert answer.status_code == 302 and answer["Location"].endswith("#watch")
    said = parse_qs(urlsplit(answer["Location"]).query)["watch_error"]
    assert said == ["Label: may not contain NUL characters or lone surrogates"]
    assert not WatchLink.objects.filter(session=live_session).exists()
    with pytest.raises(ServiceError) as refused:
        create_watch_link(session=live_session, user=gm, label="Big \ud800 screen")
    assert refused.value.field == "label"
    assert not WatchLink.objects.filter(session=live_session).exists()


def test_no_one_else_makes_or_revokes_links(client, live_session, gm, django_user_model):
    link = create_watch_link(session=live_session, user=gm)
    assert client.post(f"/gm/{live_session.pk}/watch").status_code == 302  # to the login page
    client.force_login(django_user_model.objects.create_user("nosy", password="pw-for-tests-only"))
    assert client.post(f"/gm/{live_session.pk}/watch").status_code == 403
    assert client.post(f"/gm/{live_session.pk}/watch/{link.pk}/revoke").status_code == 403
    assert WatchLink.objects.filter(revoked_at__isnull=True).count() == 1
