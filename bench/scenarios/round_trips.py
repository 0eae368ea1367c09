"""A roll's unit of work on PostgreSQL with the database a network hop away.

On this machine PostgreSQL answers in about 85 us, so a round trip more or less is lost in the
spread of a served benchmark. A deployment's database is often on another host (a managed
database: 0.3-1 ms a round trip). Here the table's code talks to PostgreSQL through a relay
that holds every chunk ``--delay`` ms each way, and a roll's unit of work (``perform``, as the
socket runs it: one transaction) is timed ``--rolls`` times in a fresh live room, for each
delay (``bench.servers.roll_units``). Printed: the round trips of one unit (libpq's trace), the
median and p90 of a unit's wall time, ms, and what the relay added to each round trip (the
median against the relay's without a hold, over the round trips: the relay's event loop waits
in whole milliseconds, so this, not ``--delay``, is the hop the figures had);
``BENCH_CODE=<dir>`` measures another checkout.

    .venv/bin/python -m bench.scenarios.round_trips
    .venv/bin/python -m bench.scenarios.round_trips --delay 0,1,2 --rolls 300
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from typing import Any

from bench.harness import HOST, PG_BASE, Setup, free_port
from bench.measure import fmt, machine, percentile, save, save_text, say, table

PG_PORT = 5432


class DelayRelay:
    """A TCP relay to PostgreSQL that holds each chunk ``delay`` seconds, each way, in order,
    on an event loop of its own (a thread)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.loop = asyncio.new_event_loop()
        self.port = free_port()
        started = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self.thread.start()
        started.wait(10)

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._pair, HOST, self.port))
        started.set()
        try:
            self.loop.run_forever()
        finally:
            server.close()

    async def _pair(self, client_r: Any, client_w: Any) -> None:
        server_r, server_w = await asyncio.open_connection(HOST, PG_PORT)
        await asyncio.gather(self._pipe(client_r, server_w), self._pipe(server_r, client_w))

    async def _pipe(self, reader: Any, writer: Any) -> None:
        held: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def release() -> None:
            while True:
                due, chunk = await held.get()
                if not chunk:
                    writer.close()
                    return
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                writer.write(chunk)

        releasing = asyncio.create_task(release())
        while True:
            chunk = await reader.read(65536)
            held.put_nowait((time.monotonic() + self.delay, chunk))
            if not chunk:
                break
        await releasing

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", default="0,1", help="ms each way, comma-separated; 0 first")
    parser.add_argument("--rolls", type=int, default=200)
    args = parser.parse_args()
    delays = [float(d) for d in args.delay.split(",") if d]
    rows, results = [], []
    setup = Setup("deployed", "round-trips").start(serve=False)  # the database only
    base = PG_BASE.rsplit(":", 1)[0]  # (PostgreSQL's own port replaced by the relay's)
    try:
        for delay in delays:
            relay = DelayRelay(delay / 1e3)
            setup.extra_env["DATABASE_URL"] = f"{base}:{relay.port}/{setup.database}"
            try:
                found = json.loads(setup.server_side("roll_units", "--rolls", str(args.rolls)))
            finally:
                relay.stop()
            took = found["ms"]
            result = {
                "delay_ms": delay,
                "round_trips": found["round_trips"],
                "p50": percentile(took, 50),
                "p90": percentile(took, 90),
            }
            results.append(result)
            added = (result["p50"] - results[0]["p50"]) / max(1, result["round_trips"])
            rows.append(
                [
                    fmt(delay, 2),
                    result["round_trips"],
                    fmt(result["p50"], 2),
                    fmt(result["p90"], 2),
                    fmt(added, 2) if delay else "-",
                ]
            )
            say(f"delay {delay} ms each way: {result}")
    finally:
        setup.stop()
    headers = [
        "hold each way, ms",
        "round trips",
        "unit p50 ms",
        "unit p90 ms",
        "added a round trip, ms",
    ]
    text = table(headers, rows)
    print(text)
    save("round_trips", {"machine": machine(), "rolls": args.rolls, "results": results})
    save_text("round_trips", text)


if __name__ == "__main__":
    main()
