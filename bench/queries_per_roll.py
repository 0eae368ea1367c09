"""What one roll costs the server, outside any socket: database queries and time of the roll
handler (without its broadcast, which ``bench/server_profile.py`` measures in the server),
connection handling around it, and the per-socket work of delivering the event.

For SQLite (the defaults, a temporary data directory) and PostgreSQL (a scratch database), in a
child process with that configuration:

- the queries of one ``roll`` (the socket's handler, ``tabletop.services.actions.roll``), captured
  with ``django.test.utils.CaptureQueriesContext``;
- the handler's time with a kept connection, and as the socket runs it: Django's
  ``close_old_connections()`` before and after (``database_sync_to_async`` does that), and
  once more as Channels' own dispatch did before the room socket stopped hopping onto the ORM
  thread for it; with ``CONN_MAX_AGE = 0`` that would open and close a connection every call;
- per socket and event: redaction + ``json.dumps`` (every socket serialises every event itself),
  the in-memory layer's ``deepcopy`` per channel, and the Redis pub/sub layer's msgpack decode per
  socket, against serialising once per event.

    .venv/bin/python bench/queries_per_roll.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def timeit(fn: Any, n: int) -> float:
    """Median of ``n`` calls, ms."""
    values = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        values.append((time.perf_counter() - t) * 1e3)
    return statistics.median(values)


def _count_queries(fn: Any) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        fn()
    return len(captured.captured_queries)


def inner(n: int) -> dict[str, Any]:
    import django

    django.setup()
    from copy import deepcopy

    from django.db import close_old_connections, connection
    from django.test.utils import CaptureQueriesContext

    from tabletop.models import Event, GameSession, Seat
    from tabletop.selectors.events import Viewer, event_message, for_viewer
    from tabletop.services import actions
    from tabletop.services import events as events_service
    from tabletop.services.seats import join_session

    # The broadcast after commit is measured inside the server (bench/server_profile.py): here,
    # outside daphne's event loop, async_to_sync would start a new loop (and a new Redis
    # connection) per call.
    events_service.broadcast = lambda event: None
    session = (
        GameSession.objects.filter(campaign__system="generic", status="live")
        .order_by("-pk")
        .first()
    )
    seat = join_session(session=session, name="Counter").seat
    message = {
        "type": "roll",
        "system": "generic",
        "request": {"notation": "3d6"},
        "client_seed": "b|q|1|1",
    }
    for _ in range(5):
        actions.roll(seat_id=seat.pk, message=message)
    with CaptureQueriesContext(connection) as captured:
        actions.roll(seat_id=seat.pk, message=message)
    queries = [q["sql"][:200] for q in captured.captured_queries]
    steps: list[list[float]] = []
    executed: list[str] = []
    rest: list[float] = []
    current: list[tuple[str, float]] = []

    def timer(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            current.append((sql, (time.perf_counter() - t) * 1e3))

    commits: list[float] = []
    original_commit = connection._commit

    def timed_commit() -> Any:
        t = time.perf_counter()
        try:
            return original_commit()
        finally:
            commits.append((time.perf_counter() - t) * 1e3)

    connection._commit = timed_commit
    for _ in range(min(n, 50)):
        current.clear()
        t = time.perf_counter()
        with connection.execute_wrapper(timer):
            actions.roll(seat_id=seat.pk, message=message)
        total = (time.perf_counter() - t) * 1e3
        if not executed:
            executed = [sql[:200] for sql, _ in current]
            steps = [[] for _ in executed]
        for i, (_, ms) in enumerate(current[: len(steps)]):
            steps[i].append(ms)
        rest.append(total - sum(ms for _, ms in current) - (commits[-1] if commits else 0.0))
    del connection._commit
    query_ms = {sql: statistics.median(v) for sql, v in zip(executed, steps, strict=True)}
    query_ms["COMMIT (driver)"] = statistics.median(commits) if commits else None
    query_ms["the rest: ORM, dice, JSON (Python)"] = statistics.median(rest)

    kept = timeit(lambda: actions.roll(seat_id=seat.pk, message=message), n)

    def as_the_socket_does() -> None:
        close_old_connections()  # aclose_old_connections() before the action
        close_old_connections()  # database_sync_to_async: before ...
        actions.roll(seat_id=seat.pk, message=message)
        close_old_connections()  # ... and after

    socket_path = timeit(as_the_socket_does, n)
    churn = timeit(
        lambda: (
            close_old_connections(),
            Seat.objects.filter(pk=seat.pk).exists(),
            close_old_connections(),
        ),
        n,
    )

    event = Event.objects.filter(session=session, kind="roll").order_by("-seq").first()
    msg = event_message(event)
    full = {"type": "room.event", "event": msg}
    viewer = Viewer(seat_id=seat.pk + 1, is_gm=False)

    def per_socket(sockets: int) -> None:
        for _ in range(sockets):
            json.dumps(for_viewer(msg, viewer), separators=(",", ":"))

    from channels_redis.serializers import registry

    serializer = registry.get_serializer("msgpack")
    packed = serializer.serialize(full)
    per_event = {
        "event bytes (JSON)": len(json.dumps(msg, separators=(",", ":"))),
        "json.dumps once per event, us": 1e3
        * timeit(lambda: json.dumps(msg, separators=(",", ":")), 2000),
        "redaction + json.dumps per socket, us": 1e3 * timeit(lambda: per_socket(1), 2000),
        "in-memory layer deepcopy per channel, us": 1e3 * timeit(lambda: deepcopy(full), 2000),
        "pub/sub msgpack decode per socket, us": 1e3
        * timeit(lambda: serializer.deserialize(packed), 2000),
        "msgpack bytes": len(packed),
    }
    for sockets in (10, 50, 200):
        per_event[f"redaction + dumps, {sockets} sockets, ms"] = timeit(
            lambda s=sockets: per_socket(s), 200
        )
        per_event[f"deepcopy, {sockets} channels, ms"] = timeit(
            lambda s=sockets: [deepcopy(full) for _ in range(s)], 100
        )
    # What each socket's connect costs the ORM thread: the seat lookup and the hello snapshot
    # (the room's state, every seat in it), in a room of 1 and of 199 players.
    from tabletop.consumers import _connect_snapshot
    from tabletop.services.access import resolve_access
    from tabletop.services.sessions import create_session, start_session

    connect: dict[str, Any] = {}
    for players in (1, 199):
        room = start_session(session_id=create_session(campaign=session.campaign, title="c").pk)
        tokens = [join_session(session=room, name=f"c{i}").token for i in range(players)]

        def lookup(room: Any = room, tokens: list[Any] = tokens) -> Any:
            return resolve_access(code=room.invite_code, token=tokens[0], cookie_token=None,
                                  user=None)  # fmt: skip

        access = lookup()
        hello, _ = _connect_snapshot(access, None)
        connect[f"{players} players"] = {
            "resolve_access_ms": timeit(lookup, 50),
            "connect_snapshot_ms": timeit(lambda a=access: _connect_snapshot(a, None), 50),
            "hello_bytes": len(json.dumps(hello, separators=(",", ":"))),
            "queries": _count_queries(lambda a=access: _connect_snapshot(a, None)),
        }
    return {
        "connect": connect,
        "database": connection.vendor,
        "conn_max_age": connection.settings_dict.get("CONN_MAX_AGE"),
        "queries_per_roll": len(queries),
        "queries": queries,
        "query_ms": query_ms,
        "roll_ms_kept_connection": kept,
        "roll_ms_as_socket_calls_it": socket_path,
        "connection_open_close_ms": churn,
        "per_event": per_event,
    }


def run(kind: str, n: int) -> dict[str, Any]:
    from benchlib import CODE, PY, Setup

    setup = Setup(kind, "queries")
    try:
        setup.start(serve=False)  # a migrated database with the demo tables
        env = setup.env()
        out = subprocess.run(
            [PY, str(HERE / "queries_per_roll.py"), "--inner", "--n", str(n)],
            cwd=CODE,
            env=env,
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        setup.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=200, help="rolls per timing")
    args = parser.parse_args()
    if args.inner:
        print(json.dumps(inner(args.n)))
        return
    from benchlib import fmt, machine, save, save_text, table

    results = {kind: run(kind, args.n) for kind in ("default", "deployed")}
    rows = []
    for kind, r in results.items():
        rows.append(
            [
                kind,
                r["database"],
                r["conn_max_age"],
                r["queries_per_roll"],
                r["roll_ms_kept_connection"],
                r["roll_ms_as_socket_calls_it"],
                r["connection_open_close_ms"],
            ]
        )
    connect_rows = [
        [
            kind,
            room,
            c["resolve_access_ms"],
            c["connect_snapshot_ms"],
            c["queries"],
            c["hello_bytes"],
        ]
        for kind, r in results.items()
        for room, c in r["connect"].items()
    ]
    ev = results["default"]["per_event"]
    per_event_rows = [[k, fmt(v, 2) if isinstance(v, float) else v] for k, v in ev.items()]
    text = (
        "Cost of one roll outside the socket (medians)\n\n"
        + table(
            [
                "setup",
                "database",
                "CONN_MAX_AGE",
                "queries per roll",
                "roll handler ms (kept connection)",
                "as the socket calls it ms (close_old_connections x3)",
                "connection open+close ms",
            ],
            rows,
        )
        + "\n\nQueries of one roll ("
        + results["default"]["database"]
        + "):\n"
        + "\n".join(f"  {i + 1}. {q[:110]}" for i, q in enumerate(results["default"]["queries"]))
        + "".join(
            f"\n\nTime per step of one roll on {r['database']}, ms (median of 50)\n\n"
            + table(["step", "ms"], [[q[:90], fmt(ms, 3)] for q, ms in r["query_ms"].items()])
            for r in results.values()
        )
        + "\n\nOne socket's connect on the ORM thread (medians, ms)\n\n"
        + table(
            ["setup", "room", "resolve_access", "hello snapshot", "queries", "hello bytes"],
            connect_rows,
        )
        + "\n\nPer event and socket (ms)\n\n"
        + table(["what", "value"], per_event_rows)
        + "\n"
    )
    print(text)
    save("queries_per_roll", {"machine": machine(), "results": results})
    save_text("queries_per_roll", text)


if __name__ == "__main__":
    main()
