"""The table's ASGI application under ``tracemalloc``, for the soak's memory hunt only
(``python -m bench.scenarios.soak --trace-memory``).

``kill -USR2 <pid>`` takes a snapshot; from the second one on, the 25 allocation sites that grew
most since the first are written to ``$BENCH_TRACEMALLOC_OUT`` (``{pid}`` and ``{n}`` replaced).
"""

from __future__ import annotations

import os
import signal
import tracemalloc
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.servers.settings")
tracemalloc.start(12)

from tabletop.asgi import application  # noqa: E402

__all__ = ["application"]

_first: list[tracemalloc.Snapshot] = []
_taken = [0]
_FILTERS = [
    tracemalloc.Filter(False, tracemalloc.__file__),
    tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
    tracemalloc.Filter(False, "<frozen importlib._bootstrap_external>"),
    tracemalloc.Filter(False, "<unknown>"),
]


def _snapshot(*_: Any) -> None:
    snap = tracemalloc.take_snapshot().filter_traces(_FILTERS)
    _taken[0] += 1
    if not _first:
        _first.append(snap)
        return
    path = os.environ.get("BENCH_TRACEMALLOC_OUT", "tracemalloc-{pid}-{n}.txt")
    path = path.replace("{pid}", str(os.getpid())).replace("{n}", str(_taken[0]))
    lines = [f"pid {os.getpid()}: traced now {tracemalloc.get_traced_memory()[0] / 1e6:.1f} MB"]
    lines.append("== growth since the first snapshot, by line")
    for stat in snap.compare_to(_first[0], "lineno")[:25]:
        lines.append(str(stat))
    lines.append("== the 8 largest growths, with their tracebacks")
    for stat in snap.compare_to(_first[0], "traceback")[:8]:
        lines.append(f"-- {stat.size_diff / 1024:.1f} KiB in {stat.count_diff:+d} blocks")
        lines.extend("   " + line for line in stat.traceback.format()[-12:])
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


signal.signal(signal.SIGUSR2, _snapshot)
