"""Unguessable codes for the links players hold: session invites and campaign links."""

from __future__ import annotations

import re
import secrets

INVITE_ALPHABET = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def new_invite_code() -> str:
    # 12 characters from 57 (no look-alikes such as l/1, O/0): ~70 random bits, unguessable, easy
    # to read out at a table, and never starting with "-" (command lines take it for an option).
    return "".join(secrets.choice(INVITE_ALPHABET) for _ in range(12))


# What every code players and spectators hold is made of: invites and campaign links (above)
# and watch links (``secrets.token_urlsafe``), at most 40 long (a watch link's column; the
# others take 32). The routes take only this (``tabletop/url_codes.py``).
CODE_PATTERN = "[A-Za-z0-9_-]{1,40}"
_WHOLE_CODE = re.compile(CODE_PATTERN)


def is_code(text: str) -> bool:
    """Whether ``text`` could be a code at all; anything else is no table's, and is not looked
    up (PostgreSQL refuses a NUL in a text parameter before the query is even sent)."""
    return _WHOLE_CODE.fullmatch(text) is not None
