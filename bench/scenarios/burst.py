"""Burst: 200 seated players open the room at the same moment (a stream starts, a class logs in).

How many sockets connect and get ``hello``, and how long each took (TCP connect to ``hello``
received). The seats are made first (JSON join); then all sockets are opened at once with
``asyncio.gather``: to one daphne process (the table's defaults), to two processes on Redis and
PostgreSQL (the deployed setup; alternate sockets on each port), and to the bare websockets server
for reference. Each burst runs ``--runs`` times on the same seats; the table shows medians.

Then everyone rolls at once ("roll initiative"): every connected socket sends one ``1d20`` at the
same moment. Counted: rolls refused (``busy`` once a roll waited 5 s for the server), latency from
send to arrival at every socket, and how long until the last roll reached the last socket.

    .venv/bin/python -m bench.scenarios.burst
    .venv/bin/python -m bench.scenarios.burst --setups default --sockets 50 --runs 1
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from collections import Counter
from typing import Any

from bench.harness import Setup
from bench.measure import (
    CpuMeter,
    MachineLoad,
    Sock,
    close_all,
    listen_overflows,
    machine,
    median_of,
    save,
    save_text,
    say,
    stop_on_sigterm,
    summarize,
    table,
)

_tags = itertools.count(1)


async def everyone_rolls(ok: list[Sock], timeout: float) -> dict[str, Any]:
    tag = f"all{next(_tags)}"
    errors_before = {id(s): len(s.errors) for s in ok}
    t0 = time.monotonic()
    await asyncio.gather(*(s.roll(tag, i, "1d20") for i, s in enumerate(ok)))
    refused: list[dict[str, Any]] = []
    while time.monotonic() < t0 + timeout:
        refused = [e for s in ok for e in s.errors[errors_before[id(s)] :]]
        if all(len(s.rolls.get(tag, {})) >= len(ok) - len(refused) for s in ok):
            break
        await asyncio.sleep(0.02)
    everywhere_s = time.monotonic() - t0
    lat = summarize([ms for s in ok for ms in s.rolls.get(tag, {}).values()])
    expected = len(ok) * (len(ok) - len(refused))
    return {
        "rolls_sent": len(ok),
        "rolls_refused": len(refused),
        "refusal_codes": dict(Counter(str(e.get("code")) for e in refused)),
        "roll_p50": lat["p50"],
        "roll_p99": lat["p99"],
        "roll_max": lat["max"],
        "all_rolls_everywhere_s": round(everywhere_s, 2),
        "roll_deliveries_missing": expected - sum(len(s.rolls.get(tag, {})) for s in ok),
    }


async def one_burst(
    setup: Setup, code: str, tokens: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    ports = setup.ports
    socks = [Sock(setup.url(code, tok, ports[i % len(ports)])) for i, tok in enumerate(tokens)]
    overflows = listen_overflows()
    with CpuMeter(setup.pids) as cpu, MachineLoad() as load:
        await asyncio.gather(*(s.open(args.timeout) for s in socks))
    overflows = listen_overflows() - overflows
    ok = [s for s in socks if s.hello is not None and s.error is None]
    times = summarize([s.connect_ms for s in ok if s.connect_ms is not None])
    failures = Counter((s.error or "")[:80] for s in socks if s not in ok)
    hello_bytes = max((s.hello_bytes for s in ok), default=0)
    rolled = await everyone_rolls(ok, args.timeout)
    await close_all(socks)
    return {
        **rolled,
        "sockets": len(socks),
        "hello": len(ok),
        "failed": len(socks) - len(ok),
        "failures": dict(failures),
        "p50": times["p50"],
        "p99": times["p99"],
        "max": times["max"],
        "hello_bytes": hello_bytes,
        "listen_queue_overflows": overflows,
        "server_cpu": sum(cpu.server_pct),
        "machine_busy": load.busy_pct,
    }


async def bench_setup(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    with Setup(kind, "burst") as setup:
        (code,) = setup.new_rooms(1)
        tokens = await setup.sockets_tokens(code, args.sockets)
        runs = []
        for i in range(args.runs):
            result = await one_burst(setup, code, tokens, args)
            say(
                f"burst {kind} run {i + 1}: {result['hello']}/{result['sockets']} got hello; "
                f"p50 {result['p50']} p99 {result['p99']} ms; failures {result['failures']}; "
                f"listen overflows {result['listen_queue_overflows']}; everyone rolls: "
                f"refused {result['rolls_refused']} {result['refusal_codes']}, "
                f"p50 {result['roll_p50']} p99 {result['roll_p99']} ms, all everywhere in "
                f"{result['all_rolls_everywhere_s']} s, missing {result['roll_deliveries_missing']}"
            )
            runs.append(result)
            await asyncio.sleep(args.pause)
    return {
        "setup": kind,
        "processes": len(setup.ports),
        "runs": runs,
        "median": median_of(
            runs,
            (
                "hello",
                "p50",
                "p99",
                "max",
                "server_cpu",
                "machine_busy",
                "listen_queue_overflows",
                "hello_bytes",
                "rolls_refused",
                "roll_p50",
                "roll_p99",
                "all_rolls_everywhere_s",
                "roll_deliveries_missing",
            ),
        ),
        "worst_hello": min(r["hello"] for r in runs),
    }


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    rows = []
    for r in results:
        m = r["median"]
        target = (
            ("met" if r["worst_hello"] == args.sockets else "MISSED")
            if r["setup"] != "bare"
            else ""
        )
        rows.append(
            [
                r["setup"],
                r["processes"],
                f"{m['hello']:g}/{args.sockets}",
                f"{r['worst_hello']}/{args.sockets}",
                m["p50"],
                m["p99"],
                m["max"],
                target,
                m["hello_bytes"],
                m["listen_queue_overflows"],
                m["server_cpu"],
                m["rolls_refused"],
                m["roll_p50"],
                m["roll_p99"],
                m["all_rolls_everywhere_s"],
                m["roll_deliveries_missing"],
            ]
        )
    head = (
        f"Burst: {args.sockets} sockets opened at once, medians of {args.runs} runs "
        f"(connect time ms = TCP connect to hello received; timeout {args.timeout:g} s); "
        "then every socket sends one roll at the same moment (latency at every socket)\n\n"
    )
    return (
        head
        + table(
            [
                "setup",
                "processes",
                "hello (median)",
                "hello (worst run)",
                "p50 ms",
                "p99 ms",
                "max ms",
                f"target {args.sockets}/{args.sockets}",
                "hello bytes",
                "listen queue overflows",
                "server CPU %",
                "everyone rolls: refused",
                "roll p50 ms",
                "roll p99 ms",
                "last roll everywhere s",
                "deliveries missing",
            ],
            rows,
        )
        + "\n"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--setups", default="bare,default,deployed")
    parser.add_argument("--sockets", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between bursts")
    args = parser.parse_args()
    stop_on_sigterm()
    info = machine()
    results = [await bench_setup(kind, args) for kind in args.setups.split(",")]
    text = report(results, args)
    print(text)
    save("burst", {"machine": info, "args": vars(args), "results": results})
    save_text("burst", text)


if __name__ == "__main__":
    asyncio.run(main())
