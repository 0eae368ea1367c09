"""Loaded once, in the odds workers' fork server only (never by the table itself).

It lowers the fork server's CPU priority, which every odds worker inherits, so a flood of odds
requests takes the time the table leaves rather than the time its rolls need; it has the fork
server end with the server that started it; and it imports the engines, so a worker (started
again after one ran past its time budget) is a fork of a process that has them loaded, not a
fresh interpreter importing them.
"""

import os

os.nice(10)

import rules.engines  # noqa: E402, F401
from tabletop import odds_worker  # noqa: E402

# The fork server ends with the server, even one killed without clean-up: its own way (a pipe
# from the server reaching its end) fails when a copy of that pipe lives on in another process
# the server forked.
odds_worker.end_with_parent()
