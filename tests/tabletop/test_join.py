"""Joining by invite link: JSON for bots, a cookie and a redirect for browsers."""

from __future__ import annotations

import json

import pytest

from tabletop.models import Character, Seat
from tabletop.models.sessions import hash_token
from tabletop.services.sessions import end_session

pytestmark = pytest.mark.django_db


def post_json(client, url, body, **extra):
    return client.post(url, json.dumps(body), content_type="application/json", **extra)


def test_json_join_answers_seat_token_and_socket(client, live_session):
    code = live_session.invite_code
    response = post_json(client, f"/play/{code}/join", {"name": "  Ana  "})
    assert response.status_code == 200
    body = response.json()
    assert body["seat"]["name"] == "Ana" and body["seat"]["role"] == "player"
    assert body["socket"] == f"/ws/play/{code}/"
    seat = Seat.objects.get(pk=body["seat"]["id"])
    assert seat.token_hash == hash_token(body["token"])
    assert body["token"] not in seat.token_hash


def test_the_token_is_stored_only_as_a_hash(client, live_session):
    body = post_json(client, f"/play/{live_session.invite_code}/join", {"name": "Ana"}).json()
    for seat in Seat.objects.all():
        assert body["token"] not in json.dumps([seat.name, seat.token_hash])


def test_browser_join_sets_cookie_and_redirects_and_rejoin_keeps_the_seat(client, live_session):
    code = live_session.invite_code
    response = client.post(f"/play/{code}/join", {"name": "Ana"})
    assert response.status_code == 302 and response["Location"] == f"/play/{code}/"
    cookie = response.cookies[f"seat_{code}"]
    assert cookie["httponly"] and cookie.value
    again = client.post(f"/play/{code}/join", {"name": "Ana again"})
    assert again.status_code == 302
    assert Seat.objects.filter(session=live_session, role="player").count() == 1


def test_join_with_a_character(client, campaign, live_session):
    hero = Character.objects.create(campaign=campaign, name="Hero")
    body = post_json(
        client, f"/play/{live_session.invite_code}/join", {"name": "Ana", "character": hero.pk}
    ).json()
    assert body["seat"]["characters"] == [{"id": hero.pk, "name": "Hero"}]
    other = post_json(
        client.__class__(),
        f"/play/{live_session.invite_code}/join",
        {"name": "Bo", "character": hero.pk},
    )
    assert other.status_code == 409 and other.json()["error"]["code"] == "conflict"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "x" * 41}, "name"),
        ({"name": "A", "character": "x"}, "character"),
        ({"name": "A", "character": 99999}, "character"),
    ],
)
def test_bad_joins_name_the_field_and_change_nothing(client, live_session, body, field):
    response = post_json(client, f"/play/{live_session.invite_code}/join", body)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == field
    assert not Seat.objects.filter(role="player").exists()


def test_someone_elses_character_is_refused(client, campaign, live_session, django_user_model):
    owner = django_user_model.objects.create_user("owner", password="pw-for-tests-only")
    theirs = Character.objects.create(campaign=campaign, name="Theirs", owner=owner)
    response = post_json(
        client, f"/play/{live_session.invite_code}/join", {"name": "A", "character": theirs.pk}
    )
    assert response.status_code == 403


def test_unknown_code_and_ended_session(client, live_session):
    assert post_json(client, "/play/nope/join", {"name": "A"}).status_code == 404
    end_session(session_id=live_session.pk)
    response = post_json(client, f"/play/{live_session.invite_code}/join", {"name": "A"})
    assert response.status_code == 409


def test_a_code_no_table_has_is_answered_in_json_to_json_and_as_a_page_to_a_browser(client):
    for answer in (
        post_json(client, "/play/NOPE/join", {"name": "zz"}),
        client.post("/play/NOPE/join", {"name": "zz"}, HTTP_ACCEPT="application/json"),
    ):
        assert answer.status_code == 404 and answer["Content-Type"] == "application/json"
        assert answer.json()["error"]["code"] == "not-found"
        assert answer.json()["error"]["message"] == "no table has that code"
    page = client.post("/play/NOPE/join", {"name": "zz"}, HTTP_ACCEPT="text/html")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
    assert not Seat.objects.exists()


def test_an_address_no_route_takes_is_answered_in_json_to_json_and_as_a_page_to_a_browser(client):
    # A code no code could be (a dot in it) is no route's: Django's HTML page answered JSON too.
    for answer in (
        post_json(client, "/play/a.b/join", {"name": "zz"}),
        client.get("/no/such/page", HTTP_ACCEPT="application/json"),
    ):
        assert answer.status_code == 404 and answer["Content-Type"] == "application/json"
        assert answer.json()["error"] == {
            "code": "not-found",
            "message": "nothing is at this address",
            "field": None,
        }
    page = client.get("/no/such/page", HTTP_ACCEPT="text/html")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


