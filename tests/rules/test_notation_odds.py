"""Exact odds of dice notation, checked against brute-force enumeration of the roller itself,
against icepool, against closed forms, and against a seeded sample of the fair stream."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

import icepool
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.engines.dist import BUDGET_MICROSECONDS, Budget
from rules.engines.errors import OddsTooLarge, RuleError
from rules.engines.fair import FairStream
from rules.engines.limits import MAX_CHAIN
from rules.engines.notation import distribution, evaluate, joint_with_first_die, parse


# -- brute force: run the roller itself down every branch of the dice --------------------------
class _Need(Exception):
    def __init__(self, sides: int) -> None:
        self.sides = sides


class _Prefix:
    def __init__(self, values: tuple[int, ...]) -> None:
        self.values, self.i = values, 0

    def roll(self, sides: int) -> int:
        if self.i == len(self.values):
            raise _Need(sides)
        self.i += 1
        return self.values[self.i - 1]


def enumerate_rolls(text: str, max_draws: int = 12) -> tuple[dict[int, Fraction], Fraction]:
    """Every way the roll can go (up to ``max_draws`` dice): its headline odds, and the mass
    of the branches cut off."""
    expr = parse(text)
    out: Counter[int] = Counter()
    left = Fraction(0)
    stack: list[tuple[tuple[int, ...], Fraction]] = [((), Fraction(1))]
    while stack:
        prefix, p = stack.pop()
        try:
            out[evaluate(expr, _Prefix(prefix)).value] += p  # type: ignore[arg-type]
        except _Need as need:
            if len(prefix) == max_draws:
                left += p
                continue
            stack.extend(((*prefix, v), p / need.sides) for v in range(1, need.sides + 1))
    return dict(out), left


def gap(a: dict[int, Fraction], b: dict[int, Fraction]) -> Fraction:
    return max(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b))


@pytest.mark.parametrize(
    "text",
    [
        "3d6", "4d6kh3", "4d6k3", "4d6dl1", "4d6kl2", "4d6dh1", "2d20kh1", "2d20kl1+3", "3d6>4f1",
        "3d6>5", "3d6<2", "3d4=2f4", "5d4>3f1", "2dF", "4dF+1", "4dF>1f<-1", "(1d4)*(1d6)",
        "5/2", "-7/2", "1d6/2", "-1d6/4", "7/(1d3)", "(1d6-3)/(1d2)", "1d6-1d6", "1d4*-1d4",
        "2d6ro1", "2d6ro<2", "3d6ro>5kh2", "d%", "4d4kh2>3", "3d6>4 + 2", "2d4*(1d3+1)/2",
    ],
)  # fmt: skip
def test_finite_odds_equal_brute_force_exactly(text: str) -> None:
    brute, left = enumerate_rolls(text)
    assert left == 0
    assert distribution(parse(text)) == brute


@pytest.mark.parametrize(
    ("text", "max_draws"),
    [
        ("2d6!", 9),
        ("3d4!kh2", 8),
        ("2d4!kl1", 9),
        ("2d6!!", 9),
        ("3d4!!kh2", 8),
        ("1d6r1", 12),
        ("1d4!r1", 10),
        ("2d4!<1", 9),
        ("1d4!!r<2", 10),
        ("3d4!>4>3f1", 8),
        ("2d6!!>5kh1", 7),
        ("3dF!kh2", 8),
        ("2d4r4!", 8),
        ("3d4!r1kh2>3f1", 8),
        ("3d4!dl1", 8),
        ("2d4!r1dh1", 9),
        ("3d4!dl1>3f1", 8),
        ("2dF!dh1", 9),
    ],
)
def test_exploding_and_rerolling_odds_match_brute_force_within_the_cut(
    text: str, max_draws: int
) -> None:
    brute, left = enumerate_rolls(text, max_draws)
    assert gap(distribution(parse(text)), brute) <= left + Fraction(1, 10**12)


def ice(die: Any) -> dict[int, Fraction]:
    den = die.denominator()
    return {int(o): Fraction(q, den) for o, q in die.items()}


def test_against_icepool() -> None:
    d6, d10 = icepool.d(6), icepool.d(10)
    tol = Fraction(1, 10**9)
    assert distribution(parse("10d6")) == ice(10 @ d6)
    assert distribution(parse("5d6kh3")) == ice(d6.pool(5).highest(3).sum())
    assert distribution(parse("8d10kl3")) == ice(d10.pool(8).lowest(3).sum())
    assert distribution(parse("5d10>8f1")) == ice(5 @ d10.map(lambda v: (v >= 8) - (v == 1)))
    assert gap(distribution(parse("2d6!")), ice(2 @ d6.explode(depth=20))) < tol
    assert (
        gap(distribution(parse("6d10!!k3")), ice(d10.explode(depth=14).pool(6).highest(3).sum()))
        < tol
    )
    assert (
        gap(distribution(parse("4d6!kh3")), ice(d6.explode_to_pool(4, depth=12).highest(3).sum()))
        < tol
    )
    assert (
        gap(distribution(parse("3d6!kl2")), ice(d6.explode_to_pool(3, depth=12).lowest(2).sum()))
        < tol
    )
    assert gap(distribution(parse("1d6r1")), ice(d6.reroll([1], depth=40))) < tol


def test_reroll_cap_is_in_the_odds() -> None:
    # r<19 on a d20: after MAX_CHAIN rerolls the last one stands, even if it is 19 or less.
    odds = distribution(parse("1d20r<19"))
    stuck = Fraction(19, 20) ** MAX_CHAIN / 20
    assert odds == {**{v: stuck for v in range(1, 20)}, 20: 1 - 19 * stuck}


def test_reroll_once_by_hand() -> None:
    odds = distribution(parse("1d6ro1"))
    assert odds == {1: Fraction(1, 36), **{v: Fraction(7, 36) for v in range(2, 7)}}


def test_explosion_by_hand() -> None:
    odds = distribution(parse("1d6!"))
    for v in (1, 5, 7, 11, 13):
        assert abs(odds[v] - Fraction(1, 6) ** ((v - 1) // 6 + 1)) < Fraction(1, 10**12)
    assert 6 not in odds and 12 not in odds


def test_fudge_odds() -> None:
    assert distribution(parse("dF")) == {-1: Fraction(1, 3), 0: Fraction(1, 3), 1: Fraction(1, 3)}
    assert distribution(parse("4dF"))[0] == Fraction(19, 81)


def test_products_and_quotients() -> None:
    assert distribution(parse("(1d4)*(1d6)"))[12] == Fraction(3, 24)
    assert distribution(parse("5/2")) == {2: Fraction(1)}
    assert distribution(parse("-5/2")) == {-2: Fraction(1)}
    assert distribution(parse("1d6/4")) == {0: Fraction(1, 2), 1: Fraction(1, 2)}


def test_divisor_that_can_be_zero_is_a_rule_error() -> None:
    with pytest.raises(RuleError) as info:
        distribution(parse("6/(1d2-1)"))
    assert info.value.field == "notation" and not isinstance(info.value, OddsTooLarge)


def test_exploding_pool_with_drop_against_icepool() -> None:
    d4, d6 = icepool.d(4), icepool.d(6)
    tol = Fraction(1, 10**8)
    four = ice(d6.explode_to_pool(4, depth=12).lowest(drop=1).sum())
    assert gap(distribution(parse("4d6!dl1")), four) < tol
    three = ice(d4.explode_to_pool(3, depth=16).highest(drop=1).sum())
    assert gap(distribution(parse("3d4!dh1")), three) < tol
    # The left-out tail of long explosions stays below 1e-12.
    assert 1 - sum(distribution(parse("4d6!dl1")).values()) < Fraction(1, 10**12)


@pytest.mark.parametrize(
    "text",
    ["100d100", "1000d1000", "300d10kh150", "20d100!!kh10", "500d6*500d6", "1d1000*1d1000*1d1000",
     "1d1000!>3", "50d20!kh25", "(1d1000*1d1000)+(1d1000*1d1000)"],
)  # fmt: skip
def test_oversized_odds_stop_within_the_budget_and_say_so(text: str) -> None:
    budget = Budget()
    with pytest.raises(OddsTooLarge) as info:
        distribution(parse(text), budget)
    # Refused by the budget, before the step that would have gone past it (wall-clock
    # figures are the benchmarks' business: docs/benchmarks.md).
    assert budget.spent > budget.limit
    assert info.value.field == "notation"
    assert "rolling it still works" in info.value.reason


@pytest.mark.parametrize(
    "text",
    ["3d6", "4d6kh3+2", "1d20+7", "2d20kh1+5", "10d10>8f1", "8d6!", "6d10!!k3", "100d6",
     "4d6!kh3", "(1d100)*(1d100)", "20d6kh10", "10d100", "3d6!>5r1"],
)  # fmt: skip
def test_ordinary_odds_cost_a_small_part_of_the_budget(text: str) -> None:
    expr = parse(text)
    expr._cache.clear()
    budget = Budget()
    odds = distribution(expr, budget)
    # The budget counts estimated microseconds of work: everyday notation stays far below
    # what one request may take (the slowest here, 8d6!, about 13,000 of 120,000).
    assert budget.spent < BUDGET_MICROSECONDS / 4
    assert abs(sum(odds.values()) - 1) < Fraction(1, 10**9)


def test_distribution_is_a_copy() -> None:
    odds = distribution(parse("2d6"))
    odds[7] = Fraction(0)
    assert distribution(parse("2d6"))[7] == Fraction(1, 6)


def test_errors_name_the_field_the_expression_was_parsed_for() -> None:
    with pytest.raises(OddsTooLarge) as info:
        distribution(parse("100d100", field="check"))
    assert info.value.field == "check"


# -- joint with the first die -----------------------------------------------------------------
def test_joint_with_a_plain_first_d20() -> None:
    joint = joint_with_first_die(parse("1d20+7"), 20)
    assert joint == {n: {n + 7: Fraction(1, 20)} for n in range(1, 21)}
    assert joint_with_first_die(parse("d20 + 1d4"), 20)[20] == {
        t: Fraction(1, 80) for t in (21, 22, 23, 24)
    }


def test_joint_sums_to_the_distribution() -> None:
    expr = parse("1d20 + 2d6! - 1d4 * 2")
    joint = joint_with_first_die(expr, 20)
    assert set(joint) == set(range(1, 21))
    total: Counter[int] = Counter()
    for per in joint.values():
        total.update(per)
    assert gap(dict(total), distribution(expr)) == 0


@pytest.mark.parametrize("text", ["2d20kh1+5", "1d6+1d20", "1d20!", "1d20r1", "1d20>10", "7", "d%"])
def test_joint_without_a_plain_first_die(text: str) -> None:
    expr = parse(text)
    assert joint_with_first_die(expr, 20) == {None: distribution(expr)}


def test_joint_with_the_first_die_inside_arithmetic() -> None:
    joint = joint_with_first_die(parse("(1d20+1)*2"), 20)
    assert joint[3] == {8: Fraction(1, 20)}


# -- properties -----------------------------------------------------------------------------
@st.composite
def expressions(draw: Any) -> str:
    def term() -> str:
        text = f"{draw(st.integers(1, 3))}d{draw(st.sampled_from(['2', '3', '4', '6', 'F']))}"
        mods = draw(
            st.lists(
                st.sampled_from(["!", "!!", "r1", "ro<2", "kh1", "kl2", "dl1", "dh1", ">3", "<1",
                                 "f1"]),
                max_size=3,
                unique=True,
            )
        )  # fmt: skip
        return text + "".join(mods)

    out = term()
    for _ in range(draw(st.integers(0, 2))):
        out += draw(st.sampled_from(["+", "-", "*", "/"]))
        out += term() if draw(st.booleans()) else str(draw(st.integers(1, 5)))
    return out


@settings(max_examples=200, deadline=None)
@given(expressions(), st.integers(0, 10**6))
def test_odds_sum_to_one_and_cover_every_roll(text: str, seq: int) -> None:
    try:
        expr = parse(text)
        odds = distribution(expr)
    except RuleError:
        return
    assert abs(sum(odds.values()) - 1) < Fraction(1, 10**9)
    assert all(p > 0 for p in odds.values())
    for i in range(5):
        try:
            value = evaluate(expr, FairStream(b"o" * 32, "", seq + i)).value
        except RuleError:
            continue  # a divisor that rolled 0
        assert value in odds


def test_seeded_sample_of_2d6_fits_the_exact_odds() -> None:
    expr = parse("2d6")
    odds = distribution(expr)
    n = 20_000
    seed = b"chi-square seed for 2d6........."
    counts = Counter(evaluate(expr, FairStream(seed, "", seq)).value for seq in range(n))
    chi2 = sum((counts[t] - n * float(p)) ** 2 / (n * float(p)) for t, p in odds.items())
    assert chi2 < 29.59  # p = 0.001 for 10 degrees of freedom


def test_seeded_sample_of_4d6kh3_fits_the_exact_odds() -> None:
    expr = parse("4d6kh3")
    odds = distribution(expr)
    n = 20_000
    counts = Counter(evaluate(expr, FairStream(b"k" * 32, "", seq)).value for seq in range(n))
    chi2 = sum((counts[t] - n * float(p)) ** 2 / (n * float(p)) for t, p in odds.items())
    assert chi2 < 37.70  # p = 0.001 for 15 degrees of freedom
