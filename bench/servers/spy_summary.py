"""Summarise a ``py-spy record --format raw --threads [--idle]`` profile as text.

    .venv/bin/py-spy record --pid PID --rate 200 --duration 10 --threads --idle \
        --format raw -o x.txt
    .venv/bin/python -m bench.servers.spy_summary x.txt [--match broadcast --match json.dumps ...]

Prints, per thread, how many samples it has and where they are (wall time when recorded with
``--idle``): the top leaf frames, and the inclusive share of frames matching each ``--match``.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict


def frame_name(frame: str) -> str:
    # "func (module/path.py:123)" -> "func (path.py)"
    m = re.match(r"(.*?) \((.*?)(?::\d+)?\)$", frame)
    if not m:
        return frame
    func, path = m.groups()
    return f"{func} ({path.rsplit('/', 1)[-1]})"


def load(path: str) -> list[tuple[list[str], int]]:
    rows = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, count = line.rsplit(" ", 1)
            rows.append((stack.split(";"), int(count)))
    return rows


def thread_of(frames: list[str]) -> tuple[str, list[str]]:
    if frames and (frames[0].startswith("thread (") or frames[0].startswith("process ")):
        # py-spy puts "process ..." and/or "thread (0x..)" first with --threads/--subprocesses
        head = [f for f in frames[:2] if f.startswith(("thread (", "process "))]
        return " ".join(head), frames[len(head) :]
    return "all", frames


def summarise(rows: list[tuple[list[str], int]], matches: list[str], top: int, rate: float) -> str:
    threads: dict[str, Counter[str]] = defaultdict(Counter)
    inclusive: dict[str, Counter[str]] = defaultdict(Counter)
    totals: Counter[str] = Counter()
    roles: dict[str, str] = {}
    for frames, count in rows:
        thread, stack = thread_of(frames)
        totals[thread] += count
        if stack:
            threads[thread][frame_name(stack[-1])] += count
            names = [frame_name(f) for f in stack]
            if any("_worker" in n for n in names[:4]):
                roles.setdefault(thread, "worker thread (ORM / sync_to_async)")
            elif any("run_forever" in n for n in names):
                roles.setdefault(thread, "main thread (event loop)")
        joined = ";".join(stack)
        for pattern in matches:
            if pattern in joined:
                inclusive[thread][pattern] += count
    out = []
    ranked = totals.most_common()
    if len(ranked) > 3:  # short-lived threads (Django's per-request executors): one line for all
        rest = ranked[3:]
        name = f"{len(rest)} other threads"
        totals[name] = sum(c for _, c in rest)
        for thread, _ in rest:
            threads[name].update(threads[thread])
            inclusive[name].update(inclusive[thread])
        ranked = [*ranked[:3], (name, totals[name])]
    for thread, total in ranked:
        out.append(f"== {thread} {roles.get(thread, '')}: {total} samples ({total / rate:.2f} s)")
        for name, count in threads[thread].most_common(top):
            out.append(f"   {count:6d} {100 * count / total:5.1f}%  {name}")
        for pattern in matches:
            count = inclusive[thread][pattern]
            if count:
                out.append(f"   incl {count:6d} {100 * count / total:5.1f}%  [{pattern}]")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("raw")
    parser.add_argument("--match", action="append", default=[])
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--rate", type=float, default=200.0, help="the sampling rate used")
    args = parser.parse_args()
    print(summarise(load(args.raw), args.match, args.top, args.rate))


if __name__ == "__main__":
    main()
