"""Replays of a session's history to sockets that open far behind (``after=0`` on a long
session): each is paged (``Delivery.replay``), and a process sends only a few at once.

A replay is read from the store a page at a time and sent as its client reads, so it costs the
database thread a few milliseconds a page and the process one page of memory; the cap keeps a
crowd of spectators opening at once from turning those pages into a queue in front of every
other room's actions. A socket that waits past the action deadline for its turn is told
``busy`` and closed (4503), and its page reconnects later with the same ``after``."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.db import DatabaseSyncToAsync
from django.conf import settings

from .delivery import REPLAY_PAGE, Delivery
from .limits import Slots
from .selectors.events import events_after

BUSY = "the server is sending many long histories just now; reconnect in a few seconds"

_slots = Slots(0)
# Long replays read their pages in threads of their own (each with its own connection), never
# on the database thread the rooms' actions queue for.
_readers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="replay")
_read_page = DatabaseSyncToAsync(events_after, thread_sensitive=False, executor=_readers)


async def _page(session_id: int, after: int, limit: int) -> list[dict[str, Any]]:
    return await _read_page(session_id=session_id, after=after, limit=limit)


def slots() -> Slots:
    _slots.size = settings.TABLETOP["REPLAYS_IN_FLIGHT"]
    return _slots


async def replay(
    delivery: Delivery, *, session_id: int, after: int | None, upto: int, batch: bool = False
) -> bool:
    """Send what follows ``after`` up to ``upto``, then let live events through (``batch``: many
    events to a frame). False: the process had no slot for a long replay within the action
    deadline (nothing was sent)."""
    if after is None or upto - after <= REPLAY_PAGE:
        await delivery.replay(after=after, upto=upto, batch=batch)  # (one page, no turn)
        return True
    cap = slots()
    if not await cap.take(settings.TABLETOP["ACTION_DEADLINE_SECONDS"]):
        return False
    try:
        await delivery.replay(
            after=after,
            upto=upto,
            fetch=lambda after, limit: _page(session_id, after, limit),
            batch=batch,
        )
    finally:
        cap.give_back()
    return True
