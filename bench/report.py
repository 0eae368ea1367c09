"""One report: the latest tables of every benchmark, each with the code it measured.

    .venv/bin/python -m bench.report             # room scenarios, then the engines
    .venv/bin/python -m bench.report --only tables,burst

Room scenarios print their own Markdown report (``bench/results/<name>-latest.md``, written by
the scenario itself), so the tables in the docs are exactly what the runs printed; the engines'
tables come from ``bench/results/engines.json`` (``bench.engines_report``).
"""

from __future__ import annotations

import argparse
import json

from bench import engines_report
from bench.harness import RESULTS

ROOM = ("fanout", "burst", "saturation", "tables", "soak", "page", "queries", "profile")


def room(name: str) -> str | None:
    text, data = RESULTS / f"{name}-latest.md", RESULTS / f"{name}-latest.json"
    if not (text.exists() and data.exists()):
        return None
    code = json.loads(data.read_text()).get("machine", {}).get("code", {})
    dirty = " with uncommitted changes" if code.get("uncommitted") else ""
    body = text.read_text().strip()
    return f"### {name}\n\n{body}\n\n(code: {code.get('commit', '?')}{dirty})\n"


def engines() -> str | None:
    path = RESULTS / "engines.json"
    if not path.exists():
        return None
    result = json.loads(path.read_text())
    parts = ["### engines\n", engines_report.machine(result)]
    for name, fn in (
        ("notation", engines_report.notation),
        ("systems", engines_report.systems),
        ("odds", engines_report.odds),
    ):
        if name in result:
            parts += [f"\n#### {name}\n", fn(result)]
    return "\n".join(parts) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default=",".join((*ROOM, "engines")))
    args = parser.parse_args()
    parts = []
    for name in args.only.split(","):
        part = engines() if name == "engines" else room(name)
        if part:
            parts.append(part)
    print("\n".join(parts))


if __name__ == "__main__":
    main()
