"""Fan-out: one player rolls, everyone in the room sees it. How long does it take, is anything lost?

For each setup (bare websockets floor, the table's defaults, the table as deployed; the socket
stack's own floors ``daphne-floor`` and ``uvicorn-floor`` when asked) and each room size N, N
sockets join one room (one of them the roller; the deployed setup is two daphne processes behind
nginx serving ``deploy/nginx.conf``, the room's sockets on one of them; in ``spread``, the same
processes without it, the sockets alternate between them, the roller on the first). The roller
sends ``--rate`` rolls a second of ``3d6`` for ``--seconds`` on a fixed schedule (open loop, one
seat: under the 25/s per-seat limit).
Latency is from the roll sent to the event received, at every socket, the roller's own copy
included. Lost: rolls a socket never got (after a drain), plus gaps and repeats in the seqs it saw.
Each size runs ``--runs`` times; the table shows medians. ``--rollers 2`` shares the rate between
two seats (spread: one on each process, so events are published by both); ``--whatif`` serves a
changed table (see bench.harness.WHATIF).

    .venv/bin/python -m bench.scenarios.fanout                      # everything, about 10 minutes
    .venv/bin/python -m bench.scenarios.fanout --setups bare --players 10 --runs 1
    .venv/bin/python -m bench.scenarios.fanout --setups spread --players 50,200 --rollers 2
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import time
from typing import Any

from bench.harness import RESULTS, Setup, is_floor, whatif_env
from bench.measure import (
    CpuMeter,
    LoopLag,
    MachineLoad,
    Sock,
    add_whatif_argument,
    close_all,
    median_of,
    open_all,
    parse_whatif,
    result_name,
    run_setups,
    say,
    summarize,
    table,
)

STATS = (
    "p50",
    "p95",
    "p99",
    "max",
    "own_p50",
    "own_p99",
    "client_cpu",
    "server_cpu",
    "loop_lag_p99",
    "machine_busy",
    "loadavg",
)


async def wait_for(socks: list[Sock], tag: str, count: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        if all(len(s.rolls.get(tag, {})) >= count for s in socks):
            return
        await asyncio.sleep(0.05)


async def one_run(
    setup: Setup, code: str, tokens: list[str], run: int, args: argparse.Namespace
) -> dict[str, Any]:
    # The client runs every setup in one process: collect what earlier runs left and set the
    # survivors aside, so its garbage collector does the same work in every run, first or last.
    gc.collect()
    gc.freeze()
    ports = setup.client_ports
    socks = [
        Sock(setup.url(code, tok, ports[i % len(ports)]), f"s{i}") for i, tok in enumerate(tokens)
    ]
    # roller seats: the first --rollers sockets (alternating processes in the deployed setup)
    rollers = socks[: args.rollers]
    opened = await open_all(socks)
    live = [s for s in socks if s.ws is not None]
    try:
        # warm-up: a few rolls every socket must see before the clock starts
        for i in range(5):
            await rollers[i % len(rollers)].roll(f"w{run}", i)
            await asyncio.sleep(0.1)
        await wait_for(live, f"w{run}", 5, time.monotonic() + 10)
        await asyncio.sleep(0.5)

        tag, total = f"m{run}", int(args.rate * args.seconds)
        lag = LoopLag()
        lag.start()
        with CpuMeter(setup.pids) as cpu, MachineLoad() as load:
            t0 = time.monotonic()
            for i in range(total):
                delay = t0 + i / args.rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                await rollers[i % len(rollers)].roll(tag, i)
            await wait_for(live, tag, total, time.monotonic() + args.drain)
        lag_stats = await lag.stop()
    finally:
        await close_all(socks)

    latencies = [ms for s in live for ms in s.rolls.get(tag, {}).values()]
    own = [ms for r in rollers for ref, ms in r.own.items() if ref.startswith(f"{tag}-")]
    gaps = dups = 0
    for s in live:
        g, d = s.seq_problems()
        gaps, dups = gaps + g, dups + d
    stats = summarize(latencies)
    own_stats = summarize(own)
    return {
        "run": run,
        "sockets": len(socks),
        "connected": opened,
        "rolls": total,
        "expected": total * len(live),
        "received": len(latencies),
        "lost": total * len(live) - len(latencies) + total * (len(socks) - len(live)),
        "seq_gaps": gaps,
        "seq_duplicates": dups,
        "errors": sum(len(r.errors) for r in rollers),
        "error_codes": sorted({str(e.get("code")) for r in rollers for e in r.errors}),
        **{k: stats[k] for k in ("p50", "p95", "p99", "max")},
        "own_p50": own_stats["p50"],
        "own_p99": own_stats["p99"],
        "client_cpu": cpu.client_pct,
        "server_cpu": sum(cpu.server_pct),
        "server_cpu_each": cpu.server_pct,
        "loop_lag_p99": lag_stats["p99"],
        "loop_lag_max": lag_stats["max"],
        "machine_busy": load.busy_pct,
        "loadavg": load.loadavg,
    }


async def bench_setup(kind: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    out = []
    label = "+".join([kind, *args.whatif])
    with Setup.named(kind, "fanout", env=whatif_env(args.whatif)) as setup:
        codes = setup.new_rooms(len(args.players))
        for n, code in zip(args.players, codes, strict=True):
            tokens = await setup.sockets_tokens(code, n)
            runs = []
            for run in range(args.runs):
                result = await one_run(setup, code, tokens, run, args)
                say(
                    f"fanout {label} N={n} run {run + 1}: p50 {result['p50']:.1f} "
                    f"p99 {result['p99']:.1f} max {result['max']:.1f} ms, lost {result['lost']}, "
                    f"gaps {result['seq_gaps']}, client cpu {result['client_cpu']:.0f}%, "
                    f"server cpu {result['server_cpu']:.0f}%"
                )
                runs.append(result)
                await asyncio.sleep(1)
            out.append(
                {
                    "setup": label,
                    "players": n,
                    "runs": runs,
                    "median": median_of(runs, STATS),
                    "lost_total": sum(r["lost"] for r in runs),
                    "seq_gaps_total": sum(r["seq_gaps"] for r in runs),
                    "seq_duplicates_total": sum(r["seq_duplicates"] for r in runs),
                    "errors_total": sum(r["errors"] for r in runs),
                }
            )
    return out


def bound_for(players: int) -> float:
    """The target p99 as a multiple of the bare server's: 2x at 50 players (a table of a
    service's usual size), 3x at more."""
    return 2.0 if players <= 50 else 3.0


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    bare = {r["players"]: r["median"]["p99"] for r in results if r["setup"] == "bare"}
    if not bare:  # compare with the last full run's floor
        last = RESULTS / "fanout-latest.json"
        if last.exists():
            bare = {
                r["players"]: r["median"]["p99"]
                for r in json.loads(last.read_text())["results"]
                if r["setup"] == "bare"
            }
    rows, verdicts = [], []
    for r in results:
        m = r["median"]
        ratio = m["p99"] / bare[r["players"]] if bare.get(r["players"]) and m["p99"] else None
        target = ""
        if not is_floor(r["setup"]) and r["players"] >= 50 and ratio is not None:
            bound = bound_for(r["players"])
            target = f"<= {bound:g}x: " + ("met" if ratio <= bound else "MISSED")
            verdicts.append(ratio <= bound)
        rows.append(
            [
                r["setup"],
                r["players"],
                m["p50"],
                m["p95"],
                m["p99"],
                m["max"],
                m["own_p50"],
                r["lost_total"],
                r["seq_gaps_total"],
                r["errors_total"],
                f"{ratio:.1f}x" if ratio is not None else "-",
                target,
                m["client_cpu"],
                m["server_cpu"],
                m["loop_lag_p99"],
                m["machine_busy"],
            ]
        )
    head = (
        f"Fan-out: {args.rate:g} rolls/s of 3d6 for {args.seconds:g} s from one seat, "
        f"medians of {args.runs} runs (latency ms from send to receive at every socket). "
        f"Lost: (socket, roll) pairs not received {args.drain:g} s after the last roll, "
        f"summed over the runs; seq gaps and repeats are counted per socket.\n\n"
    )
    return (
        head
        + table(
            [
                "setup",
                "N",
                "p50",
                "p95",
                "p99",
                "max",
                "roller's own p50",
                "lost",
                "seq gaps",
                "errors",
                "p99 / bare",
                "target (p99 / bare)",
                "client CPU %",
                "server CPU %",
                "client loop lag p99",
                "machine busy % (2 cores)",
            ],
            rows,
        )
        + "\n"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--setups",
        default="bare,default,deployed",
        help="of bare, daphne-floor, uvicorn-floor, default, deployed, spread",
    )
    parser.add_argument("--players", default="10,50,200")
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--rollers",
        type=int,
        default=1,
        help="roller seats sharing --rate (spread: on alternate processes); default 1",
    )
    add_whatif_argument(parser)
    parser.add_argument(
        "--drain",
        type=float,
        default=60.0,
        help="at most this many seconds after the last roll to wait for stragglers",
    )
    args = parser.parse_args()
    args.players = [int(n) for n in args.players.split(",")]
    parse_whatif(parser, args)
    name = result_name("fanout", args.whatif)
    if args.rollers > 1:
        name += f"-{args.rollers}rollers"
    await run_setups(name, args, bench_setup, report)


if __name__ == "__main__":
    asyncio.run(main())
