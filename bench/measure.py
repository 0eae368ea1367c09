"""What the benchmarks measure with: statistics, lean socket clients, CPU and memory meters,
the machine's description and result files. Servers come from ``bench.harness``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bench.harness import CODE, HOST, RESULTS, ROOT, WHATIF

CLK_TCK = os.sysconf("SC_CLK_TCK")


def now_ns() -> int:
    """CLOCK_MONOTONIC: one clock for every process of this machine."""
    return time.monotonic_ns()


# --- statistics -----------------------------------------------------------------------------
def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile of ``values`` (sorted or not)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-p * len(ordered) // 100))))
    return ordered[rank - 1]


def summarize(values: Sequence[float]) -> dict[str, Any]:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "max": None}
    return {
        "n": len(ordered),
        "p50": percentile(ordered, 50),
        "p95": percentile(ordered, 95),
        "p99": percentile(ordered, 99),
        "max": ordered[-1],
    }


def median_of(runs: Iterable[dict[str, Any]], keys: Iterable[str]) -> dict[str, Any]:
    runs = list(runs)
    out: dict[str, Any] = {}
    for key in keys:
        values = [r[key] for r in runs if r.get(key) is not None]
        out[key] = statistics.median(values) if values else None
    return out


def fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table (also readable in a terminal)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(fmt(c) for c in row) + " |")
    return "\n".join(lines)


# --- the machine and its processes ----------------------------------------------------------
def _first(path: str, prefix: str) -> str:
    with contextlib.suppress(OSError):
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    return "?"


def _version(module: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module)
    except PackageNotFoundError:
        return "?"


def _command(args: list[str]) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def machine() -> dict[str, Any]:
    return {
        "cpu": _first("/proc/cpuinfo", "model name"),
        "cores": os.cpu_count(),
        "memory": _first("/proc/meminfo", "MemTotal"),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "loadavg_at_start": Path("/proc/loadavg").read_text().split()[:3],
        "versions": {
            m: _version(m)
            for m in (
                "Django",
                "channels",
                "channels_redis",
                "daphne",
                "Twisted",
                "websockets",
                "redis",
                "psycopg",
            )
        },
        "code": code_version(),
        "postgres": _command(["psql", "-h", HOST, "-U", "postgres", "-tAc", "show server_version"]),
        "redis": _command(["redis-cli", "-h", HOST, "info", "server"])
        .split("redis_version:")[-1]
        .split()[0:1],
    }


def code_version() -> dict[str, Any]:
    """Which code the servers run: a snapshot's commit, or the working tree's HEAD and changes."""
    stamp = CODE / ".bench-commit"
    if CODE != ROOT and stamp.exists():
        return {"snapshot": str(CODE), "commit": stamp.read_text().strip()}
    return {
        "working_tree": str(ROOT),
        "commit": _command(["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"]),
        "uncommitted": _command(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"]
        ).splitlines()[:20],
    }


def snapshot(ref: str = "HEAD") -> Path:
    """Extract ``ref`` (git archive: the repository is only read) into a directory of its own."""
    sha = _command(["git", "-C", str(ROOT), "rev-parse", "--short", ref])
    target = Path(tempfile.gettempdir()) / f"tabletop-bench-code-{sha}"
    if not (target / ".bench-commit").exists():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True, timeout=120
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True, timeout=120)
        subject = _command(["git", "-C", str(ROOT), "log", "-1", "--format=%h %ci %s", ref])
        (target / ".bench-commit").write_text(subject + "\n")
    return target


def rss_kb(pid: int) -> int | None:
    return int(v.split()[0]) if (v := _first(f"/proc/{pid}/status", "VmRSS")) != "?" else None


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process, from /proc/<pid>/stat."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def listen_overflows() -> int:
    """The kernel's count of connections dropped because a listen queue was full."""
    lines = [
        line.split()
        for line in Path("/proc/net/netstat").read_text().splitlines()
        if line.startswith("TcpExt:")
    ]
    table_ = dict(zip(lines[0][1:], lines[1][1:], strict=False)) if len(lines) >= 2 else {}
    return int(table_.get("ListenOverflows", 0))


def add_whatif_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--whatif", default="", help=f"what-if changes, comma-separated: {', '.join(WHATIF)}"
    )


