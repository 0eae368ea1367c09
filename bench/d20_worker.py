"""Times avrae's ``d20`` library for ``engines.py``. Runs under the throwaway d20 virtualenv
(``-m bench.d20_worker`` from the repository root).

Reads one JSON command per line on stdin and answers one JSON line on stdout:

    {"cmd": "info"}                                   -> versions
    {"cmd": "check", "expr": "6d10e10"}               -> {"ok": true} or {"ok": false, "error": ...}
    {"cmd": "run", "expr": "4d6kh3+2", "mode": "value"|"text", "seconds": 1.0, "warmup": 0.2}
                                                      -> the engines_timing.rate() numbers

``value`` reads the total of each roll; ``text`` also builds the roll's Markdown text
(``RollResult.result``), which d20 only does when asked. Either way the expression goes
through ``d20.roll`` with its default roller and that roller's parse cache.
"""

from __future__ import annotations

import json
import platform
import sys
from importlib import metadata

import d20

from bench.engines_timing import rate, warm_up


def caller(expr: str, mode: str):
    roll = d20.roll
    if mode == "value":
        return lambda i: roll(expr).total
    if mode == "text":

        def with_text(i: int) -> int:
            r = roll(expr)
            r.result  # noqa: B018 (builds the text)
            return r.total

        return with_text
    raise ValueError(f"unknown mode {mode!r}")


def handle(cmd: dict) -> dict:
    what = cmd["cmd"]
    if what == "info":
        return {
            "python": platform.python_version(),
            "d20": metadata.version("d20"),
            "lark-parser": metadata.version("lark-parser"),
        }
    if what == "check":
        try:
            d20.roll(cmd["expr"]).total  # noqa: B018
        except Exception as exc:  # any d20 error means "not supported"
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        return {"ok": True}
    if what == "run":
        call = caller(cmd["expr"], cmd["mode"])
        warm_up(call, cmd.get("warmup", 0.2))
        return rate(call, cmd["seconds"])
    raise ValueError(f"unknown command {what!r}")


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        if cmd["cmd"] == "quit":
            break
        try:
            answer = handle(cmd)
        except Exception as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
