"""Loaded once, in the odds workers' fork server only (never by the table itself).

It lowers the fork server's CPU priority, which every odds worker inherits, so a flood of odds
requests takes the time the table leaves rather than the time its rolls need; and it imports
the engines, so a worker (started again after one ran past its time budget) is a fork of a
process that has them loaded, not a fresh interpreter importing them. The fork server ends
when the server does, by Python's own means (its pipe from the server reaches its end).
"""

import os

os.nice(10)

import rules.engines  # noqa: E402, F401
from tabletop import odds_worker  # noqa: E402, F401
