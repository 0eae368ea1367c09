"""Recording events: the next ``seq`` and the row in the caller's transaction; broadcast after
commit."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection, transaction

from ..models import Event, GameSession, Seat, Visibility
from ..selectors.events import event_message


def room_group(session_id: int) -> str:
    return f"room.{session_id}"


def next_seq(*, session_id: int) -> int:
    """Take the session's next sequence number. Holds the session row's write lock until commit,
    so events of one session are numbered in commit order, across processes."""
    if not connection.in_atomic_block:
        raise RuntimeError("next_seq must run inside transaction.atomic()")
    table = GameSession._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET last_seq = last_seq + 1 WHERE id = %s RETURNING last_seq",
            [session_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise GameSession.DoesNotExist(session_id)
    return int(row[0])


def record_event(
    *,
    session_id: int,
    kind: str,
    actor: Seat | None,
    data: dict[str, Any],
    visibility: str = Visibility.PUBLIC,
    seq: int | None = None,
    owner: Seat | None = None,
) -> Event:
    """Store one event (taking the next seq unless the caller already took it for the dice)
    and queue its broadcast for after the commit."""
    if seq is None:
        seq = next_seq(session_id=session_id)
    event = Event.objects.create(
        session_id=session_id,
        seq=seq,
        kind=kind,
        actor=actor,
        actor_name=actor.name if actor else "",
        visibility=visibility,
        data=data,
        owner=owner if owner is not None and owner != actor else None,
    )
    transaction.on_commit(lambda: broadcast(event))
    return event


def broadcast(event: Event) -> None:
    """Send the full event to the room; each socket redacts it for its own viewer."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(
        room_group(event.session_id), {"type": "room.event", "event": event_message(event)}
    )
