"""Where a roll's time goes on the server, during fan-out and during saturation.

Serves the table with its timing hook on (``tabletop/timing.py``, recorded by
``bench/servers/recorder.py``: decode, the wait for a database thread, the service, each
statement, serialising an event, the fan-out to a process's sockets, each frame sent) and
samples the first daphne process with py-spy (``--idle``: wall time, so waiting shows) into a
flame graph (``bench/results/profile/<setup>-<scenario>.svg``) and a raw profile summarised as text.

Scenarios (each in a fresh room):

- ``fanout``: 200 players, one rolls 20 times a second for 10 s (as the fan-out at N=200);
- ``saturation``: 10 listeners, 10 roller seats, 100 rolls a second in total for 10 s.

    .venv/bin/python -m bench.scenarios.profile
    .venv/bin/python -m bench.scenarios.profile --setups default --scenarios fanout
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import time
from typing import Any

from bench.harness import RESULTS, ROOT, Setup
from bench.measure import (
    Sock,
    close_all,
    fmt,
    machine,
    open_all,
    save,
    save_text,
    say,
    stop_on_sigterm,
    summarize,
    table,
)
from bench.servers.spy_summary import load as load_raw
from bench.servers.spy_summary import summarise as summarise_raw

PY_SPY = str(ROOT / ".venv" / "bin" / "py-spy")
OUT = RESULTS / "profile"
SCENARIOS = {
    "fanout": {"listeners": 199, "rollers": 1, "rate": 20.0, "seconds": 10.0},
    "saturation": {"listeners": 10, "rollers": 10, "rate": 100.0, "seconds": 10.0},
}
MATCHES = [
    "hub_deliver",
    "_pump",
    "roll (actions.py)",
    "room_payload",
    "_commit",
    "get_new_connection",
    "_close (base.py)",
    "close_old_connections",
    "room_event",
    "dumps",
    "deepcopy",
    "group_send",
    "events_after",
    "_connect_snapshot",
    "make_roll",
    "untilConcludes",
    "sendMessage",
    "_receive_message",
    "deserialize",
]


def spy(pid: int, seconds: float, name: str) -> list[subprocess.Popen[bytes]]:
    OUT.mkdir(parents=True, exist_ok=True)
    common = [
        PY_SPY,
        "record",
        "--pid",
        str(pid),
        "--rate",
        "100",
        "--duration",
        str(int(seconds)),
        "--idle",
        "--threads",
        "--nonblocking",
    ]
    return [
        subprocess.Popen(
            [*common, "--format", "raw", "-o", str(OUT / f"{name}.txt")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ),
        subprocess.Popen(
            [*common, "--format", "flamegraph", "-o", str(OUT / f"{name}.svg")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ),
    ]


async def scenario(setup: Setup, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    (code,) = setup.new_rooms(1)
    n = spec["listeners"] + spec["rollers"]
    tokens = await setup.sockets_tokens(code, n)
    ports = setup.ports
    socks = [Sock(setup.url(code, tok, ports[i % len(ports)])) for i, tok in enumerate(tokens)]
    await open_all(socks)
    rollers, listeners = socks[: spec["rollers"]], socks[spec["rollers"] :]
    tag, total = f"p-{name}", int(spec["rate"] * spec["seconds"])
    try:
        for i in range(5):
            await rollers[i % len(rollers)].roll("warm", i)
            await asyncio.sleep(0.1)
        await asyncio.sleep(2)
        for pid in setup.pids:
            os.kill(pid, signal.SIGUSR1)  # a new measurement window
        label = f"{setup.kind}-{name}"
        spies = spy(setup.pids[0], spec["seconds"] + 4, label)
        t0 = time.monotonic()
        for i in range(total):
            delay = t0 + i / spec["rate"] - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            await rollers[i % len(rollers)].roll(tag, i)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(
            len(s.rolls.get(tag, {})) >= total for s in listeners
        ):
            await asyncio.sleep(0.1)
        wall = time.monotonic() - t0
        for p in spies:
            p.wait(timeout=120)
        await asyncio.sleep(1.5)  # the servers write their numbers every second
        servers = []
        for pid in setup.pids:
            path = OUT / f"{setup.kind}-{pid}.json"
            servers.append(json.loads(path.read_text()) if path.exists() else {})
    finally:
        await close_all(socks)
    latencies = [ms for s in listeners for ms in s.rolls.get(tag, {}).values()]
    raw = OUT / f"{label}.txt"
    spy_text = summarise_raw(load_raw(str(raw)), MATCHES, 12, 100.0) if raw.exists() else ""
    (OUT / f"{label}-summary.txt").write_text(spy_text)
    return {
        "setup": setup.kind,
        "scenario": name,
        "spec": spec,
        "rolls": total,
        "wall_s": wall,
        "latency": summarize(latencies),
        "undelivered": sum(total - len(s.rolls.get(tag, {})) for s in listeners),
        "servers": servers,
        "flamegraph": str(OUT / f"{label}.svg"),
        "spy_summary": spy_text,
    }


def derive(r: dict[str, Any]) -> list[dict[str, Any]]:
    """Per server process: the numbers that explain a roll, from the table's timing steps."""
    out = []
    for i, s in enumerate(r["servers"]):
        t, c = s.get("timers", {}), s.get("counts", {})
        window = s.get("window_s") or 1.0

        def g(name: str, key: str = "mean", t: dict[str, Any] = t) -> float | None:
            return t.get(name, {}).get(key)

        def busy(name: str, t: dict[str, Any] = t, window: float = window) -> float:
            return 100 * t.get(name, {}).get("total_ms", 0.0) / 1000 / window

        actions = c.get("service", 0)
        out.append(
            {
                "process": f"{r['setup']} #{i + 1}",
                "window_s": window,
                "actions handled": actions,
                "events serialised": c.get("serialise", 0),
                "frames to sockets": c.get("send", 0),
                "database thread busy (service) %": busy("service"),
                "decode ms (mean)": g("decode"),
                "waiting for a database thread ms (mean)": g("orm.wait"),
                "waiting for a database thread ms (p99)": g("orm.wait", "p99"),
                "service ms (mean)": g("service"),
                "service ms (p99)": g("service", "p99"),
                "statements per action": c.get("db.execute", 0) / actions if actions else None,
                "statement ms (mean)": g("db.execute"),
                "serialise once per event ms (mean)": g("serialise"),
                "fan-out to this process's sockets ms (mean)": g("fanout"),
                "fan-out ms (p99)": g("fanout", "p99"),
                "send one frame ms (mean)": g("send"),
                "event loop on fan-out %": busy("fanout"),
                "seat lookup ms, the database wait included (p50)": g("access", "p50"),
                "hello ms, the database wait included (p50)": g("hello", "p50"),
            }
        )
    return out


