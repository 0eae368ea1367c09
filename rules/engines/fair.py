"""Where every die comes from (docs/rules.md, "The fair-dice stream").

A roll's dice are drawn from the byte stream
``HMAC-SHA256(server_seed, f"{client_seed}:{seq}:{j}")`` for j = 0, 1, 2, ...
with byte-wise rejection sampling, so anyone holding the revealed seed can recompute them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from functools import lru_cache
from typing import Protocol

SEED_BYTES = 32


class DiceSource(Protocol):
    """Anything engines can draw a die from: ``roll(sides)`` returns 1..sides."""

    def roll(self, sides: int) -> int: ...


def new_server_seed() -> bytes:
    return secrets.token_bytes(SEED_BYTES)


def new_client_seed() -> str:
    """A client seed for a roll that came without one: 128 random bits in hex (the room page's
    own seeds look the same). Stored with the roll, it is as hidden as its dice, so the seed
    revealed at the end never lets anyone recompute a roll that was not theirs to see."""
    return secrets.token_hex(16)


def commitment(server_seed: bytes) -> str:
    """The public promise made at session start: sha256 of the secret seed, in hex."""
    return hashlib.sha256(server_seed).hexdigest()


def seed_from_number(number: int) -> bytes:
    """The server seed ``manage.py roll --seed N`` uses: sha256(str(N))."""
    return hashlib.sha256(str(number).encode()).digest()


@lru_cache(maxsize=64)
def _keyed_mac(server_seed: bytes) -> hmac.HMAC:
    """HMAC keyed once per seed; each block copies it (the same bytes as hmac.digest, without
    keying again for every block of every roll)."""
    return hmac.new(server_seed, digestmod="sha256")


class FairStream:
    """The dice of one roll (one ``seq``), drawn from the published HMAC stream.

    ``draws`` keeps every (sides, value) in draw order so callers can check that a result
    lists every die it drew.
    """

    def __init__(self, server_seed: bytes, client_seed: str, seq: int) -> None:
        self._mac = _keyed_mac(server_seed)
        self._prefix = f"{client_seed}:{seq}:"
        self._block = 0
        self._buffer = b""
        self._pos = 0
        self.draws: list[tuple[int, int]] = []

    def _refill(self, count: int) -> None:
        """Make sure at least ``count`` unread bytes are buffered."""
        while len(self._buffer) - self._pos < count:
            mac = self._mac.copy()
            mac.update(f"{self._prefix}{self._block}".encode())
            self._buffer = self._buffer[self._pos :] + mac.digest()
            self._pos = 0
            self._block += 1

    def _next_bytes(self, count: int) -> bytes:
        self._refill(count)
        chunk = self._buffer[self._pos : self._pos + count]
        self._pos += count
        return chunk

    def roll(self, sides: int) -> int:
        if sides < 1:
            raise ValueError(f"a die needs at least one side, not {sides}")
        if sides <= 256:
            # One byte a draw, read in place: this is every common die, so it is kept tight.
            limit = _BYTE_LIMITS[sides]
            while True:
                if self._pos >= len(self._buffer):
                    self._refill(1)
                b = self._buffer[self._pos]
                self._pos += 1
                if b < limit:
                    break
        else:
            limit = 2**32 - 2**32 % sides
            while True:
                b = int.from_bytes(self._next_bytes(4), "big")
                if b < limit:
                    break
        value = b % sides + 1
        self.draws.append((sides, value))
        return value


# The largest multiple of ``sides`` that fits a byte, per die size: bytes at or above it are
# rejected so every face is equally likely.
_BYTE_LIMITS = tuple(256 - 256 % sides if sides else 0 for sides in range(257))


class ScriptedSource:
    """Test double: hands out chosen values in order and checks each fits its die."""

    def __init__(self, values: Iterable[int]) -> None:
        self._values = list(values)
        self._next = 0
        self.draws: list[tuple[int, int]] = []

    def roll(self, sides: int) -> int:
        if self._next >= len(self._values):
            raise AssertionError(f"script ran out of dice (asked for a d{sides})")
        value = self._values[self._next]
        self._next += 1
        if not 1 <= value <= sides:
            raise AssertionError(f"scripted value {value} does not fit a d{sides}")
        self.draws.append((sides, value))
        return value

    @property
    def exhausted(self) -> bool:
        return self._next == len(self._values)


class SeededRolls:
    """Successive results of ``manage.py roll --seed N``: seq 1, 2, 3, ... with client seed ""."""

    def __init__(self, number: int) -> None:
        self._seed = seed_from_number(number)
        self._seq = 0

    def next_stream(self) -> FairStream:
        self._seq += 1
        return FairStream(self._seed, "", self._seq)
