"""A hostile seat: what one player doing everything allowed, at once, costs a bystander.

One daphne (the default setup: SQLite, in-memory layer). A bystander room of ``--players``
seats rolls 3d6 every ``--every`` seconds; its latency (send to arrival at every socket of the
room) is measured first alone ("calm"), then while, in another room, one seat rolls heavy
(``--heavy``, ~200 KB an event) as fast as its message rate lets it, ``--odds`` clients flood
the odds endpoint with heavy requests (each one new, so nothing is cached), and ``--slow``
sockets in the hostile room never read a byte. The server's RSS is read before, at the end of
the hostile phase and ``--settle`` seconds after it.

Configurations: ``protected`` (the table as it ships: work budgets, send-buffer bound, odds
under a time budget and a cap), ``unprotected`` (the same code with every budget set out of
reach) and ``send-bound-only`` (only the bound on a socket's unread bytes), so the table shows
what the budgets buy. The never-reading sockets alone (the memory figure):

    .venv/bin/python -m bench.scenarios.hostile --configs send-bound-only,unprotected \
        --runs 1 --seconds 30 --odds 0 --heavy 1000d6 --rate 20

    .venv/bin/python -m bench.scenarios.hostile                  # about 3 minutes
    .venv/bin/python -m bench.scenarios.hostile --runs 1 --seconds 10

``--case`` picks what the hostile room does instead of the hostile seat (``seat``, the default):

- ``replay``: the hostile room's session holds ``--events`` events of ``--event-bytes`` each
  (written in bulk); ``--spectators`` watch sockets open on it with ``after=0`` and read the
  whole replay (one that is told ``busy`` tries again a second later, as the page does), over
  and over until the phase ends.
- ``export``: the same session; rounds of ``--exports`` concurrent downloads of its spectator
  ``export.json`` until the phase ends (the server's peak RSS during the phase shows what they
  hold in memory).
- ``sheet``: a seat of a Discordian room whose character's sheet holds ``--tropes`` tropes
  (stored as a sheet made before sheets had limits would be) loads its room page and posts a
  sheet of that many tropes, in turn, until the phase ends.

    .venv/bin/python -m bench.scenarios.hostile --case replay --configs protected --runs 1
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import socket
import time
import urllib.parse
from collections import Counter
from typing import Any

import httpx
import websockets

from bench.harness import HOST, Setup
from bench.measure import (
    Sock,
    close_all,
    machine,
    median_of,
    open_all,
    rss_kb,
    save,
    save_text,
    say,
    stop_on_sigterm,
    summarize,
    table,
)

OUT_OF_REACH = str(10**12)
CONFIGS = {
    "protected": {},
    "unprotected": {
        "TABLETOP_SEAT_WORK_BURST": OUT_OF_REACH,
        "TABLETOP_SEAT_WORK_PER_SECOND": OUT_OF_REACH,
        "TABLETOP_ROOM_WORK_BURST": OUT_OF_REACH,
        "TABLETOP_ROOM_WORK_PER_SECOND": OUT_OF_REACH,
        "TABLETOP_SEND_BUFFER_BYTES": OUT_OF_REACH,
        "TABLETOP_ODDS_PER_SECOND": OUT_OF_REACH,
        "TABLETOP_ODDS_BURST": OUT_OF_REACH,
        "TABLETOP_ODDS_WAITING": "1000",
        "TABLETOP_ODDS_SECONDS": "60",
        "TABLETOP_REPLAYS_IN_FLIGHT": "1000",
        "TABLETOP_WATCHERS_PER_LINK": "1000",
        "TABLETOP_EXPORTS_IN_FLIGHT": "1000",
        "TABLETOP_EXPORTS_PER_MINUTE": OUT_OF_REACH,
        "TABLETOP_LINK_EXPORTS_PER_MINUTE": OUT_OF_REACH,
    },
}
# Every budget out of reach but the send buffer's: what the bound on unread bytes alone does.
CONFIGS["send-bound-only"] = {
    k: v for k, v in CONFIGS["unprotected"].items() if k != "TABLETOP_SEND_BUFFER_BYTES"
}
STATS = ("p50", "p99", "max")


async def never_reading(port: int, code: str, token: str) -> socket.socket:
    """A socket that completes the websocket handshake and then reads nothing more."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (HOST, port))
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET /ws/play/{code}/?token={token} HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    await loop.sock_sendall(sock, request.encode())
    await asyncio.wait_for(loop.sock_recv(sock, 64), 10)
    return sock


