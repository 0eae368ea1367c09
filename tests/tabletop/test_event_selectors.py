"""Selectors of stored events: each session's last seq, as the rooms' store watch reads it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tabletop.models import GameSession
from tabletop.selectors import events
from tabletop.selectors.events import last_seqs
from tabletop.services.sessions import create_session

pytestmark = pytest.mark.django_db


def sessions(campaign, count: int) -> list[GameSession]:
    made = [create_session(campaign=campaign, title=f"Session {n}") for n in range(count)]
    for n, session in enumerate(made):
        GameSession.objects.filter(pk=session.pk).update(last_seq=n * 3)
    return made


def test_each_sessions_last_seq_by_id(campaign):
    made = sessions(campaign, 3)
    found = last_seqs(session_ids=[s.pk for s in made])
    assert found == {made[0].pk: 0, made[1].pk: 3, made[2].pk: 6}
    assert all(type(k) is int and type(v) is int for k, v in found.items())


def test_a_session_that_is_not_stored_is_left_out_and_no_ids_ask_nothing(campaign):
    (one,) = sessions(campaign, 1)
    missing = one.pk + 1000
    assert last_seqs(session_ids=[one.pk, missing]) == {one.pk: 0}
    with CaptureQueriesContext(connection) as asked:
        assert last_seqs(session_ids=[]) == {}
    assert len(asked) == 0


def test_many_sessions_are_asked_in_statements_of_a_bounded_size(campaign, monkeypatch):
    monkeypatch.setattr(events, "LAST_SEQS_AT_ONCE", 2)
    made = sessions(campaign, 5)
    with CaptureQueriesContext(connection) as asked:
        found = last_seqs(session_ids=[s.pk for s in made])
    assert found == {s.pk: n * 3 for n, s in enumerate(made)}
    assert len(asked) == 3  # 2 + 2 + 1
