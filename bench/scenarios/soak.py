"""Soak: ``--minutes`` of join/leave churn with rolls against the deployed setup (two daphne
processes, Redis pub/sub layer, PostgreSQL).

``--players`` seats; each keeps one socket open for a random 2-6 s, closes it, and comes back with
``after=<last seq it has>``, alternately on the other process. A roller sends ``--rate`` rolls a
second in total (3d6) from whichever seats are connected. Every 10 s the RSS of each daphne process
(``/proc/<pid>/status`` VmRSS) is sampled. At the end every seat reconnects once more and must
catch up to the room's last seq.

Checked per seat, over all of its sockets: every seq after the one it first saw arrives (lost =
missing), and none arrives twice (duplicated). Also counted: gaps inside one socket's live stream
(the server is meant to fill those itself), rolls refused, and roll latency (the sender's copy).

    .venv/bin/python -m bench.scenarios.soak               # 10 minutes
    .venv/bin/python -m bench.scenarios.soak --minutes 2
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import time
from typing import Any

from bench.harness import RESULTS, Setup
from bench.measure import (
    Sock,
    machine,
    rss_kb,
    save,
    save_text,
    say,
    stop_on_sigterm,
    summarize,
    table,
)


class Player:
    def __init__(self, index: int, token: str) -> None:
        self.index, self.token = index, token
        self.baseline: int | None = None  # last_seq of the first hello: everything after is owed
        self.seen: list[int] = []
        self.sock: Sock | None = None
        self.connects = 0
        self.failed_connects = 0
        self.in_socket_gaps = 0
        self.own: list[float] = []
        self.errors: list[dict[str, Any]] = []

    @property
    def last(self) -> int:
        """The highest seq this seat has seen with nothing missing before it."""
        if self.baseline is None:
            return 0
        have, n = set(self.seen), self.baseline
        while n + 1 in have:
            n += 1
        return n

    def absorb(self, sock: Sock) -> None:
        self.seen.extend(sock.seqs)
        gaps, _ = sock.seq_problems()
        self.in_socket_gaps += gaps
        self.own.extend(sock.own.values())
        self.errors.extend(sock.errors)


async def visit(setup: Setup, code: str, player: Player, port: int, stay: float) -> None:
    after = None if player.baseline is None else player.last
    sock = Sock(setup.url(code, player.token, port, after=after))
    player.connects += 1
    if not await sock.open(timeout=30):
        player.failed_connects += 1
        await asyncio.sleep(1)
        return
    if player.baseline is None:
        player.baseline = sock.hello["last_seq"]
    player.sock = sock
    try:
        await asyncio.sleep(stay)
    finally:
        player.sock = None
        await sock.close()
        player.absorb(sock)


async def catch_up(
    setup: Setup, code: str, player: Player, port: int, target: int, limit: float
) -> None:
    """One last socket, kept until the seat has every seq up to ``target`` (at most ``limit`` s)."""
    after = None if player.baseline is None else player.last
    sock = Sock(setup.url(code, player.token, port, after=after))
    player.connects += 1
    if not await sock.open(timeout=30):
        player.failed_connects += 1
        return
    if player.baseline is None:
        player.baseline = sock.hello["last_seq"]
    deadline = time.monotonic() + limit
    try:
        while time.monotonic() < deadline:
            if max([player.last, *sock.seqs]) >= target and (
                not sock.seqs or sock.seq_problems()[0] == 0
            ):
                break
            await asyncio.sleep(0.1)
    finally:
        await sock.close()
        player.absorb(sock)


async def churn(
    setup: Setup, code: str, player: Player, end: float, args: argparse.Namespace
) -> None:
    turn = player.index
    while time.monotonic() < end:
        port = setup.ports[turn % len(setup.ports)]
        turn += 1
        stay = min(random.uniform(args.min_stay, args.max_stay), max(0.0, end - time.monotonic()))
        await visit(setup, code, player, port, stay)
        await asyncio.sleep(random.uniform(0, 0.5))


async def roller(players: list[Player], end: float, rate: float, counter: list[int]) -> None:
    t0 = time.monotonic()
    i = 0
    while time.monotonic() < end:
        delay = t0 + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        live = [p for p in players if p.sock is not None]
        if live and await random.choice(live).sock.roll("soak", i):  # type: ignore[union-attr]
            counter[0] += 1
        i += 1


async def sampler(
    pids: list[int], end: float, every: float, samples: list[dict[str, Any]], t0: float
) -> None:
    while True:
        samples.append({"t": time.monotonic() - t0, "rss_kb": [rss_kb(p) for p in pids]})
        if time.monotonic() >= end:
            return
        await asyncio.sleep(min(every, max(0.1, end - time.monotonic())))


def slope_mb_per_min(points: list[tuple[float, float]]) -> float | None:
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((x - mx) ** 2 for x, _ in points)
    return None if den == 0 else sum((x - mx) * (y - my) for x, y in points) / den * 60 / 1024


async def snapshots(pids: list[int], end: float, first_after: float, t0: float) -> None:
    """--trace-memory: a tracemalloc snapshot after the warm-up, then each minute and at the end."""
    await asyncio.sleep(max(0.0, t0 + first_after - time.monotonic()))
    while True:
        for pid in pids:
            os.kill(pid, signal.SIGUSR2)
        if time.monotonic() >= end:
            return
        await asyncio.sleep(min(60.0, max(0.1, end - time.monotonic())))


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.trace_memory:
        (RESULTS / "soak-memory").mkdir(parents=True, exist_ok=True)
        options = {
            "app": "bench.servers.tracemalloc_asgi:application",
            "env": {
                "BENCH_TRACEMALLOC_OUT": str(RESULTS / "soak-memory" / "tracemalloc-{pid}-{n}.txt")
            },
        }
    with Setup("deployed", "soak", **options) as setup:
        (code,) = setup.new_rooms(1)
        tokens = await setup.join(code, args.players)
        players = [Player(i, t) for i, t in enumerate(tokens)]
        t0 = time.monotonic()
        end = t0 + args.minutes * 60
        samples: list[dict[str, Any]] = []
        sent = [0]
        say(
            f"soak: {args.players} players, {args.rate:g} rolls/s, {args.minutes:g} min, "
            f"daphne pids {setup.pids}"
        )
        sample_task = asyncio.create_task(sampler(setup.pids, end, args.sample_every, samples, t0))
        if args.trace_memory:
            snap_task = asyncio.create_task(snapshots(setup.pids, end, 60.0, t0))
        await asyncio.gather(
            roller(players, end, args.rate, sent),
            *(churn(setup, code, p, end, args) for p in players),
        )
        await sample_task
        if args.trace_memory:
            await snap_task
        # the end: everyone comes back once and must catch up with the room
        await asyncio.sleep(2)  # let the last rolls land
        final_last = max((max(p.seen) for p in players if p.seen), default=0)
        await asyncio.gather(
            *(
                catch_up(setup, code, p, setup.ports[i % 2], final_last, 30.0)
                for i, p in enumerate(players)
            )
        )
        final_last = max([final_last, *(max(p.seen) for p in players if p.seen)])
        await asyncio.sleep(args.sample_every)
        idle = {"t": time.monotonic() - t0, "rss_kb": [rss_kb(p) for p in setup.pids], "idle": True}
    lost = dup = 0
    for p in players:
        if p.baseline is None:
            continue
        owed = set(range(p.baseline + 1, final_last + 1))
        have = set(p.seen)
        lost += len(owed - have)
        dup += len(p.seen) - len(have)
    per_process = []
    for i in range(len(setup.ports)):
        series = [(s["t"], s["rss_kb"][i]) for s in samples if s["rss_kb"][i] is not None]
        warm = [pt for pt in series if pt[0] >= 60] or series  # after the first minute
        per_process.append(
            {
                "process": f"daphne{i + 1}",
                "start_mb": series[0][1] / 1024 if series else None,
                "after_1min_mb": warm[0][1] / 1024 if warm else None,
                "end_mb": series[-1][1] / 1024 if series else None,
                "max_mb": max(v for _, v in series) / 1024 if series else None,
                "idle_after_mb": (idle["rss_kb"][i] or 0) / 1024,
                "slope_mb_per_min": slope_mb_per_min(series),
                "slope_after_1min_mb_per_min": slope_mb_per_min(warm),
            }
        )
    own = [ms for p in players for ms in p.own]
    errors = [e for p in players for e in p.errors]
    return {
        "players": args.players,
        "minutes": args.minutes,
        "rolls_sent": sent[0],
        "final_seq": final_last,
        "connects": sum(p.connects for p in players),
        "failed_connects": sum(p.failed_connects for p in players),
        "lost": lost,
        "duplicated": dup,
        "in_socket_gaps": sum(p.in_socket_gaps for p in players),
        "roll_latency_own": summarize(own),
        "errors": len(errors),
        "error_codes": sorted({str(e.get("code")) for e in errors}),
        "rss": per_process,
        "samples": [*samples, idle],
    }


def report(r: dict[str, Any]) -> str:
    rows = [
        [
            p["process"],
            p["start_mb"],
            p["after_1min_mb"],
            p["end_mb"],
            p["max_mb"],
            p["idle_after_mb"],
            p["slope_mb_per_min"],
            p["slope_after_1min_mb_per_min"],
        ]
        for p in r["rss"]
    ]
    lat = r["roll_latency_own"]
    return (
        f"Soak: deployed setup, {r['players']} players churning (2-6 s per socket, resume with "
        f"after=), {r['minutes']:g} min, {r['rolls_sent']} rolls sent\n\n"
        + table(
            [
                "process",
                "RSS start MB",
                "RSS at 1 min MB",
                "RSS end MB",
                "RSS max MB",
                "RSS idle after MB",
                "slope MB/min",
                "slope after 1 min MB/min",
            ],
            rows,
        )
        + "\n\n"
        + table(
            [
                "connects",
                "failed",
                "events (final seq)",
                "lost",
                "duplicated",
                "gaps inside a socket",
                "errors",
                "roll own p50 ms",
                "roll own p99 ms",
            ],
            [
                [
                    r["connects"],
                    r["failed_connects"],
                    r["final_seq"],
                    r["lost"],
                    r["duplicated"],
                    r["in_socket_gaps"],
                    f"{r['errors']} {r['error_codes'] or ''}",
                    lat["p50"],
                    lat["p99"],
                ]
            ],
        )
        + "\n"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--players", type=int, default=30)
    parser.add_argument(
        "--rate", type=float, default=10.0, help="rolls a second, all seats together"
    )
    parser.add_argument("--min-stay", type=float, default=2.0)
    parser.add_argument("--max-stay", type=float, default=6.0)
    parser.add_argument("--sample-every", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--trace-memory",
        action="store_true",
        help="serve under tracemalloc and write the growing allocation sites to "
        "bench/results/soak-memory/ (slower; not for the RSS figures)",
    )
    args = parser.parse_args()
    random.seed(args.seed)
    stop_on_sigterm()
    info = machine()
    result = await soak(args)
    text = report(result)
    print(text)
    name = "soak-trace-memory" if args.trace_memory else "soak"
    save(name, {"machine": info, "args": vars(args), "result": result})
    save_text(name, text)


if __name__ == "__main__":
    asyncio.run(main())
