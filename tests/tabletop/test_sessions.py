"""Starting and ending sessions: the commitment first, the seed only at the end."""

from __future__ import annotations

import hashlib

import pytest

from tabletop.models import Event, SessionStatus
from tabletop.services.errors import ServiceError
from tabletop.services.sessions import create_session, end_session, start_session

pytestmark = pytest.mark.django_db


def test_start_publishes_commitment_and_records_event(campaign):
    session = create_session(campaign=campaign, title="One")
    assert session.commitment == ""
    session = start_session(session_id=session.pk)
    assert session.status == SessionStatus.LIVE
    assert session.commitment == hashlib.sha256(bytes(session.server_seed)).hexdigest()
    assert session.revealed_seed is None
    event = Event.objects.get(session=session)
    assert (event.seq, event.kind) == (1, "session.start")
    assert event.data == {
        "commitment": session.commitment,
        "title": "One",
        "started_at": session.started_at.isoformat(),
    }


def test_end_reveals_the_seed(live_session):
    session = end_session(session_id=live_session.pk)
    assert session.status == SessionStatus.ENDED and session.ended_at is not None
    end = Event.objects.get(session=session, kind="session.end")
    assert end.seq == 2
    assert hashlib.sha256(bytes.fromhex(end.data["server_seed"])).hexdigest() == session.commitment
    assert session.revealed_seed == end.data["server_seed"]


def test_cannot_end_twice_or_restart(live_session):
    end_session(session_id=live_session.pk)
    with pytest.raises(ServiceError) as err:
        end_session(session_id=live_session.pk)
    assert err.value.code == "conflict"
    with pytest.raises(ServiceError):
        start_session(session_id=live_session.pk)


def test_session_needs_a_title(campaign):
    with pytest.raises(ServiceError) as err:
        create_session(campaign=campaign, title="   ")
    assert err.value.field == "title"


def test_every_event_of_the_session_has_an_actor(live_session):
    # Started and ended by the admin (no seat of their own): the GM's seat acts.
    end_session(session_id=live_session.pk)
    for event in Event.objects.filter(session=live_session):
        assert event.actor is not None and event.actor.role == "gm", event
