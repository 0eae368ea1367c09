"""A room's sockets arriving at once (a room reconnecting after a restart, opened by nginx
faster than daphne accepts them) all wait in the listen queue: none waits a second for the
kernel to retry a dropped connection, as past Twisted's default backlog of 50."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import sys
from pathlib import Path

import pytest

from bench import harness
from tabletop.management.commands import play

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the listen queue is Linux's")

README = Path(__file__).resolve().parents[2] / "README.md"
ROOM = 200  # sockets opened together


def waiting_room_connects(port: int) -> int:
    """How many of ``ROOM`` connections to ``port`` complete their handshake within half a
    second while the server accepts none (it is stopped): those its listen queue holds."""
    done = 0
    opened = []
    try:
        for _ in range(ROOM):
            s = socket.socket()
            s.settimeout(0.5)
            opened.append(s)
            try:
                s.connect(("127.0.0.1", port))
                done += 1
            except OSError:  # (the queue was full: the kernel dropped it, to retry in 1 s)
                break
    finally:
        for s in opened:
            s.close()
    return done


def stopped_while_counting(command: list[str], port: int, env: dict[str, str]) -> int:
    server = harness.ServerProcess("daphne", command, env=env, port=port, timeout=60)
    try:
        os.kill(server.pid, signal.SIGSTOP)
        try:
            return waiting_room_connects(port)
        finally:
            os.kill(server.pid, signal.SIGCONT)
    finally:
        server.stop()


def served_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tabletop.settings",
        "TABLETOP_DATA_DIR": str(tmp_path),
        "DATABASE_URL": "",
    }


def test_daphne_as_the_readme_deploys_it_holds_a_whole_room_waiting(tmp_path) -> None:
    lines = [line for line in README.read_text().splitlines() if line.startswith("daphne ")]
    assert lines, "README's deployment starts daphne"
    port = harness.free_port()
    args = shlex.split(lines[0].rstrip(" &"))
    args = [re.sub(r"port=\d+", f"port={port}", a) for a in args]
    assert all("backlog=1024" in line for line in lines), lines
    command = [sys.executable, "-m", *args]
    assert stopped_while_counting(command, port, served_env(tmp_path)) == ROOM


def test_daphne_as_the_benchmarks_start_it_holds_a_whole_room_waiting(tmp_path) -> None:
    port = harness.free_port()
    command = harness.daphne_command(port)
    assert stopped_while_counting(command, port, served_env(tmp_path)) == ROOM


def test_twisteds_default_backlog_would_not(tmp_path) -> None:
    """(What the backlog is for: daphne's own -b/-p leave Twisted's 50.)"""
    port = harness.free_port()
    command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
    command.append("tabletop.asgi:application")
    assert stopped_while_counting(command, port, served_env(tmp_path)) < ROOM


def test_play_holds_a_whole_room_waiting(tmp_path) -> None:
    port = harness.free_port()
    manage = str(Path(play.__file__).resolve().parents[3] / "manage.py")
    command = [sys.executable, manage, "play", "--port", str(port)]
    assert stopped_while_counting(command, port, served_env(tmp_path)) == ROOM