def parse_whatif(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--whatif a,b`` -> ``args.whatif == ["a", "b"]``, each a known what-if."""
    args.whatif = [w for w in args.whatif.split(",") if w]
    for w in args.whatif:
        if w not in WHATIF:
            parser.error(f"unknown --whatif {w!r}")


def result_name(bench: str, whatif: Sequence[str]) -> str:
    """Where a run's results go: what-if runs never overwrite the measured ones."""
    return "-".join([bench, "whatif", *whatif]) if whatif else bench


async def run_setups(
    name: str,
    args: argparse.Namespace,
    bench_setup: Callable[[str, argparse.Namespace], Awaitable[list[dict[str, Any]]]],
    report: Callable[[list[dict[str, Any]], argparse.Namespace], str],
) -> None:
    """Run ``bench_setup`` for every ``--setups`` kind, print the report, save both."""
    stop_on_sigterm()
    info = machine()
    results: list[dict[str, Any]] = []
    for kind in args.setups.split(","):
        results.extend(await bench_setup(kind, args))
    text = report(results, args)
    print(text)
    save(name, {"machine": info, "args": vars(args), "results": results})
    save_text(name, text)


# --- clients --------------------------------------------------------------------------------
def seed_for(tag: str, rid: int) -> str:
    """The client seed of a benchmark roll carries its id and send time (CLOCK_MONOTONIC ns),
    so every receiving socket, in any process, measures its own latency."""
    return f"b|{tag}|{rid}|{now_ns()}"


def parse_seed(seed: Any) -> tuple[str, int, int] | None:
    if not isinstance(seed, str) or not seed.startswith("b|"):
        return None
    _, tag, rid, sent = seed.split("|")
    return tag, int(rid), int(sent)


class Sock:
    """One room socket: connects, reads ``hello``, then records every event it gets."""

    def __init__(self, url: str, name: str = "") -> None:
        self.url, self.name = url, name
        self.ws: ClientConnection | None = None
        self.connect_ms: float | None = None
        self.hello: dict[str, Any] | None = None
        self.hello_bytes = 0
        self.error: str | None = None
        self.seqs: list[int] = []
        self.rolls: dict[str, dict[int, float]] = {}  # tag -> rid -> latency ms
        self.arrivals: dict[str, list[int]] = {}  # tag -> receive times (monotonic ns)
        self.own: dict[str, float] = {}  # ref -> latency ms (the sender's copy)
        self.errors: list[dict[str, Any]] = []
        self.task: asyncio.Task[None] | None = None
        self.last_event_ns = 0

    async def open(self, timeout: float = 30.0) -> bool:
        t0 = now_ns()
        try:
            async with asyncio.timeout(timeout):
                self.ws = await connect(
                    self.url,
                    compression=None,
                    ping_interval=None,
                    max_size=None,
                    open_timeout=timeout,
                    close_timeout=2,
                )
                raw = await self.ws.recv()
                self.hello_bytes = len(raw)
                self.hello = json.loads(raw)
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"[:200]
            if self.ws is not None:
                with contextlib.suppress(Exception):
                    await self.ws.close()
            self.ws = None
            return False
        self.connect_ms = (now_ns() - t0) / 1e6
        if self.hello.get("type") != "hello":
            self.error = f"first message was {self.hello.get('type')!r}"
            return False
        self.task = asyncio.create_task(self._read())
        return True

    async def _read(self) -> None:
        assert self.ws is not None
        with contextlib.suppress(Exception):
            async for raw in self.ws:
                t = now_ns()
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind == "event":
                    self.seqs.append(msg["seq"])
                    self.last_event_ns = t
                    data = msg.get("data") or {}
                    parsed = (
                        parse_seed(data.get("client_seed")) if msg.get("kind") == "roll" else None
                    )
                    if parsed:
                        tag, rid, sent = parsed
                        ms = (t - sent) / 1e6
                        self.rolls.setdefault(tag, {})[rid] = ms
                        self.arrivals.setdefault(tag, []).append(t)
                        if msg.get("ref") is not None:
                            self.own[str(msg["ref"])] = ms
                elif kind == "error":
                    msg["_received_ns"] = t
                    self.errors.append(msg)

    async def send(self, message: dict[str, Any]) -> bool:
        if self.ws is None:
            return False
        try:
            await self.ws.send(json.dumps(message))
        except Exception:
            return False
        return True

    async def roll(self, tag: str, rid: int, notation: str = "3d6") -> bool:
        return await self.send(
            {
                "type": "roll",
                "ref": f"{tag}-{rid}",
                "system": "generic",
                "client_seed": seed_for(tag, rid),
                "request": {"notation": notation},
            }
        )

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5):
                    await self.ws.close()
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        self.ws = None

    def seq_problems(self) -> tuple[int, int]:
        """(gaps, duplicates) in the seqs this socket saw."""
        if not self.seqs:
            return 0, 0
        unique = set(self.seqs)
        gaps = (max(unique) - min(unique) + 1) - len(unique)
        return gaps, len(self.seqs) - len(unique)


