"""d6-chance (docs/rules.md, "Sunrider D6 with the Chance Die"): one test per rule, exact odds,
properties."""

from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import icepool
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.engines.d6_chance import D6Chance, parse_code
from rules.engines.dist import Dist
from rules.engines.errors import OddsTooLarge, RuleError
from rules.engines.fair import FairStream
from rules.engines.limits import MAX_CHAIN
from rules.engines.open_ended import open_ended_law
from tests.rules.helpers import (
    agrees,
    assert_distribution,
    assert_matches_below,
    assert_refused_or_usable,
    checked_roll,
    junk_requests,
    open_ended_d6,
    roles,
    sample,
    scripted_roll,
)

SYSTEM = D6Chance()
SEED = bytes(range(32, 64))
roll = functools.partial(scripted_roll, SYSTEM)


# -- dice counts ------------------------------------------------------------------------------


def test_staged_actions_take_three_dice_each():
    result = roll({"dice": 7, "actions": 2}, [2, 2, 2, 2])
    assert roles(result) == ["chance", "base", "base", "base"]


def test_staged_actions_leaving_no_base_are_refused():
    with pytest.raises(RuleError) as err:
        SYSTEM.normalise({"dice": 6, "actions": 3, "bonus": 4})
    assert err.value.field == "actions"
    SYSTEM.normalise({"dice": 4, "actions": 2})


def test_bonus_dice_are_capped_at_the_base():
    # The source's firearms 3D with 2D + 3D of bonuses rolls 6D.
    result = roll({"dice": 3, "bonus": 5}, [2] * 6)
    assert roles(result) == ["chance", "base", "base", "bonus", "bonus", "bonus"]
    assert result["bonus_dice"] == 3


def test_time_doublings_and_synergy_are_bonus_dice():
    assert roll({"dice": 3, "time_doublings": 3}, [2] * 6)["bonus_dice"] == 3
    assert roll({"dice": 3, "synergy": 9}, [2] * 4)["bonus_dice"] == 1
    assert roll({"dice": 3, "synergy": 10}, [2] * 5)["bonus_dice"] == 2
    assert (
        roll({"dice": 2, "bonus": 1, "time_doublings": 1, "synergy": 5}, [2] * 4)["bonus_dice"] == 2
    )


def test_character_point_doubles_base_only_not_the_cap():
    result = roll({"dice": 3, "bonus": 5, "character_point": True}, [2] * 9)
    assert (result["base_dice"], result["bonus_dice"]) == (6, 3)
    assert roles(result).count("bonus") == 3


def test_staged_base_is_what_a_character_point_doubles():
    result = roll({"dice": 5, "actions": 2, "character_point": True, "bonus": 9}, [2] * 6)
    assert (result["base_dice"], result["bonus_dice"]) == (4, 2)


def test_total_is_the_dice_plus_the_modifier():
    result = roll({"dice": 3, "modifier": 2}, [4, 5, 1])
    assert result["total"] == 12
    assert result["successes"] is None


# -- the Chance Die ---------------------------------------------------------------------------


def test_one_die_is_the_chance_die():
    assert roles(roll({"dice": 1}, [3])) == ["chance"]


def test_chance_die_explodes_on_six_as_long_as_sixes_come():
    result = roll({"dice": 2, "difficulty": 10}, [6, 6, 3, 4])
    assert roles(result) == ["chance", "chance", "chance", "base"]
    assert [d.get("exploded", False) for d in result["dice"]] == [False, True, True, False]
    assert result["chance"] == 15
    assert result["total"] == 19


def test_other_dice_do_not_explode():
    result = roll({"dice": 3}, [2, 6, 6])
    assert result["total"] == 14


def test_complication_on_a_first_toss_of_one():
    result = roll({"dice": 2, "difficulty": 3}, [1, 5])
    assert result["flags"] == ["complication"]
    assert result["total"] == 6  # the 1 still counts
    assert result["outcome"] == "success"


def test_a_one_after_an_explosion_is_just_a_one():
    result = roll({"dice": 1}, [6, 1])
    assert result["flags"] == []
    assert result["total"] == 7


def test_chain_stops_at_the_cap():
    result = roll({"dice": 1}, [6] * (MAX_CHAIN + 1))
    assert result["capped"] is True
    assert result["total"] == 6 * (MAX_CHAIN + 1)
    assert result["dice"][-1]["capped"] is True
    assert "cap" in result["text"]


# -- difficulty -------------------------------------------------------------------------------


def test_meet_or_beat():
    assert roll({"dice": 2, "difficulty": 7}, [3, 4])["outcome"] == "success"
    assert roll({"dice": 2, "difficulty": 8}, [3, 4])["outcome"] == "failure"


def test_no_difficulty_no_outcome():
    result = roll({"dice": 1}, [4])
    assert result["outcome"] is None
    assert SYSTEM.odds({"dice": 1})["p_success"] is None


