"""Parsing dice notation (docs/rules.md, "Ordinary notation"): the grammar, its canonical form and
every limit."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.engines.errors import RuleError
from rules.engines.notation import MAX_DEPTH, parse
from rules.engines.notation.nodes import Dice


def term(text: str) -> Dice:
    (dice,) = parse(text).dice_terms
    return dice


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("4d6kh3+2", "4d6kh3 + 2"),
        ("d20", "d20"),
        ("1d20 + 5", "1d20 + 5"),
        ("d%", "d%"),
        ("4dF", "4dF"),
        ("4df+1", "4dF + 1"),
        ("4d6k3", "4d6kh3"),
        ("4d6d1", "4d6dl1"),
        ("4d6kl1", "4d6kl1"),
        ("4d6dh1", "4d6dh1"),
        ("4d6dl1", "4d6dl1"),
        ("2d6!", "2d6!"),
        ("2d6!>5", "2d6!>5"),
        ("2d6!>=5", "2d6!>5"),
        ("2d6!<2", "2d6!<2"),
        ("2d6!5", "2d6!5"),
        ("2d6!=5", "2d6!5"),
        ("6d10!!k3", "6d10!!kh3"),
        ("2d10!!>9", "2d10!!>9"),
        ("2d6r1", "2d6r1"),
        ("2d6r<2", "2d6r<2"),
        ("2d6r>5", "2d6r>5"),
        ("2d6ro1", "2d6ro1"),
        ("2d6ro<2", "2d6ro<2"),
        ("2d6ro>5", "2d6ro>5"),
        ("2d6r1r6", "2d6r1r6"),
        ("5d10>8", "5d10>8"),
        ("5d10<=2", "5d10<2"),
        ("5d10=7", "5d10=7"),
        ("5d10>8f1", "5d10>8f1"),
        ("5d10>8f<2", "5d10>8f<2"),
        ("5d10<3f>9", "5d10<3f>9"),
        ("4dF>1f<-1", "4dF>1f<-1"),
        ("(1d4)*(1d6)", "(1d4) * (1d6)"),
        ("-1d6", "-1d6"),
        ("--3", "--3"),
        ("+3", "3"),
        ("2*3+4/2-1", "2 * 3 + 4 / 2 - 1"),
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    assert parse(text).notation == canonical


def test_modifiers_take_effect_in_a_fixed_order_whatever_order_they_are_written() -> None:
    # explode, reroll, keep, count: the same term however it is written.
    a, b = term("6d10!!r1k3>8f1"), term("6d10>8f1k3r1!!")
    assert a.notation() == b.notation() == "6d10!!r1kh3>8f1"
    assert term("4d6r1kh3").notation() == term("4d6kh3r1").notation()


def test_case_and_whitespace_do_not_matter() -> None:
    assert parse(" 4D6 KH3 +\t2 ").notation == parse("4d6kh3+2").notation
    assert parse("3DF").notation == "3dF"
    assert parse("6D10!!K3").notation == "6d10!!kh3"


def test_comparisons_are_inclusive() -> None:
    die = term("10d10>8f<2")
    assert die.success_set == {8, 9, 10}
    assert die.failure_set == {1, 2}
    assert term("3d6!>5").explode_set == {5, 6}
    assert term("3d6!<2").explode_set == {1, 2}
    assert term("3d6!").explode_set == {6}
    assert term("3d6!!").explode_set == {6}
    assert term("3d6!4").explode_set == {4}
    assert term("3d6r<2").reroll_set == {1, 2}
    assert term("3d6r>5").reroll_set == {5, 6}
    assert term("3d6r3").reroll_set == {3}
    assert term("3d6r1r6").reroll_set == {1, 6}
    assert term("3d6=4").success_set == {4}
    assert term("4dF>1").success_set == {1}
    assert term("4dF<-1").success_set == {-1}


def test_faces_of_special_dice() -> None:
    assert term("d%").sides == 100 and term("d%").faces == tuple(range(1, 101))
    assert term("dF").sides == 3 and term("dF").faces == (-1, 0, 1)


def test_the_same_text_parses_once() -> None:
    assert parse("3d6+1") is parse("3d6+1")


def test_expression_metadata() -> None:
    expr = parse("3d6>4 + 2d8 - 1")
    assert expr.dice_count == 5
    assert expr.counts is True
    assert not parse("3d6+1").counts
    assert [d.sides for d in expr.dice_terms] == [6, 8]


def error(text: str, field: str = "notation") -> RuleError:
    with pytest.raises(RuleError) as info:
        parse(text, field=field)
    assert info.value.field == field
    assert info.value.reason
    return info.value


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("2d", "the die size after 'd' (like 2d6) is missing at the end"),
        ("2d6+", "a number, a die like 2d6, '(' or '{' is missing at the end"),
        ("2d6 3", "the number 3 does not belong here: join terms with + or - at column 5"),
        ("2x6", "column 2"),
        ("abc", "column 1"),
        ("(2d6", "the '(' at column 1 is never closed: add ')'"),
        ("2d6)", "')' closes nothing: there is no '(' before it"),
        ("2d6kh", "how many"),
        ("2d6kh1kl1", "only one keep"),
        ("2d6!!!", "only one explosion"),
        ("2d6>4>5", "only one success"),
        ("2d6>4f1f2", "only one failure"),
        ("2d6f1", "failures"),
        ("2d6r", "comparison"),
        ("2d6r1ro2", "either r"),
        ("2d6>", "compare"),
        ("1.5", "column 2"),
        ("1e3", "column 2"),
        ("d%%", "at the end"),  # "%" after a term is a remainder, missing its divisor
        ("3d6 +* 2", "at column 6 there should be a number, a die like 2d6, '(' or '{', not '*'"),
        ("2d6pl", "column 4"),
    ],
)
def test_malformed_input_is_a_rule_error_with_a_reason(text: str, words: str) -> None:
    assert words in error(text).reason


def test_errors_name_the_field_given() -> None:
    assert error("2d", field="check").field == "check"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("1d1", "d2 to d1000"),
        ("1d0", "d2 to d1000"),
        ("1d1001", "d2 to d1000"),
        ("0d6", "at least one die"),
        ("1001d6", "at most 1,000 dice"),
        ("600d6+500d6", "at most 1,000 dice"),
        ("1000001", "±1,000,000"),
        ("2d6+1000001", "±1,000,000"),
        ("2d6>1000001", "±1,000,000"),
        ("2d6kh1000001", "±1,000,000"),
        ("1d6*1000000*1000000*1000000", "limited to"),
        ("1000d1000!>2r<998", "at most 10,000"),
        ("600d1000!>2", "at most 10,000"),
        ("d6!>1", "every face"),
        ("d6!<6", "every face"),
        ("d2!!<2", "every face"),
        ("dF!>-1", "every face"),
        ("d6r<6", "every face"),
        ("d6ro>1", "every face"),
        ("d6r1r2r3r4r5r6", "every face"),
        ("7/0", "division by zero"),
        ("7/(3-3)", "always 0"),
    ],
)
def test_limits_are_checked_before_any_work(text: str, words: str) -> None:
    assert words in error(text).reason


def test_notation_length_limit() -> None:
    ok = "+".join(["1"] * 250)  # 499 characters
    assert len(ok) == 499
    assert parse(ok).notation.count("1") == 250
    assert "500 characters" in error(ok + "+1").reason


def test_nesting_depth_limit() -> None:
    ok = "(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH
    assert parse(ok)
    assert f"deeper than {MAX_DEPTH}" in error("(" + ok + ")").reason
    assert f"deeper than {MAX_DEPTH}" in error("-" * (MAX_DEPTH + 1) + "1").reason
    # 250 parentheses in 500 characters: a clear error, never RecursionError.
    assert f"deeper than {MAX_DEPTH}" in error("(" * 250 + ")" * 250).reason


def test_a_long_flat_sum_is_fine() -> None:
    expr = parse("+".join(["1d2"] * 125))
    assert expr.dice_count == 125


def test_non_text_is_refused() -> None:
    with pytest.raises(RuleError):
        parse(12)  # type: ignore[arg-type]


_ALPHABET = "0123456789dDfFkKhHlLrRoO!<>=%+-*/() \t"
_PIECES = [
    "d", "d6", "2d6", "dF", "d%", "kh", "kl", "dh", "dl", "k", "r", "ro", "!", "!!", ">", "<",
    "=", ">=", "f", "+", "-", "*", "/", "(", ")", "1", "3", "0", "20", " ", "1000", "1001",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=40))
def test_random_text_parses_or_raises_rule_error(text: str) -> None:
    try:
        parse(text)
    except RuleError as exc:
        assert exc.field == "notation"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_random_token_soup_parses_or_raises_rule_error(pieces: list[str]) -> None:
    try:
        expr = parse("".join(pieces))
    except RuleError as exc:
        assert exc.field == "notation"
    else:
        assert expr.dice_count <= 1000


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=600))
def test_any_unicode_parses_or_raises_rule_error(text: str) -> None:
    with contextlib.suppress(RuleError):
        parse(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789dDfF+-*/()!{}<>=khlrom%[] ", max_size=14))
def test_errors_read_as_a_person_says_them(text: str) -> None:
    """No parser jargon ("expected X, found Y", "unexpected", "end of notation"): what is
    missing or out of place, and where."""
    try:
        parse(text)
    except RuleError as exc:
        for jargon in ("found ", "unexpected", "end of notation", "unmatched"):
            assert jargon not in exc.reason, (text, exc.reason)
