"""A page request's database connection is closed when the request ends, not left open in its
finished thread for the garbage collector."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest
from channels.testing import HttpCommunicator
from django.db import connections
from django.db.backends.signals import connection_created

from tabletop.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)


async def _get(path: str) -> int:
    page = HttpCommunicator(application, "GET", path, headers=[(b"host", b"testserver")])
    status = (await page.get_response(timeout=10))["status"]
    await page.wait(10)  # (the request finishes after its response is sent)
    return status


@pytest.mark.asyncio
async def test_a_page_requests_connection_is_closed_when_the_request_ends(live_session) -> None:
    opened: list[tuple[Any, int]] = []

    def note(sender: Any, connection: Any, **kwargs: Any) -> None:
        opened.append((connection, threading.get_ident()))  # (held: no collector closes it)

    kept = connections.settings["default"]
    max_age, kept["CONN_MAX_AGE"] = kept["CONN_MAX_AGE"], 600  # kept, as served (the tests: 0)
    connection_created.connect(note)
    gc.disable()
    try:
        assert await _get(f"/play/{live_session.invite_code}/") == 200
    finally:
        gc.enable()
        connection_created.disconnect(note)
        kept["CONN_MAX_AGE"] = max_age
    theirs = [wrapper for wrapper, thread in opened if thread != threading.get_ident()]
    assert theirs, "the page read the database in a thread of its own"
    assert all(wrapper.connection is None for wrapper in theirs), "left open after the request"
