"""Replays of a session's history to sockets that open far behind (``after=0`` on a long
session): each is paged (``Delivery.replay``), and a process sends only a few at once.

A replay is read from the store a page at a time and sent as its client reads, so it costs the
database thread a few milliseconds a page and the process one page of memory; the cap keeps a
crowd of spectators opening at once from turning those pages into a queue in front of every
other room's actions. A socket that waits past the action deadline for its turn is told
``busy`` and closed (4503), and its page reconnects later with the same ``after``."""

from __future__ import annotations

from django.conf import settings

from .delivery import REPLAY_PAGE, Delivery
from .limits import Slots

BUSY = "the server is sending many long histories just now; reconnect in a few seconds"

_slots = Slots(0)


def slots() -> Slots:
    _slots.size = settings.TABLETOP["REPLAYS_IN_FLIGHT"]
    return _slots


async def replay(delivery: Delivery, *, after: int | None, upto: int) -> bool:
    """Send what follows ``after`` up to ``upto``, then let live events through. False: the
    process had no slot for a long replay within the action deadline (nothing was sent)."""
    if after is None or upto - after <= REPLAY_PAGE:
        await delivery.replay(after=after, upto=upto)  # (a short one: one page, no turn)
        return True
    cap = slots()
    if not await cap.take(settings.TABLETOP["ACTION_DEADLINE_SECONDS"]):
        return False
    try:
        await delivery.replay(after=after, upto=upto)
    finally:
        cap.give_back()
    return True
