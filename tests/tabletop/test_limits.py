"""Budgets on the table's HTTP side: seats per address, odds per seat; never a 500."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from django.conf import settings

from tabletop.models import Seat

from .test_join import post_json

pytestmark = pytest.mark.django_db


def test_joins_are_limited_per_client_address(client, live_session):
    url = f"/play/{live_session.invite_code}/join"
    with mock.patch.dict(settings.TABLETOP, {"JOINS_PER_MINUTE": 3}):
        for i in range(3):
            client.cookies.clear()
            assert post_json(client, url, {"name": f"P{i}"}).status_code == 200
        client.cookies.clear()
        refused = post_json(client, url, {"name": "One too many"})
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "rate-limited"
        # Another address is not held up.
        client.cookies.clear()
        assert (
            post_json(client, url, {"name": "Next door"}, REMOTE_ADDR="10.0.0.9").status_code == 200
        )
    assert Seat.objects.filter(session=live_session, role="player").count() == 4


def test_the_odds_endpoint_is_rate_limited_per_seat(client, live_session):
    post_json(client, f"/play/{live_session.invite_code}/join", {"name": "Ana"})
    url = f"/play/{live_session.invite_code}/odds"
    query = {"request": json.dumps({"notation": "2d6"})}
    with mock.patch.dict(settings.TABLETOP, {"ODDS_PER_SECOND": 0.01, "ODDS_BURST": 3}):
        assert [client.get(url, query).status_code for _ in range(4)] == [200, 200, 200, 429]


@pytest.mark.parametrize("notation", ["1000d6!dl1", "1000d1000!>999r61kh1", "((((((d6))))))"])
def test_heavy_or_strange_odds_requests_get_a_clean_answer_never_a_500(
    client, live_session, notation
):
    post_json(client, f"/play/{live_session.invite_code}/join", {"name": "Ana"})
    with mock.patch.dict(settings.TABLETOP, {"ODDS_SECONDS": 1.0}):
        response = client.get(
            f"/play/{live_session.invite_code}/odds",
            {"request": json.dumps({"notation": notation})},
        )
    assert response.status_code in {200, 400, 422}, response.content
    if response.status_code != 200:
        assert response.json()["error"]["message"]


def test_a_json_join_while_the_channel_layer_is_away_succeeds_fully(client, live_session):
    from channels.layers import get_channel_layer

    layer = get_channel_layer()

    async def away(*args, **kwargs):
        raise ConnectionError("Redis is away")

    with mock.patch.object(layer, "group_send", away):
        response = post_json(client, f"/play/{live_session.invite_code}/join", {"name": "Ana"})
    assert response.status_code == 200 and response.json()["token"]
    assert Seat.objects.filter(session=live_session, name="Ana").count() == 1


def test_a_seat_link_never_silently_replaces_the_browsers_own_seat(client, live_session):
    from django.test import Client

    code = live_session.invite_code
    own = post_json(client, f"/play/{code}/join", {"name": "Ana"}).json()
    stranger = Client()
    other = post_json(stranger, f"/play/{code}/join", {"name": "Mallory"}, REMOTE_ADDR="10.9.9.9")
    link_token = other.json()["token"]
    asked = client.get(f"/play/{code}/", {"token": link_token})
    assert asked.status_code == 200 and f"seat_{code}" not in asked.cookies
    page = asked.content.decode()
    assert "Switch seats?" in page and "Mallory" in page and "Ana" in page
    assert client.cookies[f"seat_{code}"].value == own["token"], "still Ana's seat"
    # Saying yes takes the linked seat (a form post with the CSRF token).
    csrf = Client(enforce_csrf_checks=True)
    csrf.cookies = client.cookies
    assert csrf.post(f"/play/{code}/seat", {"token": link_token}).status_code == 403
    switched = client.post(f"/play/{code}/seat", {"token": link_token})
    assert switched.status_code == 302 and switched.cookies[f"seat_{code}"].value == link_token
    # The same link in a browser with no seat here (or the same seat) just sits down.
    fresh = Client()
    assert fresh.get(f"/play/{code}/", {"token": link_token}).status_code == 302
    assert fresh.cookies[f"seat_{code}"].value == link_token
