"""The odds worker processes end with the server that started them, however it ends: a
process running the table's odds pool is killed with SIGKILL (no clean-up of any kind runs),
and its fork server and workers are gone soon after."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SERVER = textwrap.dedent(
    """
    import asyncio, os, sys, time
    import django
    django.setup()
    from tabletop.selectors.odds import odds_for

    async def main():
        await odds_for(system_id="generic", request={"notation": "3d6"})

    asyncio.run(main())
    if "--fork" in sys.argv:
        # A process forked from the server keeps a copy of every pipe the server holds,
        # among them the one Python's fork server waits to see closed.
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        print("forked", child, flush=True)
    print("ready", flush=True)
    time.sleep(120)
    """
)


def children(pid: int) -> set[int]:
    """Every live descendant of ``pid``, from /proc."""
    found: set[int] = set()
    parents = {pid}
    while parents:
        nxt: set[int] = set()
        for parent in parents:
            try:
                tasks = os.listdir(f"/proc/{parent}/task")
            except FileNotFoundError:
                continue
            for task in tasks:
                try:
                    text = Path(f"/proc/{parent}/task/{task}/children").read_text()
                except (FileNotFoundError, ProcessLookupError):
                    continue
                nxt |= {int(p) for p in text.split()}
        found |= nxt
        parents = nxt
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads processes from /proc")
@pytest.mark.parametrize("forked", [False, True], ids=["alone", "with-a-forked-child"])
def test_odds_workers_end_when_the_server_is_killed(tmp_path, forked):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tabletop.settings",
        "TABLETOP_DATA_DIR": str(tmp_path),
        "TABLETOP_ODDS_WORKERS": "2",
    }
    args = [sys.executable, "-c", SERVER, *(["--fork"] if forked else [])]
    server = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    helpers: set[int] = set()
    other: int | None = None
    tracker: set[int] = set()
    try:
        line = server.stdout.readline().split()
        if forked:
            other = int(line[1])
            line = server.stdout.readline().split()
        assert line == ["ready"], line
        # The fork server and its workers (Python's resource tracker, also a child, ends when
        # every process that may use it has: the forked child too).
        helpers = {p for p in children(server.pid) - {other} if "forkserver" in cmdline(p)}
        tracker = children(server.pid) - helpers - {other}
        # the fork server, and the worker that answered (forked from the fork server)
        assert len(helpers) >= 2, helpers
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(running(p) for p in helpers):
            time.sleep(0.1)
        assert not [p for p in helpers if running(p)], "odds processes outlived the server"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
        for pid in [*helpers, *tracker, *([other] if other else [])]:  # leave nothing behind
            if running(pid):
                os.kill(pid, signal.SIGKILL)