def report(results: list[dict[str, Any]]) -> str:
    parts = [
        "Server profile (the table's timing steps, tabletop/timing.py; "
        "py-spy flame graphs in bench/results/profile/)",
        "",
    ]
    for name in dict.fromkeys(r["scenario"] for r in results):
        rows = [r for r in results if r["scenario"] == name]
        spec = rows[0]["spec"]
        parts.append(
            f"### {name}: {spec['listeners']} listeners, {spec['rollers']} roller seat(s), "
            f"{spec['rate']:g} rolls/s for {spec['seconds']:g} s"
        )
        parts.append("")
        parts.append(
            table(
                ["setup", "latency p50 ms", "p99 ms", "undelivered", "flame graph"],
                [
                    [
                        r["setup"],
                        r["latency"]["p50"],
                        r["latency"]["p99"],
                        r["undelivered"],
                        r["flamegraph"],
                    ]
                    for r in rows
                ],
            )
        )
        parts.append("")
        columns = [d for r in rows for d in derive(r)]
        if columns:
            keys = [k for k in columns[0] if k != "process"]
            parts.append(
                table(
                    ["", *[c["process"] for c in columns]],
                    [
                        [
                            k,
                            *[
                                fmt(c[k], 2) if isinstance(c[k], float) else fmt(c[k])
                                for c in columns
                            ],
                        ]
                        for k in keys
                    ],
                )
            )
            parts.append("")
    return "\n".join(parts) + "\n"


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--setups", default="default,deployed")
    parser.add_argument("--scenarios", default="fanout,saturation")
    parser.add_argument("--players", type=int, default=200, help="room size of the fanout scenario")
    args = parser.parse_args()
    fanout = SCENARIOS["fanout"]
    specs = {**SCENARIOS, "fanout": {**fanout, "listeners": args.players - fanout["rollers"]}}
    stop_on_sigterm()
    info = machine()
    results = []
    for kind in args.setups.split(","):
        env = {"BENCH_PROFILE_OUT": str(OUT / f"{kind}-{{pid}}.json")}
        OUT.mkdir(parents=True, exist_ok=True)
        with Setup(kind, "profile", env=env) as setup:
            for name in args.scenarios.split(","):
                result = await scenario(setup, name, specs[name])
                say(
                    f"profile {kind} {name}: p50 {result['latency']['p50']} "
                    f"p99 {result['latency']['p99']} ms, undelivered {result['undelivered']}"
                )
                results.append(result)
    for r in results:
        r["derived"] = derive(r)
    text = report(results)
    print(text)
    save("profile", {"machine": info, "results": results})
    save_text("profile", text)


if __name__ == "__main__":
    asyncio.run(main())
