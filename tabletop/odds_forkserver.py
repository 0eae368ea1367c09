"""Loaded once, in the odds workers' fork server only (never by the table itself).

It lowers the fork server's CPU priority, which every odds worker inherits, so a flood of odds
requests takes the time the table leaves rather than the time its rolls need; and it imports
the engines, so a worker (started again after one ran past its time budget) is a fork of a
process that has them loaded, not a fresh interpreter importing them. And it ends the fork
server with the server that started it, even one killed without clean-up.
"""

import os
import signal

os.nice(10)

import rules.engines  # noqa: E402, F401
from tabletop import odds_worker  # noqa: E402

# The server that started this fork server. Python's own way of ending the fork server with it
# (a pipe from the server reaching its end) fails when a copy of that pipe lives on in another
# process, and a server killed in a test left fork servers behind: the fork server also looks
# every second whether it was handed to another parent. A timer, not a thread: a fork server
# with a thread would fork its workers from a multi-threaded process.
SERVER = os.getppid()


def _end_with_the_server(signum: int, frame: object) -> None:
    if os.getppid() != SERVER:
        os._exit(0)


signal.signal(signal.SIGALRM, _end_with_the_server)
signal.setitimer(signal.ITIMER_REAL, odds_worker.WATCH_SECONDS * 2, odds_worker.WATCH_SECONDS * 2)
