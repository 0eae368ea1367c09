"""Engine benchmarks: rolls per second (ours vs avrae's d20), per-system rolls, odds times.

    .venv/bin/python -m bench.engines            # full run, about 17 minutes
    .venv/bin/python -m bench.engines --quick    # smoke run, about a minute
    .venv/bin/python -m bench.engines --profile  # profile every case that missed a target
    .venv/bin/python -m bench.engines_report    # Markdown tables for docs/benchmarks.md

Writes ``bench/results/engines.json`` (``engines-quick.json`` with ``--quick``) and prints the
tables. ``--profile`` reads that JSON and prints where the time goes for each miss (also
written to ``bench/results/engines-profile.txt``).

How it measures (see docs/benchmarks.md):

- Rolls: fixed-time loops (``bench/engines_timing.py``, the same loop on both sides), each
  after an untimed warm-up, repeated; medians are reported. Our side calls
  ``evaluate(parse(text), FairStream(seed, "", seq))`` per roll, with a new ``seq`` each roll;
  ``parse`` is the engine's own cached parse (an ``lru_cache`` hit returning the compiled
  expression), so each roll pays the cache look-up, not a parse. d20 runs ``d20.roll(text)``
  in a throwaway virtualenv (``bench/.venv-d20``, made here with pip) in a worker process, with
  its default roller and that roller's LFU parse cache. Each timed loop is cut into short
  slices and the two sides take turns slice by slice, so a busy machine slows both alike.
- Odds: per request, the first call in a fresh interpreter ("cold"), then in this process the
  median of repeated calls with the engines' memo caches kept ("repeat") and cleared before
  each call ("compute", the real cost of a request not asked before).

Run from the repository root as ``python -m bench.engines``. The engines are pure: Django is not
set up.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import hashlib
import hmac
import io
import json
import os
import platform
import pstats
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.engines_timing import combined, median, pooled, rate, warm_up, z_score
from rules.engines import FairStream, OddsTooLarge, get_system, system_ids
from rules.engines.notation import evaluate, parse

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

D20_VERSION = "1.1.2"
D20_VENV = BENCH / ".venv-d20"
RESULTS = BENCH / "results"
SERVER_SEED = hashlib.sha256(b"engine benchmarks").digest()

NOTATION_TARGET = 2.0  # ours / d20, rolls per second, on every shared expression
ODDS_TARGET_MS = 20.0

# (label, our notation, d20's notation, kind). "required" cases make the 2x target; "extra"
# ones are shown but judged apart. Where the two spellings differ they mean the same dice
# (the run checks the sample means agree): d20 writes an explosion on 10 as "e10" where we
# write "!" (explode on the highest face), and reroll-until as "rr1" where we write "r1".
_LONG = (
    "4d6kh3+2d8+1d20+5-1d4+(2d6+3)*2+3d10kl2+1d12+8d6+10d10kh5+6d10!+2d20kh1+4d6r1"
    "+3d8ro1+2d4*3+1d6-1d8+7"
)
NOTATION_CASES: list[tuple[str, str, str, str]] = [
    ("1d20+5", "1d20+5", "1d20+5", "required"),
    ("4d6kh3+2", "4d6kh3+2", "4d6kh3+2", "required"),
    ("3d6", "3d6", "3d6", "required"),
    ("8d6", "8d6", "8d6", "required"),
    ("2d20kh1+7", "2d20kh1+7", "2d20kh1+7", "required"),
    ("10d10kh5", "10d10kh5", "10d10kh5", "required"),
    ("6d10 exploding", "6d10!", "6d10e10", "required"),
    ("(2d6+3)*2", "(2d6+3)*2", "(2d6+3)*2", "required"),
    ("1d100", "1d100", "1d100", "required"),
    (
        f"long ({len(_LONG)} chars)",
        _LONG,
        _LONG.replace("6d10!", "6d10e10").replace("4d6r1", "4d6rr1"),
        "required",
    ),
    ("4d6 reroll 1s", "4d6r1", "4d6rr1", "extra"),
    ("4d6 reroll 1s once", "4d6ro1", "4d6ro1", "extra"),
    ("100d6kh50 (large pool)", "100d6kh50", "100d6kh50", "extra"),
]

# One typical request per system, rolled in a loop.
SYSTEM_ROLLS: dict[str, dict[str, Any]] = {
    "generic": {"notation": "4d6kh3+2", "difficulty": 15},
    "zoria": {"check": "1d20+7", "action_dice": ["d8", "d8"], "dc": 15},
    "roll-and-keep": {"roll": 6, "keep": 3, "difficulty": 7},
    "d6-chance": {"dice": 4, "bonus": 2, "difficulty": 15},
    "discordian": {"pool": ["d6", "d6", "d8"], "tn": 5, "challenge": 2, "discord": 7},
    "action-dice": {"action_dice": 2, "skill_dice": 3, "difficulty": 8},
}


def _g(notation: str) -> dict[str, Any]:
    return {"notation": notation}


# (size, request, expect): size is small / typical / large (large = a big request still
# under the system's exact-odds cap); "refused" rows are just past a cap and time how long
# the engine takes to say OddsTooLarge.
ODDS_CASES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "generic": [
        ("small", _g("1d20+5")),
        ("small", _g("4dF")),
        ("typical", _g("4d6kh3")),
        ("typical", _g("2d20kh1+7")),
        ("typical", _g("3d6+1d8*2")),
        ("typical", _g("10d10>8f1")),
        ("typical", _g("6d10!!k3")),
        ("typical", _g("10d6!")),
        ("large", _g("100d6")),
        ("large", _g("50d10kh25")),
        ("large", _g("10d10!!k5")),
        ("large", _g("1d100*1d100")),
        ("large", _g("1000d6")),
        ("refused", _g("100d10kh50")),
        ("refused", _g("12d10!!k6")),
    ],
    "zoria": [
        ("small", {"check": "1d20", "action_dice": []}),
        ("small", {"check": "1d20+3", "action_dice": ["d4"], "dc": 12}),
        ("typical", {"check": "1d20+7", "action_dice": ["d8", "d8"], "dc": 15}),
        ("typical", {"check": "1d20+12", "action_dice": ["d12"] * 5, "dc": 25}),
        ("large", {"check": "1d20+20", "action_dice": ["d24"] * 20, "dc": 100}),
        (
            "large",
            {
                "check": "1d20+20",
                "action_dice": [f"d{n}" for n in (3, 4, 6, 8, 10, 12, 14, 16, 20, 24)] * 2,
                "dc": 100,
                "crit_range": 18,
                "botch_range": 4,
            },
        ),
        ("refused", {"check": "1d20", "action_dice": ["d8"] * 21}),
    ],
    "roll-and-keep": [
        ("small", {"roll": 1, "keep": 1, "difficulty": 5}),
        ("typical", {"roll": 6, "keep": 3, "difficulty": 7}),
        ("typical", {"roll": 10, "keep": 5, "difficulty": 8}),
        ("typical", {"roll": 10, "keep": 5, "difficulty": 7, "opponent": {"roll": 8, "keep": 4}}),
        ("large", {"roll": 100, "keep": 50, "difficulty": 7}),
        ("large", {"roll": 1000, "keep": 500, "difficulty": 7}),
        (
            "large",
            {"roll": 500, "keep": 250, "difficulty": 7, "opponent": {"roll": 500, "keep": 250}},
        ),
    ],
    "d6-chance": [
        ("small", {"dice": 1, "bonus": 0}),
        ("typical", {"dice": 4, "bonus": 2, "difficulty": 15}),
        ("typical", {"dice": 10, "bonus": 5, "difficulty": 40}),
        ("large", {"dice": 50, "bonus": 50, "difficulty": 200}),
        ("large", {"dice": 200, "bonus": 200, "difficulty": 1000}),
        ("refused", {"dice": 201, "bonus": 201, "difficulty": 1000}),
    ],
    "discordian": [
        ("small", {"pool": ["d6"], "tn": 4, "challenge": 0, "discord": None}),
        ("typical", {"pool": ["d6", "d6", "d8"], "tn": 5, "challenge": 2, "discord": 7}),
        (
            "typical",
            {"pool": ["d6", "d8", "d10", "d12", "d12"], "tn": 4, "challenge": 3, "discord": 5},
        ),
        (
            "typical",
            {
                "pool": ["d6", "d6", "d8"],
                "tn": 5,
                "challenge": 2,
                "discord": 7,
                "opponent": {"pool": ["d8", "d8", "d10"], "tn": 5, "challenge": 1},
            },
        ),
        ("large", {"pool": ["d12"] * 10, "tn": 5, "challenge": 10, "discord": 5, "protect": 3}),
        (
            "large",
            {"pool": ["d12"] * 20, "tn": 4, "challenge": 100, "discord": 5, "protect": 6},
        ),
        (
            "large",
            {
                "pool": ["d12"] * 10,
                "tn": 4,
                "challenge": 50,
                "discord": 5,
                "protect": 6,
                "opponent": {"pool": ["d12"] * 10, "tn": 4, "challenge": 50, "protect": 6},
            },
        ),
        ("refused", {"pool": ["d6"] * 21, "tn": 5, "challenge": 2, "discord": 7}),
    ],
    "action-dice": [
        ("small", {"action_dice": 0, "skill_dice": 1}),
        ("small", {"action_dice": 1, "skill_dice": 0}),
        ("typical", {"action_dice": 2, "skill_dice": 3, "difficulty": 8}),
        ("typical", {"action_dice": 3, "skill_dice": 5, "max_dice": 4, "difficulty": 20}),
        ("typical", {"action_dice": 5, "skill_dice": 5, "sequence": False, "difficulty": 20}),
        ("large", {"action_dice": 5, "skill_dice": 10, "difficulty": 40}),
        ("large", {"action_dice": 10, "skill_dice": 20, "max_dice": 15, "difficulty": 60}),
        ("large", {"action_dice": 50, "skill_dice": 350, "difficulty": 1500}),
        ("refused", {"action_dice": 51, "skill_dice": 10, "difficulty": 100}),
    ],
}


# -- settings --------------------------------------------------------------------------------
class Settings:
    def __init__(self, quick: bool) -> None:
        self.quick = quick
        self.seconds = 0.2 if quick else 1.0  # per timed loop
        self.warmup = 0.05 if quick else 0.2  # untimed, before each timed loop
        self.slices = 4 if quick else 10  # turns per timed loop, ours and d20 alternating
        self.reps = 2 if quick else 7
        self.odds_reps = 3 if quick else 7
        self.cold_runs = 1 if quick else 3  # fresh interpreters per request

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


# -- the machine -----------------------------------------------------------------------------
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                kib = int(line.split()[1])
                return f"{kib / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def _git(*args: str) -> str:
    try:
        out = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def engines_digest() -> str:
    """sha256 over the engines' source, so a result names the exact code it measured."""
    h = hashlib.sha256()
    for path in sorted((ROOT / "rules" / "engines").rglob("*.py")):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def machine() -> dict[str, Any]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    dirty = _git("status", "--porcelain", "--", "rules/engines")
    return {
        "cpu": _cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": usable,
        "memory": _mem_total(),
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "engines_uncommitted_changes": bool(dirty),
        "engines_digest": engines_digest(),
        "load_average_start": _load(),
    }


