"""What must never happen is refused by the database itself, not only by Python."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from tabletop.models import Character, CharacterResource, Event, GameSession, Seat
from tabletop.models.events import AppendOnlyError

# (seq rules are the model's own: its tests store bare "note" events)
pytestmark = [pytest.mark.django_db, pytest.mark.any_event]


def test_duplicate_seq_is_refused_by_the_database(live_session):
    Event.objects.create(session=live_session, seq=50, kind="note", data={})
    with pytest.raises(IntegrityError), transaction.atomic():
        Event.objects.create(session=live_session, seq=50, kind="note", data={})


def test_seq_starts_at_one(live_session):
    with pytest.raises(IntegrityError), transaction.atomic():
        Event.objects.create(session=live_session, seq=0, kind="note", data={})


def test_same_seq_in_two_sessions_is_fine(campaign, live_session):
    other = GameSession.objects.create(campaign=campaign, title="Other")
    Event.objects.create(session=live_session, seq=99, kind="note", data={})
    Event.objects.create(session=other, seq=99, kind="note", data={})


def test_negative_resource_is_refused_by_the_database(campaign):
    character = Character.objects.create(campaign=campaign, name="Ana")
    resource = CharacterResource.objects.create(character=character, name="luck", amount=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        CharacterResource.objects.filter(pk=resource.pk).update(amount=-1)


def test_duplicate_invite_code_is_refused_by_the_database(campaign, live_session):
    with pytest.raises(IntegrityError), transaction.atomic():
        GameSession.objects.create(
            campaign=campaign, title="Copy", invite_code=live_session.invite_code
        )


def test_invite_codes_are_unguessable(campaign):
    codes = {
        GameSession.objects.create(campaign=campaign, title=f"s{i}").invite_code for i in range(20)
    }
    assert len(codes) == 20
    assert all(len(code) >= 12 for code in codes)


def test_one_gm_seat_per_session(campaign):
    session = GameSession.objects.create(campaign=campaign, title="Planned")
    Seat.objects.create(session=session, name="GM", role="gm")
    with pytest.raises(IntegrityError), transaction.atomic():
        Seat.objects.create(session=session, name="Another GM", role="gm")


def test_ended_session_needs_an_end_time(live_session):
    with pytest.raises(IntegrityError), transaction.atomic():
        GameSession.objects.filter(pk=live_session.pk).update(status="ended", ended_at=None)


def test_events_are_append_only(live_session):
    event = Event.objects.create(session=live_session, seq=7, kind="note", data={"a": 1})
    event.data = {"a": 2}
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        event.delete()
    assert Event.objects.get(pk=event.pk).data == {"a": 1}


def test_duplicate_character_name_in_campaign(campaign):
    Character.objects.create(campaign=campaign, name="Ana")
    with pytest.raises(IntegrityError), transaction.atomic():
        Character.objects.create(campaign=campaign, name="Ana")
