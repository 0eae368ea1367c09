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


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads processes from /proc")
def test_odds_workers_end_when_the_server_is_killed(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tabletop.settings",
        "TABLETOP_DATA_DIR": str(tmp_path),
        "TABLETOP_ODDS_WORKERS": "2",
    }
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    helpers: set[int] = set()
    try:
        assert server.stdout.readline().strip() == "ready"
        helpers = children(server.pid)
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
        for pid in helpers:  # what outlived it, so a failing run leaves nothing behind
            if running(pid):
                os.kill(pid, signal.SIGKILL)
