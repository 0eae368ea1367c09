"""Codes in addresses and in the home page's form: only a code's own characters are looked up,
anything else is a plain 404 (or a form error), never a database error."""

from __future__ import annotations

import pytest
from django.db import DataError, connection
from django.urls import resolve

from tabletop.models.codes import is_code, new_invite_code
from tabletop.services.watch import create_watch_link

pytestmark = pytest.mark.django_db


@pytest.fixture
def refuses_nul_as_postgresql():
    """PostgreSQL refuses NUL in a text parameter (psycopg, before the query is sent); SQLite
    takes it, so every statement is checked the same way here."""

    def refuse(execute, sql, params, many, context):
        for param in (p for ps in params for p in ps) if many else params or ():
            if isinstance(param, str) and "\x00" in param:
                raise DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(refuse):
        yield


@pytest.mark.parametrize(
    "path",
    [
        "/play/ab%00cd/",
        "/play/ab%00cd/join",
        "/play/ab%00cd/stats",
        "/watch/ab%00cd/",
        "/watch/ab%00cd/stats",
        "/watch/ab%00cd/overlay",
        "/c/ab%00cd/",
        "/play/ab%20cd/",
        "/play/" + "a" * 41 + "/",
    ],
)
def test_an_address_whose_code_no_code_could_be_is_not_found(
    client, refuses_nul_as_postgresql, path
):
    assert client.get(path).status_code == 404


def test_the_home_form_refuses_a_code_no_code_could_be_in_plain_words(
    client, refuses_nul_as_postgresql
):
    response = client.post("/join", {"code": "ab\x00cd"})
    assert response.status_code == 400
    assert "A code holds only letters, digits" in response.content.decode()


def test_every_code_made_is_a_code_the_addresses_take(live_session, gm):
    link = create_watch_link(session=live_session, user=gm)
    codes = [live_session.invite_code, live_session.campaign.link_code, link.code]
    codes += [new_invite_code() for _ in range(200)]
    for code in codes:
        assert is_code(code), code
    assert resolve(f"/watch/{link.code}/").kwargs == {"code": link.code}
    assert resolve(f"/play/{live_session.invite_code}/").kwargs == {
        "code": live_session.invite_code
    }