async def bystanders(socks: list[Sock], tag: str, every: float, end: float) -> int:
    rid = 0
    while time.monotonic() < end:
        await socks[rid % len(socks)].roll(tag, rid)
        rid += 1
        await asyncio.sleep(every)
    return rid


async def heavy_roller(sock: Sock, notation: str, rate: float, end: float) -> int:
    sent = 0
    while time.monotonic() < end:
        await sock.send({"type": "roll", "ref": f"heavy-{sent}", "request": {"notation": notation}})
        sent += 1
        await asyncio.sleep(1 / rate)
    return sent


async def odds_flood(port: int, code: str, token: str, end: float, start: int) -> Counter:
    codes: Counter = Counter()
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", timeout=20) as client:
        n = start
        while time.monotonic() < end:
            n += 1  # a new request each time: no answer comes from the cache
            request = json.dumps({"notation": f"1000d1000!>999r61kh1+{n}"})
            query = urllib.parse.urlencode({"token": token, "request": request})
            try:
                response = await client.get(f"/play/{code}/odds?{query}")
                codes[str(response.status_code)] += 1
            except httpx.HTTPError as exc:
                codes[type(exc).__name__] += 1
    return codes


async def spectator(port: int, link: str, last_seq: int, end: float) -> Counter:
    """Replays the whole session with after=0, again and again until ``end``; a refusal
    (``busy``, a close) waits a second and tries again, as the watch page does."""
    tally: Counter = Counter()
    url = f"ws://{HOST}:{port}/ws/watch/{link}/?after=0"
    while time.monotonic() < end:
        started = time.monotonic()
        try:
            async with websockets.connect(url, max_size=None, open_timeout=30) as ws:
                seen = 0
                while seen < last_seq and time.monotonic() < end + 30:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 30))
                    if message.get("type") == "event":
                        seen += 1
                    elif message.get("type") == "error":
                        tally[f"error {message.get('code')}"] += 1
                if seen >= last_seq:
                    tally["replays done"] += 1
                    tally["replay ms total"] += round((time.monotonic() - started) * 1000)
        except websockets.ConnectionClosed as closed:
            tally[f"closed {closed.rcvd.code if closed.rcvd else 'without a frame'}"] += 1
            await asyncio.sleep(1)
        except (OSError, TimeoutError) as exc:
            tally[type(exc).__name__] += 1
            await asyncio.sleep(1)
    return tally


async def exporter(port: int, link: str, count: int, end: float) -> Counter:
    """Rounds of ``count`` concurrent downloads of the spectator's export.json until ``end``."""
    tally: Counter = Counter()
    url = f"http://{HOST}:{port}/watch/{link}/export.json"
    async with httpx.AsyncClient(timeout=120) as client:

        async def one() -> None:
            try:
                async with client.stream("GET", url) as answer:
                    size = 0
                    async for chunk in answer.aiter_bytes():
                        size += len(chunk)
                    tally[str(answer.status_code)] += 1
                    if answer.status_code == 200:
                        tally["MB sent"] += round(size / 1e6)
            except httpx.HTTPError as exc:
                tally[type(exc).__name__] += 1

        while time.monotonic() < end:
            await asyncio.gather(*(one() for _ in range(count)))
            await asyncio.sleep(0.5)
    return tally


