"""Saturation: offered vs delivered rolls per second in one busy room.

One room with ``--listeners`` sockets that only listen, and roller seats that send ``3d6`` rolls
on a fixed schedule (open loop). The offered rate is spread over ceil(rate / 10) roller seats, so
no seat goes over 10 rolls a second and the per-seat limit (25/s, bursts of 50) is never what
stops a roll. Each step offers its rate for ``--seconds``, then waits (bounded) for the room to
deliver everything and for the server to go quiet before the next step.

Delivered/s is, per listener, the rolls it received divided by the time from the first send to
its last arrival (or the window, if longer): at or under capacity it equals the offered rate,
over capacity it is the rate the room really sustains. The knee is the highest offered rate
still delivered at >= 95 %.

A bystander seat rolls once a second through every step, as a player at a flooded table would:
its latency (at the listeners) shows whether the flood reaches the players who are not part
of it. Each socket's messages are handled one at a time, so a flooding socket queues behind
itself and takes one place in the process's ORM queue, like every other socket.

    .venv/bin/python -m bench.scenarios.saturation
    .venv/bin/python -m bench.scenarios.saturation --setups default --rates 10,50 --runs 1
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import time
from typing import Any

from bench.harness import Setup, whatif_env
from bench.measure import (
    CpuMeter,
    MachineLoad,
    Sock,
    add_whatif_argument,
    close_all,
    median_of,
    now_ns,
    open_all,
    parse_whatif,
    result_name,
    run_setups,
    say,
    summarize,
    table,
)

PER_SEAT = 10.0  # rolls a second per roller seat, well under the 25/s limit


async def quiet(sock: Sock, settle: float, limit: float) -> None:
    """Wait until ``sock`` has heard nothing for ``settle`` seconds (at most ``limit``)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if sock.last_event_ns and (now_ns() - sock.last_event_ns) / 1e9 >= settle:
            return
        await asyncio.sleep(0.2)


async def one_step(
    setup: Setup,
    code: str,
    listeners: list[Sock],
    rollers: list[Sock],
    bystander: Sock,
    rate: float,
    tag: str,
    args: argparse.Namespace,
) -> dict[str, Any]:
    k = max(1, math.ceil(rate / PER_SEAT))
    active = rollers[:k]
    total = int(rate * args.seconds)
    errors_before = [len(r.errors) for r in active]
    seqs_before = [len(s.seqs) for s in listeners]
    by_tag = f"{tag}-bystander"

    async def bystander_rolls() -> None:
        for i in range(int(args.seconds)):
            await bystander.roll(by_tag, i)
            await asyncio.sleep(1.0)

    by_task = asyncio.create_task(bystander_rolls())
    with CpuMeter(setup.pids) as cpu, MachineLoad() as load:
        t0 = time.monotonic()
        t0_ns = now_ns()
        sent = 0
        for i in range(total):
            delay = t0 + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            sent += await active[i % k].roll(tag, i)
        window = max(args.seconds, time.monotonic() - t0)
        await by_task
        deadline = time.monotonic() + args.drain
        while time.monotonic() < deadline:
            # a refused roll (rate-limited: its error carries no ref) will never arrive
            refused = sum(len(r.errors) - n for r, n in zip(active, errors_before, strict=True))
            if all(len(s.rolls.get(tag, {})) >= total - refused for s in listeners):
                break
            await asyncio.sleep(0.05)
    rates, in_window = [], []
    for s in listeners:
        arrivals = s.arrivals.get(tag, [])
        span = max(args.seconds, (max(arrivals) - t0_ns) / 1e9) if arrivals else args.seconds
        rates.append(len(arrivals) / span)
        in_window.append(
            sum(1 for a in arrivals if (a - t0_ns) / 1e9 <= args.seconds) / args.seconds
        )
    latencies = [ms for s in listeners for ms in s.rolls.get(tag, {}).values()]
    lat = summarize(latencies)
    by_lat = summarize([ms for s in listeners for ms in s.rolls.get(by_tag, {}).values()])
    errors = [e for r, n in zip(active, errors_before, strict=True) for e in r.errors[n:]]
    undelivered = sum(total - len(s.rolls.get(tag, {})) for s in listeners)
    gaps = dups = 0
    for s, n in zip(listeners, seqs_before, strict=True):
        seen = s.seqs[n:]
        if seen:
            gaps += (max(seen) - min(seen) + 1) - len(set(seen))
            dups += len(seen) - len(set(seen))
    return {
        "offered": rate,
        "sent": sent,
        "send_window_s": window,
        "roller_seats": k,
        "delivered": statistics.median(rates) if rates else 0.0,
        "delivered_in_window": statistics.median(in_window) if in_window else 0.0,
        "p50": lat["p50"],
        "p99": lat["p99"],
        "max": lat["max"],
        "bystander_p50": by_lat["p50"],
        "bystander_p99": by_lat["p99"],
        "undelivered_at_cutoff": undelivered,
        "seq_gaps": gaps,
        "seq_duplicates": dups,
        "errors": len(errors),
        "error_codes": sorted({str(e.get("code")) for e in errors}),
        "server_cpu": sum(cpu.server_pct),
        "client_cpu": cpu.client_pct,
        "machine_busy": load.busy_pct,
    }


