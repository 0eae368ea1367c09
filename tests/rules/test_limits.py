"""Limits every engine keeps (docs/rules.md, "Limits"): dice listed per roll, odds that always stop
(by size, by the caller's deadline, never by running out of stack)."""

from __future__ import annotations

import sys
import time

import pytest

from rules.engines import OddsTooLarge, RuleError, ScriptedSource, get_system
from rules.engines.errors import TOO_LARGE
from rules.engines.limits import MAX_LISTED_DICE
from rules.engines.notation import parse


def test_a_roll_listing_more_than_the_limit_is_refused_as_too_large() -> None:
    # 100d2! with every die a 2: each chain runs to the cap, 100 x 101 = 10,100 dice.
    source = ScriptedSource([2] * 10_100)
    with pytest.raises(RuleError) as caught:
        get_system("generic").roll({"notation": "100d2!"}, source)
    assert caught.value.code == TOO_LARGE
    assert caught.value.field == "dice"
    assert "10,000" in caught.value.reason
    # It stopped at the first die past the limit: nothing more was drawn.
    assert len(source.draws) == MAX_LISTED_DICE


def test_a_roll_of_exactly_the_limit_is_fine() -> None:
    # 100 dice of which 99 run 100 extra rolls and the last stops after 0: 99 x 101 + 1 dice.
    values = [2] * (99 * 101) + [1]
    result = get_system("generic").roll({"notation": "100d2!"}, ScriptedSource(values))
    assert len(result["dice"]) == 99 * 101 + 1 <= MAX_LISTED_DICE


def test_notation_expected_to_list_too_many_dice_is_refused_before_rolling() -> None:
    with pytest.raises(RuleError) as caught:
        parse("1000d10r<9")  # each die takes about 11 draws
    assert caught.value.code == TOO_LARGE
    assert parse("1000d6").dice_count == 1000


def test_a_caller_may_list_fewer_dice_and_a_request_expected_past_it_draws_nothing() -> None:
    generic = get_system("generic")
    # ~9,564 dice expected: within the engines' own limit, past a caller's 4,096.
    source = ScriptedSource([1] * 10)
    with pytest.raises(RuleError) as caught:
        generic.roll({"notation": "150d100!>2"}, source, max_dice=4096)
    assert caught.value.code == TOO_LARGE and caught.value.field == "notation"
    assert "9,564" in caught.value.reason and "4,096" in caught.value.reason
    assert source.draws == []  # refused before a die was drawn
    with pytest.raises(RuleError):
        generic.check_size(generic.normalise({"notation": "150d100!>2"}), max_dice=4096)
    generic.check_size(generic.normalise({"notation": "500d6!>2"}), max_dice=4096)  # ~3,000


def test_a_roll_past_a_callers_limit_by_bad_luck_stops_at_it() -> None:
    # 10d2! expects 20 dice; every die a 2 runs each chain to the cap.
    source = ScriptedSource([2] * 1010)
    with pytest.raises(RuleError) as caught:
        get_system("generic").roll({"notation": "10d2!"}, source, max_dice=50)
    assert caught.value.code == TOO_LARGE and "50" in caught.value.reason
    assert len(source.draws) == 50


def test_a_caller_cannot_raise_the_engines_limit() -> None:
    source = ScriptedSource([2] * 10_100)
    with pytest.raises(RuleError):
        get_system("generic").roll({"notation": "100d2!"}, source, max_dice=10**6)
    assert len(source.draws) == MAX_LISTED_DICE


def test_ordinary_rule_errors_are_invalid() -> None:
    with pytest.raises(RuleError) as caught:
        parse("2d")
    assert caught.value.code == "invalid"
    assert OddsTooLarge("notation", "x").code == TOO_LARGE


@pytest.mark.parametrize("text", ["1000d6!dl1", "1000d6!dh1", "999d2!dl998", "1000d6!kl999"])
def test_drop_with_explode_on_big_pools_stops_without_recursion(text: str) -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # far below a thousand dice: no step may recurse per die
    try:
        get_system("generic").odds({"notation": text})
    except OddsTooLarge as exc:
        assert exc.code == TOO_LARGE
    finally:
        sys.setrecursionlimit(limit)


def test_drop_with_explode_odds_by_hand() -> None:
    # 2d2!dl1: a chain of 2s then a 1; of all dice pooled the lowest is dropped.
    odds = get_system("generic").odds({"notation": "2d2!dl1"})
    # P(no die explodes) = 1/4: dice 1,1, keep 1.
    assert odds["distribution"]["1"] == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("system_id", "request_"),
    [
        ("generic", {"notation": "10d10kh5+4d6"}),
        ("zoria", {"check": "1d20+5", "action_dice": ["d6", "d8"]}),
        ("roll-and-keep", {"roll": 6, "keep": 3, "difficulty": 7}),
        ("d6-chance", {"dice": 4, "bonus": 2, "difficulty": 15}),
        ("discordian", {"pool": ["d6", "d6", "d8"], "tn": 5, "challenge": 2, "discord": 7}),
        ("action-dice", {"action_dice": 3, "skill_dice": 5, "max_dice": 4}),
    ],
)
def test_odds_stop_at_a_deadline_already_past(system_id: str, request_: dict) -> None:
    with pytest.raises(OddsTooLarge) as caught:
        get_system(system_id).odds(request_, deadline=time.monotonic() - 1)
    assert "took longer" in caught.value.reason
    assert get_system(system_id).odds(request_, deadline=time.monotonic() + 60)
