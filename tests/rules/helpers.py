"""What the game-system tests share: rolls that check every die drawn is listed, brute force
down every branch of a roll, seeded samples set against exact odds, and the junk input every
engine must refuse with a RuleError."""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import strategies as st

from rules.engines import GameSystem
from rules.engines.errors import OddsTooLarge, RuleError
from rules.engines.fair import DiceSource, FairStream, ScriptedSource

RUNS = 4000  # seeded rolls in a sample set against exact odds


# -- rolls ------------------------------------------------------------------------------------


def drawn(dice: list[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """What a verifier reads back from die records, to set beside a source's ``draws``: each
    draw in order, ``(sides, value drawn)`` (a dF shows -1, 0, +1 for 1, 2, 3 drawn)."""
    return [(d["sides"], d["value"] + 2 if d["die"] == "dF" else d["value"]) for d in dice]


def roles(result: Mapping[str, Any]) -> list[str]:
    return [d["role"] for d in result["dice"]]


def checked_roll(system: GameSystem, request: Any, source: DiceSource) -> dict[str, Any]:
    """Roll ``request`` from ``source``; the result lists every die drawn, in draw order."""
    result = system.roll(request, source)
    assert drawn(result["dice"]) == source.draws  # type: ignore[attr-defined]
    return result


def scripted_roll(system: GameSystem, request: Any, values: list[int]) -> dict[str, Any]:
    """Roll ``request`` on the scripted ``values``, every one of which must be drawn."""
    source = ScriptedSource(values)
    result = checked_roll(system, request, source)
    assert source.exhausted, "every scripted die should be drawn"
    return result


# -- brute force ------------------------------------------------------------------------------


class _Branch:
    """Replays a fixed prefix of dice, then shows 1s, noting every die asked for."""

    def __init__(self, prefix: tuple[int, ...]) -> None:
        self.prefix = prefix
        self.sides: list[int] = []
        self.values: list[int] = []

    def roll(self, sides: int) -> int:
        i = len(self.values)
        value = self.prefix[i] if i < len(self.prefix) else 1
        self.sides.append(sides)
        self.values.append(value)
        return value


def every_branch(
    system: GameSystem, request: Any, prune: float = 0.0
) -> Iterator[tuple[dict[str, Any], float]]:
    """Every way the dice can fall, run through the roller itself: ``(result, chance)`` per
    branch. A branch is not split further at a die where its chance so far is below
    ``prune`` (open-ended chains); the chance never yielded is the mass left out."""
    stack: list[tuple[int, ...]] = [()]
    while stack:
        prefix = stack.pop()
        source = _Branch(prefix)
        result = system.roll(request, source)
        p, probs = 1.0, []
        for sides in source.sides:
            p /= sides
            probs.append(p)
        yield result, p
        for j in range(len(prefix), len(source.values)):
            if probs[j] < prune:
                break
            stack.extend((*source.values[:j], v) for v in range(2, source.sides[j] + 1))


def brute_force(
    system: GameSystem, request: Any, headline: str, prune: float = 0.0
) -> tuple[dict[int, float], dict[str, float], float]:
    """The law of ``result[headline]``, the chance of each flag and the mass left out, from
    ``every_branch``."""
    law: dict[int, float] = {}
    flags: dict[str, float] = {}
    seen = 0.0
    for result, p in every_branch(system, request, prune):
        seen += p
        law[result[headline]] = law.get(result[headline], 0.0) + p
        for flag in result["flags"]:
            flags[flag] = flags.get(flag, 0.0) + p
    return law, flags, 1.0 - seen


def assert_brute_force_agrees(
    system: GameSystem, request: Any, headline: str, success_from: int, prune: float = 0.0
) -> dict[str, Any]:
    """The exact odds of ``request`` are what ``brute_force`` finds, up to the mass it left
    out: the law of ``result[headline]``, every event, and ``p_success`` (the mass at
    ``success_from`` or above). Returns the odds answer."""
    law, flags, missing = brute_force(system, request, headline, prune)
    answer = system.odds(request)
    tol = max(missing, 0.0) + 1e-11
    for value, p in law.items():
        assert answer["distribution"].get(str(value), 0.0) == pytest.approx(p, abs=tol), value
    for flag, p in answer["events"].items():
        assert p == pytest.approx(flags.get(flag, 0.0), abs=tol), flag
    p_success = sum(p for value, p in law.items() if value >= success_from)
    assert answer["p_success"] == pytest.approx(p_success, abs=tol)
    return answer


def open_ended_d6(depth: int) -> tuple[dict[int, Fraction], int]:
    """An open-ended d6's exact law up to ``depth`` tosses, and the least value it can show
    past them (every value the rest of the law can take is at least this)."""
    law = {6 * k + r: Fraction(1, 6 ** (k + 1)) for k in range(depth) for r in range(1, 6)}
    return law, 6 * depth + 1


def assert_matches_below(
    answer: Mapping[str, Any], exact: Mapping[int, Fraction], safe: int
) -> None:
    """Below ``safe`` the odds answer's distribution is ``exact``, value by value."""
    for value in set(exact) | {int(v) for v in answer["distribution"]}:
        if value < safe:
            assert answer["distribution"].get(str(value), 0) == pytest.approx(
                float(exact.get(value, 0)), abs=1e-12
            )


# -- exact odds against themselves and against a sample ----------------------------------------


def assert_distribution(answer: Mapping[str, Any], success_from: int | None) -> None:
    """The distribution sums to 1, and ``p_success`` is the mass at ``success_from`` or
    above (None when there is nothing to succeed at)."""
    distribution = answer["distribution"]
    assert math.fsum(distribution.values()) == pytest.approx(1, abs=1e-9)
    assert all(p >= 0 for p in distribution.values())
    if success_from is None:
        assert answer["p_success"] is None
        return
    tail = math.fsum(p for v, p in distribution.items() if int(v) >= success_from)
    assert answer["p_success"] == pytest.approx(tail, abs=1e-9)


def sample(
    system: GameSystem, request: Any, seed: bytes, headline: str | None = None
) -> tuple[Counter[int], Counter[str], int]:
    """RUNS seeded fair rolls of ``request``: how often each value of ``result[headline]``
    came up, how often each flag, and how many rolls succeeded."""
    values: Counter[int] = Counter()
    flags: Counter[str] = Counter()
    wins = 0
    for seq in range(1, RUNS + 1):
        result = system.roll(request, FairStream(seed, "sample", seq))
        if headline is not None:
            values[result[headline]] += 1
        flags.update(result["flags"])
        wins += result["outcome"] == "success"
    return values, flags, wins


def agrees(observed: int, p: float) -> bool:
    """``observed`` of RUNS rolls is within five standard deviations of chance ``p``."""
    sigma = math.sqrt(RUNS * p * (1 - p)) or 1.0
    return abs(observed - RUNS * p) <= 5 * sigma


# -- junk input -------------------------------------------------------------------------------


def junk(
    *, ints: int = 10**7, text: int = 12, items: int = 3, leaves: int = 8
) -> st.SearchStrategy[Any]:
    """Any JSON-like value, nested: what a client might send instead of a request."""
    return st.recursive(
        st.none() | st.booleans() | st.integers(-ints, ints) | st.text(max_size=text) | st.floats(),
        lambda inner: (
            st.lists(inner, max_size=items)
            | st.dictionaries(st.text(max_size=8), inner, max_size=items)
        ),
        max_leaves=leaves,
    )


def junk_requests(system: GameSystem, max_size: int) -> st.SearchStrategy[Any]:
    """The system's request fields holding junk, or junk alone."""
    names = st.sampled_from([field.name for field in system.request_fields])
    return st.dictionaries(names, junk(), max_size=max_size) | junk()


def assert_refused_or_usable(system: GameSystem, data: Any) -> None:
    """Input is either refused with a RuleError naming a field and a reason, or normalised to a
    request that normalises to itself, rolls, and has odds (or is past the odds caps)."""
    try:
        request = system.normalise(data)
    except RuleError as err:
        assert isinstance(err.field, str) and err.reason
        return
    assert system.normalise(request) == request
    system.roll(request, FairStream(bytes(32), "junk", 1))
    with contextlib.suppress(OddsTooLarge):
        system.odds(request)
