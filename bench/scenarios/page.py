"""The room page: how many bytes it costs, and how long until it is live, in headless Chromium.

Bytes: the room's HTML and every file the browser fetched for it (stylesheet, the room's JS
modules and their imports, API calls made on load), as served (uncompressed: the development
static server does not compress) and gzip-compressed (level 6, what a front proxy would send).
A static crawl of the HTML (``<link>``, ``<script src>``, ES ``import``) cross-checks the list.

Time to interactive: from navigation start (``performance.timeOrigin``) to the socket's ``hello``
rendered, i.e. the connection badge ``#conn`` switching to ``data-state="live"`` (room.js does that
right after handling ``hello``). A page hook (init script) records, with ``performance.now()``:
the badge going live, the WebSocket being created and its first message; the Navigation Timing
entry gives TTFB, DOMContentLoaded and load. Cold loads use a fresh browser context (empty
cache); warm loads reload in the same context.

The visitor has a seat (JSON join; the token goes into the ``seat_<code>`` cookie, as a browser
that joined would have). Two rooms: one with just the visitor, and a full table (199 players
and the GM: the seat list is in the page and in ``hello``).

    .venv/bin/python -m bench.scenarios.page
    .venv/bin/python -m bench.scenarios.page --runs 3 --big-room 0
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import re
import statistics
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlparse

import httpx
from playwright.async_api import async_playwright

from bench.harness import Setup
from bench.measure import machine, save, save_text, say, stop_on_sigterm, table

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

HOOK = """
(() => {
  window.__bench = {wsCreated: null, wsOpen: null, wsFirstMessage: null, live: null};
  const Native = window.WebSocket;
  function Hooked(...args) {
    const ws = new Native(...args);
    if (window.__bench.wsCreated === null) window.__bench.wsCreated = performance.now();
    ws.addEventListener("open", () => {
      if (window.__bench.wsOpen === null) window.__bench.wsOpen = performance.now();
    });
    ws.addEventListener("message", () => {
      if (window.__bench.wsFirstMessage === null) window.__bench.wsFirstMessage = performance.now();
    });
    return ws;
  }
  Hooked.prototype = Native.prototype;
  for (const k of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Hooked[k] = Native[k];
  window.WebSocket = Hooked;
  const seen = () => {
    const conn = document.getElementById("conn");
    if (conn && conn.dataset.state === "live" && window.__bench.live === null) {
      window.__bench.live = performance.now();
    }
  };
  new MutationObserver(seen).observe(document, {subtree: true, childList: true, attributes: true,
                                                 attributeFilter: ["data-state"]});
})();
"""

READ = """
() => {
  const nav = performance.getEntriesByType("navigation")[0];
  return {...window.__bench, ttfb: nav.responseStart,
          domContentLoaded: nav.domContentLoadedEventEnd,
          load: nav.loadEventEnd};
}
"""


class Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "link" and a.get("href") and not str(a["href"]).startswith("data:"):
            self.refs.append(str(a["href"]))
        elif tag in {"script", "img"} and a.get("src"):
            self.refs.append(str(a["src"]))


IMPORT = re.compile(
    r"""(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)"""
)
CSS_URL = re.compile(r"""url\(\s*["']?([^"')]+)["']?\s*\)""")


def crawl(base: str, path: str, cookies: dict[str, str]) -> list[dict[str, Any]]:
    """The room's HTML and, recursively, every static file it references."""
    out, queue, seen = [], [urljoin(base, path)], set()
    with httpx.Client(cookies=cookies, timeout=30) as client:
        while queue and len(seen) < 100:
            url = queue.pop(0)
            if url in seen or urlparse(url).netloc != urlparse(base).netloc:
                continue
            seen.add(url)
            r = client.get(url)
            body = r.content
            out.append(
                {
                    "url": url,
                    "status": r.status_code,
                    "bytes": len(body),
                    "gzip": len(gzip.compress(body, 6)),
                    "type": r.headers.get("content-type", ""),
                }
            )
            text = body.decode("utf-8", "replace")
            kind = r.headers.get("content-type", "")
            if "html" in kind:
                p = Refs()
                p.feed(text)
                queue += [urljoin(url, ref) for ref in p.refs]
            elif "javascript" in kind:
                queue += [urljoin(url, a or b) for a, b in IMPORT.findall(text)]
            elif "css" in kind:
                queue += [
                    urljoin(url, u) for u in CSS_URL.findall(text) if not u.startswith("data:")
                ]
    return out


async def load_once(
    browser: Any, context: Any, url: str, reload: bool
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    page = await context.new_page() if not reload else context.pages[0]
    fetched: list[dict[str, Any]] = []

    async def on_response(response: Any) -> None:
        try:
            body = await response.body()
        except Exception:
            body = b""
        fetched.append(
            {
                "url": response.url,
                "status": response.status,
                "bytes": len(body),
                "gzip": len(gzip.compress(body, 6)) if body else 0,
                "encoding": response.headers.get("content-encoding", ""),
                "type": response.request.resource_type,
            }
        )

    page.on("response", on_response)
    if reload:
        await page.reload(wait_until="load")
    else:
        await page.goto(url, wait_until="load")
    await page.wait_for_function(
        "() => window.__bench && window.__bench.live !== null", timeout=30_000
    )
    timing = await page.evaluate(READ)
    await asyncio.sleep(0.3)  # late responses
    page.remove_listener("response", on_response)
    return timing, fetched


async def measure_room(
    setup: Setup, code: str, token: str, args: argparse.Namespace
) -> dict[str, Any]:
    base = f"http://127.0.0.1:{setup.ports[0]}"
    url = f"{base}/play/{code}/"
    cookie = {
        "name": f"seat_{code}",
        "value": token,
        "url": base,
        "httpOnly": True,
        "sameSite": "Lax",
    }
    cold, warm, fetched_cold = [], [], []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        try:
            # one throw-away load: the server's first request (template compile, imports)
            # is not a visitor's
            ctx = await browser.new_context()
            await ctx.add_cookies([cookie])
            await ctx.add_init_script(HOOK)
            await load_once(browser, ctx, url, False)
            await ctx.close()
            for i in range(args.runs):
                ctx = await browser.new_context()
                await ctx.add_cookies([cookie])
                await ctx.add_init_script(HOOK)
                timing, fetched = await load_once(browser, ctx, url, False)
                cold.append(timing)
                if i == 0:
                    fetched_cold = fetched
                timing, _ = await load_once(browser, ctx, url, True)
                warm.append(timing)
                await ctx.close()
        finally:
            await browser.close()
    crawled = crawl(base, f"/play/{code}/", {f"seat_{code}": token})

    def med(rows: list[dict[str, Any]], key: str) -> float | None:
        values = [r[key] for r in rows if r.get(key) is not None]
        return statistics.median(values) if values else None

    keys = ("ttfb", "domContentLoaded", "load", "wsCreated", "wsOpen", "wsFirstMessage", "live")
    page_files = [
        f
        for f in fetched_cold
        if f["type"] in {"document", "stylesheet", "script", "image", "font"}
    ]
    api = [f for f in fetched_cold if f not in page_files]
    return {
        "cold": {k: med(cold, k) for k in keys},
        "warm": {k: med(warm, k) for k in keys},
        "cold_runs": cold,
        "warm_runs": warm,
        "fetched": fetched_cold,
        "crawled": crawled,
        "page_bytes": sum(f["bytes"] for f in page_files),
        "page_gzip": sum(f["gzip"] for f in page_files),
        "page_files": len(page_files),
        "api_bytes": sum(f["bytes"] for f in api),
        "crawl_bytes": sum(f["bytes"] for f in crawled),
        "crawl_gzip": sum(f["gzip"] for f in crawled),
        "crawl_files": len(crawled),
        "html_bytes": next((f["bytes"] for f in crawled if "html" in f["type"]), None),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--setup", default="default", choices=["default", "deployed"])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--big-room",
        type=int,
        default=199,
        help="players in the second room (default: a full table, 199 and the GM; 0: skip)",
    )
    args = parser.parse_args()
    stop_on_sigterm()
    info = machine()
    rooms = []
    with Setup(args.setup, "page") as setup:
        sizes = [1] + ([args.big_room] if args.big_room else [])
        for seats, code in zip(sizes, setup.new_rooms(len(sizes)), strict=True):
            tokens = await setup.join(code, seats)
            result = await measure_room(setup, code, tokens[0], args)
            result["seats"] = seats
            say(
                f"page ({seats} players): {result['page_bytes']} B "
                f"({result['page_gzip']} B gzip) in "
                f"{result['page_files']} files; TTI cold {result['cold']['live']:.0f} ms, "
                f"warm {result['warm']['live']:.0f} ms"
            )
            rooms.append(result)
    rows_b, rows_t = [], []
    for r in rooms:
        rows_b.append(
            [
                r["seats"],
                r["html_bytes"],
                r["page_files"],
                r["page_bytes"],
                r["page_gzip"],
                r["crawl_files"],
                r["crawl_bytes"],
                r["crawl_gzip"],
                r["api_bytes"],
                "met" if r["page_bytes"] < 100_000 else "MISSED",
            ]
        )
        for kind in ("cold", "warm"):
            t = r[kind]
            rows_t.append(
                [
                    r["seats"],
                    kind,
                    t["ttfb"],
                    t["domContentLoaded"],
                    t["wsCreated"],
                    t.get("wsOpen"),
                    t["wsFirstMessage"],
                    t["live"],
                    t["load"],
                ]
            )
    files = "\n".join(
        f"  - {f['url'].split('/', 3)[-1]}: {f['bytes']} B ({f['gzip']} B gzip)"
        for f in rooms[0]["crawled"]
    )
    text = (
        "Room page bytes (as served: uncompressed; and gzip level 6)\n\n"
        + table(
            [
                "players (+ GM)",
                "HTML B",
                "files fetched",
                "bytes fetched",
                "gzip",
                "files crawled",
                "bytes crawled",
                "gzip crawled",
                "API bytes on load",
                "target < 100 KB",
            ],
            rows_b,
        )
        + f"\n\nFiles (room with 1 player):\n{files}\n\n"
        + f"Time to interactive, headless Chromium, medians of {args.runs} loads "
        + "(ms from navigation start)\n\n"
        + table(
            [
                "players (+ GM)",
                "load",
                "TTFB",
                "DOMContentLoaded",
                "socket created",
                "socket open (handshake done)",
                "first socket message (hello)",
                "live (hello rendered) = TTI",
                "load event",
            ],
            rows_t,
        )
        + "\n"
    )
    print(text)
    save("page", {"machine": info, "args": vars(args), "rooms": rooms})
    save_text("page", text)


if __name__ == "__main__":
    asyncio.run(main())
