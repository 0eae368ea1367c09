"""What one roll costs the server, outside any socket: its statements and the time of the roll
handler (its publishing is measured in the server, ``python -m bench.scenarios.profile``).

For SQLite (the defaults, a temporary data directory) and PostgreSQL (a scratch database), in a
child process with that configuration:

- the statements of one ``roll`` as the socket runs it (``tabletop.protocol.wire.perform``: the
  unit of work, which publishes nothing itself),
  captured with ``django.test.utils.CaptureQueriesContext``, and each one's time
  (``connection.execute_wrapper``); the rest of the handler is the commit and Python;
- the handler's time with a kept connection, and as the socket runs it (Django's
  ``close_old_connections()`` before and after, as ``database_sync_to_async`` does);
- one event's JSON, made once per event for the whole room.

    .venv/bin/python -m bench.scenarios.queries
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from typing import Any


def timeit(fn: Any, n: int) -> float:
    """Median of ``n`` calls, ms."""
    values = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        values.append((time.perf_counter() - t) * 1e3)
    return statistics.median(values)


def inner(n: int) -> dict[str, Any]:
    import django

    django.setup()
    from django.db import close_old_connections, connection
    from django.test.utils import CaptureQueriesContext

    from tabletop.models import Event, GameSession, Seat
    from tabletop.protocol.wire import decode, perform
    from tabletop.services import events as events_service
    from tabletop.services.seats import join_session

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
    decoded = decode(json.dumps(message), system="generic", is_gm=False)

    def roll() -> None:
        # The unit of work the socket runs (published by the socket afterwards, not here).
        perform(decoded, seat_id=seat.pk, deadline=float("inf"))

    for _ in range(5):
        roll()
    with CaptureQueriesContext(connection) as captured:
        roll()
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

    for _ in range(min(n, 50)):
        current.clear()
        t = time.perf_counter()
        with connection.execute_wrapper(timer):
            roll()
        total = (time.perf_counter() - t) * 1e3
        if not executed:
            executed = [sql[:200] for sql, _ in current]
            steps = [[] for _ in executed]
        for i, (_, ms) in enumerate(current[: len(steps)]):
            steps[i].append(ms)
        rest.append(total - sum(ms for _, ms in current))
    query_ms = {sql: statistics.median(v) for sql, v in zip(executed, steps, strict=True)}
    query_ms["the rest: commit, ORM, dice, JSON (Python)"] = statistics.median(rest)

    kept = timeit(lambda: roll(), n)

    def as_the_socket_does() -> None:
        close_old_connections()  # database_sync_to_async: before ...
        roll()
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
    per_event = {
        "event bytes (JSON)": len(events_service.room_payload(event)["text"]),
        "the room's JSON of one event, once per event, us": 1e3
        * timeit(lambda: events_service.room_payload(event), 2000),
    }
    return {
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
    from bench.harness import CODE, PY, Setup

    setup = Setup(kind, "queries")
    try:
        setup.start(serve=False)  # a migrated database with the demo tables
        env = setup.env()
        out = subprocess.run(
            [PY, "-m", "bench.scenarios.queries", "--inner", "--n", str(n)],
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
    from bench.measure import fmt, machine, save, save_text, table

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
                "as the socket calls it ms (close_old_connections x2)",
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
        + "\n\nPer event\n\n"
        + table(["what", "value"], per_event_rows)
        + "\n"
    )
    print(text)
    save("queries", {"machine": machine(), "results": results})
    save_text("queries", text)


if __name__ == "__main__":
    main()
