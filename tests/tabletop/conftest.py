from __future__ import annotations

import pytest

from tabletop.models import Campaign, GameSession
from tabletop.services.sessions import create_session, start_session
from tests.process_state import start_afresh


@pytest.fixture
def gm(django_user_model):
    return django_user_model.objects.create_user(
        "gamemaster", password="pw-for-tests-only", is_staff=True
    )


@pytest.fixture
def campaign(gm) -> Campaign:
    return Campaign.objects.create(name="Night Market", system="generic", gm=gm)


@pytest.fixture
def live_session(campaign) -> GameSession:
    session = create_session(campaign=campaign, title="Session one")
    return start_session(session_id=session.pk)


@pytest.fixture(autouse=True)
def _fresh_process_state():
    """Every test starts with full budgets (joins per address, odds and work per seat) and
    nothing kept under an id an earlier test's rows had."""
    start_afresh()


@pytest.fixture(autouse=True)
def _kept_records(settings, tmp_path):
    """Ended sessions' records are kept in a folder of the test's own."""
    settings.TABLETOP = {**settings.TABLETOP, "EXPORT_DIR": tmp_path / "exports"}


@pytest.fixture(autouse=True)
def _webhook_senders_stop():
    """A test that started this process's webhook senders stops them: they look in the store
    every few seconds, and the next test's store is another."""
    yield
    from tabletop.webhooks.sender import sender

    if sender.threads:
        sender.stop()