# -- d20 in its own virtualenv ---------------------------------------------------------------
def _venv_python() -> Path:
    return D20_VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_d20() -> Path:
    """Make ``bench/.venv-d20`` with d20 from PyPI unless it is already there."""
    py = _venv_python()
    probe = f"import d20, importlib.metadata as m; assert m.version('d20') == '{D20_VERSION}'"
    if py.exists() and subprocess.run([py, "-c", probe], capture_output=True).returncode == 0:
        return py
    print(f"making {D20_VENV.relative_to(ROOT)} with d20=={D20_VERSION} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(D20_VENV)], check=True)
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, f"d20=={D20_VERSION}"], check=True)
    subprocess.run([py, "-c", probe], check=True)
    return py


class D20:
    """The d20 worker process (``python -m bench.d20_worker``), one JSON line per request."""

    def __init__(self, python: Path) -> None:
        self.proc = subprocess.Popen(
            [str(python), "-m", "bench.d20_worker"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def ask(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the d20 worker stopped")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"d20 worker: {answer['error']}")
        return answer

    def close(self) -> None:
        try:
            assert self.proc.stdin
            self.proc.stdin.write('{"cmd": "quit"}\n')
            self.proc.stdin.flush()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


# -- our side --------------------------------------------------------------------------------
class Seq:
    """Every roll of the run gets its own seq, as in a live session."""

    def __init__(self) -> None:
        self.next = 1


def ours_caller(text: str, mode: str) -> Callable[[int], float]:
    seed = SERVER_SEED
    if mode == "value":
        return lambda i: evaluate(parse(text), FairStream(seed, "", i)).total
    if mode == "text":

        def with_text(i: int) -> int:
            ev = evaluate(parse(text), FairStream(seed, "", i))
            ev.text  # noqa: B018 (builds the text)
            return ev.total

        return with_text
    if mode == "system":
        generic = get_system("generic")
        request = {"notation": text}
        return lambda i: generic.roll(request, FairStream(seed, "", i))["total"]
    raise ValueError(mode)


def ours_rate(call: Callable[[int], float], s: Settings, seq: Seq) -> dict[str, Any]:
    seq.next = warm_up(call, s.warmup, first=seq.next)
    out = rate(call, s.seconds, first=seq.next)
    seq.next = int(out["next"])
    return out


# -- rolls: ours vs d20 ----------------------------------------------------------------------
MODES = (("ours", "value"), ("d20", "value"), ("ours", "text"), ("d20", "text"), ("ours", "system"))


def bench_notation(s: Settings, d20: D20, seq: Seq) -> list[dict[str, Any]]:
    cases = []
    for label, ours, theirs, kind in NOTATION_CASES:
        parse(ours)  # refuses anything our notation does not take
        check = d20.ask(cmd="check", expr=theirs)
        if not check["ok"]:
            raise SystemExit(f"d20 does not take {theirs!r}: {check['error']}")
        cases.append(
            {
                "label": label,
                "ours": ours,
                "d20": theirs,
                "kind": kind,
                "runs": {f"{side}/{mode}": [] for side, mode in MODES},
            }
        )
    # Each repetition of a case gives every mode ``s.seconds`` of timed rolling, cut into
    # ``s.slices`` slices that take turns (ours, d20, ours, ...), so when the machine is busy
    # for a moment both sides feel it alike.
    slice_seconds = s.seconds / s.slices
    for rep in range(s.reps):
        print(f"  rolls: repetition {rep + 1}/{s.reps}", flush=True)
        for case in cases:
            callers = {mode: ours_caller(case["ours"], mode) for _, mode in MODES}
            for side, mode in MODES:
                if side == "ours":
                    seq.next = warm_up(callers[mode], s.warmup, first=seq.next)
                else:
                    d20.ask(cmd="run", expr=case["d20"], mode=mode, seconds=s.warmup, warmup=0)
            slices: dict[str, list[dict[str, Any]]] = {f"{a}/{b}": [] for a, b in MODES}
            for k in range(s.slices):
                order = MODES if (rep + k) % 2 == 0 else tuple(reversed(MODES))
                for side, mode in order:
                    if side == "ours":
                        res = rate(callers[mode], slice_seconds, first=seq.next)
                        seq.next = int(res["next"])
                    else:
                        res = d20.ask(
                            cmd="run",
                            expr=case["d20"],
                            mode=mode,
                            seconds=slice_seconds,
                            warmup=0,
                        )
                    slices[f"{side}/{mode}"].append(res)
            for key, parts in slices.items():
                case["runs"][key].append(combined(parts))
    for case in cases:
        runs = case["runs"]
        med = {key: median([r["per_second"] for r in rs]) for key, rs in runs.items()}
        case["median_per_second"] = med
        # Rolls per second of CPU time the process got: steadier on a shared machine.
        case["median_per_cpu_second"] = {
            key: median([r["per_cpu_second"] for r in rs]) for key, rs in runs.items()
        }
        cpu = case["median_per_cpu_second"]
        case["ratio_cpu"] = cpu["ours/value"] / cpu["d20/value"]
        case["cpu_share"] = median([r["cpu_share"] for rs in runs.values() for r in rs])
        case["ratio"] = med["ours/value"] / med["d20/value"]
        case["ratio_text"] = med["ours/text"] / med["d20/text"]
        # The same ratio within each repetition (both sides timed side by side), for the spread.
        case["ratio_per_repetition"] = [
            o["per_second"] / t["per_second"]
            for o, t in zip(runs["ours/value"], runs["d20/value"], strict=True)
        ]
        a, b = pooled(runs["ours/value"]), pooled(runs["d20/value"])
        case["mean_check"] = {
            "ours_mean": a["mean"],
            "d20_mean": b["mean"],
            "z": z_score(a, b),
            "same_dice": abs(z_score(a, b)) < 5,
        }
        case["meets_target"] = case["ratio"] >= NOTATION_TARGET
    return cases


# -- rolls per system ------------------------------------------------------------------------
def bench_systems(s: Settings, seq: Seq) -> list[dict[str, Any]]:
    rows = []
    for sid in system_ids():
        request = SYSTEM_ROLLS.get(sid)
        if request is None:
            print(f"  (no typical request for system {sid!r}; skipped)")
            continue
        system = get_system(sid)
        seed = SERVER_SEED

        def call(i: int, system=system, request=request, seed=seed) -> int:
            return len(system.roll(request, FairStream(seed, "", i))["dice"])

        runs = [ours_rate(call, s, seq) for _ in range(s.reps)]
        rows.append(
            {
                "system": sid,
                "request": request,
                "median_per_second": median([r["per_second"] for r in runs]),
                "dice_per_roll": pooled(runs)["mean"],
                "runs": [r["per_second"] for r in runs],
                "median_per_cpu_second": median([r["per_cpu_second"] for r in runs]),
                "cpu_share": median([r["cpu_share"] for r in runs]),
            }
        )
        print(f"  {sid}: {rows[-1]['median_per_second']:,.0f} rolls/s", flush=True)
    return rows


# -- odds --------------------------------------------------------------------------------------
def clear_engine_caches() -> None:
    """Empty every memo cache in the engines (parse cache included, which also drops the
    odds each parsed expression keeps), so the next odds call computes from scratch."""
    for name, module in list(sys.modules.items()):
        if name != "rules.engines" and not name.startswith("rules.engines."):
            continue
        for obj in list(vars(module).values()):
            if hasattr(obj, "cache_info") and hasattr(obj, "cache_clear"):
                obj.cache_clear()


def time_odds(system: Any, request: dict[str, Any]) -> tuple[float, str, float]:
    """One odds call: wall ms, "ok" or "refused", and the CPU ms this process spent on it."""
    cpu = time.process_time()
    start = time.perf_counter()
    try:
        system.odds(request)
        status = "ok"
    except OddsTooLarge:
        status = "refused"
    wall = (time.perf_counter() - start) * 1000
    return wall, status, (time.process_time() - cpu) * 1000


def cold_one(sid: str, request_json: str) -> None:
    """--cold-one: the first odds call in this fresh interpreter, in ms, on stdout."""
    system = get_system(sid)
    request = json.loads(request_json)
    ms, status, cpu_ms = time_odds(system, request)
    print(json.dumps({"ms": ms, "status": status, "cpu_ms": cpu_ms}))


def cold_runs(sid: str, request: dict[str, Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        proc = subprocess.run(
            [sys.executable, "-m", "bench.engines", "--cold-one", sid, json.dumps(request)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        out.append(json.loads(proc.stdout)["ms"])
    return out


def bench_odds(s: Settings) -> list[dict[str, Any]]:
    rows = []
    for sid, cases in ODDS_CASES.items():
        system = get_system(sid)
        for size, request in cases:
            cold = cold_runs(sid, request, s.cold_runs)
            clear_engine_caches()
            _, status, _ = time_odds(system, request)  # warms this request's caches
            repeat = [time_odds(system, request)[0] for _ in range(s.odds_reps)]
            compute, compute_cpu = [], []
            for _ in range(s.odds_reps):
                clear_engine_caches()
                wall, _, cpu = time_odds(system, request)
                compute.append(wall)
                compute_cpu.append(cpu)
            row = {
                "system": sid,
                "size": size,
                "request": request,
                "status": status,
                "cold_ms": median(cold),
                "cold_runs_ms": cold,
                "repeat_ms": median(repeat),
                "compute_ms": median(compute),
                "compute_runs_ms": compute,
                "compute_cpu_ms": median(compute_cpu),
            }
            row["over_target"] = max(row["cold_ms"], row["compute_ms"]) > ODDS_TARGET_MS
            if (status == "refused") != (size == "refused"):
                wanted = "a refusal" if size == "refused" else "odds"
                row["note"] = f"expected {wanted}, got {status}"
            rows.append(row)
            flag = "  OVER 20 ms" if row["over_target"] else ""
            print(
                f"  {sid:14} {short(request):44} cold {row['cold_ms']:8.2f}  "
                f"compute {row['compute_ms']:8.2f}  repeat {row['repeat_ms']:7.3f} ms  "
                f"{status}{flag}",
                flush=True,
            )
    return rows


# -- printing --------------------------------------------------------------------------------
def short(request: dict[str, Any], width: int = 44) -> str:
    if set(request) == {"notation"}:
        text = request["notation"]
    else:
        text = json.dumps(request, separators=(",", ":"))
        text = _squash_lists(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _squash_lists(text: str) -> str:
    """["d12","d12",...] -> [10*d12] for the tables."""

    def squash(m: re.Match[str]) -> str:
        items = json.loads(m.group(0))
        if len(items) > 3 and all(isinstance(x, str) for x in items):
            parts, last, n = [], None, 0
            for x in [*items, None]:
                if x == last:
                    n += 1
                    continue
                if last is not None:
                    parts.append(f"{n}*{last}" if n > 1 else last)
                last, n = x, 1
            return "[" + ",".join(parts) + "]"
        return m.group(0)

    return re.sub(r"\[[^\[\]]*\]", squash, text)


def print_tables(result: dict[str, Any]) -> None:
    m = result["machine"]
    print()
    print(f"{m['cpu']}, {m['usable_cpus']} usable CPUs, {m['python']}, {m['date']}")
    print(f"load average at start {m['load_average_start']}, at end {m.get('load_average_end')}")
    if "notation" in result:
        print()
        print("Rolls per second, medians (ours: evaluate(parse(text), FairStream); d20: d20.roll)")
        head = (
            f"{'expression':24} {'ours':>9} {'d20':>9} {'ratio':>6}   "
            f"{'ours+txt':>9} {'d20+txt':>9} {'ratio':>6}   {'generic':>9}  "
            "cpu  cpu-ratio  same dice"
        )
        print(head)
        for c in result["notation"]:
            med = c["median_per_second"]
            miss = "" if c["meets_target"] or c["kind"] == "extra" else " <2x"
            print(
                f"{c['label']:24} {med['ours/value']:9,.0f} {med['d20/value']:9,.0f} "
                f"{c['ratio']:5.2f}x{miss:4} {med['ours/text']:9,.0f} {med['d20/text']:9,.0f} "
                f"{c['ratio_text']:5.2f}x   {med['ours/system']:9,.0f}  "
                f"{c['cpu_share']:4.0%}  {c['ratio_cpu']:5.2f}x    "
                f"{'yes' if c['mean_check']['same_dice'] else 'NO'} (z={c['mean_check']['z']:+.1f})"
            )
    if "systems" in result:
        print()
        print("Rolls per second per system (system.roll with a FairStream), medians")
        for r in result["systems"]:
            print(
                f"{r['system']:14} {r['median_per_second']:9,.0f}/s  "
                f"{r['dice_per_roll']:5.1f} dice/roll  cpu {r['cpu_share']:4.0%}  "
                f"{short(r['request'], 64)}"
            )
    if "odds" in result:
        print()
        print(
            f"Odds, ms (target {ODDS_TARGET_MS:.0f} ms): cold = first call in a fresh process; "
            "compute = warm, memo caches cleared (and its CPU ms); repeat = warm, caches kept"
        )
        for r in result["odds"]:
            flag = "  OVER" if r["over_target"] else ""
            print(
                f"{r['system']:14} {r['size']:8} {short(r['request']):44} {r['cold_ms']:9.2f} "
                f"{r['compute_ms']:9.2f} ({r['compute_cpu_ms']:7.2f} cpu) "
                f"{r['repeat_ms']:8.3f}  {r['status']}{flag}"
                + (f"  ({r['note']})" if r.get("note") else "")
            )


# -- profiling the misses ----------------------------------------------------------------------
def _profile_text(prof: cProfile.Profile, limit: int = 14) -> str:
    stats = pstats.Stats(prof)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = []
    for (path, line, name), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = _where(path, line)
        rows.append((tt, ct, nc, f"{name} ({where})"))
    out = io.StringIO()
    out.write(f"    total {total * 1000:.1f} ms\n")
    out.write("    own time (tottime), top functions:\n")
    for tt, _ct, nc, label in sorted(rows, reverse=True)[:limit]:
        out.write(f"      {tt / total:6.1%}  {tt * 1000:9.1f} ms  {nc:>9} calls  {label}\n")
    out.write("    inclusive time (cumtime), engine functions:\n")
    engine_rows = [r for r in rows if "rules/engines" in r[3]]
    for _tt, ct, nc, label in sorted(engine_rows, key=lambda r: r[1], reverse=True)[:limit]:
        out.write(f"      {ct / total:6.1%}  {ct * 1000:9.1f} ms  {nc:>9} calls  {label}\n")
    return out.getvalue()


def _where(path: str, line: int) -> str:
    if path == "~":
        return "built-in"
    try:
        return f"{Path(path).resolve().relative_to(ROOT)}:{line}"
    except ValueError:
        return f"{Path(path).name}:{line}"


class _FirstFace:
    """A source with no cost of its own: every die shows 1."""

    def roll(self, sides: int) -> int:
        return 1


def _roll_breakdown(text: str, seconds: float = 2.0) -> str:
    """Where one roll's time goes, timed piece by piece without a profiler (CPU us per roll)."""
    seed = SERVER_SEED
    expr = parse(text)
    probe = FairStream(seed, "", 1)
    evaluate(expr, probe)
    sides = [n for n, _ in probe.draws]
    blocks = probe._block  # HMAC blocks this roll used

    def draws(i: int) -> int:
        fs = FairStream(seed, "", i)
        for n in sides:
            fs.roll(n)
        return 0

    trivial = _FirstFace()
    pieces = [
        (
            "the whole roll: evaluate(parse(text), FairStream(...)).total",
            ours_caller(text, "value"),
        ),
        ("parse(text), the cached look-up", lambda i: parse(text) and 0),
        ("FairStream(seed, '', seq), creating the stream", lambda i: FairStream(seed, "", i) and 0),
        (f"FairStream(...) and its {len(sides)} draw(s) (HMAC, rejection)", draws),
        (
            f"hmac.digest alone, {blocks} block(s): the fair scheme's floor",
            lambda i: (
                [hmac.digest(seed, f":{i}:{j}".encode(), "sha256") for j in range(blocks)] and 0
            ),
        ),
        (
            "evaluate(expr, <source with no cost>), the engine alone",
            lambda i: evaluate(expr, trivial).total,
        ),
        ("an empty call (the loop's own cost)", lambda i: 0),
    ]
    # The pieces take turns in short loops, so a busy moment on the machine hits them alike.
    turns = 9
    runs: list[list[float]] = [[] for _ in pieces]
    for _, call in pieces:
        warm_up(call, 0.1, first=1)
    for _ in range(turns):
        for k, (_, call) in enumerate(pieces):
            runs[k].append(rate(call, seconds / turns, first=1)["per_cpu_second"])
    out = io.StringIO()
    out.write(f"    piece by piece, no profiler (us of CPU per roll, median of {turns} turns):\n")
    for (label, _), r in zip(pieces, runs, strict=True):
        out.write(f"      {1e6 / median(r):7.2f} us  {label}\n")
    return out.getvalue()


def profile_misses(path: Path) -> None:
    result = json.loads(path.read_text())
    out = io.StringIO()
    if result["machine"].get("engines_digest") != engines_digest():
        out.write(
            "warning: the engine source has changed since this run; the profiles below are of "
            "the current code\n"
        )
    missed = False
    for c in result.get("notation", []):
        if c["kind"] != "required" or c["meets_target"]:
            continue
        missed = True
        call = ours_caller(c["ours"], "value")
        warm_up(call, 0.3, first=1)
        prof = cProfile.Profile()
        prof.enable()
        res = rate(call, 2.0, first=1_000_000)
        prof.disable()
        out.write(
            f"\nroll {c['ours']!r}: {c['ratio']:.2f}x d20 in the run "
            f"({res['calls']} rolls profiled)\n"
        )
        out.write(_profile_text(prof))
        out.write(_roll_breakdown(c["ours"]))
    for r in result.get("odds", []):
        if not r["over_target"]:
            continue
        missed = True
        system = get_system(r["system"])
        clear_engine_caches()
        time_odds(system, r["request"])
        clear_engine_caches()
        prof = cProfile.Profile()
        prof.enable()
        time_odds(system, r["request"])
        prof.disable()
        out.write(
            f"\nodds {r['system']} {json.dumps(r['request'])}: compute {r['compute_ms']:.1f} ms, "
            f"cold {r['cold_ms']:.1f} ms in the run (profiled call, caches cleared; cProfile "
            "itself slows it down)\n"
        )
        out.write(_profile_text(prof))
    if not missed:
        out.write("every case met its target; nothing to profile\n")
    text = out.getvalue()
    print(text)
    (path.parent / "engines-profile.txt").write_text(text)


# -- main ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short loops, few repetitions")
    ap.add_argument(
        "--only",
        choices=("rolls", "systems", "odds"),
        action="append",
        help="run only these parts (repeatable)",
    )
    ap.add_argument("--out", type=Path, help="where to write the JSON")
    ap.add_argument(
        "--profile",
        action="store_true",
        help="profile every case that missed its target in the JSON (no new run)",
    )
    ap.add_argument("--cold-one", nargs=2, metavar=("SYSTEM", "REQUEST"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.cold_one:
        cold_one(*args.cold_one)
        return
    out = args.out or RESULTS / ("engines-quick.json" if args.quick else "engines.json")
    if args.profile:
        profile_misses(out)
        return

    s = Settings(args.quick)
    parts = args.only or ["rolls", "systems", "odds"]
    result: dict[str, Any] = {"machine": machine(), "settings": s.as_dict()}
    seq = Seq()
    if "rolls" in parts:
        d20 = D20(ensure_d20())
        try:
            result["d20"] = d20.ask(cmd="info")
            print(f"rolls, ours vs d20 {result['d20']['d20']} ...", flush=True)
            result["notation"] = bench_notation(s, d20, seq)
        finally:
            d20.close()
    if "systems" in parts:
        print("rolls per system ...", flush=True)
        result["systems"] = bench_systems(s, seq)
    if "odds" in parts:
        print("odds ...", flush=True)
        result["odds"] = bench_odds(s)
    result["machine"]["load_average_end"] = _load()
    if engines_digest() != result["machine"]["engines_digest"]:
        result["machine"]["engines_changed_during_run"] = True
        print("warning: the engine source changed during the run; run it again", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print_tables(result)
    print(f"\nwrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    main()