@pytest.mark.parametrize(("rush", "added"), [(0, 0), (25, 5), (50, 10), (75, 20)])
def test_rush_adds_to_the_difficulty(rush, added):
    result = roll({"dice": 1, "difficulty": 3, "rush": rush}, [3])
    assert result["target"] == 3 + added
    assert result["outcome"] == ("success" if added == 0 else "failure")


@pytest.mark.parametrize("rush", [10, 80, 100, -25, "25", True])
def test_other_rushes_are_refused(rush):
    with pytest.raises(RuleError) as err:
        SYSTEM.normalise({"dice": 1, "rush": rush})
    assert err.value.field == "rush"


# -- limits -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        ({}, "dice"),
        ({"dice": 0}, "dice"),
        ({"dice": 1001}, "dice"),
        ({"dice": 600, "character_point": True}, "dice"),
        ({"dice": 1, "modifier": 1_000_001}, "modifier"),
        ({"dice": 1, "difficulty": -1_000_001}, "difficulty"),
        ({"dice": 1, "bonus": -1}, "bonus"),
        ({"dice": 1, "actions": 0}, "actions"),
        ({"dice": 1, "character_point": 1}, "character_point"),
        ({"dice": 1, "wild": True}, "wild"),
    ],
)
def test_bad_requests_name_the_field(request_, field):
    with pytest.raises(RuleError) as err:
        SYSTEM.normalise(request_)
    assert err.value.field == field


def test_normalised_defaults():
    assert SYSTEM.normalise({"dice": 4}) == {
        "dice": 4,
        "bonus": 0,
        "time_doublings": 0,
        "synergy": 0,
        "character_point": False,
        "actions": 1,
        "modifier": 0,
        "difficulty": None,
        "rush": 0,
    }


def test_odds_past_the_cap_say_so_quickly():
    with pytest.raises(OddsTooLarge) as err:
        SYSTEM.odds({"dice": 1000})
    assert err.value.field == "dice"
    assert SYSTEM.roll({"dice": 1000}, FairStream(SEED, "", 1))["base_dice"] == 1000


# -- exact odds -------------------------------------------------------------------------------


def test_odds_by_hand():
    one = SYSTEM.odds({"dice": 1, "difficulty": 7})
    assert one["p_success"] == pytest.approx(1 / 6, abs=1e-12)  # a 6, then anything
    assert "6" not in one["distribution"]  # one open-ended die never totals 6
    assert SYSTEM.odds({"dice": 1, "difficulty": 8})["p_success"] == pytest.approx(
        5 / 36, abs=1e-12
    )  # a 6, then not a 1
    assert SYSTEM.odds({"dice": 1, "difficulty": 13})["p_success"] == pytest.approx(
        1 / 36, abs=1e-12
    )  # 6, 6, anything
    assert one["events"] == {"complication": pytest.approx(1 / 6)}
    two = SYSTEM.odds({"dice": 2, "difficulty": 2, "rush": 25})  # 7 or more on 2 dice
    assert two["p_success"] == pytest.approx(1 - 15 / 36, abs=1e-12)


@pytest.mark.parametrize(
    "req",
    [
        {"dice": 1, "difficulty": 4},
        {"dice": 2, "modifier": 3, "difficulty": 12},
        {"dice": 2, "bonus": 1, "difficulty": 10},
        {"dice": 1, "character_point": True, "bonus": 1, "difficulty": 9, "rush": 25},
        {"dice": 5, "actions": 2, "bonus": 1, "modifier": -2},
    ],
)
def test_odds_match_brute_force_below_the_lump(req):
    counts = SYSTEM.roll(req, FairStream(SEED, "count", 1))
    n = counts["base_dice"] + counts["bonus_dice"]
    law, lump = open_ended_d6(3)  # past 3 tosses, one unknown lump
    exact: dict[int, Fraction] = {}
    for first, p in law.items():
        for rest in itertools.product(range(1, 7), repeat=n - 1):
            total = first + sum(rest) + req.get("modifier", 0)
            exact[total] = exact.get(total, Fraction(0)) + p / 6 ** (n - 1)
    safe = lump + (n - 1) + req.get("modifier", 0)  # totals below this cannot come from the lump
    assert_matches_below(SYSTEM.odds(req), exact, safe)


@pytest.mark.parametrize("n", [1, 3, 6])
def test_odds_match_icepool(n):
    die = icepool.d6.explode(depth=25) + (n - 1) @ icepool.d6
    odds = SYSTEM.odds({"dice": n})
    den = die.denominator()
    for outcome, quantity in die.items():
        if outcome < 6 * 20:
            assert odds["distribution"].get(str(outcome), 0) == pytest.approx(
                quantity / den, abs=1e-12
            )


def test_exact_sum_helpers():
    assert Dist.dice_sum([(2, 6)]).dense() == (2, [1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1])
    assert Dist.dice_sum([(7, 5)]).den == sum(Dist.dice_sum([(7, 5)]).dense()[1]) == 5**7
    law = open_ended_law(2, 1)
    lowest, weights = law.dense()
    assert lowest == 3
    assert 1 - sum(weights) / law.den < 1e-14


