"""rules/stats.py: the chi-square maths against hand-computed values, and verdicts on dice with a
known bias (a loaded source) and on the table's own fair stream."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import stats as stats_module
from rules.engines import get_system
from rules.engines.fair import FairStream
from rules.stats import (
    MC_DRAWS,
    analyse,
    chi2_critical,
    chi2_sf,
    chi_square,
    faces_of,
    monte_carlo_p,
    noncentral_chi2_sf,
    rolls_needed,
)


class LoadedDice:
    """A dice source with a known bias: face ``heavy`` of every die comes up ``weight`` times as
    often as each other face, and faces listed in ``never`` never come up."""

    def __init__(self, seed: int, *, heavy: int | None = None, weight: float = 1.0, never=()):
        self.rng = random.Random(seed)
        self.heavy, self.weight, self.never = heavy, weight, set(never)

    def roll(self, sides: int) -> int:
        faces = [f for f in range(1, sides + 1) if f not in self.never]
        weights = [self.weight if f == self.heavy else 1.0 for f in faces]
        return self.rng.choices(faces, weights)[0]


def counts_of(source_for_roll, notation: str, rolls: int, die: str) -> list[int]:
    engine = get_system("generic")
    request = engine.normalise({"notation": notation})
    faces = None
    counts: dict[int, int] = {}
    for seq in range(1, rolls + 1):
        for d in engine.roll(request, source_for_roll(seq))["dice"]:
            if d["die"] == die:
                faces = faces_of(die, d["sides"])
                counts[d["value"]] = counts.get(d["value"], 0) + 1
    return [counts.get(f, 0) for f in faces]


def test_chi_square_survival_against_hand_computed_values():
    # df = 2 is the exponential distribution: P(X >= x) = exp(-x/2), exactly.
    for x in (0.1, 1.0, 5.0, 30.0):
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
    # df = 1: P(X >= x) = erfc(sqrt(x/2)).
    for x in (0.5, 3.841458820694124, 10.0):
        assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-10)
    # Table values: the 5% critical points for 5 and 19 degrees of freedom.
    assert chi2_critical(5) == pytest.approx(11.0705, abs=1e-4)
    assert chi2_critical(19) == pytest.approx(30.1435, abs=1e-4)
    assert chi_square([10, 10, 10]) == 0 and chi_square([30, 0, 0]) == 60


def test_noncentral_matches_its_closed_form_for_two_degrees_of_freedom():
    # df = 2, noncentrality 0: the central case; and the mean of a noncentral chi-square is
    # df + nc, checked by integrating its survival function.
    assert noncentral_chi2_sf(3.0, 2, 0.0) == pytest.approx(math.exp(-1.5))
    step = 0.05
    mean = sum(noncentral_chi2_sf(i * step, 4, 6.0) * step for i in range(4000))
    assert mean == pytest.approx(10.0, abs=0.05)


def test_the_rolls_needed_figure_is_computed_not_written_down():
    needed = rolls_needed(20)
    critical = chi2_critical(19)
    assert noncentral_chi2_sf(critical, 19, needed / 19) >= 0.9
    assert noncentral_chi2_sf(critical, 19, (needed - 1) / 19) < 0.9
    assert 400 < needed < 600  # "about 500 are needed to notice a d20 that never shows 1"
    assert rolls_needed(6) < rolls_needed(8) < rolls_needed(20) < rolls_needed(100)


def test_a_fair_stream_gets_no_sign_of_bias():
    seed = bytes(range(32))
    counts = counts_of(lambda seq: FairStream(seed, "fair", seq), "d20", 2000, "d20")
    stats = analyse("d20", faces_of("d20", 20), counts)
    assert stats.n == 2000 and stats.method == "chi-square" and stats.verdict == "fair"
    assert stats.sentence == f"2000 d20s: no sign of bias, p = {stats.p:.2f}"


def test_loaded_dice_are_caught():
    never_one = counts_of(lambda seq: LoadedDice(seq, never={1}), "d20", 1500, "d20")
    stats = analyse("d20", faces_of("d20", 20), never_one)
    assert stats.verdict == "biased" and stats.counts[0] == 0
    assert "1 came up 0 times, too rarely" in stats.sentence
    heavy_six = counts_of(lambda seq: LoadedDice(seq, heavy=6, weight=1.5), "3d6", 400, "d6")
    stats = analyse("d6", faces_of("d6", 6), heavy_six)
    assert (
        stats.verdict == "biased"
        and "6 came up" in stats.sentence
        and "too often" in stats.sentence
    )
    assert stats.mean > stats.expected_mean


def test_few_rolls_say_so_and_name_the_figure():
    counts = counts_of(lambda seq: FairStream(b"s" * 32, "", seq), "d20", 40, "d20")
    stats = analyse("d20", faces_of("d20", 20), counts)
    assert stats.method == "monte-carlo" and stats.verdict == "too-few"
    assert stats.sentence == (
        f"40 d20s: too few rolls to tell: about {stats.needed} are needed to notice a d20 "
        "that never shows 1"
    )
    assert analyse("dF", faces_of("dF", 3), [0, 0, 0]).sentence == "no dFs rolled yet"


def test_monte_carlo_is_reproducible_and_agrees_with_the_approximation():
    counts = [9, 14, 6, 11, 12, 8]
    assert monte_carlo_p(counts) == monte_carlo_p(list(counts))
    assert monte_carlo_p(counts, trials=4000) == pytest.approx(
        chi2_sf(chi_square(counts), 5), abs=0.03
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=40), min_size=2, max_size=12))
def test_verdicts_are_well_formed_for_any_counts(counts):
    faces = tuple(range(1, len(counts) + 1))
    stats = analyse(f"d{len(counts)}", faces, counts)
    assert stats.n == sum(counts)
    if stats.n:
        assert 0 < stats.p <= 1 and stats.sentence.startswith(f"{stats.n} d{len(counts)}")
        assert min(faces) <= stats.mean <= max(faces)
    assert stats.verdict in {"none", "too-few", "fair", "weak", "biased"}


def _noncentral_term_by_term(x: float, df: int, nc: float) -> float:
    """The Poisson mixture summed with every central term worked out in full: the oracle."""
    half = nc / 2
    total = 0.0
    for j in range(int(half + 40 * math.sqrt(half) + 60)):
        total += math.exp(-half + j * math.log(half) - math.lgamma(j + 1)) * chi2_sf(x, df + 2 * j)
    return min(1.0, total)


@pytest.mark.parametrize(
    ("x", "df", "nc"),
    [(30.1, 19, 25.7), (3.0, 2, 0.5), (1074.7, 999, 160.3), (560.0, 499, 91.0), (0.4, 5, 12.0)],
)
def test_the_noncentral_sum_works_out_one_central_term_and_steps_to_the_rest(
    monkeypatch, x, df, nc
):
    expected = _noncentral_term_by_term(x, df, nc)
    calls = []
    central = stats_module.chi2_sf
    monkeypatch.setattr(stats_module, "chi2_sf", lambda *a: calls.append(a) or central(*a))
    assert noncentral_chi2_sf(x, df, nc) == pytest.approx(expected, abs=1e-12)
    # A die of a thousand faces cost a hundred or so series of hundreds of steps each: 0.08 s
    # a size, for up to a thousand sizes, on the request that first shows each.
    assert len(calls) == 1


class CountingRandom(random.Random):
    drawn = 0

    def choices(self, population, weights=None, *, cum_weights=None, k=1):
        CountingRandom.drawn += k
        return super().choices(population, weights, cum_weights=cum_weights, k=k)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=2, max_value=1000), st.integers(min_value=1, max_value=3000))
def test_a_test_never_draws_more_than_its_budget(sides, rolls):
    counts = [rolls // sides] * sides
    for i in range(rolls % sides):
        counts[i] += 1
    CountingRandom.drawn = 0
    original = stats_module.random.Random
    stats_module.random.Random = CountingRandom
    try:
        found = analyse(f"d{sides}", tuple(range(1, sides + 1)), counts)
    finally:
        stats_module.random.Random = original
    assert CountingRandom.drawn <= MC_DRAWS
    assert found.method == ("monte-carlo" if CountingRandom.drawn else "chi-square")


def test_a_die_of_many_faces_rolled_a_few_times_is_not_simulated():
    # 4 rolls of a d700: 200 trials of 704 draws (140,800) were simulated, 0.1 s a die.
    counts = [1, 1, 1, 1] + [0] * 696
    found = analyse("d700", tuple(range(1, 701)), counts)
    assert found.method == "chi-square" and found.verdict == "too-few"
    assert analyse("d20", faces_of("d20", 20), [2] * 20).method == "monte-carlo"
