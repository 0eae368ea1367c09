"""The shipped nginx configuration (deploy/nginx.conf) in front of two daphne processes: every
socket of a room goes to one process, rooms spread over both, pages go to either, and a browser's
socket (its seat cookie, its page's Origin) passes the origin check through the proxy.

A room whose sockets are spread over processes (no proxy, or a process restarted and its rooms
moved) still delivers every roll in order: tests/tabletop/test_two_processes.py and
tests/tabletop/test_watch_two_processes.py."""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict

import httpx
import pytest
import websockets

from bench.harness import Proxy, free_port, nginx_site
from tabletop.services.seats import join_session
from tabletop.services.watch import create_watch_link
from tests.servers import daphne_servers

pytestmark = [pytest.mark.nginx, pytest.mark.django_db(transaction=True)]

# Made-up codes: the proxy routes by the path alone, whatever the process then answers.
OTHER_ROOMS = [f"room{i:02d}" for i in range(16)]


async def _hello(url: str, **headers: str) -> dict:
    async with websockets.connect(url, additional_headers=headers) as ws:
        return json.loads(await asyncio.wait_for(ws.recv(), 10))


async def _knock(url: str) -> None:
    """Open a socket and let it go, whatever the process answers (an unknown room is refused)."""
    try:
        async with websockets.connect(url, open_timeout=10) as ws:
            await asyncio.wait_for(ws.recv(), 10)
    except (websockets.ConnectionClosed, websockets.InvalidStatus, TimeoutError):
        pass


async def _visit(base: str, code: str, token: str, watch: str) -> list[str]:
    ws = base.replace("http://", "ws://")
    async with httpx.AsyncClient(base_url=base) as client:
        pages = [(await client.get(f"/play/{code}/")).status_code for _ in range(2)]
        joined = await client.post(f"/play/{code}/join", json={"name": "Cass"})
        joined.raise_for_status()
        cookies = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    kinds = [
        # a player's socket (its token), a browser's (its seat cookie and its page's Origin)
        (await _hello(f"{ws}/ws/play/{code}/?token={token}"))["type"],
        (await _hello(f"{ws}/ws/play/{code}/", Cookie=cookies, Origin=base))["type"],
        (await _hello(f"{ws}/ws/watch/{watch}/"))["type"],
    ]
    for room in OTHER_ROOMS:
        for _ in range(2):
            await _knock(f"{ws}/ws/play/{room}/")
    assert pages == [200, 200]
    return kinds


def _served(proxy: Proxy, expected: int) -> list[tuple[str, str]]:
    """What the proxy logged, once every request is in (a socket is logged as it closes)."""
    deadline = time.monotonic() + 15
    while len(served := proxy.served()) < expected and time.monotonic() < deadline:
        time.sleep(0.1)
    return served


def test_the_shipped_proxy_puts_each_rooms_sockets_on_one_process(live_session, gm):
    code = live_session.invite_code
    token = join_session(session=live_session, name="Ana").token
    watch = create_watch_link(session=live_session, user=gm).code
    with daphne_servers(2, proxy_headers=True) as ports:
        proxy = Proxy(ports, port=free_port())
        try:
            kinds = asyncio.run(_visit(f"http://127.0.0.1:{proxy.port}", code, token, watch))
            served = _served(proxy, 2 + 1 + 3 + 2 * len(OTHER_ROOMS))
        finally:
            proxy.stop()
    assert kinds == ["hello", "hello", "hello"]
    by_path: dict[str, set[str]] = defaultdict(set)
    for path, upstream in served:
        by_path[path].add(upstream)
    processes = {f"127.0.0.1:{port}" for port in ports}
    # pages go to any process: two requests for one page, one to each
    assert by_path[f"/play/{code}/"] == processes
    # every socket of a room to one process, the same each time
    assert len(by_path[f"/ws/play/{code}/"]) == 1
    assert all(len(by_path[f"/ws/play/{room}/"]) == 1 for room in OTHER_ROOMS)
    assert len(by_path[f"/ws/watch/{watch}/"]) == 1
    # and the rooms spread over both processes
    assert set().union(*(by_path[f"/ws/play/{room}/"] for room in OTHER_ROOMS)) == processes


def test_the_harness_serves_the_shipped_configuration_with_only_its_addresses_changed(tmp_path):
    from bench.harness import NGINX_SITE

    shipped = NGINX_SITE.read_text().splitlines()
    served = nginx_site([9001, 9002, 9003], listen=9000, access_log=tmp_path / "a.log")
    changed = [line for line in served.splitlines() if line not in shipped]
    assert changed == [
        *[f"    server 127.0.0.1:{port};" for port in (9001, 9002, 9003)] * 2,
        "    listen 127.0.0.1:9000;",
        f"    access_log {tmp_path / 'a.log'} tabletop;",
    ]
    assert "    hash $tabletop_room consistent;" in served.splitlines()