async def sheet_loader(
    port: int, code: str, token: str, character: int, tropes: int, end: float
) -> Counter:
    """The room page of a seat whose character has a huge sheet, and posts of huge sheets."""
    tally: Counter = Counter()
    pages: list[float] = []
    sheet = {"sheet": {"tropes": {f"Trope {i}": 6 for i in range(tropes)}}}
    body = json.dumps(sheet)
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", timeout=300) as client:
        await client.get(f"/play/{code}/?token={token}")
        while time.monotonic() < end:
            started = time.monotonic()
            page = await client.get(f"/play/{code}/")
            pages.append((time.monotonic() - started) * 1000)
            tally[f"page {page.status_code}"] += 1
            posted = await client.post(
                f"/play/{code}/sheet/{character}",
                content=body,
                headers={
                    "Content-Type": "application/json",
                    "X-CSRFToken": client.cookies.get("csrftoken") or "",
                    "Referer": f"http://{HOST}:{port}/play/{code}/",
                },
            )
            tally[f"sheet {posted.status_code}"] += 1
    tally["page ms max"] = round(max(pages)) if pages else 0
    tally["page ms p50"] = round(sorted(pages)[len(pages) // 2]) if pages else 0
    return tally


async def peak_rss(pid: int, end: float) -> int:
    """The server's highest RSS (KiB) seen until ``end``, read every 0.1 s."""
    peak = 0
    while time.monotonic() < end:
        peak = max(peak, rss_kb(pid) or 0)
        await asyncio.sleep(0.1)
    return peak


def case_jobs(rooms: dict[str, Any], args: argparse.Namespace, port: int, end: float) -> list:
    """The hostile room's work for the cases other than the hostile seat."""
    case = rooms["case"]
    if args.case == "replay":
        return [
            spectator(port, case["link"], case["last_seq"], end) for _ in range(args.spectators)
        ]
    if args.case == "export":
        return [exporter(port, case["link"], args.exports, end)]
    bad_code, bad_tokens = rooms["hostile"]
    return [sheet_loader(port, bad_code, bad_tokens[0], case["character"], args.tropes, end)]


async def phase(
    setup: Setup,
    rooms: dict[str, Any],
    args: argparse.Namespace,
    tag: str,
    hostile: bool,
) -> dict[str, Any]:
    port = setup.ports[0]
    calm_code, calm_tokens = rooms["calm"]
    bad_code, bad_tokens = rooms["hostile"]
    socks = [Sock(setup.url(calm_code, t), f"calm{i}") for i, t in enumerate(calm_tokens)]
    await open_all(socks)
    extra: dict[str, Any] = {}
    slow: list[socket.socket] = []
    attacker: Sock | None = None
    pid = setup.pids[0]
    rss_before = rss_kb(pid)
    try:
        end = time.monotonic() + args.seconds
        jobs = [bystanders(socks, tag, args.every, end), peak_rss(pid, end)]
        if hostile and args.case != "seat":
            jobs += case_jobs(rooms, args, port, end)
        elif hostile:
            slow = [await never_reading(port, bad_code, t) for t in bad_tokens[1 : 1 + args.slow]]
            attacker = Sock(setup.url(bad_code, bad_tokens[0]), "attacker")
            await attacker.open()
            jobs.append(heavy_roller(attacker, args.heavy, args.rate, end))
            jobs += [
                odds_flood(port, bad_code, bad_tokens[0], end, 10_000 * i) for i in range(args.odds)
            ]
        done = await asyncio.gather(*jobs)
        await asyncio.sleep(args.drain)
        rss_end = rss_kb(pid)
        if hostile and args.case != "seat":
            outcome: Counter = Counter()
            for c in done[2:]:
                outcome.update(c)
            extra = {"outcome": dict(outcome)}
        elif hostile:
            odds_codes: Counter = Counter()
            for c in done[3:]:
                odds_codes.update(c)
            assert attacker is not None
            extra = {
                "heavy_sent": done[2],
                "heavy_refused": dict(Counter(str(e.get("code")) for e in attacker.errors)),
                "odds_answers": dict(odds_codes),
            }
    finally:
        for s in slow:
            with contextlib.suppress(OSError):
                s.close()
        if attacker is not None:
            await attacker.close()
        await close_all(socks)
    await asyncio.sleep(args.settle)
    latencies = [ms for s in socks for ms in s.rolls.get(tag, {}).values()]
    expected = done[0] * len(socks)
    stats = summarize(latencies)
    return {
        **{k: stats[k] for k in STATS},
        "rolls": done[0],
        "lost": expected - len(latencies),
        "rss_mb_before": round((rss_before or 0) / 1024, 1),
        "rss_mb_end": round((rss_end or 0) / 1024, 1),
        "rss_mb_after": round((rss_kb(pid) or 0) / 1024, 1),
        "rss_mb_peak": round(done[1] / 1024, 1),
        # The machine's load (1 min): other work on the same cores shows in every latency.
        "loadavg": round(os.getloadavg()[0], 1),
        **extra,
    }


async def run_config(name: str, args: argparse.Namespace) -> dict[str, Any]:
    with Setup("default", "hostile", env=CONFIGS[name]) as setup:
        calm, bad = setup.new_rooms(2)
        calm_tokens = await setup.join(calm, args.players, prefix="calm")
        rooms: dict[str, Any] = {"calm": (calm, calm_tokens)}
        if args.case in ("replay", "export"):
            link = setup.server_side(
                "longsession", bad, "--events", str(args.events), "--bytes", str(args.event_bytes)
            ).split()[-1]
            rooms["case"] = {"link": link, "last_seq": args.events + 1}  # (and the start)
            bad_tokens: list[str] = []
        elif args.case == "sheet":
            bad = setup.server_side("mkroom", "--system", "discordian").split()[0]
            character = int(
                setup.server_side("longsession", bad, "--tropes", str(args.tropes)).split()[-1]
            )
            rooms["case"] = {"character": character}
            async with httpx.AsyncClient(base_url=f"http://{HOST}:{setup.ports[0]}") as client:
                joined = await client.post(
                    f"/play/{bad}/join", json={"name": "Many", "character": character}
                )
                joined.raise_for_status()
                bad_tokens = [joined.json()["token"]]
        else:
            bad_tokens = await setup.join(bad, 1 + args.slow, prefix="bad")
        rooms["hostile"] = (bad, bad_tokens)
        runs = []
        for run in range(args.runs):
            quiet = await phase(setup, rooms, args, f"c{run}", hostile=False)
            loud = await phase(setup, rooms, args, f"h{run}", hostile=True)
            say(
                f"hostile {args.case} {name} run {run + 1}: bystander p99 calm {quiet['p99']} ms, "
                f"hostile {loud['p99']} ms; lost {loud['lost']}; rss "
                f"{loud['rss_mb_before']} -> peak {loud['rss_mb_peak']} -> {loud['rss_mb_end']} "
                f"-> {loud['rss_mb_after']} MB; heavy refused {loud.get('heavy_refused')}; "
                f"odds {loud.get('odds_answers')}; outcome {loud.get('outcome')}"
            )
            runs.append({"calm": quiet, "hostile": loud})
    return {
        "config": name,
        "runs": runs,
        "calm": median_of([r["calm"] for r in runs], STATS),
        "hostile": median_of(
            [r["hostile"] for r in runs],
            (*STATS, "rss_mb_before", "rss_mb_peak", "rss_mb_end", "rss_mb_after", "loadavg"),
        ),
        "lost": sum(r["hostile"]["lost"] + r["calm"]["lost"] for r in runs),
    }


CASE_HEADS = {
    "replay": "{spectators} spectators replaying a session of {events:,} events of about "
    "{event_bytes:,} bytes (after=0, again and again)",
    "export": "rounds of {exports} concurrent spectator downloads of export.json of a session "
    "of {events:,} events of about {event_bytes:,} bytes",
    "sheet": "one seat whose character's sheet holds {tropes:,} tropes loading its room page "
    "and posting a sheet of {tropes:,} tropes, in turn",
}


def case_report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    rows = []
    for r in results:
        c, h = r["calm"], r["hostile"]
        last = r["runs"][-1]["hostile"]
        rows.append(
            [
                r["config"],
                c["p50"],
                c["p99"],
                h["p50"],
                h["p99"],
                r["lost"],
                f"{h['rss_mb_before']:.0f} / {h['rss_mb_peak']:.0f} / {h['rss_mb_after']:.0f}",
                f"{h['rss_mb_peak'] - h['rss_mb_before']:+.0f}",
                ", ".join(f"{k}: {v}" for k, v in last.get("outcome", {}).items()) or "-",
                h["loadavg"],
            ]
        )
    head = (
        f"Hostile {args.case}: a bystander room of {args.players} seats rolling 3d6 every "
        f"{args.every:g} s, {args.seconds:g} s a phase; the hostile phase adds "
        + CASE_HEADS[args.case].format(**vars(args))
        + f"; medians of {args.runs} runs (latency ms from send to arrival at every bystander "
        "socket)\n\n"
    )
    return head + table(
        [
            "config",
            "calm p50",
            "calm p99",
            "hostile p50",
            "hostile p99",
            "bystander events lost",
            "server RSS MB before / peak / after",
            "added at peak (MB)",
            "what the hostile side got (last run)",
            "machine load (1 min avg, 2 cores)",
        ],
        rows,
    )


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    if args.case != "seat":
        return case_report(results, args)
    rows = []
    for r in results:
        c, h = r["calm"], r["hostile"]
        last = r["runs"][-1]["hostile"]
        ratio = f"{h['p99'] / c['p99']:.1f}x" if c["p99"] and h["p99"] else "-"
        rows.append(
            [
                r["config"],
                c["p50"],
                c["p99"],
                h["p50"],
                h["p99"],
                ratio,
                r["lost"],
                f"{h['rss_mb_before']:.0f} / {h['rss_mb_end']:.0f} / {h['rss_mb_after']:.0f}",
                ", ".join(f"{k} {v}" for k, v in last.get("heavy_refused", {}).items()) or "-",
                ", ".join(f"{k}: {v}" for k, v in last.get("odds_answers", {}).items()) or "-",
                h["loadavg"],
            ]
        )
    head = (
        f"Hostile seat: a bystander room of {args.players} seats rolling 3d6 every "
        f"{args.every:g} s, {args.seconds:g} s a phase; the hostile phase adds one seat rolling "
        f"`{args.heavy}` {args.rate:g} times a second, {args.odds} clients flooding the odds "
        f"endpoint with heavy requests and {args.slow} sockets that never read; medians of "
        f"{args.runs} runs (latency ms from send to arrival at every bystander socket)\n\n"
    )
    return head + table(
        [
            "config",
            "calm p50",
            "calm p99",
            "hostile p50",
            "hostile p99",
            "p99 hostile / calm",
            "bystander events lost",
            "server RSS MB before / end / after",
            "heavy rolls refused (last run)",
            "odds answers (last run)",
            "machine load (1 min avg, 2 cores)",
        ],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--configs", default="protected,unprotected")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--every", type=float, default=0.2)
    parser.add_argument("--heavy", default="500d6!>2")
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--odds", type=int, default=4)
    parser.add_argument("--slow", type=int, default=20)
    parser.add_argument("--drain", type=float, default=3.0)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--case", choices=("seat", "replay", "export", "sheet"), default="seat")
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--event-bytes", type=int, default=3400)
    parser.add_argument("--spectators", type=int, default=10)
    parser.add_argument("--exports", type=int, default=4)
    parser.add_argument("--tropes", type=int, default=50_000)
    args = parser.parse_args()
    stop_on_sigterm()
    results = [asyncio.run(run_config(c, args)) for c in args.configs.split(",") if c]
    text = report(results, args)
    name = "hostile" if args.case == "seat" else f"hostile-{args.case}"
    save(name, {"machine": machine(), "args": vars(args), "results": results})
    save_text(name, text)
    print(text)


if __name__ == "__main__":
    main()
