"""Word to the rooms of a campaign's ended session that its next session is planned or has
started: players still in the old room learn where to go on without reloading.

A notice is not an event: an ended session never changes, so nothing is stored in it. It is
sent once to the sockets open at that moment; a socket that opens later reads the same from its
page (``selectors.campaigns.onward``)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from ..models import GameSession, SessionStatus
from ..selectors.campaign_link import campaign_link, next_summary
from .events import room_group

log = logging.getLogger(__name__)

_sending: set[asyncio.Task[None]] = set()  # keeps scheduled sends alive until done


def announce_next_session(session: GameSession) -> None:
    """Once this change commits, tell the campaign's last ended session's room (the one its
    link opened until now) that ``session`` is the next one."""
    transaction.on_commit(lambda: _announce(session.pk))


def next_session_notice(session: GameSession) -> dict[str, Any]:
    return {
        "type": "next-session",
        "session": next_summary(session),
        "link": campaign_link(session.campaign),
    }


def _announce(session_id: int) -> None:
    session = GameSession.objects.select_related("campaign").get(pk=session_id)
    ended = (
        GameSession.objects.filter(campaign_id=session.campaign_id, status=SessionStatus.ENDED)
        .exclude(pk=session.pk)
        .order_by("-ended_at", "-pk")
        .first()
    )
    layer = get_channel_layer()
    if ended is None or layer is None:
        return
    message = {"type": "room.notice", "notice": next_session_notice(session)}
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        try:
            async_to_sync(layer.group_send)(room_group(ended.pk), message)
        except Exception:  # the change stands; the old room's page shows the way on when opened
            log.exception("telling an ended session's room of the next one failed")
    else:  # on an event loop's own thread (a test's): don't block it
        task = loop.create_task(layer.group_send(room_group(ended.pk), message))
        _sending.add(task)
        task.add_done_callback(_sending.discard)