async def open_all(socks: Sequence[Sock], batch: int = 20, timeout: float = 30.0) -> int:
    """Open sockets a batch at a time (the burst benchmark opens them all at once)."""
    ok = 0
    for i in range(0, len(socks), batch):
        ok += sum(await asyncio.gather(*(s.open(timeout) for s in socks[i : i + batch])))
    return ok


async def close_all(socks: Iterable[Sock]) -> None:
    await asyncio.gather(*(s.close() for s in socks))


class LoopLag:
    """How late the client's own event loop wakes up: the client's overhead, measured."""

    def __init__(self, every: float = 0.005) -> None:
        self.every, self.lags = every, []
        self.task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            t = time.monotonic()
            await asyncio.sleep(self.every)
            self.lags.append((time.monotonic() - t - self.every) * 1000)

    def start(self) -> None:
        self.lags.clear()
        self.task = asyncio.create_task(self._run())

    async def stop(self) -> dict[str, Any]:
        if self.task:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        return summarize(self.lags)


def run_queue_seconds(pid: int) -> float:
    """How long the threads of a process have waited, runnable, for a CPU (the kernel's
    ``/proc/<pid>/task/*/schedstat``, second field): on a machine busy with other work, the time
    a server had work to do and no core to do it on."""
    total = 0
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError, IndexError, ValueError):
                total += int((task / "schedstat").read_text().split()[1])
    return total / 1e9


class CpuMeter:
    """CPU seconds of the client and of each server process over a window, as % of one core,
    and how long each server process waited for a core (run-queue wait, ms per second)."""

    def __init__(self, pids: Sequence[int]) -> None:
        self.pids = list(pids)

    def __enter__(self) -> CpuMeter:
        self.t0 = time.monotonic()
        self.c0 = time.process_time()
        self.s0 = [cpu_seconds(p) or 0.0 for p in self.pids]
        self.q0 = [run_queue_seconds(p) for p in self.pids]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.wall = wall = max(1e-9, time.monotonic() - self.t0)
        self.client_pct = 100 * (time.process_time() - self.c0) / wall
        self.server_pct = [
            100 * ((cpu_seconds(p) or 0.0) - s) / wall
            for p, s in zip(self.pids, self.s0, strict=True)
        ]
        self.server_wait_ms_per_s = [
            1000 * (run_queue_seconds(p) - q) / wall
            for p, q in zip(self.pids, self.q0, strict=True)
        ]


# --- results --------------------------------------------------------------------------------
def save(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    payload = {
        "benchmark": name,
        "finished": dt.datetime.now().isoformat(timespec="seconds"),
        **payload,
    }
    path = RESULTS / f"{name}-{stamp}.json"
    path.write_text(json.dumps(payload, indent=1, default=str))
    (RESULTS / f"{name}-latest.json").write_text(json.dumps(payload, indent=1, default=str))
    return path


def save_text(name: str, text: str) -> Path:
    path = RESULTS / f"{name}-latest.md"
    path.write_text(text)
    return path


def stop_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so ``with Setup(...)`` blocks stop their servers."""

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


class MachineLoad:
    """Whole-machine CPU busy % over a window (from /proc/stat): other work on a shared machine
    shows up here and in the load average."""

    @staticmethod
    def _read() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + fields[4]
        return sum(fields) - idle, sum(fields)

    def __enter__(self) -> MachineLoad:
        self.b0, self.t0 = self._read()
        return self

    def __exit__(self, *exc: Any) -> None:
        b1, t1 = self._read()
        self.busy_pct = 100 * (b1 - self.b0) / max(1, t1 - self.t0)
        self.loadavg = float(Path("/proc/loadavg").read_text().split()[0])


def say(*parts: Any) -> None:
    print(*parts, flush=True, file=sys.stderr)
