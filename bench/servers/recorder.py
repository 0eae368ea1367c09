"""Where a profiled server's timings go (``TABLETOP["TIMING"]``, set by ``bench.servers.settings``
when ``BENCH_PROFILE_OUT`` is set; ``python -m bench.scenarios.profile`` reads the files).

Records the steps the table names (``tabletop/timing.py``), every statement (``db.execute``,
through Django's public ``connection.execute_wrapper`` on each new connection) and the garbage
collector's pauses (``gc.gen0`` to ``gc.gen2``, through ``gc.callbacks``). Every
``BENCH_PROFILE_INTERVAL`` seconds (default 1) the numbers go to ``$BENCH_PROFILE_OUT``
(``{pid}`` replaced); ``kill -USR1 <pid>`` starts a new window (clears everything).
"""

from __future__ import annotations

import gc
import json
import os
import signal
import threading
import time
from collections import Counter, defaultdict
from typing import Any

from django.db.backends.signals import connection_created

_lock = threading.Lock()
_times: dict[str, list[float]] = defaultdict(list)
_counts: Counter[str] = Counter()
_window_start = time.time()
MAX_SAMPLES = 400_000


def record(step: str, ms: float) -> None:
    with _lock:
        values = _times[step]
        if len(values) < MAX_SAMPLES:
            values.append(ms)
        _counts[step] += 1


def reset(*_: Any) -> None:
    global _window_start
    with _lock:
        _times.clear()
        _counts.clear()
        _window_start = time.time()


def snapshot() -> dict[str, Any]:
    with _lock:
        items = {k: sorted(v) for k, v in _times.items()}
        counts = dict(_counts)
        window = time.time() - _window_start
    out: dict[str, Any] = {"pid": os.getpid(), "window_s": window, "counts": counts, "timers": {}}
    for name, values in sorted(items.items()):
        n = len(values)
        if not n:
            continue
        out["timers"][name] = {
            "n": n,
            "total_ms": sum(values),
            "mean": sum(values) / n,
            "p50": values[n // 2],
            "p99": values[min(n - 1, int(n * 0.99))],
            "max": values[-1],
        }
    return out


def _timed_statement(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    started = time.perf_counter()
    try:
        return execute(sql, params, many, context)
    finally:
        record("db.execute", (time.perf_counter() - started) * 1e3)


def _on_connection(sender: Any, connection: Any, **kwargs: Any) -> None:
    if _timed_statement not in connection.execute_wrappers:
        connection.execute_wrappers.append(_timed_statement)


_gc_started: dict[int, float] = {}


def _gc_pause(phase: str, info: dict[str, Any]) -> None:
    """The garbage collector's pauses (``gc.callbacks``), per generation: a full collection
    stops the event loop with it."""
    if phase == "start":
        _gc_started[threading.get_ident()] = time.perf_counter()
    elif (started := _gc_started.pop(threading.get_ident(), None)) is not None:
        record(f"gc.gen{info['generation']}", (time.perf_counter() - started) * 1e3)


def _writer(path: str, interval: float) -> None:
    while True:
        time.sleep(interval)
        try:
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(snapshot(), f)
            os.replace(tmp, path)
        except Exception:
            pass


connection_created.connect(_on_connection)
gc.callbacks.append(_gc_pause)
_out = os.environ.get("BENCH_PROFILE_OUT")
if _out:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGUSR1, reset)
    threading.Thread(
        target=_writer,
        args=(
            _out.replace("{pid}", str(os.getpid())),
            float(os.environ.get("BENCH_PROFILE_INTERVAL", "1")),
        ),
        daemon=True,
    ).start()
