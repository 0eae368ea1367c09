"""Unguessable codes for the links players hold: session invites and campaign links."""

from __future__ import annotations

import secrets

INVITE_ALPHABET = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def new_invite_code() -> str:
    # 12 characters from 57 (no look-alikes such as l/1, O/0): ~70 random bits, unguessable, easy
    # to read out at a table, and never starting with "-" (command lines take it for an option).
    return "".join(secrets.choice(INVITE_ALPHABET) for _ in range(12))