async def bench_setup(kind: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    out = []
    label = "+".join([kind, *args.whatif])
    with Setup(kind, "saturation", env=whatif_env(args.whatif)) as setup:
        (code,) = setup.new_rooms(1)
        n_rollers = max(1, math.ceil(max(args.rates) / PER_SEAT))
        tokens = await setup.join(code, args.listeners + n_rollers + 1)
        ports = setup.ports
        socks = [Sock(setup.url(code, tok, ports[i % len(ports)])) for i, tok in enumerate(tokens)]
        await open_all(socks)
        listeners, bystander = socks[: args.listeners], socks[args.listeners]
        rollers = socks[args.listeners + 1 :]
        try:
            # warm-up
            for i in range(10):
                await rollers[i % len(rollers)].roll("warm", i)
                await asyncio.sleep(0.05)
            await quiet(listeners[0], 1.0, 20)
            for rate in args.rates:
                runs = []
                for run in range(args.runs):
                    result = await one_step(
                        setup, code, listeners, rollers, bystander, rate, f"r{rate:g}-{run}", args
                    )
                    say(
                        f"saturation {label} offered {rate:g}/s run {run + 1}: "
                        f"delivered {result['delivered']:.1f}/s "
                        f"(in window {result['delivered_in_window']:.1f}/s), "
                        f"p50 {result['p50']} p99 {result['p99']} ms, "
                        f"bystander p50 {result['bystander_p50']} "
                        f"p99 {result['bystander_p99']} ms, "
                        f"undelivered {result['undelivered_at_cutoff']}, "
                        f"gaps {result['seq_gaps']}, dups {result['seq_duplicates']}, "
                        f"errors {result['errors']} {result['error_codes']}, "
                        f"server cpu {result['server_cpu']:.0f}%"
                    )
                    runs.append(result)
                    await quiet(listeners[0], 2.0, args.drain)
                out.append(
                    {
                        "setup": label,
                        "offered": rate,
                        "runs": runs,
                        "median": median_of(
                            runs,
                            (
                                "delivered",
                                "delivered_in_window",
                                "p50",
                                "p99",
                                "max",
                                "bystander_p50",
                                "bystander_p99",
                                "server_cpu",
                                "client_cpu",
                                "machine_busy",
                                "undelivered_at_cutoff",
                            ),
                        ),
                        "errors_total": sum(r["errors"] for r in runs),
                    }
                )
        finally:
            await close_all(socks)
    return out


def knee(rows: list[dict[str, Any]]) -> tuple[float | None, float]:
    ok = [r["offered"] for r in rows if r["median"]["delivered"] >= 0.95 * r["offered"]]
    return (max(ok) if ok else None), max(r["median"]["delivered"] for r in rows)


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    rows = []
    for r in results:
        m = r["median"]
        rows.append(
            [
                r["setup"],
                r["offered"],
                m["delivered"],
                m["delivered_in_window"],
                f"{100 * m['delivered'] / r['offered']:.0f}%",
                m["p50"],
                m["p99"],
                m["bystander_p50"],
                m["bystander_p99"],
                m["undelivered_at_cutoff"],
                r["errors_total"],
                m["server_cpu"],
                m["machine_busy"],
            ]
        )
    lines = [
        f"Saturation: one room, {args.listeners} listeners, rolls of 3d6 offered for "
        f"{args.seconds:g} s per step over ceil(rate/10) roller seats; medians of {args.runs} "
        f"runs (latency ms at the listeners; the bystander rolls once a second throughout)",
        "",
        table(
            [
                "setup",
                "offered/s",
                "delivered/s",
                "delivered/s in window",
                "delivered %",
                "p50",
                "p99",
                "bystander p50",
                "bystander p99",
                "undelivered at cut-off",
                "errors",
                "server CPU %",
                "machine busy % (2 cores)",
            ],
            rows,
        ),
        "",
    ]
    for kind in dict.fromkeys(r["setup"] for r in results):
        k, best = knee([r for r in results if r["setup"] == kind])
        lines.append(
            f"- {kind}: knee (highest offered rate delivered at >= 95 %) "
            f"{k if k is not None else '-'}/s; most delivered {best:.1f}/s"
        )
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--setups", default="default,deployed")
    parser.add_argument("--rates", default="10,25,50,100,200")
    parser.add_argument("--listeners", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--drain", type=float, default=90.0, help="at most this long to wait for a backlog"
    )
    add_whatif_argument(parser)
    args = parser.parse_args()
    args.rates = [float(r) for r in args.rates.split(",")]
    parse_whatif(parser, args)
    await run_setups(result_name("saturation", args.whatif), args, bench_setup, report)


if __name__ == "__main__":
    asyncio.run(main())
