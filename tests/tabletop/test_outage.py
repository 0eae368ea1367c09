"""What a process does while its database is away, without stopping one (the fault test,
tests/tabletop/test_postgres_outage.py, stops a real PostgreSQL)."""

from __future__ import annotations

import json

import pytest
from django.db import OperationalError

from tabletop import outage as module
from tabletop.outage import DatabaseAway, Outage, unavailable


@pytest.fixture
def database(monkeypatch):
    state = {"answering": True, "asked": 0, "fresh": 0}

    def answering() -> bool:
        state["asked"] += 1
        return state["answering"]

    monkeypatch.setattr(module, "answering", answering)
    monkeypatch.setattr(
        module, "fresh_pools", lambda: state.__setitem__("fresh", state["fresh"] + 1)
    )
    return state


def test_a_fault_with_the_database_answering_is_not_an_outage(database):
    seen = Outage()
    assert seen.failed() is False and seen.since is None
    seen.check()  # nothing to ask


def test_while_away_each_check_asks_directly_and_the_first_answer_starts_the_pools_afresh(
    database,
):
    seen = Outage()
    database["answering"] = False
    assert seen.failed() is True and seen.since is not None
    for _ in range(3):
        with pytest.raises(DatabaseAway):
            seen.check()
    assert database["asked"] == 4
    database["answering"] = True
    seen.check()  # back: the action goes ahead
    assert seen.since is None and database["fresh"] == 1
    seen.check()
    assert database["asked"] == 5  # answering again: nobody asks any more


def test_one_caller_asks_at_a_time_the_others_are_refused_at_once(database, monkeypatch):
    seen = Outage()
    database["answering"] = False
    seen.failed()
    inner: list[str] = []

    def slow_answer() -> bool:
        # while this caller asks, another is refused without asking
        with pytest.raises(DatabaseAway):
            seen.check()
        inner.append("refused")
        return False

    monkeypatch.setattr(module, "answering", slow_answer)
    with pytest.raises(DatabaseAway):
        seen.check()
    assert inner == ["refused"]


def test_the_503_says_so_as_json_or_as_a_page(rf):
    as_json = unavailable(rf.get("/play/x/join", HTTP_ACCEPT="application/json"))
    assert as_json.status_code == 503 and as_json["Retry-After"] == "5"
    assert json.loads(as_json.content)["error"]["code"] == "unavailable"
    page = unavailable(rf.get("/play/x/"))
    assert page.status_code == 503 and b"not answering" in page.content
    assert b"<script" not in page.content


@pytest.mark.django_db
def test_a_page_meeting_a_database_fault_answers_503_not_500(client, database, monkeypatch):
    from tabletop.views import home

    def broken(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(home, "render", broken)
    database["answering"] = False
    response = client.get("/")
    assert response.status_code == 503 and b"not answering" in response.content
    assert module.outage.since is not None
    database["answering"] = True
    assert client.get("/").status_code == 503  # the view is still broken, the database is not
    assert module.outage.since is None
