"""The room benchmarks' tables for docs/benchmarks.md, from the latest results.

    .venv/bin/python bench/room_report.py

Reads ``bench/results/{fanout,burst,saturation,soak,page}-latest.json`` and prints Markdown:
one table per benchmark with its medians and the targets marked.
"""

from __future__ import annotations

import json
from typing import Any

from benchlib import RESULTS, fmt, table


def load(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}-latest.json"
    return json.loads(path.read_text()) if path.exists() else None


def fanout(d: dict[str, Any]) -> str:
    bare = {r["players"]: r["median"]["p99"] for r in d["results"] if r["setup"] == "bare"}
    rows = []
    for r in d["results"]:
        m = r["median"]
        ratio = m["p99"] / bare[r["players"]] if bare.get(r["players"]) and m["p99"] else None
        mark = ""
        if r["setup"] != "bare" and r["players"] >= 50 and ratio is not None:
            mark = "met" if ratio <= 3 else "**missed**"
        lost = r["lost_total"] + r["seq_gaps_total"] + r["seq_duplicates_total"]
        rows.append(
            [
                r["setup"],
                r["players"],
                m["p50"],
                m["p95"],
                m["p99"],
                m["max"],
                f"{ratio:.1f}x" if ratio else "-",
                mark,
                f"{lost}" + ("" if lost else " (met)"),
                m["server_cpu"],
                m["client_cpu"],
                m["machine_busy"],
            ]
        )
    a = d["args"]
    return (
        f"{a['rate']:g} rolls/s of 3d6 from one seat for {a['seconds']:g} s; latency in ms from "
        f"the roll sent to the event received, over every socket (the roller's own copy "
        f"included); medians of {a['runs']} runs. Lost = rolls a socket never got + seq gaps "
        f"+ repeats, summed over the runs.\n\n"
        + table(
            [
                "setup",
                "players",
                "p50",
                "p95",
                "p99",
                "max",
                "p99 / bare",
                "p99 <= 3x bare (N >= 50)",
                "lost",
                "server CPU %",
                "client CPU %",
                "machine busy % (2 cores)",
            ],
            rows,
        )
    )


def burst(d: dict[str, Any]) -> str:
    n = d["args"]["sockets"]
    rows = []
    for r in d["results"]:
        m = r["median"]
        mark = "" if r["setup"] == "bare" else ("met" if r["worst_hello"] == n else "**missed**")
        rows.append(
            [
                r["setup"],
                r["processes"],
                f"{r['worst_hello']}/{n}",
                mark,
                m["p50"],
                m["p99"],
                m["max"],
                m["listen_queue_overflows"],
                m["server_cpu"],
            ]
        )
    return (
        f"{n} sockets opened at once (seats made beforehand); connect time = TCP connect to "
        f"`hello` received, ms; medians of {d['args']['runs']} bursts, worst run for the count.\n\n"
        + table(
            [
                "setup",
                "processes",
                "got hello (worst run)",
                f"{n}/{n}",
                "p50",
                "p99",
                "max",
                "listen queue overflows",
                "server CPU %",
            ],
            rows,
        )
    )


def saturation(d: dict[str, Any]) -> str:
    rows = []
    for r in d["results"]:
        m = r["median"]
        rows.append(
            [
                r["setup"],
                r["offered"],
                m["delivered"],
                m["delivered_in_window"],
                f"{100 * m['delivered'] / r['offered']:.0f}%",
                m["p50"],
                m["p99"],
                sum(x["undelivered_at_cutoff"] for x in r["runs"]),
                r["errors_total"],
                m["server_cpu"],
            ]
        )
    knees = []
    for kind in dict.fromkeys(r["setup"] for r in d["results"]):
        mine = [r for r in d["results"] if r["setup"] == kind]
        ok = [r["offered"] for r in mine if r["median"]["delivered"] >= 0.95 * r["offered"]]
        best = max(r["median"]["delivered"] for r in mine)
        knee = max(ok) if ok else None
        knees.append(f"- {kind}: knee {fmt(knee, 0)}/s offered; at most {best:.0f}/s delivered")
    a = d["args"]
    return (
        f"One room, {a['listeners']} listeners; offered rolls/s spread over ceil(rate/10) roller "
        f"seats for {a['seconds']:g} s per step; medians of {a['runs']} runs. Delivered/s = rolls "
        f"a listener got / time until its last one (at least the window); in window = those that "
        f"arrived during the {a['seconds']:g} s. Undelivered and refused (`rate-limited`) are "
        f"summed over the runs (per listener copy).\n\n"
        + table(
            [
                "setup",
                "offered/s",
                "delivered/s",
                "in window/s",
                "delivered",
                "p50 ms",
                "p99 ms",
                "undelivered",
                "refused",
                "server CPU %",
            ],
            rows,
        )
        + "\n\n"
        + "\n".join(knees)
    )


def soak(d: dict[str, Any]) -> str:
    r = d["result"]
    rows = [
        [
            p["process"],
            p["start_mb"],
            p["after_1min_mb"],
            p["end_mb"],
            p["max_mb"],
            p["idle_after_mb"],
            p["slope_after_1min_mb_per_min"],
        ]
        for p in r["rss"]
    ]
    lat = r["roll_latency_own"]
    return (
        f"{r['players']} seats, each reconnecting every 2-6 s with `after=` (alternating between "
        f"the two processes), {d['args']['rate']:g} rolls/s, {r['minutes']:g} min: "
        f"{r['rolls_sent']} rolls, {r['connects']} connects ({r['failed_connects']} failed), "
        f"final seq {r['final_seq']}.\n\n"
        + table(
            ["process", "RSS start MB", "at 1 min", "end", "max", "idle after", "slope MB/min"],
            rows,
        )
        + "\n\n"
        + table(
            [
                "lost",
                "duplicated",
                "gaps inside one socket",
                "refused",
                "roll p50 ms",
                "roll p99 ms",
            ],
            [
                [
                    r["lost"],
                    r["duplicated"],
                    r["in_socket_gaps"],
                    r["errors"],
                    lat["p50"],
                    lat["p99"],
                ]
            ],
        )
    )


def page(d: dict[str, Any]) -> str:
    rows = []
    for r in d["rooms"]:
        for kind in ("cold", "warm"):
            t = r[kind]
            rows.append(
                [
                    r["seats"],
                    kind,
                    r["page_bytes"],
                    r["page_gzip"],
                    r["page_files"],
                    "met" if r["page_bytes"] < 100_000 else "**missed**",
                    t["ttfb"],
                    t["domContentLoaded"],
                    t["wsCreated"],
                    t.get("wsOpen"),
                    t["wsFirstMessage"],
                    t["live"],
                ]
            )
    return (
        f"Headless Chromium; medians of {d['args']['runs']} loads; times in ms from navigation "
        f"start; TTI = the connection badge switching to live (the first `hello` handled).\n\n"
        + table(
            [
                "players (+ GM)",
                "load",
                "bytes",
                "gzip",
                "files",
                "< 100 KB",
                "TTFB",
                "DOMContentLoaded",
                "socket created",
                "handshake done",
                "hello received",
                "TTI (live)",
            ],
            rows,
        )
    )


def main() -> None:
    parts = []
    for name, render in (("fanout", fanout), ("burst", burst), ("saturation", saturation),
                         ("soak", soak), ("page", page)):  # fmt: skip
        d = load(name)
        if d is None:
            continue
        code = d.get("machine", {}).get("code", {})
        parts.append(f"### {name}\n\n{render(d)}\n\n(code: {code.get('commit', '?')})\n")
    print("\n".join(parts))


if __name__ == "__main__":
    main()
