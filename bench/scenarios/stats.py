"""Dice statistics at 100,000 events: how long the figures take, side by side with reading the
same events as a replay does (``events_after``: every event of the session as messages), the
floor any computation from the store stands on.

A session of ``--events`` stored rolls (ten seats; d20, 3d6, 4d6kh3, d100 and 4dF; one in ten
hidden) is written straight into the store, then, medians of ``--repeat`` runs, each in a child
process with that configuration (SQLite, the defaults; PostgreSQL, a scratch database):

- the replay read (the baseline);
- the statistics for a spectator, a player, and the GM once the session has ended (every die),
  each from nothing (the process's kept tallies and analyses forgotten first);
- a player's refresh after one more roll (its tally kept from the previous answer), the case of
  a panel open while the table plays;
- the campaign's statistics (the same session, through the campaign's path).

    .venv/bin/python -m bench.scenarios.stats [--events 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from typing import Any

NOTATIONS = ("d20", "3d6", "4d6kh3", "d100", "4dF", "d20", "2d20kh1", "d8+d6")


def timed(fn: Any, repeat: int, before: Any = None) -> float:
    """Median of ``repeat`` calls, ms (``before`` runs untimed before each)."""
    values = []
    for _ in range(repeat):
        if before is not None:
            before()
        t = time.perf_counter()
        fn()
        values.append((time.perf_counter() - t) * 1e3)
    return statistics.median(values)


def forget() -> None:
    from tabletop.services import stats

    stats.forget_tallies()


def make_session(events: int) -> Any:
    """A campaign and an ended session holding ``events`` rolls, written in bulk."""
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from rules.engines import get_system
    from rules.engines.fair import FairStream, commitment, new_server_seed
    from tabletop.models import Campaign, Event, GameSession, Seat

    gm = get_user_model().objects.create_user(f"stats-gm-{time.monotonic_ns()}")
    campaign = Campaign.objects.create(name="Statistics", system="generic", gm=gm)
    seed = new_server_seed()
    session = GameSession.objects.create(
        campaign=campaign,
        title="A long campaign night",
        status="ended",
        started_at=timezone.now(),
        ended_at=timezone.now(),
        server_seed=seed,
        commitment=commitment(seed),
    )
    seats = [Seat.objects.create(session=session, name=f"Player {i}") for i in range(10)]
    engine = get_system("generic")
    requests = [engine.normalise({"notation": n}) for n in NOTATIONS]
    visibilities = ["public"] * 9 + ["gm"]
    batch: list[Event] = []
    with transaction.atomic():
        for seq in range(1, events + 1):
            seat = seats[seq % len(seats)]
            result = engine.roll(requests[seq % len(requests)], FairStream(seed, "", seq))
            result["client_seed"] = ""
            batch.append(
                Event(
                    session=session,
                    seq=seq,
                    kind="roll",
                    actor=seat,
                    actor_name=seat.name,
                    visibility=visibilities[seq % len(visibilities)],
                    data=result,
                )
            )
            if len(batch) == 5000:
                Event.objects.bulk_create(batch)
                batch.clear()
        Event.objects.bulk_create(batch)
        GameSession.objects.filter(pk=session.pk).update(last_seq=events)
    session.refresh_from_db()
    return session, seats


def inner(events: int, repeat: int) -> dict[str, Any]:
    import django

    django.setup()
    from django.db import connection

    from tabletop.selectors.events import Viewer, events_after
    from tabletop.services.stats import campaign_stats_for_gm, session_stats
    from tabletop.services.watch import SPECTATOR

    t = time.perf_counter()
    session, seats = make_session(events)
    made = time.perf_counter() - t
    player = Viewer(seat_id=seats[3].pk, is_gm=False)
    gm = Viewer(seat_id=None, is_gm=True)
    report = session_stats(session=session, viewer=gm)
    dice = sum(d["n"] for d in report["seats"][0]["dice"])
    from tabletop.models import Event

    def one_more_roll() -> None:
        last = Event.objects.filter(session=session).order_by("-seq").first()
        Event.objects.create(
            session=session,
            seq=last.seq + 1,
            kind="roll",
            actor_id=last.actor_id,
            actor_name=last.actor_name,
            data=last.data,
        )

    def stats_for(viewer: Any) -> Any:
        return lambda: session_stats(session=session, viewer=viewer)

    ms = {
        "replay read (baseline)": timed(
            lambda: events_after(session_id=session.pk, after=0), repeat
        ),
        "stats, spectator": timed(stats_for(SPECTATOR), repeat, forget),
        "stats, player": timed(stats_for(player), repeat, forget),
        "stats, GM (every die)": timed(stats_for(gm), repeat, forget),
        "stats, player, refresh after one more roll": timed(
            stats_for(player), repeat, one_more_roll
        ),
        "stats, campaign": timed(
            lambda: campaign_stats_for_gm(campaign=session.campaign), repeat, forget
        ),
    }
    return {
        "database": connection.vendor,
        "events": events,
        "dice": dice,
        "groups": sum(len(s["dice"]) for s in report["seats"]),
        "setup_s": made,
        "ms": ms,
    }


def run(kind: str, events: int, repeat: int) -> dict[str, Any]:
    from bench.harness import CODE, PY, Setup

    setup = Setup(kind, "stats")
    setup.database = "tabletop_bench_stats"  # never another benchmark's scratch database
    try:
        setup.start(serve=False)
        out = subprocess.run(
            [
                PY,
                "-m",
                "bench.scenarios.stats",
                "--inner",
                "--events",
                str(events),
                "--repeat",
                str(repeat),
            ],
            cwd=CODE,
            env=setup.env(),
            check=True,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        setup.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--setups", default="default,deployed")
    args = parser.parse_args()
    if args.inner:
        print(json.dumps(inner(args.events, args.repeat)))
        return
    from bench.measure import fmt, machine, save, save_text, table

    results = {kind: run(kind, args.events, args.repeat) for kind in args.setups.split(",")}
    rows = []
    for kind, r in results.items():
        base = r["ms"]["replay read (baseline)"]
        for what, ms in r["ms"].items():
            rows.append([kind, r["database"], what, fmt(ms, 0), fmt(ms / base, 2)])
    first = next(iter(results.values()))
    text = (
        f"Dice statistics over {first['events']} stored rolls ({first['dice']} dice, "
        f"{first['groups']} seat/die groups), medians of {args.repeat}\n\n"
        + table(["setup", "database", "what", "ms", "x replay read"], rows)
        + "\n"
    )
    print(text)
    save("stats", {"machine": machine(), "results": results})
    save_text("stats", text)


if __name__ == "__main__":
    main()
