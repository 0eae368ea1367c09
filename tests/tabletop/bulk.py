"""Long sessions for tests, written in bulk (no dice drawn): what replays and exports read."""

from __future__ import annotations

from tabletop.models import Event, GameSession, Seat


def add_rolls(session: GameSession, count: int, *, name: str = "Ana", pad: int = 0) -> int:
    """Append ``count`` public roll events by seat ``name`` (made if missing), each carrying
    ``pad`` characters of padding; answers the session's new last seq."""
    seat = Seat.objects.filter(session=session, name=name).first()
    if seat is None:
        seat = Seat.objects.create(session=session, name=name)
    start = GameSession.objects.get(pk=session.pk).last_seq
    Event.objects.bulk_create(
        Event(
            session=session,
            seq=start + i,
            kind="roll",
            actor=seat,
            actor_name=seat.name,
            visibility="public",
            data={"text": f"{name} rolled 2d6: {i}", "total": i, "pad": "x" * pad},
        )
        for i in range(1, count + 1)
    )
    GameSession.objects.filter(pk=session.pk).update(last_seq=start + count)
    session.last_seq = start + count
    return start + count
