"""Opening a long session on a phone: how long until the newest roll is on screen, and where the
time goes.

A room with ``--rolls`` events (400 by default: the GM's rolls in four notations, one in five
hidden from players, one in five blind) is opened by a seated player in headless Chromium with a
phone's viewport (390x844, touch, mobile), each load in a fresh browser context (empty cache), at
the machine's own CPU speed and with the CPU slowed by Chromium's devtools
(``Emulation.setCPUThrottlingRate``, 4x by default). A page hook records, with
``performance.now()`` from navigation start: the first socket message (``hello``), the last
socket message before the newest roll is drawn (the replay received), the bytes the socket
brought, and the moment the newest event's entry is in the log. Chromium's own counters
(``Performance.getMetrics``) split the main thread's time into script, style and layout.

    .venv/bin/python -m bench.scenarios.opening
    .venv/bin/python -m bench.scenarios.opening --runs 3 --rolls 100 --rates 1
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from typing import Any

from playwright.async_api import async_playwright

from bench.harness import Setup
from bench.measure import MachineLoad, machine, save, save_text, say, stop_on_sigterm, table
from bench.scenarios.page import CHROMIUM, CHROMIUM_ARGS

PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 3,
}

HOOK = """
((newest) => {
  const b = window.__open = {socket: null, hello: null, lastMessage: null, messages: 0, bytes: 0,
                             newest: null};
  const Native = window.WebSocket;
  function Hooked(...args) {
    const ws = new Native(...args);
    if (b.socket === null) b.socket = performance.now();
    ws.addEventListener("message", (m) => {
      const now = performance.now();
      if (b.newest !== null) return;
      if (b.hello === null) b.hello = now;
      b.lastMessage = now;
      b.messages += 1;
      b.bytes += typeof m.data === "string" ? m.data.length : m.data.byteLength || 0;
    });
    return ws;
  }
  Hooked.prototype = Native.prototype;
  for (const k of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Hooked[k] = Native[k];
  window.WebSocket = Hooked;
  new MutationObserver(() => {
    if (b.newest === null && document.getElementById(`ev-${newest}`)) b.newest = performance.now();
  }).observe(document, {subtree: true, childList: true});
})(%d);
"""

METRICS = ("ScriptDuration", "LayoutDuration", "RecalcStyleDuration", "TaskDuration")


async def open_once(browser: Any, url: str, cookie: dict[str, Any], newest: int, rate: float):
    ctx = await browser.new_context(**PHONE)
    try:
        await ctx.add_cookies([cookie])
        await ctx.add_init_script(HOOK % newest)
        page = await ctx.new_page()
        cdp = await ctx.new_cdp_session(page)
        await cdp.send("Performance.enable")
        await cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
        await page.goto(url, wait_until="commit")
        await page.wait_for_function(
            "() => window.__open && window.__open.newest !== null", timeout=60_000
        )
        marks = await page.evaluate(
            """() => ({...window.__open,
                      ttfb: performance.getEntriesByType("navigation")[0].responseStart})"""
        )
        got = await cdp.send("Performance.getMetrics")
        values = {m["name"]: m["value"] for m in got["metrics"]}
        # Seconds of main-thread work since the page began (the throttled CPU's seconds).
        marks.update({name: values.get(name, 0.0) * 1000 for name in METRICS})
        return marks
    finally:
        await ctx.close()


async def measure(setup: Setup, code: str, token: str, newest: int, args: argparse.Namespace):
    base = f"http://127.0.0.1:{setup.ports[0]}"
    url = f"{base}/play/{code}/"
    cookie = {"name": f"seat_{code}", "value": token, "url": base, "httpOnly": True}
    out: dict[str, list[dict[str, Any]]] = {}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        try:
            # One throw-away load: the server's first request (templates, imports) is no
            # visitor's.
            await open_once(browser, url, cookie, newest, 1)
            for rate in args.rates:
                runs = out.setdefault(str(rate), [])
                for i in range(args.runs):
                    marks = await open_once(browser, url, cookie, newest, rate)
                    runs.append(marks)
                    say(
                        f"{rate}x run {i + 1}: newest drawn at {marks['newest']:.0f} ms "
                        f"(hello {marks['hello']:.0f}, replay in {marks['lastMessage']:.0f}, "
                        f"{marks['messages']} messages, {marks['bytes']} B)"
                    )
        finally:
            await browser.close()
    return out


def med(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--setup", default="default", choices=["default", "deployed"])
    parser.add_argument("--rolls", type=int, default=400)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--rates",
        type=lambda text: [float(x) for x in text.split(",")],
        default=[1.0, 4.0],
        help="CPU slow-downs to measure at (default 1,4)",
    )
    args = parser.parse_args()
    stop_on_sigterm()
    info = machine()
    with Setup(args.setup, "opening") as setup, MachineLoad() as load:
        (code,) = setup.new_rooms(1, rolls=args.rolls)
        (token,) = await setup.join(code, 1)
        # The player's own seat.join comes after the rolls and the session's start.
        newest = args.rolls + 2
        results = await measure(setup, code, token, newest, args)
    rows = []
    for rate, runs in results.items():
        rows.append(
            [
                f"{float(rate):g}x",
                len(runs),
                med(runs, "ttfb"),
                med(runs, "socket"),
                med(runs, "hello"),
                med(runs, "lastMessage"),
                med(runs, "newest"),
                med(runs, "newest") - med(runs, "lastMessage"),
                med(runs, "ScriptDuration"),
                med(runs, "RecalcStyleDuration"),
                med(runs, "LayoutDuration"),
                med(runs, "TaskDuration"),
                int(med(runs, "messages")),
                int(med(runs, "bytes")),
            ]
        )
    text = (
        f"Opening a room of {args.rolls} rolls ({args.rolls + 2} events) on a phone "
        f"(390x844, touch), {args.setup} setup, medians of {args.runs} cold loads, "
        f"ms from navigation start; machine busy {load.busy_pct:.0f} %, "
        f"load {load.loadavg:.1f}\n\n"
        + table(
            [
                "CPU",
                "runs",
                "first byte of the page",
                "socket opened (modules run)",
                "hello",
                "replay received",
                "newest roll drawn",
                "drawn after the replay",
                "script",
                "style",
                "layout",
                "main thread busy",
                "socket messages",
                "socket bytes",
            ],
            rows,
        )
        + "\n"
    )
    print(text)
    save(
        "opening",
        {
            "machine": info,
            "args": vars(args),
            "results": results,
            "busy_pct": load.busy_pct,
            "loadavg": load.loadavg,
        },
    )
    save_text("opening", text)


if __name__ == "__main__":
    asyncio.run(main())