def test_fair_stream_sample_agrees_with_exact_odds():
    req = {"dice": 3, "difficulty": 12}
    odds = SYSTEM.odds(req)
    _, flags, wins = sample(SYSTEM, req, SEED)
    assert agrees(wins, odds["p_success"])
    assert agrees(flags["complication"], odds["events"]["complication"])


# -- properties -------------------------------------------------------------------------------

requests = st.fixed_dictionaries(
    {
        "dice": st.integers(1, 12),
        "bonus": st.integers(0, 6),
        "time_doublings": st.integers(0, 3),
        "synergy": st.integers(0, 12),
        "character_point": st.booleans(),
        "actions": st.integers(1, 3),
        "modifier": st.integers(-5, 5),
        "rush": st.sampled_from([0, 25, 50, 75]),
    },
    optional={"difficulty": st.integers(0, 40)},
)


@settings(max_examples=80, deadline=None)
@given(req=requests, seq=st.integers(1, 10**6))
def test_result_is_consistent_with_its_dice(req, seq):
    try:
        norm = SYSTEM.normalise(req)
    except RuleError as err:
        assert err.field == "actions"
        return
    result = checked_roll(SYSTEM, norm, FairStream(SEED, "prop", seq))
    dice = result["dice"]
    assert result["total"] == sum(d["value"] for d in dice) + norm["modifier"]
    base = norm["dice"] - 3 * (norm["actions"] - 1)
    bonus = min(norm["bonus"] + norm["time_doublings"] + norm["synergy"] // 5, base)
    assert result["base_dice"] == base * (2 if norm["character_point"] else 1)
    assert result["bonus_dice"] == bonus
    firsts = [d for d in dice if not d.get("exploded")]
    assert len(firsts) == result["base_dice"] + result["bonus_dice"]
    assert dice[0]["role"] == "chance"
    assert [d["role"] for d in dice if d["role"] == "bonus"] == ["bonus"] * bonus
    assert ("complication" in result["flags"]) == (dice[0]["value"] == 1)
    assert result["text"] == SYSTEM.describe(result)


@settings(max_examples=60, deadline=None)
@given(req=requests)
def test_odds_are_a_distribution(req):
    try:
        odds = SYSTEM.odds(req)
    except RuleError:
        return
    rushed = {0: 0, 25: 5, 50: 10, 75: 20}[req["rush"]]
    assert_distribution(odds, req["difficulty"] + rushed if "difficulty" in req else None)


@settings(max_examples=150, deadline=None)
@given(data=junk_requests(SYSTEM, max_size=6))
def test_bad_input_raises_rule_error_only(data):
    assert_refused_or_usable(SYSTEM, data)


# -- sheets and Character Points --------------------------------------------------------------

SHEET = {
    "attributes": {"Strength": "3D+1", "Perception": "2d"},
    "skills": {"Firearms": "4D+2", "Streetwise": "5D", "Digging": "0D"},
    "character_points": 1,
}


def test_die_codes():
    assert parse_code("4D+2", field="x") == (4, 2)
    assert parse_code(" 3d ", field="x") == (3, 0)
    assert parse_code("2D-1", field="x") == (2, -1)
    for bad in ("4", "D+2", "4D+", "four", 4):
        with pytest.raises(RuleError):
            parse_code(bad, field="x")


def test_request_from_sheet():
    req = SYSTEM.request_from_sheet(
        SHEET, {}, {"skill": "Firearms", "synergy_skill": "Streetwise", "difficulty": 15}
    )
    assert (req["dice"], req["modifier"], req["synergy"], req["difficulty"]) == (4, 2, 5, 15)
    req = SYSTEM.request_from_sheet(SHEET, {}, {"attribute": "Strength", "character_point": True})
    assert (req["dice"], req["modifier"], req["character_point"]) == (3, 1, True)


def test_request_from_sheet_errors():
    for options, field in (
        ({}, "options.skill"),
        ({"skill": "Firearms", "attribute": "Strength"}, "options.skill"),
        ({"skill": "Fencing"}, "options.skill"),
        ({"attribute": "Strength", "speed": 1}, "options.speed"),
        ({"skill": "Firearms", "synergy_skill": "Fencing"}, "options.synergy_skill"),
    ):
        with pytest.raises(RuleError) as err:
            SYSTEM.request_from_sheet(SHEET, {}, options)
        assert err.value.field == field
    broke = {**SHEET, "character_points": 0}
    with pytest.raises(RuleError) as err:
        SYSTEM.request_from_sheet(broke, {}, {"skill": "Firearms", "character_point": True})
    assert err.value.field == "options.character_point"
    with pytest.raises(RuleError) as err:
        SYSTEM.validate_sheet({"skills": {"Firearms": "lots"}})
    assert err.value.field == "sheet.skills.Firearms"


def test_quick_rolls_skip_what_cannot_be_rolled():
    labels = [r["label"] for r in SYSTEM.quick_rolls(SHEET, {})]
    assert labels == ["Strength 3D+1", "Perception 2D", "Firearms 4D+2", "Streetwise 5D"]


def test_character_points_are_the_systems_resource():
    assert SYSTEM.schema()["resources"][0]["name"] == "character_points"
