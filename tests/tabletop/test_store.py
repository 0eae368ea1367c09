"""The roll's statements written once (tabletop/services/store.py) read and write exactly what
the ORM would: every field of the seat, its session and campaign, converted to its Python
value; the event's row as the ORM reads it back, its receivers told it was saved."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models.signals import post_save
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from tabletop.models import Event, Seat
from tabletop.services.events import change
from tabletop.services.seats import join_session
from tabletop.services.store import seat_at_table


def _fields(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


@pytest.mark.django_db
def test_the_seat_read_is_the_orms_in_one_statement(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    Seat.objects.filter(pk=seat.pk).update(sockets=2)
    expected = Seat.objects.select_related("session__campaign").get(pk=seat.pk)
    with CaptureQueriesContext(connection) as read:
        found = seat_at_table(seat.pk)
        session, campaign = found.session, found.session.campaign
    assert len(read.captured_queries) == 1
    assert _fields(found) == _fields(expected)
    assert _fields(session) == _fields(expected.session)
    assert _fields(campaign) == _fields(expected.session.campaign)
    assert session.seed == expected.session.seed and isinstance(session.seed, bytes)
    assert session.started_at is not None and session.started_at.tzinfo is not None
    with pytest.raises(Seat.DoesNotExist):
        seat_at_table(seat.pk + 1000)


@pytest.mark.django_db
def test_a_recorded_event_is_the_row_the_orm_reads_back_and_its_receivers_are_told(
    live_session,
):
    ana = join_session(session=live_session, name="Ana").seat
    bo = join_session(session=live_session, name="Bo").seat
    told = []

    def receiver(sender, instance, created, **kwargs):
        told.append((instance, created))

    post_save.connect(receiver, sender=Event)
    try:
        with change(None) as uow:
            event = uow.record(
                session_id=live_session.pk,
                kind="seat.leave",
                actor=ana,
                data={"seat": bo.pk, "name": "Bo é \u2603"},
                owner=bo,
            )
    finally:
        post_save.disconnect(receiver, sender=Event)
    stored = Event.objects.get(pk=event.pk)
    assert model_to_dict(event) == model_to_dict(stored)
    assert (event.created_at, event.actor_name, event.owner_id) == (
        stored.created_at,
        "Ana",
        bo.pk,
    )
    assert stored.data["name"] == "Bo é \u2603"
    assert told == [(event, True)]


@pytest.mark.django_db
def test_an_event_without_actor_or_owner_is_the_orms_row_and_its_actor_costs_no_query(
    live_session, django_assert_num_queries
):
    ana = join_session(session=live_session, name="Ana").seat
    with change(None) as uow:
        nobody = uow.record(
            session_id=live_session.pk,
            kind="seat.leave",
            actor=None,
            data={"seat": ana.pk, "name": "Ana"},
        )
        by_ana = uow.record(
            session_id=live_session.pk,
            kind="seat.leave",
            actor=ana,
            data={"seat": ana.pk, "name": "Ana"},
        )
    stored = Event.objects.get(pk=nobody.pk)
    assert model_to_dict(nobody) == model_to_dict(stored)
    assert (stored.actor_id, stored.actor_name, stored.owner_id) == (None, "", None)
    # The roller is handed back as the seat it was given: reading it again is no statement.
    with django_assert_num_queries(0):
        assert by_ana.actor is ana and by_ana.owner is None
