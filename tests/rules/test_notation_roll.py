"""Rolling dice notation (docs/rules.md, "Ordinary notation") with scripted dice: one test per
rule."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.engines.errors import RuleError
from rules.engines.fair import FairStream, ScriptedSource
from rules.engines.limits import MAX_CHAIN
from rules.engines.notation import Evaluation, evaluate, parse
from rules.engines.notation.expression import Expression
from rules.engines.notation.parser import count_range
from tests.rules.helpers import drawn


def dice_upper_bound(expr: Expression) -> int:
    """The most dice a roll of ``expr`` can ever draw (every chain at its cap): what the
    properties below hold every roll to."""
    total = 0
    for d in expr.dice_terms:
        count = count_range(d, expr.field)[1]
        chain = 1 + MAX_CHAIN if d.explode else 1
        rerolls = MAX_CHAIN if d.reroll == "r" else (1 if d.reroll == "ro" else 0)
        total += count * (chain * (1 + rerolls) if d.explode != "!!" else chain + rerolls)
    return total


def roll(text: str, values: list[int], **kw: Any) -> Evaluation:
    source = ScriptedSource(values)
    ev = evaluate(parse(text), source, **kw)
    assert source.exhausted, "the roll drew fewer dice than scripted"
    assert drawn(ev.dice) == source.draws
    return ev


def values(ev: Evaluation) -> list[int]:
    return [d["value"] for d in ev.dice]


def roles(ev: Evaluation) -> list[str]:
    return [d["role"] for d in ev.dice]


# -- plain dice ---------------------------------------------------------------------------
def test_sum_and_constant() -> None:
    ev = roll("3d6+2", [1, 2, 3])
    assert (ev.value, ev.total, ev.successes) == (8, 8, None)
    assert ev.dice == [{"die": "d6", "sides": 6, "value": v, "role": "base"} for v in (1, 2, 3)]
    assert ev.text == "3d6 (1, 2, 3) + 2 = 8"
    assert not ev.capped


def test_count_defaults_to_one() -> None:
    ev = roll("d20", [17])
    assert ev.value == 17 and ev.text == "d20 (17) = 17"


def test_percentile_die_is_a_d100() -> None:
    ev = roll("d%", [73])
    assert ev.dice == [{"die": "d100", "sides": 100, "value": 73, "role": "base"}]
    assert ev.text == "d% (73) = 73"


def test_fudge_dice_show_minus_zero_plus() -> None:
    ev = roll("4dF+1", [1, 2, 3, 3])
    assert values(ev) == [-1, 0, 1, 1]
    assert {d["die"] for d in ev.dice} == {"dF"} and {d["sides"] for d in ev.dice} == {3}
    assert ev.value == 2
    assert ev.text == "4dF (-1, 0, +1, +1) + 1 = 2"


def test_role_is_given_to_plain_dice() -> None:
    assert roles(roll("2d6", [1, 2], role="action")) == ["action", "action"]


# -- keep / drop --------------------------------------------------------------------------
def test_keep_highest() -> None:
    ev = roll("4d6kh3", [6, 5, 1, 3])
    assert ev.value == 14
    assert roles(ev) == ["kept", "kept", "dropped", "kept"]
    assert ev.text == "4d6kh3 (6, 5, ~~1~~, 3) = 14"


def test_k_means_kh() -> None:
    assert roll("4d6k3", [6, 5, 1, 3]).value == 14


@pytest.mark.parametrize(
    ("text", "expected", "kept"),
    [
        ("4d6kl1", 1, [False, False, True, False]),
        ("4d6dh1", 9, [False, True, True, True]),
        ("4d6dl1", 14, [True, True, False, True]),
        ("4d6d1", 14, [True, True, False, True]),
        ("4d6kh0", 0, [False] * 4),
        ("4d6kh9", 15, [True] * 4),
        ("4d6dl9", 0, [False] * 4),
    ],
)
def test_keep_and_drop(text: str, expected: int, kept: list[bool]) -> None:
    ev = roll(text, [6, 5, 1, 3])
    assert ev.value == expected
    assert [r == "kept" for r in roles(ev)] == kept


def test_ties_keep_the_earlier_die() -> None:
    ev = roll("3d6kh1", [5, 5, 2])
    assert roles(ev) == ["kept", "dropped", "dropped"]
    assert roll("3d6kl1", [2, 5, 2]).dice[0]["role"] == "kept"


# -- explosions ---------------------------------------------------------------------------
def test_explode_adds_separate_dice() -> None:
    ev = roll("2d6!", [6, 6, 3, 4])
    assert ev.value == 19
    assert [d.get("exploded", False) for d in ev.dice] == [False, True, True, False]
    assert ev.text == "2d6! (6!, 6!, 3, 4) = 19"


@pytest.mark.parametrize(
    ("text", "script", "expected"),
    [
        ("1d6!>5", [5, 6, 2], 13),  # 5 or more explodes
        ("1d6!<2", [2, 1, 4], 7),  # 2 or less explodes
        ("1d6!5", [5, 5, 6], 16),  # exactly 5: the 6 stops it
        ("1d6!=5", [5, 6], 11),
        ("1d6!>7", [6], 6),  # no face can explode
    ],
)
def test_explosion_conditions_are_inclusive(text: str, script: list[int], expected: int) -> None:
    assert roll(text, script).value == expected


def test_compound_adds_onto_the_same_die() -> None:
    ev = roll("2d6!!", [6, 6, 2, 3])
    assert ev.value == 17
    assert ev.text == "2d6!! (6!+6!+2, 3) = 17"
    assert [d.get("exploded", False) for d in ev.dice] == [False, True, True, False]


def test_compound_with_a_comparison() -> None:
    assert roll("1d10!!>9", [9, 10, 3]).value == 22


def test_separate_explosions_take_part_in_keep_but_compounded_ones_stay_one_die() -> None:
    separate = roll("2d6!k1", [6, 2, 1])  # dice 6, 2 (exploded), 1: keep the 6
    assert separate.value == 6
    assert roles(separate) == ["kept", "dropped", "dropped"]
    compound = roll("2d6!!k1", [6, 2, 1])  # dice 8 (6+2) and 1: keep the 8
    assert compound.value == 8
    assert roles(compound) == ["kept", "kept", "dropped"]


def test_roll_and_keep_with_tens_compounding() -> None:
    ev = roll("6d10!!k3", [10, 4, 7, 2, 9, 1, 3])
    assert ev.value == 14 + 9 + 7
    assert ev.text == "6d10!!kh3 (10!+4, 7, ~~2~~, 9, ~~1~~, ~~3~~) = 30"


def test_explosion_chain_is_capped() -> None:
    ev = roll("1d2!", [2] * (MAX_CHAIN + 1))
    assert ev.value == 2 * (MAX_CHAIN + 1)
    assert ev.capped is True
    assert ev.dice[-1]["capped"] is True
    assert sum(d.get("exploded", False) for d in ev.dice) == MAX_CHAIN
    assert "cap" in ev.text


def test_compound_chain_is_capped_too() -> None:
    ev = roll("1d2!!", [2] * (MAX_CHAIN + 1))
    assert ev.value == 2 * (MAX_CHAIN + 1) and ev.capped


# -- rerolls ------------------------------------------------------------------------------
def test_reroll_until_out_of_range() -> None:
    ev = roll("1d6r1", [1, 1, 4])
    assert ev.value == 4
    assert roles(ev) == ["rerolled", "rerolled", "base"]
    assert ev.text == "1d6r1 (~~1~~, ~~1~~, 4) = 4"


@pytest.mark.parametrize(
    ("text", "script", "expected"),
    [
        ("1d6r<2", [2, 1, 3], 3),
        ("1d6r>5", [6, 5, 2], 2),
        ("1d6r1r6", [1, 6, 3], 3),
        ("1d6ro1", [1, 1], 1),  # once: the new die stands even if it is a 1
        ("1d6ro<2", [2, 2], 2),
        ("1d6ro>5", [5, 6], 6),
        ("1d6ro1", [4], 4),
    ],
)
def test_reroll_conditions(text: str, script: list[int], expected: int) -> None:
    assert roll(text, script).value == expected


def test_reroll_chain_is_capped() -> None:
    ev = roll("1d6r<5", [1] * (MAX_CHAIN + 1))
    assert ev.value == 1 and ev.capped
    assert roles(ev) == ["rerolled"] * MAX_CHAIN + ["base"]


def test_a_rerolled_die_does_not_explode_again() -> None:
    # 1 is rerolled into a 6: that 6 does not explode.
    assert roll("1d6!r1", [1, 6]).value == 6
    # The 6 explodes first (adding a 2); then it is rerolled once into a 6 that stands alone.
    ev = roll("1d6!ro6", [6, 2, 6])
    assert ev.value == 8
    assert roles(ev) == ["rerolled", "base", "base"]


def test_compounded_die_is_rerolled_on_its_total() -> None:
    # 6+1 = 7 compounded: r<2 does not touch it, though one of its dice shows 1.
    assert roll("1d6!!r<2", [6, 1]).value == 7
    ev = roll("1d6!!r<2", [1, 6])  # the 1 is rerolled into a 6, which does not compound
    assert ev.value == 6


def test_rerolled_dice_are_struck_and_replacements_take_part_in_keep() -> None:
    # Slot by slot: the first die's 1 is rerolled (into 5) before the second die is drawn.
    ev = roll("3d6r1kh2", [1, 5, 4, 2])
    assert roles(ev) == ["rerolled", "kept", "kept", "dropped"]
    assert ev.value == 9
    assert ev.text == "3d6r1kh2 (~~1~~, 5, 4, ~~2~~) = 9"


# -- modifier order -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("a", "b"),
    [("4d6kh3r1", "4d6r1kh3"), ("2d6k1!", "2d6!k1"), ("5d10>8k3!", "5d10!k3>8"),
     ("3d6f1>5", "3d6>5f1")],
)  # fmt: skip
def test_modifier_order_does_not_depend_on_writing(a: str, b: str) -> None:
    script = [1, 6, 2, 5, 3, 4, 6, 2, 1, 3]
    ra, rb = evaluate(parse(a), ScriptedSource(script)), evaluate(parse(b), ScriptedSource(script))
    assert ra.value == rb.value and ra.dice == rb.dice


def test_explode_then_reroll_then_keep_then_count() -> None:
    # 3d6!r1kh2>5: 6 explodes into 1 (rerolled into 5); 2; 6 explodes into 3.
    ev = roll("3d6!r1kh2>5", [6, 1, 5, 2, 6, 3])
    assert [u["value"] for u in ev.dice if u["role"] == "kept"] == [6, 6]
    assert ev.value == 2


# -- counting -----------------------------------------------------------------------------
def test_success_counting_is_inclusive() -> None:
    ev = roll("5d10>8", [9, 4, 1, 10, 8])
    assert (ev.value, ev.successes, ev.total) == (3, 3, 3)
    assert [d.get("success", False) for d in ev.dice] == [True, False, False, True, True]
    assert ev.text == "5d10>8 (**9**, 4, 1, **10**, **8**) = 3 successes"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("5d10<2", 1), ("5d10=4", 1), ("5d10>8f1", 2), ("5d10>8f<4", 1), ("5d10<4f>9", 0)],
)
def test_counting_and_failures(text: str, expected: int) -> None:
    assert roll(text, [9, 4, 1, 10, 8]).value == expected


def test_each_failure_subtracts_a_success() -> None:
    ev = roll("3d6>5f1", [6, 1, 1])
    assert ev.value == -1
    assert ev.text == "3d6>5f1 (**6**, _1_, _1_) = -1 successes"
    assert [d.get("failure", False) for d in ev.dice] == [False, True, True]


def test_only_kept_dice_count() -> None:
    assert roll("4d6kh2>5", [6, 5, 1, 6]).value == 2
    assert roll("4d6kl2>5", [6, 5, 1, 6]).value == 1


def test_counted_term_with_arithmetic_adds_to_the_successes() -> None:
    ev = roll("3d6>4 + 2", [5, 1, 6])
    assert ev.value == 4 and ev.successes == 4
    assert ev.text == "3d6>4 (**5**, 1, **6**) + 2 = 4 successes"
    assert roll("3d6>4 + 1d6", [5, 1, 6, 3]).value == 5


def test_fudge_counting() -> None:
    assert roll("4dF>1", [3, 3, 1, 2]).value == 2
    assert roll("4dF>1f<-1", [3, 3, 1, 2]).value == 1


def test_compound_total_is_what_counts() -> None:
    assert roll("2d10>12!!", [10, 5, 9]).value == 1
    # A comparison right after !! belongs to the explosion: here nothing can explode.
    assert roll("2d10!!>12", [10, 5]).value == 15


# -- arithmetic ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7/2", 3),
        ("-7/2", -3),
        ("7/-2", -3),
        ("-7/-2", 3),
        ("1/3", 0),
        ("2+3*4", 14),
        ("(2+3)*4", 20),
        ("2-3-4", -5),
        ("12/2/3", 2),
        ("-2*-3", 6),
        ("-(1+2)", -3),
        ("2*(3-(4-5))", 8),
    ],
)
def test_arithmetic_rounds_toward_zero(text: str, expected: int) -> None:
    assert roll(text, []).value == expected


def test_dice_divided_round_toward_zero() -> None:
    assert roll("(1d6-4)/2", [1]).value == -1
    assert roll("1d6/2", [5]).value == 2


def test_draw_order_is_left_to_right() -> None:
    ev = roll("1d4*(1d6+1d8)", [1, 2, 3])
    assert [d["sides"] for d in ev.dice] == [4, 6, 8]
    assert ev.value == 5
    assert ev.text == "1d4 (1) * (1d6 (2) + 1d8 (3)) = 5"


def test_division_by_zero_when_rolled_is_a_rule_error() -> None:
    with pytest.raises(RuleError) as info:
        roll("6/(1d2-1)", [1])
    assert info.value.field == "notation"
    assert "division by zero" in info.value.reason


def test_case_and_whitespace_roll_the_same() -> None:
    assert roll(" 4D6 KH3 + 2 ", [6, 5, 1, 3]).value == 16


# -- properties with the fair stream --------------------------------------------------------
_MODS = st.lists(
    st.sampled_from(["!", "!!", "!>5", "r1", "ro<2", "kh2", "kl1", "dl1", "dh1", ">4", "<2"]),
    max_size=3,
    unique=True,
)


@st.composite
def dice_terms(draw: Any) -> str:
    count = draw(st.integers(1, 6))
    size = draw(st.sampled_from(["4", "6", "10", "20", "F", "%"]))
    mods = draw(_MODS)
    text = f"{count}d{size}"
    if "!" in mods and "!!" in mods:
        mods.remove("!!")
    if "!>5" in mods and ("!" in mods or "!!" in mods):
        mods.remove("!>5")
    if ">4" in mods and "<2" in mods:
        mods.remove("<2")
    return text + "".join(mods)


@settings(max_examples=300, deadline=None)
@given(dice_terms(), st.integers(0, 10**6))
def test_rolls_report_every_draw_and_add_up(text: str, seq: int) -> None:
    try:
        expr = parse(text)
    except RuleError:
        return  # e.g. "d4!>5"-like combinations that explode on every face
    stream = FairStream(b"p" * 32, "prop", seq)
    ev = evaluate(expr, stream)
    assert drawn(ev.dice) == stream.draws
    assert len(ev.dice) <= dice_upper_bound(expr)
    (die,) = expr.dice_terms
    counted = [d for d in ev.dice if d["role"] in ("base", "kept")]
    if die.counts:
        successes = sum(bool(d.get("success")) for d in ev.dice)
        failures = sum(bool(d.get("failure")) for d in ev.dice)
        assert ev.value == ev.successes == successes - failures
    else:
        assert ev.value == ev.total == sum(d["value"] for d in counted)
        assert ev.successes is None
    if die.keep is None:
        assert all(d["role"] in ("base", "rerolled") for d in ev.dice)
    assert ev.text.endswith(f"= {ev.value}") or "success" in ev.text or "cap" in ev.text


@settings(max_examples=150, deadline=None)
@given(
    st.lists(dice_terms(), min_size=1, max_size=4),
    st.lists(st.sampled_from("+-*"), min_size=3, max_size=3),
    st.integers(0, 10**6),
)
def test_expressions_roll_or_raise_rule_error(terms: list[str], ops: list[str], seq: int) -> None:
    text = terms[0] + "".join(op + t for op, t in zip(ops, terms[1:], strict=False))
    try:
        expr = parse(text)
        ev = evaluate(expr, FairStream(b"q" * 32, "", seq))
    except RuleError:
        return
    assert isinstance(ev.value, int) and isinstance(ev.text, str)
    assert len(ev.dice) <= dice_upper_bound(expr)


def test_same_seed_same_dice() -> None:
    expr = parse("6d10!!k3 + 4dF + 3d6r1>4")
    a = evaluate(expr, FairStream(b"s" * 32, "c", 7))
    b = evaluate(expr, FairStream(b"s" * 32, "c", 7))
    assert a.dice == b.dice and a.value == b.value and a.text == b.text


def test_a_thousand_dice_roll_quickly() -> None:
    ev = evaluate(parse("1000d1000"), FairStream(b"s" * 32, "", 1))
    assert len(ev.dice) == 1000


def test_the_die_that_exploded_is_marked_and_so_is_the_die_it_brought() -> None:
    ev = roll("8d6!", [6, 2, 1, 1, 1, 1, 1, 1, 1])
    assert [d.get("explodes", False) for d in ev.dice] == [True] + [False] * 8
    assert [d.get("exploded", False) for d in ev.dice] == [False, True] + [False] * 7
    assert not any(d.get("compounded") for d in ev.dice)


def test_a_compounded_die_counts_once_among_the_kept() -> None:
    ev = roll("6d10!!k3", [10, 4, 7, 2, 9, 1, 3])
    assert [d.get("explodes", False) for d in ev.dice] == [True] + [False] * 6
    assert [d.get("compounded", False) for d in ev.dice] == [False, True] + [False] * 5
    whole_dice = [d for d in ev.dice if not d.get("compounded")]
    assert [d["role"] for d in whole_dice].count("kept") == 3
