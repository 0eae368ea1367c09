"""Burst: 200 seated players open the room at the same moment (a stream starts, a class logs in).

How many sockets connect and get ``hello``, and how long each took (TCP connect to ``hello``
received). The seats are made first (JSON join); then all sockets are opened at once with
``asyncio.gather``: to one daphne process (the table's defaults), to two processes on Redis and
PostgreSQL behind nginx serving ``deploy/nginx.conf`` (the deployed setup: a room's sockets on
one process), or without it (``spread``: alternate sockets on each process), and to the bare
websockets server for reference (and, asked for, the socket stack's own floors: ``daphne-floor``,
``uvicorn-floor``). ``--rooms 200`` spreads the sockets over that many rooms (a service's evening
starting at once) instead of one. Each burst runs ``--runs`` times on the same seats; the table
shows medians.

Then everyone rolls at once ("roll initiative"): every connected socket sends one ``1d20`` at the
same moment. Counted: rolls refused (``busy`` once a roll waited 5 s for the server), latency from
send to arrival at every socket, and how long until the last roll reached the last socket.

    .venv/bin/python -m bench.scenarios.burst
    .venv/bin/python -m bench.scenarios.burst --rooms 200
    .venv/bin/python -m bench.scenarios.burst --setups default --sockets 50 --runs 1
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from collections import Counter
from typing import Any

from bench.harness import Setup, whatif_env
from bench.measure import (
    CpuMeter,
    MachineLoad,
    Sock,
    add_whatif_argument,
    close_all,
    listen_overflows,
    machine,
    median_of,
    parse_whatif,
    result_name,
    save,
    save_text,
    say,
    stop_on_sigterm,
    summarize,
    table,
)

_tags = itertools.count(1)


async def everyone_rolls(rooms: list[list[Sock]], timeout: float) -> dict[str, Any]:
    """Every connected socket sends one roll at the same moment; each roll must reach every
    socket of its room (refused rolls reach nobody)."""
    tag = f"all{next(_tags)}"
    ok = [s for room in rooms for s in room]
    errors_before = {id(s): len(s.errors) for s in ok}
    t0 = time.monotonic()
    await asyncio.gather(*(s.roll(tag, i, "1d20") for i, s in enumerate(ok)))

    def refused_in(room: list[Sock]) -> int:
        return sum(len(s.errors) - errors_before[id(s)] for s in room)

    while time.monotonic() < t0 + timeout:
        if all(
            len(s.rolls.get(tag, {})) >= len(room) - refused_in(room)
            for room in rooms
            for s in room
        ):
            break
        await asyncio.sleep(0.02)
    everywhere_s = time.monotonic() - t0
    refused = [e for s in ok for e in s.errors[errors_before[id(s)] :]]
    lat = summarize([ms for s in ok for ms in s.rolls.get(tag, {}).values()])
    expected = sum(len(room) * (len(room) - refused_in(room)) for room in rooms)
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
    setup: Setup, codes: list[str], tokens: list[list[str]], args: argparse.Namespace
) -> dict[str, Any]:
    ports = setup.client_ports
    rooms = [
        [Sock(setup.url(code, tok, ports[i % len(ports)])) for i, tok in enumerate(room_tokens)]
        for code, room_tokens in zip(codes, tokens, strict=True)
    ]
    socks = [s for room in rooms for s in room]
    overflows = listen_overflows()
    with CpuMeter(setup.pids) as cpu, MachineLoad() as load:
        await asyncio.gather(*(s.open(args.timeout) for s in socks))
    overflows = listen_overflows() - overflows
    ok_rooms = [[s for s in room if s.hello is not None and s.error is None] for room in rooms]
    ok = [s for room in ok_rooms for s in room]
    times = summarize([s.connect_ms for s in ok if s.connect_ms is not None])
    failures = Counter((s.error or "")[:80] for s in socks if s not in ok)
    hello_bytes = max((s.hello_bytes for s in ok), default=0)
    rolled = await everyone_rolls(ok_rooms, args.timeout)
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
    with Setup.named(kind, "burst", env=whatif_env(args.whatif)) as setup:
        codes = setup.new_rooms(args.rooms)
        if args.rooms == 1:
            tokens = [await setup.sockets_tokens(codes[0], args.sockets)]
        else:
            per_room = -(-args.sockets // args.rooms)
            tokens = await setup.join_rooms(codes, per_room, concurrency=16)
            left = args.sockets
            for room in tokens:  # exactly --sockets in all
                del room[min(len(room), left) :]
                left -= len(room)
        runs = []
        for i in range(args.runs):
            result = await one_burst(setup, codes, tokens, args)
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
        "setup": "+".join([kind, *args.whatif]),
        "processes": len(setup.ports),
        "rooms": args.rooms,
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
    bare = next((r["median"] for r in results if r["setup"] == "bare"), None)

    def times(value: float | None, floor_key: str) -> str:
        floor = bare.get(floor_key) if bare else None
        return f"{value / floor:.1f}x" if value and floor else "-"

    rows = []
    for r in results:
        m = r["median"]
        judged = r["setup"] != "bare"
        rows.append(
            [
                r["setup"],
                r["processes"],
                f"{m['hello']:g}/{args.sockets}",
                f"{r['worst_hello']}/{args.sockets}",
                m["p50"],
                m["p99"],
                m["max"],
                times(m["p50"], "p50") if judged else "",
                m["hello_bytes"],
                m["listen_queue_overflows"],
                m["server_cpu"],
                m["rolls_refused"],
                m["roll_p50"],
                m["roll_p99"],
                times(m["roll_p99"], "roll_p99") if judged else "",
                m["all_rolls_everywhere_s"],
                m["roll_deliveries_missing"],
            ]
        )
    where = "one room" if args.rooms == 1 else f"{args.rooms} rooms"
    head = (
        f"Burst: {args.sockets} sockets into {where} opened at once, medians of {args.runs} runs "
        f"(hello ms = TCP connect to hello received; the bare server's hello is its connect; "
        f"timeout {args.timeout:g} s); then every socket sends one roll at the same moment "
        "(latency at every socket of its room). Targets: hello p50 <= 3x bare, everyone rolls "
        "p99 <= 1.5x bare\n\n"
    )
    return (
        head
        + table(
            [
                "setup",
                "processes",
                "hello (median)",
                "hello (worst run)",
                "hello p50 ms",
                "hello p99 ms",
                "max ms",
                "hello p50 / bare",
                "hello bytes",
                "listen queue overflows",
                "server CPU %",
                "everyone rolls: refused",
                "roll p50 ms",
                "roll p99 ms",
                "roll p99 / bare",
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
    parser.add_argument(
        "--setups",
        default="bare,default,deployed",
        help="of bare, daphne-floor, uvicorn-floor, default, deployed, spread",
    )
    parser.add_argument("--sockets", type=int, default=200)
    parser.add_argument("--rooms", type=int, default=1, help="spread the sockets over this many")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between bursts")
    add_whatif_argument(parser)
    args = parser.parse_args()
    parse_whatif(parser, args)
    stop_on_sigterm()
    info = machine()
    results, failed = [], []
    for kind in args.setups.split(","):
        try:
            results.append(await bench_setup(kind, args))
        except Exception as exc:  # a setup that fails is reported, the others still run
            say(f"burst {kind}: failed: {exc!r}"[:2000])
            failed.append(f"- {kind}: failed: {type(exc).__name__}: {exc}"[:400])
    text = report(results, args) + "".join(f"{line}\n" for line in failed)
    print(text)
    name = result_name("burst" if args.rooms == 1 else "burst-rooms", args.whatif)
    save(name, {"machine": info, "args": vars(args), "results": results, "failed": failed})
    save_text(name, text)


if __name__ == "__main__":
    asyncio.run(main())
