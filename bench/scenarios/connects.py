"""Where a connect's time goes: 200 sockets opened at once into one room, again and again, with
py-spy sampling the server's event loop; its samples put down to the package whose code was
running (daphne, twisted, autobahn, channels, Django, the table's own, asyncio, the JSON encoder).

The joins target (hello p50 <= 3x the bare server) is judged by ``burst``; this says what the
server does per connect that the bare server does not, and how much of it is the table's own.

    .venv/bin/python -m bench.scenarios.connects
    .venv/bin/python -m bench.scenarios.connects --setups default,deployed --bursts 8
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.harness import RESULTS, Setup
from bench.measure import Sock, close_all, machine, save, save_text, say, summarize, table
from bench.servers.spy_summary import load as load_raw

PY_SPY = str(Path(sys.executable).with_name("py-spy"))
OUT = RESULTS / "profile"
RATE = 250  # samples a second

# A frame's package, from its file path: the first of these found in it.
PACKAGES = [
    ("daphne/", "daphne"),
    ("twisted/", "twisted"),
    ("autobahn/", "autobahn"),
    ("txaio/", "autobahn"),
    ("channels/", "channels"),
    ("asgiref/", "asgiref"),
    ("django/", "Django"),
    ("tabletop/", "the table (tabletop/)"),
    ("rules/", "the table (rules/)"),
    ("json/", "json"),
    ("pprint.py", "pprint (autobahn's debug log)"),
    ("asyncio/", "asyncio"),
    ("selectors.py", "waiting (select)"),
]


def package_of(frame: str) -> str:
    m = re.match(r".*? \((.*?)(?::\d+)?\)$", frame)
    path = m.group(1) if m else frame
    for needle, name in PACKAGES:
        if needle in path:
            return name
    return "other (stdlib, logging, ...)"


def attribute(rows: list[tuple[list[str], int]]) -> dict[str, Any]:
    """The main thread's samples, each put down to the package of its innermost frame that is
    not the standard library's plumbing; and how many had the table's code anywhere."""
    main = [(frames, n) for frames, n in rows if frames and "MainThread" in frames[0]]
    total = sum(n for _, n in main) or 1
    leaf: Counter[str] = Counter()
    ours = 0
    for frames, n in main:
        leaf[package_of(frames[-1])] += n
        if any("tabletop/" in f for f in frames):
            ours += n
    return {
        "samples": total,
        "by_package": {k: round(100 * v / total, 1) for k, v in leaf.most_common()},
        "table_code_in_stack": round(100 * ours / total, 1),
    }


async def run_setup(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    with Setup(kind, "profile") as setup:
        (code,) = setup.new_rooms(1)
        tokens = await setup.sockets_tokens(code, args.sockets)
        ports = setup.ports
        hellos: list[float] = []
        # warm: one burst unmeasured
        socks = [Sock(setup.url(code, t, ports[i % len(ports)])) for i, t in enumerate(tokens)]
        await asyncio.gather(*(s.open() for s in socks))
        await close_all(socks)
        await asyncio.sleep(1)
        raw = OUT / f"{kind}-connects.txt"
        raw.unlink(missing_ok=True)
        OUT.mkdir(parents=True, exist_ok=True)
        spy = None
        if Path(PY_SPY).exists():
            spy = subprocess.Popen(
                [PY_SPY, "record", "--pid", str(setup.pids[0]), "--rate", str(RATE),
                 "--duration", str(int(args.bursts * 2.5) + 2), "--threads", "--nonblocking",
                 "--format", "raw", "-o", str(raw)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
            await asyncio.sleep(1)
        else:
            say("py-spy is not installed (pip install -e '.[bench]'): hello times only")
        t0 = time.monotonic()
        for _ in range(args.bursts):
            socks = [Sock(setup.url(code, t, ports[i % len(ports)])) for i, t in enumerate(tokens)]
            await asyncio.gather(*(s.open() for s in socks))
            hellos += [s.connect_ms for s in socks if s.connect_ms is not None]
            await close_all(socks)
            await asyncio.sleep(1)
        spent = time.monotonic() - t0
        if spy is not None:
            spy.wait(timeout=120)
    attributed = attribute(load_raw(str(raw))) if raw.exists() else {}
    return {
        "setup": kind,
        "bursts": args.bursts,
        "sockets": args.sockets,
        "seconds": spent,
        "hello": summarize(hellos),
        **attributed,
    }


def report(results: list[dict[str, Any]]) -> str:
    names = list(dict.fromkeys(k for r in results for k in r.get("by_package", {})))
    head = (
        f"Connects: {results[0]['sockets']} sockets opened at once into one room, "
        f"{results[0]['bursts']} times; the first server process's event loop sampled by py-spy "
        f"at {RATE}/s (CPU samples); each sample put down to the package of its innermost frame. "
        "'table code in stack': samples with the table's own code anywhere on the stack.\n\n"
    )
    rows = [
        ["hello p50 ms", *[r["hello"]["p50"] for r in results]],
        ["samples (main thread)", *[r.get("samples") for r in results]],
        *[[n, *[r.get("by_package", {}).get(n, 0.0) for r in results]] for n in names],
        ["table code in stack %", *[r.get("table_code_in_stack") for r in results]],
    ]
    return head + table(["% of the event loop's samples", *[r["setup"] for r in results]], rows)


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--setups", default="default")
    parser.add_argument("--sockets", type=int, default=200)
    parser.add_argument("--bursts", type=int, default=6)
    args = parser.parse_args()
    results = []
    for kind in args.setups.split(","):
        results.append(await run_setup(kind, args))
        say(f"connects {kind}: hello p50 {results[-1]['hello']['p50']} ms")
    text = report(results)
    save("connects", {"machine": machine(), "results": results})
    save_text("connects", text)
    print(text)


if __name__ == "__main__":
    asyncio.run(main())