def test_a_json_post_without_its_csrf_token_is_told_so_in_json(live_session):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    joined = post_json(strict, f"/play/{live_session.invite_code}/join", {"name": "Ana"})
    strict.cookies.update(joined.cookies)
    body = {"label": "Axe", "request": {"notation": "1d8"}}
    answer = post_json(strict, f"/play/{live_session.invite_code}/saved", body)
    assert answer.status_code == 403 and answer["Content-Type"] == "application/json"
    assert answer.json()["error"]["code"] == "forbidden"
    assert "CSRF token" in answer.json()["error"]["message"]
    form = strict.post(f"/play/{live_session.invite_code}/join", {"name": "Bo"})
    assert form.status_code == 403 and form["Content-Type"].startswith("text/html")


def test_form_join_needs_csrf(live_session):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    response = strict.post(f"/play/{live_session.invite_code}/join", {"name": "Ana"})
    assert response.status_code == 403
    assert not Seat.objects.filter(role="player").exists()
    # JSON clients (bots) carry no CSRF cookie and are let in.
    assert (
        post_json(strict, f"/play/{live_session.invite_code}/join", {"name": "Bot"}).status_code
        == 200
    )


def test_gm_login_gets_the_gm_seat(client, gm, live_session):
    client.force_login(gm)
    page = client.get(f"/play/{live_session.invite_code}/")
    assert page.status_code == 200
    seat = Seat.objects.get(session=live_session)
    assert seat.role == "gm" and seat.user == gm


def test_odds_endpoint_for_seated_visitors_only(client, live_session):
    url = f"/play/{live_session.invite_code}/odds"
    query = {"system": "generic", "request": json.dumps({"notation": "2d6", "difficulty": 12})}
    assert client.get(url, query).status_code == 403
    post_json(client, f"/play/{live_session.invite_code}/join", {"name": "Ana"})
    answer = client.get(url, query).json()
    assert answer["distribution"]["7"] == pytest.approx(6 / 36)
    assert answer["p_success"] == pytest.approx(1 / 36)
    bad = client.get(url, {"system": "generic", "request": json.dumps({"notation": "2d"})})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "request.notation"
    assert client.get(url, {"request": "{nope"}).status_code == 400
    assert client.get(url, {"system": "zoria", "request": "{}"}).status_code == 400


def test_nul_characters_are_refused_plainly(client, live_session):
    from tabletop.services.errors import ServiceError
    from tabletop.services.seats import join_session

    from .commands import rolled

    response = post_json(client, f"/play/{live_session.invite_code}/join", {"name": "A\u0000"})
    assert response.status_code == 400 and response.json()["error"]["field"] == "name"
    seat = join_session(session=live_session, name="Ana").seat
    with pytest.raises(ServiceError) as err:
        rolled(seat_id=seat.pk, request={"notation": "d6"}, client_seed="a\u0000b")
    assert err.value.code == "invalid"


def test_a_form_join_asking_for_json_without_csrf_gets_json(live_session):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    response = strict.post(
        f"/play/{live_session.invite_code}/join", {"name": "Ana"}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"


def test_two_hundred_players_sit_at_one_table(live_session, monkeypatch):
    from tabletop.services import seats
    from tabletop.services.errors import ServiceError

    for i in range(200):
        seats.join_session(session=live_session, name=f"P{i}")
    monkeypatch.setattr(seats, "MAX_PLAYERS", 200)
    with pytest.raises(ServiceError) as err:
        seats.join_session(session=live_session, name="One too many")
    assert "full" in str(err.value)


def test_checking_as_one_types_answers_200_with_ok_false(client, live_session):
    url = f"/play/{live_session.invite_code}/odds"
    post_json(client, f"/play/{live_session.invite_code}/join", {"name": "Ana"})
    typing = {"system": "generic", "request": json.dumps({"notation": "2d"}), "check": "1"}
    answer = client.get(url, typing)
    assert answer.status_code == 200
    body = answer.json()
    assert body["ok"] is False and body["status"] == 400
    assert body["error"]["field"] == "request.notation"
    assert "the die size after 'd' (like 2d6) is missing at the end" in body["error"]["message"]
    big = {"system": "generic", "request": json.dumps({"notation": "1000d1000"}), "check": "1"}
    too_large = client.get(url, big)
    assert too_large.status_code == 200 and too_large.json()["ok"] is False
    done = client.get(url, {**typing, "request": json.dumps({"notation": "2d6"})})
    assert done.status_code == 200 and done.json()["distribution"]["7"] == pytest.approx(6 / 36)
    # Without check=1 the same refusal is the documented 400.
    plain = {key: value for key, value in typing.items() if key != "check"}
    assert client.get(url, plain).status_code == 400


@pytest.mark.parametrize("character", ["x", "²", "١٢"])
def test_a_form_join_with_a_character_that_is_not_a_number_names_the_field(
    client, live_session, character
):
    # "²" passes str.isdigit() but not int(): it is refused as the field it is, never a 500.
    response = client.post(
        f"/play/{live_session.invite_code}/join", {"name": "A", "character": character}
    )
    assert response.status_code == 400
    assert not Seat.objects.filter(role="player").exists()
