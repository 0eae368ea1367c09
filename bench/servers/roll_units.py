"""Time a roll's unit of work as the socket runs it (``perform``: the checked message, one
transaction), ``--rolls`` times in a fresh live room, and print what it took as JSON: each
unit's wall time (ms) and the round trips of one unit (libpq's trace: one ``ReadyForQuery`` a
round trip).

Run as ``python -m bench.servers.roll_units`` from the directory of the code being measured,
with the server's environment (``DATABASE_URL``), after ``manage.py play --no-serve``."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rolls", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabletop.settings")
    import django

    django.setup()
    from django.db import connection

    from tabletop.models import Campaign
    from tabletop.protocol.wire import Decoded, decode, perform, precheck
    from tabletop.services.seats import join_session
    from tabletop.services.sessions import create_session, start_session

    demo = Campaign.objects.filter(system="generic").order_by("pk").first()
    if demo is None:
        raise SystemExit("no generic campaign: run manage.py play --no-serve first")
    campaign = Campaign.objects.create(
        name="Round trips", system=demo.system, gm=demo.gm, settings=demo.settings
    )
    session = start_session(session_id=create_session(campaign=campaign, title="Round trips").pk)
    seat = join_session(session=session, name="Ana").seat
    roll = precheck(
        decode(
            '{"type": "roll", "system": "generic", "request": {"notation": "1d20+5"}}',
            system="generic",
            is_gm=False,
        ),
        system="generic",
    )
    assert isinstance(roll, Decoded)

    def unit() -> None:
        perform(roll, seat_id=seat.pk, deadline=float("inf"))

    for _ in range(10):  # warm: the statements made, the connection open
        unit()
    with tempfile.TemporaryFile("w+") as trace:
        connection.connection.pgconn.trace(trace.fileno())
        unit()
        connection.connection.pgconn.untrace()
        trace.seek(0)
        round_trips = sum("ReadyForQuery" in line for line in trace)
    took = []
    for _ in range(args.rolls):
        began = time.perf_counter()
        unit()
        took.append((time.perf_counter() - began) * 1e3)
    print(json.dumps({"ms": took, "round_trips": round_trips}), flush=True)


if __name__ == "__main__":
    main()
