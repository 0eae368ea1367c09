"""Markdown tables from ``bench/results/engines.json`` for docs/benchmarks.md.

    .venv/bin/python -m bench.engines_report [path/to/engines.json]

Prints the tables of medians only; the surrounding text in the docs is written by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
NOTATION_TARGET = 2.0
ODDS_TARGET_MS = 20.0


def _n(x: float) -> str:
    return f"{x:,.0f}"


def _ms(x: float) -> str:
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def _short_list(items: list[Any]) -> Any:
    """Long lists of dice written short for the tables: 20 x "d24", or [d3 ... d24] x 2."""
    if len(items) <= 5 or not all(isinstance(x, str) for x in items):
        return items
    if len(set(items)) == 1:
        return f"{len(items)} x {items[0]}"
    for size in range(1, len(items) // 2 + 1):
        if len(items) % size == 0 and items == items[:size] * (len(items) // size):
            return f"[{' '.join(items[:size])}] x {len(items) // size}"
    return items


def _request(req: dict[str, Any]) -> str:
    if set(req) == {"notation"}:
        return f"`{req['notation']}`"

    def shorten(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: shorten(v) for k, v in value.items()}
        if isinstance(value, list):
            return _short_list(value)
        return value

    return f"`{json.dumps(shorten(req), separators=(', ', ': '))}`"


def machine(result: dict[str, Any]) -> str:
    m = result["machine"]
    s = result["settings"]
    lines = [
        f"- CPU: {m['cpu']}, {m['logical_cpus']} logical CPUs ({m['usable_cpus']} usable), "
        f"{m['memory']} RAM, {m['os']}",
        f"- Python: {m['python']} (d20 side: CPython {result.get('d20', {}).get('python', '?')}, "
        f"d20 {result.get('d20', {}).get('d20', '?')}, lark-parser "
        f"{result.get('d20', {}).get('lark-parser', '?')})",
        f"- Date: {m['date']}, commit {m['commit']}"
        + (" with uncommitted engine changes" if m.get("engines_uncommitted_changes") else "")
        + f" (engine source digest {m.get('engines_digest', '?')})",
        f"- Load average (1, 5, 15 min) at start {m['load_average_start']}, at end "
        f"{m.get('load_average_end')}",
        f"- Settings: {s['seconds']:g} s of timed rolling per case and side per repetition "
        f"(in {s.get('slices', 1)} alternating slices), {s['reps']} repetitions; odds "
        f"{s['odds_reps']} calls per request, cold = median of {s['cold_runs']} fresh "
        "interpreters",
    ]
    return "\n".join(lines)


def notation(result: dict[str, Any]) -> str:
    out = [
        "| Expression | Ours (rolls/s) | d20 (rolls/s) | Ours / d20 "
        "| Ours / d20, per CPU-second | With text: ours | With text: d20 | Ours / d20 "
        "| `generic` system roll | 2x target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    notes = []
    for c in result["notation"]:
        med = c["median_per_second"]
        if len(c["ours"]) > 30:
            notes.append(f"- {c['label']}: ours `{c['ours']}`, d20 `{c['d20']}`")
            expr = c["label"] + " (below)"
        else:
            expr = f"`{c['ours']}`"
            if c["d20"] != c["ours"]:
                expr += f" (d20: `{c['d20']}`)"
        if c["kind"] == "extra":
            expr += " (extra)"
        if c["kind"] == "extra":
            verdict = "(not judged)"
        else:
            verdict = "met" if c["ratio"] >= NOTATION_TARGET else "**missed**"
        out.append(
            f"| {expr} | {_n(med['ours/value'])} | {_n(med['d20/value'])} "
            f"| **{c['ratio']:.2f}x** "
            f"| {c.get('ratio_cpu', float('nan')):.2f}x "
            f"| {_n(med['ours/text'])} | {_n(med['d20/text'])} | {c['ratio_text']:.2f}x "
            f"| {_n(med['ours/system'])} | {verdict} |"
        )
    if notes:
        out.append("")
        out.extend(notes)
    return "\n".join(out)


def systems(result: dict[str, Any]) -> str:
    out = [
        "| System | Request | Rolls/s | Dice drawn per roll (mean) |",
        "|---|---|---:|---:|",
    ]
    for r in result["systems"]:
        out.append(
            f"| `{r['system']}` | {_request(r['request'])} | {_n(r['median_per_second'])} "
            f"| {r['dice_per_roll']:.1f} |"
        )
    return "\n".join(out)


def odds(result: dict[str, Any]) -> str:
    out = [
        "| System | Size | Request | Cold (ms) | Warm, computed (ms) | of which CPU (ms) "
        "| Warm, cached (ms) | 20 ms target |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for r in result["odds"]:
        worst = max(r["cold_ms"], r["compute_ms"])
        if r["status"] == "refused":
            verdict = "refused (over cap)"
            if worst > ODDS_TARGET_MS:
                verdict += ", **over 20 ms to refuse**"
        else:
            verdict = "**over**" if worst > ODDS_TARGET_MS else "met"
        out.append(
            f"| `{r['system']}` | {r['size']} | {_request(r['request'])} | {_ms(r['cold_ms'])} "
            f"| {_ms(r['compute_ms'])} | {_ms(r['compute_cpu_ms'])} | {_ms(r['repeat_ms'])} "
            f"| {verdict} |"
        )
    return "\n".join(out)


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else BENCH / "results" / "engines.json"
    result = json.loads(path.read_text())
    print("### Machine\n")
    print(machine(result))
    for name, fn in (("notation", notation), ("systems", systems), ("odds", odds)):
        if name in result:
            print(f"\n### {name}\n")
            print(fn(result))


if __name__ == "__main__":
    main()
