"""The published dice stream (docs/rules.md, "The fair-dice stream"), checked against HMAC bytes
worked out here.

The literal blocks below are HMAC-SHA256 outputs; each expected die is derived from them by hand
(byte b accepted if b < 256 - 256 % n, showing b % n + 1), so a change to the algorithm shows.
"""

from __future__ import annotations

import hashlib
import hmac

import pytest

from rules.engines.dice import draw, draw_fudge
from rules.engines.fair import (
    FairStream,
    ScriptedSource,
    SeededRolls,
    commitment,
    seed_from_number,
)

SEED_1 = seed_from_number(1)
# HMAC-SHA256(sha256("1"), ":1:0") and ":1:1" (client seed "", seq 1).
BLOCK_1_0 = bytes.fromhex("bfe9c7d0cc9b2b3dbc9dbfbd622381c017a2f78c34e56c95c31bbb981ee0ffd2")
BLOCK_1_1 = bytes.fromhex("25958b2bb5f176b8f163463ebb1cd474bc463c9aa73a82b81ddd9619be05c956")


def block(seed: bytes, client: str, seq: int, j: int) -> bytes:
    return hmac.new(seed, f"{client}:{seq}:{j}".encode(), hashlib.sha256).digest()


def test_seed_and_blocks_are_the_published_ones() -> None:
    assert hashlib.sha256(b"1").digest() == SEED_1
    assert SEED_1.hex() == "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"
    assert block(SEED_1, "", 1, 0) == BLOCK_1_0
    assert block(SEED_1, "", 1, 1) == BLOCK_1_1
    assert commitment(SEED_1) == hashlib.sha256(SEED_1).hexdigest()


def test_d6_takes_one_byte_each() -> None:
    stream = FairStream(SEED_1, "", 1)
    # bf=191, e9=233, c7=199, d0=208, cc=204, 9b=155: all below 252, so b % 6 + 1.
    assert [stream.roll(6) for _ in range(6)] == [6, 6, 2, 5, 1, 6]
    assert [191 % 6 + 1, 233 % 6 + 1, 199 % 6 + 1, 208 % 6 + 1, 204 % 6 + 1, 155 % 6 + 1] == [
        6,
        6,
        2,
        5,
        1,
        6,
    ]
    assert stream.draws == [(6, v) for v in (6, 6, 2, 5, 1, 6)]


def test_a_byte_of_252_or_more_is_skipped_for_a_d6() -> None:
    # For client seed "c" and seq 110 the first byte is 0xfe = 254 >= 252: rejected.
    first = block(SEED_1, "c", 110, 0)
    assert first[:2] == bytes([0xFE, 0x28])
    stream = FairStream(SEED_1, "c", 110)
    assert stream.roll(6) == 0x28 % 6 + 1 == 5
    # The same byte 254 is fine for a d2 (256 % 2 == 0: nothing is ever rejected).
    assert FairStream(SEED_1, "c", 110).roll(2) == 254 % 2 + 1 == 1


def test_d256_uses_every_byte_and_d257_takes_four() -> None:
    assert FairStream(SEED_1, "", 1).roll(256) == 0xBF + 1
    big = int.from_bytes(BLOCK_1_0[:4], "big")
    assert big == 0xBFE9C7D0 and big < 2**32 - 2**32 % 1000
    assert FairStream(SEED_1, "", 1).roll(1000) == big % 1000 + 1 == 297
    assert FairStream(SEED_1, "", 1).roll(257) == big % 257 + 1


def test_a_four_byte_draw_crosses_the_block_boundary() -> None:
    # Thirty d2 use bytes 0..29 of block 0; the d1000 then reads bytes 30, 31 of block 0 and
    # bytes 0, 1 of block 1.
    b0, b1 = block(SEED_1, "x", 1, 0), block(SEED_1, "x", 1, 1)
    stream = FairStream(SEED_1, "x", 1)
    assert [stream.roll(2) for _ in range(30)] == [b % 2 + 1 for b in b0[:30]]
    joined = int.from_bytes(b0[30:32] + b1[0:2], "big")
    assert joined == 0x05305F03
    assert stream.roll(1000) == joined % 1000 + 1 == 132
    # And the next byte is block 1's third.
    assert stream.roll(2) == b1[2] % 2 + 1


def test_many_bytes_cross_many_blocks() -> None:
    stream = FairStream(SEED_1, "", 1)
    expected = [b % 2 + 1 for j in range(4) for b in block(SEED_1, "", 1, j)]
    assert [stream.roll(2) for _ in range(128)] == expected


def test_fudge_die_is_a_d3_shown_as_minus_zero_plus() -> None:
    record = draw_fudge(FairStream(SEED_1, "", 1), "base")
    # 0xbf = 191 < 255, 191 % 3 + 1 = 3, shown as +1.
    assert record == {"die": "dF", "sides": 3, "value": 1, "role": "base"}


def test_records_name_the_die() -> None:
    assert draw(ScriptedSource([4]), 100, "base") == {
        "die": "d100",
        "sides": 100,
        "value": 4,
        "role": "base",
    }


def test_client_seed_and_seq_change_the_stream() -> None:
    a = [FairStream(SEED_1, "", 1).roll(1000) for _ in range(1)]
    b = [FairStream(SEED_1, "other", 1).roll(1000)]
    c = [FairStream(SEED_1, "", 2).roll(1000)]
    assert len({a[0], b[0], c[0]}) == 3


def test_seeded_rolls_count_seq_from_one() -> None:
    rolls = SeededRolls(1)
    first, second = rolls.next_stream(), rolls.next_stream()
    assert first.roll(6) == FairStream(SEED_1, "", 1).roll(6)
    assert second.roll(1000) == FairStream(SEED_1, "", 2).roll(1000)


def test_scripted_source_refuses_values_that_do_not_fit() -> None:
    with pytest.raises(AssertionError):
        ScriptedSource([7]).roll(6)
    with pytest.raises(AssertionError):
        ScriptedSource([]).roll(6)


def test_faces_are_uniform_over_many_draws() -> None:
    stream = FairStream(SEED_1, "uniform", 1)
    counts = [0] * 6
    for _ in range(6000):
        counts[stream.roll(6) - 1] += 1
    chi2 = sum((c - 1000) ** 2 / 1000 for c in counts)
    assert chi2 < 20.5  # p = 0.001 for 5 degrees of freedom
