"""Events as messages (docs/protocol.md, "The socket"), and who may see which."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection

from ..models import Event, GameSession, Visibility


@dataclass(frozen=True)
class Viewer:
    """Who is looking: a seat id (None for none) and whether it is the GM's."""

    seat_id: int | None
    is_gm: bool


OWNER = "_owner"  # internal: whose visibility counts; never sent to a client


def event_message(event: Event) -> dict[str, Any]:
    """The full, unredacted message for an event (with the internal owner key)."""
    message = {
        "type": "event",
        "seq": event.seq,
        "kind": event.kind,
        "at": event.created_at.isoformat().replace("+00:00", "Z"),
        "actor": {"seat": event.actor_id, "name": event.actor_name} if event.actor_id else None,
        "visibility": event.visibility,
        "data": event.data,
    }
    if event.owner_id is not None:
        message[OWNER] = event.owner_id
    return message


def dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"))


def for_everyone(message: dict[str, Any]) -> dict[str, Any]:
    """The message without internal keys, as sent to whoever may see it."""
    return {k: v for k, v in message.items() if k != OWNER} if OWNER in message else message


def owner_of(message: dict[str, Any]) -> int | None:
    owner = message.get(OWNER)
    return owner if owner is not None else (message.get("actor") or {}).get("seat")


def can_see(
    *,
    visibility: str,
    actor_seat_id: int | None,
    viewer: Viewer,
    to: int | None = None,
    gm_reads: bool = False,
) -> bool:
    """Whether ``viewer`` sees an event's data. A whisper (``to``: its recipient's seat) is the
    sender's and the recipient's, and the GM's only where ``gm_reads`` (the whisper is to the
    GM, or the campaign lets the GM read players' whispers, as it did when it was sent)."""
    if visibility == Visibility.PUBLIC:
        return True
    is_actor = viewer.seat_id is not None and viewer.seat_id == actor_seat_id
    if visibility == Visibility.GM:
        return viewer.is_gm or is_actor
    if visibility == Visibility.BLIND:
        return viewer.is_gm
    if visibility == Visibility.SELF:
        return is_actor
    if visibility == Visibility.WHISPER:
        is_recipient = viewer.seat_id is not None and viewer.seat_id == to
        return is_actor or is_recipient or (viewer.is_gm and gm_reads)
    return False


def sees(message: dict[str, Any], viewer: Viewer) -> bool:
    """``can_see`` for a full (unredacted) message."""
    data = message.get("data") or {}
    to = data.get("to") if message["visibility"] == Visibility.WHISPER else None
    return can_see(
        visibility=message["visibility"],
        actor_seat_id=owner_of(message),
        viewer=viewer,
        to=(to or {}).get("seat"),
        gm_reads=bool(data.get("gm_reads")),
    )


def redacted(public: dict[str, Any]) -> dict[str, Any]:
    """A message as someone who may not see it gets it: its seq, kind and visibility, no data.
    A whisper does not even say who sent it: a third seat learns nothing of it but its seq."""
    if public["visibility"] == Visibility.WHISPER:
        return {**public, "actor": None, "data": {"hidden": True}}
    return {**public, "data": {"hidden": True}}


def for_viewer(message: dict[str, Any], viewer: Viewer) -> dict[str, Any]:
    """The message as ``viewer`` may see it: same seq, kind, actor and visibility; data hidden
    when it is not theirs to see (and a whisper's sender too)."""
    public = for_everyone(message)
    if sees(message, viewer):
        return public
    return redacted(public)


def events_after(*, session_id: int, after: int, limit: int | None = None) -> list[dict[str, Any]]:
    """Stored events with seq > ``after``, in order, as full messages."""
    qs = Event.objects.filter(session_id=session_id, seq__gt=after).order_by("seq")
    # (owner_id is a column of its own; no join is needed for it)
    if limit is not None:
        qs = qs[:limit]
    return [event_message(e) for e in qs]


# Ids a statement of ``last_seqs`` asks for at most (SQLite's oldest limit of a statement's
# parameters is 999).
LAST_SEQS_AT_ONCE = 500


def last_seqs(*, session_ids: Sequence[int]) -> dict[int, int]:
    """Each session's last stored seq, by id (sessions that do not exist are left out).

    A process's room watch asks this every second for every room it serves. Written here, not
    built by the ORM: the ORM's ``pk__in`` prepared each id of the list in Python for every
    statement, 2 ms of the process's time a second at 200 rooms."""
    table = connection.ops.quote_name(GameSession._meta.db_table)
    pk = connection.ops.quote_name(GameSession._meta.pk.column)
    column = connection.ops.quote_name(GameSession._meta.get_field("last_seq").column)
    found: dict[int, int] = {}
    with connection.cursor() as cursor:
        for start in range(0, len(session_ids), LAST_SEQS_AT_ONCE):
            ids = [int(i) for i in session_ids[start : start + LAST_SEQS_AT_ONCE]]
            marks = ", ".join(["%s"] * len(ids))
            cursor.execute(f"SELECT {pk}, {column} FROM {table} WHERE {pk} IN ({marks})", ids)
            found.update((int(i), int(seq)) for i, seq in cursor.fetchall())
    return found
