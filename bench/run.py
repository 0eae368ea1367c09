"""Run every room benchmark, one after the other, and gather their tables.

    .venv/bin/python -m bench.run            # everything: about an hour (soak: 10 min)
    .venv/bin/python -m bench.run --quick    # one short run of each: a few minutes
    .venv/bin/python -m bench.run --only fanout,burst

Each benchmark writes ``bench/results/<name>-<time>.json``, ``<name>-latest.json`` and a readable
``<name>-latest.md``; this script puts the readable ones together in
``bench/results/summary-latest.md``.
The benchmarks load the machine (both cores): run nothing else meanwhile, or the numbers show it
(every result records the machine's load while it ran).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.harness import PY, RESULTS, ROOT
from bench.measure import machine, snapshot

FULL = {
    "fanout": [],
    "burst": [],
    "saturation": [],
    "page": [],
    "tables": [],
    "scaleout": [],
    "queries": [],
    "round_trips": [],
    "profile": [],
    "connects": [],
    "soak": [],
}
QUICK = {
    "fanout": ["--runs", "1", "--seconds", "5"],
    "burst": ["--runs", "1"],
    "saturation": ["--runs", "1", "--seconds", "5", "--rates", "10,50,100"],
    "page": ["--runs", "2"],
    "tables": ["--runs", "1", "--seconds", "20", "--most", ""],
    "scaleout": ["--seconds", "10", "--most", ""],
    "queries": ["--n", "50"],
    "round_trips": ["--rolls", "50"],
    "profile": ["--scenarios", "saturation"],
    "connects": ["--bursts", "2"],
    "soak": ["--minutes", "1"],
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default=",".join(FULL))
    parser.add_argument(
        "--code",
        default="snapshot",
        choices=["snapshot", "live"],
        help="snapshot (default): serve a `git archive` of --ref, so the whole run measures one "
        "commit while the working tree changes; live: serve the working tree",
    )
    parser.add_argument("--ref", default="HEAD")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.code == "snapshot":
        env["BENCH_CODE"] = str(snapshot(args.ref))
        print(f"serving {env['BENCH_CODE']}", flush=True)
    plan = QUICK if args.quick else FULL
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in plan]
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(unknown)}; pick from {', '.join(plan)}")
    failed = []
    for name in names:
        started = time.monotonic()
        print(f"== {name} {' '.join(plan[name])}", flush=True)
        command = [PY, "-m", f"bench.scenarios.{name}", *plan[name]]
        code = subprocess.run(command, cwd=ROOT, env=env).returncode
        print(f"== {name}: exit {code} after {time.monotonic() - started:.0f} s", flush=True)
        if code:
            failed.append(name)
    info = machine()
    code = env.get("BENCH_CODE")
    served = (Path(code) / ".bench-commit").read_text().strip() if code else "the working tree"
    parts = [
        f"# Room benchmarks\n\nMachine: {info['cpu']}, {info['cores']} cores, {info['memory']}; "
        f"Python {info['python']}; code: {served}\n"
    ]
    for name in names:
        path = RESULTS / f"{name}-latest.md"
        if path.exists():
            parts.append(f"## {name}\n\n{path.read_text()}")
    (RESULTS / "summary-latest.md").write_text("\n".join(parts))
    print(f"tables: {(RESULTS / 'summary-latest.md').relative_to(ROOT)}")
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
