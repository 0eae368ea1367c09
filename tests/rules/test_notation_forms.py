"""The rest of Roll20's dice reference and rpg-dice-roller's extras (docs/rules.md, "Ordinary
notation"): penetrating dice, groups, computed counts and sizes, sorting, floor/ceil/round/abs,
min/max, labels and free text, critical marks, matching, % and **. Each form parses, rolls (every
die listed with its role), prints in canonical form and has exact odds, checked by hand, against the
roller itself run down every branch, and against icepool."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

import icepool
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.engines import OddsTooLarge, RuleError, ScriptedSource, get_system
from rules.engines.fair import FairStream
from rules.engines.notation import distribution, evaluate, parse
from rules.engines.verify import check_dice
from tests.rules.test_notation_odds import enumerate_rolls, gap, ice


def roll(text: str, *values: int) -> Any:
    source = ScriptedSource(values)
    ev = evaluate(parse(text), source)
    assert source.exhausted, "the roll drew fewer dice than scripted"
    return ev


def odds(text: str) -> dict[int, Fraction]:
    return distribution(parse(text))


F = Fraction


# -- printing: canonical form, and print-then-parse gives the same expression ----------------
@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("3d6!p", "3d6!p"),
        ("1d6!P>5", "1d6!p>5"),
        ("{4d6+3d8}k4", "{4d6 + 3d8}kh4"),
        ("{1d20, 1d20}kh1", "{1d20, 1d20}kh1"),
        ("{3d6,3d6,3d6}>10", "{3d6, 3d6, 3d6}>10"),
        ("{3d6, 3d6}>=10f<4", "{3d6, 3d6}>10f<4"),
        ("(1d4)d6", "(1d4)d6"),
        ("(1+2)d6", "(1 + 2)d6"),
        ("2d(1d4+2)", "2d(1d4 + 2)"),
        ("4d6s", "4d6s"),
        ("4d6sa", "4d6s"),
        ("4d6SD", "4d6sd"),
        ("floor(7/2)", "floor(7 / 2)"),
        ("CEIL(1d6/4)+round(-5/2)", "ceil(1d6 / 4) + round(-5 / 2)"),
        ("abs(1d6-4)", "abs(1d6 - 4)"),
        ("4d6min3", "4d6min3"),
        ("4d6max4kh3", "4d6max4kh3"),
        ("min(1d6, 1d8,3)", "min(1d6, 1d8, 3)"),
        ("max(2d6,10)", "max(2d6, 10)"),
        ("1d20+5[STR]", "1d20 + 5 [STR]"),
        ("2d6[ fire  damage ]+1d4[cold]", "2d6 [fire damage] + 1d4 [cold]"),
        ("1d20+5 Roll for Initiative", "1d20 + 5 Roll for Initiative"),
        ("2d6 fire", "2d6 fire"),
        ("1d20cs>19cf1", "1d20cs>19cf1"),
        ("1d20cs20", "1d20cs20"),
        ("6d6m", "6d6m"),
        ("6d6mt3", "6d6mt3"),
        ("6d6mt>4", "6d6mt>4"),
        ("7%3", "7 % 3"),
        ("2**3**2", "2 ** 3 ** 2"),
        ("-2**2", "-2 ** 2"),
        # A success count on dice exploding on their highest face prints first: "3d10!>8"
        # would explode on 8 or more.
        ("3d10>8!", "3d10>8!"),
        ("2d6!kh1>3f1", "2d6!kh1>3f1"),
        ("1d2>3!p", "1d2>3!p"),
    ],
)
def test_canonical_form_and_back(text: str, canonical: str) -> None:
    expr = parse(text)
    assert expr.notation == canonical
    again = parse(canonical)
    assert again.notation == canonical
    assert distribution(again) == distribution(expr)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{4d6kh3+3d8}k2", "a group of one"),
        ("{4d6-3d8}k2", "a group of one"),
        ("{3d6, 3d6", "'}'"),
        ("{3d6, 3d6}f1", "failures"),
        ("(1d6-3)d6", "number of dice"),
        ("(1d1000+1)d6", "number of dice"),
        ("2d(1d6)", "die size"),
        ("floor(1, 2)", "floor takes one"),
        ("floor(1d6/2", "')'"),
        ("2 ** -1", "negative"),
        ("2 ** 100", "limited"),
        ("1d6 % 0", "division by zero"),
        ("1d6 % (1d2-1)", "can come to 0"),
        ("4d6min6!", "every face"),
        ("2d6mt>3>4", "either successes or matches"),
        ("1d20 +", "at the end"),
        ("1d20 [STR", "closing"),
        ("6d6m1", "2 or more"),
        ("floor((7/2)d6)", "whole number"),
    ],
)
def test_malformed_forms_say_why(text: str, words: str) -> None:
    with pytest.raises(RuleError) as caught:
        distribution(parse(text))
    assert words in caught.value.reason


# -- rolls: every die in draw order with its role ----------------------------------------------
def test_penetrating_dice_count_one_less_and_keep_the_face() -> None:
    ev = roll("2d6!p", 6, 6, 2, 3)
    assert ev.value == 6 + 5 + 1 + 3
    assert [d["value"] for d in ev.dice] == [6, 6, 2, 3]
    assert [d.get("counts_as") for d in ev.dice] == [None, 5, 1, None]
    assert [bool(d.get("penetrated")) for d in ev.dice] == [False, True, True, False]
    assert ev.text == "2d6!p (6!, 5!, 1, 3) = 15"


def test_penetrating_with_a_compare_point_explodes_on_what_the_die_shows() -> None:
    ev = roll("1d6!p>5", 5, 5, 1)
    assert ev.value == 5 + 4 + 0


def test_group_keeps_the_best_member() -> None:
    ev = roll("{1d20, 1d20+2}kh1", 7, 15)
    assert ev.value == 17
    assert [d["role"] for d in ev.dice] == ["dropped", "base"]
    assert ev.text == "{~~1d20 (7)~~, 1d20 (15) + 2 = 17}kh1 = 17"


def test_group_counts_members_at_or_over_the_target() -> None:
    ev = roll("{3d6, 3d6, 3d6}>10", 1, 2, 3, 6, 5, 4, 4, 3, 3)
    assert ev.value == 2  # 6, 15, 10: the 10 counts too (inclusive)
    ev = roll("{3d6, 3d6, 3d6}>10", 1, 2, 3, 6, 5, 4, 4, 3, 2)
    assert ev.value == 1
    assert ev.successes == 1
    assert ev.text.startswith("{3d6 (1, 2, 3) = 6, **3d6 (6, 5, 4) = 15**, 3d6 (4, 3, 2) = 9}")


def test_group_with_failures() -> None:
    ev = roll("{1d6, 1d6, 1d6}>5f1", 6, 1, 3)
    assert ev.value == 0
    assert ev.text == "{**1d6 (6)**, _1d6 (1)_, 1d6 (3)}>5f1 = 0 successes"


def test_group_of_one_keeps_dice_one_by_one() -> None:
    ev = roll("{4d6+3d8}k4", 1, 2, 3, 4, 8, 7, 1)
    assert ev.value == 8 + 7 + 4 + 3
    assert [d["role"] for d in ev.dice] == [
        "dropped",
        "dropped",
        "kept",
        "kept",
        "kept",
        "kept",
        "dropped",
    ]
    assert [d["sides"] for d in ev.dice] == [6] * 4 + [8] * 3


def test_group_of_one_counts_dice_one_by_one() -> None:
    ev = roll("{2d6+1d8}>5", 5, 6, 8)
    assert ev.value == 3


def test_computed_count_rolls_its_dice_first() -> None:
    ev = roll("(1d4)d6", 3, 1, 2, 3)
    assert ev.value == 6
    assert [d["die"] for d in ev.dice] == ["d4", "d6", "d6", "d6"]
    assert ev.text == "(1d4 (3))d6 (1, 2, 3) = 6"
    assert roll("(1+2)d6", 6, 6, 6).value == 18


def test_computed_sides() -> None:
    ev = roll("2d(1d4+2)", 2, 3, 4)
    assert ev.value == 7
    assert [d["sides"] for d in ev.dice] == [4, 4, 4]


def test_sorting_is_for_the_line_only() -> None:
    ev = roll("4d6sd", 2, 6, 1, 4)
    assert [d["value"] for d in ev.dice] == [2, 6, 1, 4]
    assert ev.text == "4d6sd (6, 4, 2, 1) = 13"
    assert roll("4d6s", 2, 6, 1, 4).text == "4d6s (1, 2, 4, 6) = 13"
    assert roll("4d6kh3s", 2, 6, 1, 4).text == "4d6kh3s (~~1~~, 2, 4, 6) = 12"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("floor(7/2)", 3),
        ("ceil(7/2)", 4),
        ("round(5/2)", 3),
        ("round(-5/2)", -3),
        ("round(7/3)", 2),
        ("round(-7/4)", -2),
        ("abs(-7/2)", 3),
        ("abs(3-10)", 7),
        ("floor(-7/2)", -4),
        ("ceil(-7/2)", -3),
        ("-7/2", -3),
        ("floor(7/2*3)", 10),  # exact inside: 21/2, not 3 * 3
        ("7/2*3", 9),
        ("floor((7/2)/(1/2))", 7),
        ("min(3, 1, 2)", 1),
        ("max(3, 1, 2)", 3),
        ("max(-1)", -1),
        ("7 % 3", 1),
        ("-7 % 3", -1),
        ("7 % -3", 1),
        ("2 ** 10", 1024),
        ("2 ** 3 ** 2", 512),
        ("-2 ** 2", -4),
        ("(-2) ** 2", 4),
        ("2 * 3 ** 2", 18),
        ("floor(7 % 5 / 4)", 0),
    ],
)
def test_arithmetic_by_hand(text: str, value: int) -> None:
    assert roll(text).value == value
    assert odds(text) == {value: 1}


def test_min_and_max_modifiers_hold_each_die() -> None:
    ev = roll("4d6min3", 1, 2, 3, 6)
    assert ev.value == 15
    assert [d["value"] for d in ev.dice] == [1, 2, 3, 6]
    assert [d.get("counts_as") for d in ev.dice] == [3, 3, None, None]
    assert ev.text == "4d6min3 (3^, 3^, 3, 6) = 15"
    assert roll("2d6max4", 6, 2).text == "2d6max4 (4v, 2) = 6"


def test_min_and_max_functions() -> None:
    ev = roll("min(1d6, 1d8, 3)", 5, 2)
    assert ev.value == 2
    assert ev.text == "min(1d6 (5), 1d8 (2), 3) = 2"
    assert roll("max(2d6, 10)", 6, 5).value == 11


def test_labels_and_free_text_ride_along() -> None:
    ev = roll("1d20+5[STR]", 12)
    assert ev.value == 17
    assert ev.text == "1d20 (12) + 5 [STR] = 17"
    ev = roll("1d20+5 Roll for Initiative", 12)
    assert ev.expr.label == "Roll for Initiative"
    assert ev.text == "Roll for Initiative: 1d20 (12) + 5 = 17"
    assert parse("2d6 fire").label == "fire"
    assert odds("2d6 fire") == odds("2d6") == odds("2d6[fire]")


def test_free_text_never_hides_a_broken_expression() -> None:
    for text in ("1d20 + fire", "1d20 + (fire)", "3d6 +* 2 sword"):
        with pytest.raises(RuleError):
            parse(text)


def test_the_generic_result_carries_the_free_text() -> None:
    result = get_system("generic").roll(
        {"notation": "1d20+5 Roll for Initiative"}, ScriptedSource([12])
    )
    assert result["label"] == "Roll for Initiative"
    assert result["total"] == 17
    assert result["text"].startswith("Roll for Initiative: ")
    plain = get_system("generic").roll({"notation": "1d20+5"}, ScriptedSource([12]))
    assert "label" not in plain


def test_critical_marks_change_nothing_but_the_marks() -> None:
    ev = roll("3d20cs>19cf1", 20, 1, 19)
    assert ev.value == 40
    assert [d.get("critical") for d in ev.dice] == ["success", "failure", "success"]
    assert ev.text == "3d20cs>19cf1 (20**, 1__, 19**) = 40"
    assert odds("1d20cs>19cf1") == odds("1d20")


def test_matching_marks_and_counts_sets() -> None:
    ev = roll("6d6m", 5, 1, 5, 6, 6, 6)
    assert ev.value == 29
    assert [bool(d.get("matched")) for d in ev.dice] == [True, False, True, True, True, True]
    assert ev.text == "6d6m (5m, 1, 5m, 6m, 6m, 6m) = 29"
    assert roll("6d6mt", 5, 1, 5, 6, 6, 6).value == 2
    assert roll("6d6mt3", 5, 1, 5, 6, 6, 6).value == 1
    assert roll("6d6mt>6", 5, 1, 5, 6, 6, 6).value == 1
    assert roll("4d6kh3mt", 1, 1, 2, 3).value == 0  # the pair of 1s has one die dropped


# -- exact odds by hand ---------------------------------------------------------------------
def test_penetrating_odds_by_hand() -> None:
    d = odds("1d6!p")
    for face in range(1, 6):
        assert d[face] == F(1, 6)
    # 6 then a 1 (counting 0): 6; 6 then 2 (counting 1): 7; 6, 6 (5), then 1 (0): 11
    assert d[6] == F(1, 36)
    assert d[7] == F(1, 36)
    assert d[10] == F(1, 36)
    assert d[11] == F(1, 216)


def test_group_odds_by_hand() -> None:
    assert odds("{1d20, 1d20}kh1") == odds("2d20kh1")
    assert odds("{1d20, 1d20}kh1")[20] == F(39, 400)
    p = F(5, 8)  # P(3d6 >= 10)
    g = odds("{3d6, 3d6, 3d6}>10")
    assert g == {0: (1 - p) ** 3, 1: 3 * p * (1 - p) ** 2, 2: 3 * p**2 * (1 - p), 3: p**3}
    assert odds("{4d6}k3") == odds("4d6kh3")
    assert odds("{2d6+1d8}>5") == odds("2d6>5+1d8>5")
    # Roll20's own example: compound the 6s, then count each die of 8 or more.
    assert odds("{5d6!!}>8") == odds("5d6>8!!")
    assert odds("{5d6!!}>8")[0] == odds("1d6>8!!")[0] ** 5


def test_computed_odds_by_hand() -> None:
    assert odds("(1+2)d6") == odds("3d6")
    d = odds("(1d4)d6")
    assert d[1] == F(1, 4) * F(1, 6)
    assert d[24] == F(1, 4) * F(1, 6**4)
    assert sum(d.values()) == 1
    assert odds("1d(1+5)") == odds("1d6")


def test_rounding_odds_by_hand() -> None:
    assert odds("floor(1d6/2)") == {0: F(1, 6), 1: F(1, 3), 2: F(1, 3), 3: F(1, 6)}
    assert odds("ceil(1d6/2)") == {1: F(1, 3), 2: F(1, 3), 3: F(1, 3)}
    # 1/4, 1/2, 3/4, 1, 5/4, 3/2: halves away from zero
    assert odds("round(1d6/4)") == {0: F(1, 6), 1: F(2, 3), 2: F(1, 6)}
    assert odds("round(-1d6/4)") == {0: F(1, 6), -1: F(2, 3), -2: F(1, 6)}
    assert odds("abs(1d6-4)") == {0: F(1, 6), 1: F(1, 3), 2: F(1, 3), 3: F(1, 6)}


def test_min_max_odds_by_hand() -> None:
    assert odds("1d6min3") == {3: F(1, 2), 4: F(1, 6), 5: F(1, 6), 6: F(1, 6)}
    assert odds("1d6max4") == {1: F(1, 6), 2: F(1, 6), 3: F(1, 6), 4: F(1, 2)}
    assert odds("min(1d6, 1d8, 3)")[1] == 1 - F(5, 6) * F(7, 8)
    assert odds("max(1d6, 1d6)") == odds("2d6kh1")


def test_matching_odds_by_hand() -> None:
    assert odds("2d6mt") == {0: F(5, 6), 1: F(1, 6)}
    assert odds("3d6mt3") == {0: F(35, 36), 1: F(1, 36)}
    six = odds("6d6mt")
    assert six[0] == F(720, 6**6)  # all different
    assert six[3] == F(20 * 90, 6**6)  # three pairs: which values, then their order
    assert odds("6d6m") == odds("6d6")


def test_remainder_and_power_odds_by_hand() -> None:
    assert odds("1d6 % 3") == {0: F(1, 3), 1: F(1, 3), 2: F(1, 3)}
    assert odds("2 ** 1d4") == {2: F(1, 4), 4: F(1, 4), 8: F(1, 4), 16: F(1, 4)}
    assert odds("1d4 ** 2") == {1: F(1, 4), 4: F(1, 4), 9: F(1, 4), 16: F(1, 4)}


# -- the roller itself, run down every branch ------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "{2d4+1d6}k2", "{1d6, 1d4+1}kh1", "{1d6, 1d4+1, 1d3+2}dl1", "{2d4, 1d6}>4f1",
        "{1d4, 1d4, 1d4}kl2>2", "{2d3+1d4}dh1>2f1", "(1d3)d4", "2d(1d3+1)", "(1+1)d4",
        "(1d2)d(1d3+1)", "3d4s", "3d4sd", "floor(1d6/4)", "ceil(2d4/3)", "round(1d6/4)",
        "round(-1d6/4)", "abs(1d4-3)", "abs(1d6/4-1)", "floor(1d4/3*1d3)", "3d4min2",
        "3d4max3", "2d4min2max3", "3d4min2kh2>3", "2d4ro1min2", "min(1d4, 1d6)",
        "max(1d4, 1d6, 3)", "2d6cs>5cf1", "4d4m", "4d4mt", "4d4mt3", "4d4kh3mt", "4d4dl1mt",
        "4d4mt>3", "1d6 % 4", "-1d6 % 4", "2d4 ** 2", "2 ** 1d4", "1d4 ** (1d3-1)",
        "2d4[fire]+1d6[cold]", "2d4+1 Roll for fun", "floor(1d6/2) + 1d4 % 3", "(1d4)dF",
    ],
)  # fmt: skip
def test_finite_forms_equal_brute_force_exactly(text: str) -> None:
    brute, left = enumerate_rolls(text)
    assert left == 0
    assert odds(text) == brute


@pytest.mark.parametrize(
    ("text", "max_draws"),
    [
        ("2d4!p", 9),
        ("1d6!p>5", 10),
        ("2d4!p>3>3f1", 9),
        ("2d4!pr1", 9),
        ("3d4!!min2kh2", 8),
        ("2d4!min2", 9),
        ("2d4!!mt", 9),
        ("{2d4!!+1d4}k2", 9),
        ("(1d2)d4!", 9),
    ],
)
def test_open_ended_forms_match_brute_force_within_the_cut(text: str, max_draws: int) -> None:
    brute, left = enumerate_rolls(text, max_draws)
    assert gap(odds(text), brute) <= left + F(1, 10**12)


# -- icepool as a peer ------------------------------------------------------------------------
def test_against_icepool() -> None:
    d4, d6, d8, d20 = icepool.d(4), icepool.d(6), icepool.d(8), icepool.d(20)
    assert odds("{4d6+3d8}k4") == ice(icepool.Pool([d6] * 4 + [d8] * 3).highest(4).sum())
    assert odds("{1d20+2, 1d20}kh1") == ice(icepool.highest(d20 + 2, d20))
    assert odds("5d6min3") == ice(5 @ d6.clip(3, None))
    assert odds("5d6max2kh2") == ice(d6.clip(None, 2).pool(5).highest(2).sum())
    assert odds("(1d4)d6") == ice(d4.map(lambda n: n @ d6))


def test_icepool_agrees_on_penetration() -> None:
    # The added dice count one less: 1d6 then (explode chain of d6 - 1).
    added = (icepool.d(6) - 1).explode([5], depth=20)
    assert gap(odds("1d6!p"), ice(icepool.d(6).map(lambda f: f + added if f == 6 else f))) < F(
        1, 10**9
    )


# -- refusals past the caps -------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "1000d6mt",
        "{100d10+100d8}k50",
        "10d6!pkh3",
        "4d6!mt",
        # Every size a computed term can come to is a term of its own: each counts.
        "2d(1d999+1)",
        "(1d100)d(1d100+1)",
    ],
)
def test_odds_past_the_caps_say_so(text: str) -> None:
    with pytest.raises(OddsTooLarge) as caught:
        odds(text)
    assert "rolling it still works" in caught.value.reason
    roll_text = evaluate(parse(text), FairStream(b"r" * 32, "", 1)).text
    assert roll_text


# -- properties -------------------------------------------------------------------------------
@st.composite
def forms(draw: Any) -> str:
    def dice() -> str:
        count = draw(st.sampled_from(["1", "2", "3", "(1d2)", "(1+1)"]))
        size = draw(st.sampled_from(["2", "3", "4", "6", "F", "(1d2+2)"]))
        mods = draw(
            st.lists(
                st.sampled_from(["min2", "max3", "!p", "!!", "r1", "kh1", "dl1", ">3", "mt",
                                 "m", "cs>3", "cf1", "s", "sd"]),
                max_size=3,
                unique=True,
            )
        )  # fmt: skip
        return f"{count}d{size}{''.join(mods)}"

    def atom() -> str:
        kind = draw(st.integers(0, 5))
        if kind == 0:
            return str(draw(st.integers(0, 5)))
        if kind == 1:
            name = draw(st.sampled_from(["floor", "ceil", "round", "abs"]))
            return f"{name}({dice()}/{draw(st.integers(1, 4))})"
        if kind == 2:
            return f"{draw(st.sampled_from(['min', 'max']))}({dice()}, {dice()})"
        if kind == 3:
            mod = draw(st.sampled_from(["", "kh1", "dl1", ">3", "<2f4"]))
            return "{" + f"{dice()}, {dice()}" + "}" + mod
        if kind == 4:
            return dice() + draw(st.sampled_from(["", "[fire]", "[to hit]"]))
        return dice()

    out = atom()
    for _ in range(draw(st.integers(0, 2))):
        out += draw(st.sampled_from(["+", "-", "*", "/", "%", "**"]))
        out += atom() if draw(st.booleans()) else str(draw(st.integers(1, 3)))
    return out + draw(st.sampled_from(["", " fire", " Roll for Initiative"]))


@settings(max_examples=150, deadline=None)
@given(forms(), st.integers(0, 10**6))
def test_new_forms_sum_to_one_cover_every_roll_and_print_back(text: str, seq: int) -> None:
    try:
        expr = parse(text)
    except RuleError:
        return
    again = parse(expr.notation)
    assert again.notation == expr.notation
    try:
        d = distribution(expr)
    except RuleError:
        return
    assert distribution(again) == d
    assert abs(sum(d.values()) - 1) < F(1, 10**9)
    for i in range(5):
        try:
            value = evaluate(expr, FairStream(b"p" * 32, "", seq + i)).value
        except RuleError:
            continue  # a divisor that rolled 0
        assert value in d


@settings(max_examples=60, deadline=None)
@given(forms(), st.integers(1, 10**6))
def test_every_die_of_a_new_form_is_listed_as_the_stream_drew_it(text: str, seq: int) -> None:
    """A verifier holding the seed recomputes every die of the result (docs/rules.md, "The
    fair-dice stream")."""
    try:
        result = get_system("generic").roll({"notation": text}, FairStream(b"v" * 32, "c", seq))
    except RuleError:
        return
    assert check_dice(server_seed=b"v" * 32, client_seed="c", seq=seq, dice=result["dice"]) == ""


@pytest.mark.parametrize(
    ("text", "critical"),
    [
        ("{4d6+3d8}k4", 56.0),  # p = 0.001 for ~ 24 degrees of freedom, with room
        ("3d6!p", 80.0),
        ("(1d4)d6", 56.0),
        ("round(2d6/3)+6d6mt", 40.0),
    ],
)
def test_seeded_samples_fit_the_exact_odds(text: str, critical: float) -> None:
    expr = parse(text)
    d = distribution(expr)
    n = 6_000
    seed = b"chi-square seed for new forms..."
    counts = Counter(evaluate(expr, FairStream(seed, "", seq)).value for seq in range(n))
    # Pool the rare outcomes so each cell expects at least 5.
    chi2, rare_expected, rare_seen = 0.0, 0.0, 0
    for t, p in d.items():
        expected = n * float(p)
        if expected < 5:
            rare_expected += expected
            rare_seen += counts[t]
        else:
            chi2 += (counts[t] - expected) ** 2 / expected
    if rare_expected:
        chi2 += (rare_seen - rare_expected) ** 2 / rare_expected
    assert set(counts) <= set(d)
    assert chi2 < critical


def test_the_natural_die_of_a_check_with_new_forms() -> None:
    from rules.engines.notation import joint_with_first_die

    assert parse("1d20cs20+5 to hit").lone_first_die(20) is not None
    assert parse("{1d20, 1d20+2}kh1").lone_first_die(20) is not None
    assert parse("{1d20+2d6}k2").lone_first_die(20) is None  # its dice are pooled
    assert parse("1d20min5").lone_first_die(20) is None  # the face is not the value
    joint = joint_with_first_die(parse("{1d20, 1d20+2}kh1"), 20)
    total: dict[int, Fraction] = {}
    for law in joint.values():
        for t, p in law.items():
            total[t] = total.get(t, F(0)) + p
    assert total == odds("{1d20, 1d20+2}kh1")
    # A natural 20 first: the other member beats it only with a 19 or 20 (+2).
    assert joint[20] == {20: F(18, 400), 21: F(1, 400), 22: F(1, 400)}


@pytest.mark.parametrize(
    "text",
    [
        "1d(" * 120 + "6" + ")" * 120,
        "floor(" * 40 + "1" + ")" * 40,
        "{" * 40 + "1" + "}" * 40,
        "2**" * 60 + "1",
        "min(" * 40 + "1" + ")" * 40,
    ],
)
def test_nesting_of_the_new_forms_is_capped(text: str) -> None:
    with pytest.raises(RuleError) as caught:
        parse(text)
    assert "nested deeper than 32" in caught.value.reason
