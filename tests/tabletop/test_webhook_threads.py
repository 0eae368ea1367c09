"""A process that stores events without serving them (a management command, the test run) sends
no webhooks of its own: the serving processes' sweeps find its events in the store, and no
sender thread of it outlives the database it was reading."""

from __future__ import annotations

import threading

import pytest

from tabletop.services.seats import join_session
from tabletop.services.sessions import create_session, start_session
from tabletop.services.webhooks import add_webhook
from tabletop.webhooks.sender import sender, store_has_work

from .commands import rolled

pytestmark = pytest.mark.django_db(transaction=True)


def test_committing_public_events_starts_no_sender_where_none_serves(campaign, settings):
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": True}
    add_webhook(campaign=campaign, user=campaign.gm, url="http://127.0.0.1:9/hook")
    session = start_session(session_id=create_session(campaign=campaign, title="Tonight").pk)
    ana = join_session(session=session, name="Ana").seat
    rolled(seat_id=ana.pk, request={"notation": "d20"})
    assert sender.threads == []
    assert not [t for t in threading.enumerate() if t.name.startswith("webhooks")]
    # What is owed stays in the store for a serving process's sweep.
    assert store_has_work()


def test_with_no_hook_in_the_store_an_event_tells_the_sweeper_nothing(campaign, settings):
    """Most tables have no hook: their rolls wake no thread and start no lookup. A hook saved
    turns the lookups back on at once, and the sweep finds what it owes."""
    from tabletop.webhooks.sender import Sender

    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": True}
    session = start_session(session_id=create_session(campaign=campaign, title="Tonight").pk)
    ana = join_session(session=session, name="Ana").seat
    quiet = Sender()
    quiet.any_hooks = False  # what a sweep of a store with no active hook leaves
    quiet.session_changed(session.pk)
    assert quiet.sessions == set() and not quiet.threads
    sender.any_hooks = sender.sweep_now = False
    add_webhook(campaign=campaign, user=campaign.gm, url="http://127.0.0.1:9/hook")
    assert sender.any_hooks and sender.sweep_now  # the process's own sender, told on commit
    quiet.hooks_changed()
    quiet.session_changed(session.pk)
    assert quiet.sessions == {session.pk}
    rolled(seat_id=ana.pk, request={"notation": "d20"})
    assert store_has_work()


def test_a_sweep_of_a_store_with_no_active_hook_is_one_short_statement(
    campaign, settings, django_assert_num_queries
):
    """Most tables have no hook: every sweep (each process, every two seconds) asks the store
    one short question, not the search for events behind cursors; once a hook is active the
    sweep finds the work it owes."""
    from tabletop.webhooks.sender import Sender

    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": True}
    session = start_session(session_id=create_session(campaign=campaign, title="Tonight").pk)
    ana = join_session(session=session, name="Ana").seat
    rolled(seat_id=ana.pk, request={"notation": "d20"})
    quiet = Sender()
    quiet.sweep_now = False  # (as the sweeper's loop leaves it when it takes its turn)
    with django_assert_num_queries(1):
        assert quiet.hooks_to_wake(sweep=True, sessions={session.pk}) == []
    assert not quiet.any_hooks
    hook = add_webhook(campaign=campaign, user=campaign.gm, url="http://127.0.0.1:9/hook")
    rolled(seat_id=ana.pk, request={"notation": "d20"})  # (a hook is owed what comes after it)
    assert quiet.hooks_to_wake(sweep=True, sessions=set()) == [hook.pk]
    assert quiet.any_hooks
    assert quiet.hooks_to_wake(sweep=False, sessions={session.pk}) == [hook.pk]
