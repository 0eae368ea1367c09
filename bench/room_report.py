"""The room benchmarks' tables for docs/benchmarks.md, from the latest results.

    .venv/bin/python bench/room_report.py

Prints each benchmark's own Markdown report (``bench/results/<name>-latest.md``, written by the
benchmark itself) under a heading, with the commit it measured, so the tables in the
docs are exactly what the runs printed.
"""

from __future__ import annotations

import json

from benchlib import RESULTS

BENCHES = ("fanout", "burst", "saturation", "soak", "page")


def main() -> None:
    parts = []
    for name in BENCHES:
        text, data = RESULTS / f"{name}-latest.md", RESULTS / f"{name}-latest.json"
        if not (text.exists() and data.exists()):
            continue
        code = json.loads(data.read_text()).get("machine", {}).get("code", {})
        dirty = " with uncommitted changes" if code.get("uncommitted") else ""
        body = text.read_text().strip()
        parts.append(f"### {name}\n\n{body}\n\n(code: {code.get('commit', '?')}{dirty})\n")
    print("\n".join(parts))


if __name__ == "__main__":
    main()
