"""Many tables: a service's evening, hundreds of small rooms rolling at once.

``--tables`` rooms of ``--players`` seats each (200 x 5 = 1,000 sockets by default). Each room
rolls on average every ``--every`` seconds, as a Poisson process (200 rooms every 5 s: 40
rolls a second in all); the schedule (when, which room, which player) comes from a seeded random
generator, so every setup, the bare floor included, is fed the same pattern. Every socket also
sends the room page's heartbeat (``ping`` every 20 s, spread out).

Setups: ``bare`` (the floor), ``daphne-floor`` and ``uvicorn-floor`` (the bare server's protocol
as a plain ASGI application under daphne, as the table is served, or uvicorn: the socket stack's
own floor), ``default`` (one process, SQLite), ``deployed`` (PostgreSQL and
Redis, ``--processes`` daphne processes behind nginx serving the shipped ``deploy/nginx.conf``:
each room's sockets on one process) and ``spread`` (the same processes without the proxy, each
room's sockets alternating between them, as a plain load balancer spreads them). With
``--processes 1,2,4`` the deployed and spread setups are measured at each count.

Measured for each roll at every socket of its room (the sender's own copy included): latency
from send to arrival; lost (socket, roll) pairs after a drain; seq gaps and repeats per socket;
refusals; each server process's CPU (% of one core) and RSS at the end; the client's CPU and
event-loop lag (it shares the machine). The table shows medians of ``--runs`` runs and the p99
as a multiple of the bare server's p99 (target: <= 3x, 0 lost).

``--most 200,400,600`` then tries those table counts, one run each, bare first at each count,
to find the most tables each setup holds at p99 <= 3x the floor (stopping at the first miss).

    .venv/bin/python -m bench.scenarios.tables                      # about 15 minutes
    .venv/bin/python -m bench.scenarios.tables --setups bare,default --runs 1 --seconds 20
    .venv/bin/python -m bench.scenarios.tables --most 300,400,600 --seconds 20
    .venv/bin/python -m bench.scenarios.scaleout    # deployed on 1, 2 and 4 processes
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import subprocess
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from bench.harness import HOST, NAMED, REDIS_URL, SPREAD, Setup, is_floor, whatif_env
from bench.measure import (
    CpuMeter,
    LoopLag,
    MachineLoad,
    Sock,
    add_whatif_argument,
    close_all,
    machine,
    median_of,
    open_all,
    parse_whatif,
    result_name,
    rss_kb,
    save,
    save_text,
    say,
    stop_on_sigterm,
    summarize,
    table,
)

HEARTBEAT_S = 20.0  # static/tabletop/socket.js PING_EVERY
PG_COUNTERS = ("pg_commits", "pg_inserted", "pg_updated", "pg_fetched")


def _command(args: list[str]) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def store_counters(setup: Setup) -> dict[str, float]:
    """What the shared services did so far: the benchmark database's transactions and rows
    (PostgreSQL's own statistics, this database only) and Redis's PUBLISH calls and their time
    (``INFO commandstats``: the whole server, so other users of the same Redis count too)."""
    if setup.kind != "deployed":
        return {}
    out: dict[str, float] = {}
    row = _command(
        [
            "psql", "-h", HOST, "-U", "postgres", "-tA", "-F", " ", "-c",
            "select xact_commit, tup_inserted, tup_updated, tup_fetched from pg_stat_database "
            f"where datname = '{setup.database}'",
        ]
    ).split()  # fmt: skip
    if len(row) == len(PG_COUNTERS):
        for key, value in zip(PG_COUNTERS, row, strict=True):
            out[key] = float(value)
    redis = urlsplit(REDIS_URL)
    info = ["redis-cli", "-h", redis.hostname or HOST, "-p", str(redis.port or 6379)]
    for line in _command([*info, "info", "commandstats"]).splitlines():
        if line.startswith("cmdstat_publish:"):
            fields = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
            out["redis_publish"] = float(fields["calls"])
            out["redis_publish_usec"] = float(fields["usec"])
    return out


STATS = (
    "p50",
    "p95",
    "p99",
    "max",
    "client_cpu",
    "server_cpu",
    "loop_lag_p99",
    "machine_busy",
    "rolls_per_s",
    "proxy_cpu",
)


def schedule(tables: int, players: int, every: float, seconds: float, seed: int) -> list[tuple]:
    """(time offset s, room, player) of every roll: one Poisson process of rate tables/every,
    each arrival in a room and by a player picked at random (so each room is Poisson too)."""
    rng = random.Random(seed)
    rate = tables / every
    out, t = [], rng.expovariate(rate)
    while t < seconds:
        out.append((t, rng.randrange(tables), rng.randrange(players)))
        t += rng.expovariate(rate)
    return out


async def heartbeats(socks: list[Sock], end: float) -> int:
    """Each socket pings every HEARTBEAT_S seconds, the sockets spread evenly over the period."""
    sent = 0
    step = HEARTBEAT_S / max(1, len(socks))
    t0 = time.monotonic()
    i = 0
    while True:
        at = t0 + i * step
        if at >= end:
            return sent
        delay = at - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        if await socks[i % len(socks)].send({"type": "ping", "ref": "heartbeat"}):
            sent += 1
        i += 1


async def one_run(
    setup: Setup,
    codes: list[str],
    tokens: list[list[str]],
    tables: int,
    run: int,
    args: argparse.Namespace,
) -> dict[str, Any]:
    gc.collect()
    gc.freeze()
    ports = setup.client_ports
    rooms: list[list[Sock]] = [
        [
            Sock(setup.url(codes[r], tokens[r][p], ports[(r + p) % len(ports)]), f"r{r}p{p}")
            for p in range(args.players)
        ]
        for r in range(tables)
    ]
    socks = [s for room in rooms for s in room]
    t_open = time.monotonic()
    opened = await open_all(socks, batch=50, timeout=60)
    open_s = time.monotonic() - t_open
    tag = f"t{tables}r{run}"
    plan = schedule(tables, args.players, args.every, args.seconds, seed=1000 * tables + run)
    try:
        await asyncio.sleep(1.0)
        lag = LoopLag()
        lag.start()
        counters = store_counters(setup)
        proxy = setup.proxy.pids if setup.proxy else []
        with CpuMeter(setup.pids) as cpu, CpuMeter(proxy) as proxy_cpu, MachineLoad() as load:
            t0 = time.monotonic()
            beat = asyncio.create_task(heartbeats(socks, t0 + args.seconds))
            for rid, (at, room, player) in enumerate(plan):
                delay = t0 + at - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                await rooms[room][player].roll(tag, rid)
            pings = await beat
            deadline = time.monotonic() + args.drain
            expected = Counter(room for _, room, _ in plan)
            while time.monotonic() < deadline:
                if all(
                    len(s.rolls.get(tag, {})) >= expected[r]
                    for r, room in enumerate(rooms)
                    for s in room
                ):
                    break
                await asyncio.sleep(0.1)
        lag_stats = await lag.stop()
        rss = [rss_kb(pid) for pid in setup.pids]
        after = store_counters(setup)
        per_roll = {
            f"{k}_per_roll": (after[k] - v) / max(1, len(plan)) for k, v in counters.items()
        }
    finally:
        await close_all(socks)

    latencies = [ms for s in socks for ms in s.rolls.get(tag, {}).values()]
    live = {id(s) for s in socks if s.hello is not None}
    expected_pairs = sum(args.players for _ in plan)
    gaps = dups = 0
    for s in socks:
        g, d = s.seq_problems()
        gaps, dups = gaps + g, dups + d
    refused = [e for s in socks for e in s.errors if str(e.get("ref", "")).startswith(f"{tag}-")]
    stats = summarize(latencies)
    return {
        "run": run,
        "tables": tables,
        "sockets": len(socks),
        "connected": opened,
        "not_connected": len(socks) - len(live),
        "open_s": open_s,
        "rolls": len(plan),
        "rolls_per_s": len(plan) / args.seconds,
        "pings": pings,
        "received": len(latencies),
        "lost": expected_pairs - len(latencies),
        "seq_gaps": gaps,
        "seq_duplicates": dups,
        "refused": len(refused),
        "refusal_codes": dict(Counter(str(e.get("code")) for e in refused)),
        **{k: stats[k] for k in ("p50", "p95", "p99", "max")},
        "client_cpu": cpu.client_pct,
        "server_cpu": sum(cpu.server_pct),
        "server_cpu_each": cpu.server_pct,
        # each process's CPU time over the run and its drain, per roll of the run
        "server_cpu_ms_per_roll_each": [
            10 * pct * cpu.wall / max(1, len(plan)) for pct in cpu.server_pct
        ],
        "proxy_cpu": sum(proxy_cpu.server_pct) if proxy else None,
        "server_wait_ms_per_s_each": cpu.server_wait_ms_per_s,
        "server_rss_mb_each": [round(kb / 1024, 1) if kb else None for kb in rss],
        "loop_lag_p99": lag_stats["p99"],
        "machine_busy": load.busy_pct,
        "loadavg": load.loadavg,
        **per_roll,
    }


PER_PROCESS = (
    "server_cpu_each",
    "server_rss_mb_each",
    "server_wait_ms_per_s_each",
    "server_cpu_ms_per_roll_each",
)


def _each_process(runs: list[dict[str, Any]], key: str) -> list[Any]:
    """Each process's median of ``key`` over the runs."""
    width = max(len(r[key]) for r in runs)
    return [median_of([{"v": r[key][i]} for r in runs], ["v"])["v"] for i in range(width)]


def summary(label: str, tables: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "setup": label,
        "tables": tables,
        "runs": runs,
        "median": median_of(runs, STATS),
        **{key: _each_process(runs, key) for key in PER_PROCESS},
        "store_per_roll": median_of(
            runs, sorted({k for r in runs for k in r if k.endswith("_per_roll")})
        ),
        "lost_total": sum(r["lost"] for r in runs),
        "seq_gaps_total": sum(r["seq_gaps"] for r in runs),
        "seq_duplicates_total": sum(r["seq_duplicates"] for r in runs),
        "refused_total": sum(r["refused"] for r in runs),
        "not_connected_total": sum(r["not_connected"] for r in runs),
    }


def setups(kinds: Sequence[str], processes: Sequence[int]) -> list[tuple[str, int | None]]:
    """(setup, processes) in the order measured: the floor first (the larger counts stop by its
    p99), then each setup, the deployed and spread ones at each count of processes."""
    ordered = ["bare", *[k for k in kinds if k != "bare"]] if "bare" in kinds else list(kinds)
    return [
        (kind, n)
        for kind in ordered
        for n in (processes if kind in ("deployed", SPREAD) else [None])
    ]


async def bench_setup(
    kind: str, processes: int | None, args: argparse.Namespace, floor: dict[int, float]
) -> list[dict[str, Any]]:
    """The main count over ``--runs`` runs, then (``--most``) larger counts, one run each, until
    the p99 passes 3x the floor's at that count. ``floor`` (tables -> bare p99) is filled by the
    bare setup, which runs first."""
    label = "+".join([kind if processes is None else f"{kind} x{processes}", *args.whatif])
    out: list[dict[str, Any]] = []
    counts = [args.tables, *[n for n in args.most if n > args.tables]]
    with Setup.named(kind, "tables", env=whatif_env(args.whatif), processes=processes) as setup:
        t = time.monotonic()
        codes = setup.new_rooms(max(counts))
        tokens = await setup.join_rooms(codes, args.players, concurrency=args.join_concurrency)
        say(f"tables {label}: {len(codes)} rooms seated in {time.monotonic() - t:.0f} s")
        for tables in counts:
            runs = []
            for run in range(args.runs if tables == args.tables else 1):
                r = await one_run(setup, codes[:tables], tokens[:tables], tables, run, args)
                say(
                    f"tables {label} {tables}x{args.players} run {run + 1}: "
                    f"{r['rolls_per_s']:.1f} rolls/s, p50 {r['p50']} p99 {r['p99']} ms, "
                    f"lost {r['lost']}, refused {r['refused']}, not connected "
                    f"{r['not_connected']}, server cpu {[round(c) for c in r['server_cpu_each']]}"
                    f"%, rss {r['server_rss_mb_each']} MB, client cpu {r['client_cpu']:.0f}%"
                )
                runs.append(r)
                await asyncio.sleep(2)
            row = summary(label, tables, runs)
            out.append(row)
            p99 = row["median"]["p99"]
            if kind == "bare":
                floor[tables] = p99
            elif tables != args.tables and (
                p99 is None or tables not in floor or p99 > 3 * floor[tables] or row["lost_total"]
            ):
                break  # past what this setup holds
    return out


def ratio(row: dict[str, Any], floor: dict[int, float]) -> float | None:
    bare = floor.get(row["tables"])
    p99 = row["median"]["p99"]
    return p99 / bare if bare and p99 else None


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    floor = {r["tables"]: r["median"]["p99"] for r in results if r["setup"] == "bare"}
    rows = []
    for r in results:
        m, x = r["median"], ratio(r, floor)
        judged = not is_floor(r["setup"])
        met = x is not None and x <= 3 and r["lost_total"] == 0
        rows.append(
            [
                r["setup"],
                r["tables"],
                r["tables"] * args.players,
                len(r["runs"]),
                m["rolls_per_s"],
                m["p50"],
                m["p95"],
                m["p99"],
                m["max"],
                f"{x:.1f}x" if x else "-",
                ("met" if met else "**missed**") if judged else "",
                r["lost_total"],
                r["seq_gaps_total"] + r["seq_duplicates_total"],
                r["refused_total"],
                " / ".join(f"{c:.0f}" for c in r["server_cpu_each"]),
                " / ".join(f"{c:.1f}" for c in r["server_cpu_ms_per_roll_each"]),
                m["proxy_cpu"],
                " / ".join(f"{w:.0f}" for w in r["server_wait_ms_per_s_each"]),
                " / ".join(f"{v:.0f}" for v in r["server_rss_mb_each"] if v),
                m["client_cpu"],
                m["loop_lag_p99"],
                m["machine_busy"],
            ]
        )
    most = []
    for setup in dict.fromkeys(r["setup"] for r in results if not is_floor(r["setup"])):
        held = [
            r["tables"]
            for r in results
            if r["setup"] == setup
            and (x := ratio(r, floor)) is not None
            and x <= 3
            and r["lost_total"] == 0
        ]
        tried = [r["tables"] for r in results if r["setup"] == setup]
        most.append(
            f"- {setup}: held {max(held) if held else 'none'} tables at p99 <= 3x bare "
            f"(tried {', '.join(map(str, tried))})"
        )
    for r in results:
        per = r.get("store_per_roll") or {}
        if per.get("pg_commits_per_roll") is not None:
            publish = per.get("redis_publish_per_roll") or 0
            usec = per.get("redis_publish_usec_per_roll") or 0
            most.append(
                f"- {r['setup']} at {r['tables']} tables, per roll: PostgreSQL "
                f"{per['pg_commits_per_roll']:.2f} commits, {per['pg_inserted_per_roll']:.2f} rows "
                f"inserted, {per['pg_updated_per_roll']:.2f} updated, "
                f"{per['pg_fetched_per_roll']:.1f} fetched; Redis {publish:.2f} PUBLISH "
                f"({usec / publish if publish else 0:.1f} us of Redis time each)"
            )
    head = (
        f"Many tables: rooms of {args.players} players, each rolling every {args.every:g} s on "
        f"average (Poisson, the same seeded pattern for every setup), heartbeat every "
        f"{HEARTBEAT_S:g} s per socket, {args.seconds:g} s per run; medians of {args.runs} runs "
        "at the first count, one run at each larger count (latency ms from send to arrival at "
        "every socket of the room)\n\n"
    )
    return (
        head
        + table(
            [
                "setup",
                "tables",
                "sockets",
                "runs",
                "rolls/s",
                "p50",
                "p95",
                "p99",
                "max",
                "p99 / bare",
                "target <= 3x, 0 lost",
                "lost",
                "seq gaps + repeats",
                "refused",
                "server CPU % per process",
                "server CPU ms per roll, per process",
                "nginx CPU %",
                "server waiting for a core, ms/s per process",
                "RSS MB per process",
                "client CPU %",
                "client loop lag p99",
                "machine busy % (2 cores)",
            ],
            rows,
        )
        + "\n\n"
        + "\n".join(most)
        + "\n"
    )


async def main(
    argv: Sequence[str] | None = None,
    *,
    name: str = "tables",
    doc: str | None = None,
    defaults: dict[str, object] | None = None,
) -> None:
    """The benchmark (``bench.scenarios.scaleout`` runs it with other defaults, under its own
    name)."""
    parser = argparse.ArgumentParser(
        description=doc or __doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--setups",
        default="bare,default,deployed",
        help=f"of {', '.join(NAMED)}",
    )
    parser.add_argument(
        "--processes",
        default="2",
        help="deployed and spread: processes, or several counts comma-separated (1,2,4)",
    )
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument(
        "--every", type=float, default=5.0, help="mean seconds between a room's rolls"
    )
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--drain", type=float, default=30.0)
    parser.add_argument("--most", default="", help="larger table counts to try, comma-separated")
    parser.add_argument(
        "--join-concurrency", type=int, default=16, help="seats made at once before the runs"
    )
    add_whatif_argument(parser)
    parser.set_defaults(**(defaults or {}))
    args = parser.parse_args(argv)
    parse_whatif(parser, args)
    args.most = sorted(int(n) for n in args.most.split(",") if n)
    args.processes = [int(n) for n in args.processes.split(",") if n]
    kinds = args.setups.split(",")
    unknown = set(kinds) - set(NAMED)
    if unknown or not args.processes or not all(1 <= n <= 8 for n in args.processes):
        parser.error(f"unknown setups {sorted(unknown)} or processes not 1-8: {args.processes}")
    stop_on_sigterm()
    info = machine()
    floor: dict[int, float] = {}
    results: list[dict[str, Any]] = []
    failed: list[str] = []
    for kind, processes in setups(kinds, args.processes):
        try:
            results.extend(await bench_setup(kind, processes, args, floor))
        except Exception as exc:  # a setup that fails is reported, the others still run
            say(f"tables {kind}: failed: {exc!r}"[:2000])
            failed.append(f"- {kind}: failed: {type(exc).__name__}: {exc}"[:400])
    text = report(results, args) + "".join(f"{line}\n" for line in failed)
    print(text)
    name = result_name(name, args.whatif)
    save(name, {"machine": info, "args": vars(args), "results": results, "failed": failed})
    save_text(name, text)


if __name__ == "__main__":
    asyncio.run(main())
