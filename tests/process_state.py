"""What this process keeps between requests, as a new process has it."""

from __future__ import annotations


def start_afresh() -> None:
    """Every budget full (joins and odds per address, messages and work per seat and room,
    exports and statistics per viewer and link, webhook adds, the forms' writes per seat: an
    emptied bucket starts full), no export's, statistics' or long replay's turn held, and no
    room read or watcher count kept. The test database hands out the same ids again, so what
    one test left under a seat's, room's or link's number would be the next test's. (Tallies
    are kept by a session's commitment and creation time too, which no later session
    shares.)"""
    from tabletop import consumers, replays, watch_consumer
    from tabletop.selectors import room as room_reads
    from tabletop.services import webhooks
    from tabletop.views import export, room, stats, writes

    for buckets in (
        export._per_viewer,
        export._per_link,
        stats._per_viewer,
        stats._per_link,
        room._join_buckets,
        room._odds_buckets,
        consumers._buckets,
        consumers._seat_work,
        consumers._room_work,
        webhooks._adds,
        writes._writes,
        writes._write_bytes,
    ):
        buckets.clear()
    export._making.taken = 0
    stats._working.taken = 0
    replays._slots.taken = 0
    with room_reads._shared_lock:
        room_reads._shared.clear()
    watch_consumer._watchers.clear()
