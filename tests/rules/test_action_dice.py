"""action-dice (docs/rules.md, "The Action Dice System"): one test per rule, exact odds,
properties."""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import icepool
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.engines.action_dice import (
    ActionDice,
    average_total,
    defense_rating,
    group_attack,
    keep_top,
    new_round,
    parse_trait,
    round_defense,
    spend_action_dice,
    top_plain,
    top_uniform,
)
from rules.engines.errors import OddsTooLarge, RuleError
from rules.engines.fair import FairStream
from rules.engines.limits import MAX_CHAIN
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

SYSTEM = ActionDice()
SEED = bytes(range(64, 96))
roll = functools.partial(scripted_roll, SYSTEM)


# -- the roll ---------------------------------------------------------------------------------


def test_action_dice_are_open_ended_and_stay_one_die():
    result = roll({"action_dice": 1, "skill_dice": 1}, [6, 6, 2, 4])
    assert roles(result) == ["action", "action", "action", "skill"]
    assert [d.get("exploded", False) for d in result["dice"]] == [False, True, True, False]
    assert [d["group"] for d in result["dice"]] == [0, 0, 0, 1]
    assert result["total"] == 18


def test_skill_dice_are_plain():
    result = roll({"skill_dice": 2}, [6, 6])
    assert result["total"] == 12


def test_in_a_sequence_every_action_die_is_rolled():
    result = roll({"action_dice": 3, "skill_dice": 1}, [1, 2, 3, 4])
    assert roles(result) == ["action"] * 3 + ["skill"]
    assert result["total"] == 10


def test_outside_a_sequence_one_action_die_and_plus_one_per_further_die():
    result = roll({"action_dice": 3, "skill_dice": 1, "sequence": False}, [5, 4])
    assert roles(result) == ["action", "skill"]
    assert result["flat_bonus"] == 2
    assert result["total"] == 11


def test_max_dice_counts_the_highest():
    result = roll({"action_dice": 1, "skill_dice": 4, "max_dice": 3}, [6, 4, 2, 5, 1, 3])
    assert [d.get("dropped", False) for d in result["dice"]] == [
        False,
        False,
        True,
        False,
        True,
        False,
    ]
    assert result["total"] == 10 + 5 + 3
    assert result["counted"] == 3


def test_an_exploded_action_die_counts_as_one_die_for_max_dice():
    result = roll({"action_dice": 1, "skill_dice": 1, "max_dice": 1}, [6, 1, 6])
    assert result["total"] == 7
    assert [d.get("dropped", False) for d in result["dice"]] == [False, False, True]


def test_flat_bonus_does_not_count_against_max_dice():
    result = roll({"action_dice": 3, "skill_dice": 2, "max_dice": 3, "sequence": False}, [2, 3, 4])
    assert not any(d.get("dropped") for d in result["dice"])
    assert result["total"] == 9 + 2


def test_passive_roll_is_skill_dice_only():
    result = roll({"action_dice": 0, "skill_dice": 2}, [3, 4])
    assert roles(result) == ["skill", "skill"]
    assert result["total"] == 7


@pytest.mark.parametrize(("dice", "average"), [(0, 0), (1, 4), (2, 7), (3, 11), (4, 14)])
def test_average_is_three_and_a_half_per_die_rounded_up(dice, average):
    result = roll({"skill_dice": dice, "average": True, "modifier": 1}, [])
    assert result["dice"] == []
    assert result["total"] == average + 1
    assert average_total(dice) == average


def test_average_counts_only_max_dice():
    assert roll({"skill_dice": 5, "max_dice": 2, "average": True}, [])["total"] == 7


def test_average_is_for_passive_rolls_only():
    with pytest.raises(RuleError) as err:
        SYSTEM.normalise({"action_dice": 1, "skill_dice": 2, "average": True})
    assert err.value.field == "average"


def test_degree_is_the_margin_and_a_tie_succeeds():
    tie = roll({"skill_dice": 2, "difficulty": 7}, [3, 4])
    assert (tie["outcome"], tie["degree"]) == ("success", 0)
    miss = roll({"skill_dice": 2, "difficulty": 9}, [3, 4])
    assert (miss["outcome"], miss["degree"]) == ("failure", -2)
    none = roll({"skill_dice": 1}, [3])
    assert (none["outcome"], none["degree"]) == (None, None)


def test_chain_stops_at_the_cap():
    result = roll({"action_dice": 1}, [6] * (MAX_CHAIN + 1))
    assert result["capped"] is True
    assert result["total"] == 6 * (MAX_CHAIN + 1)


def test_normalised_defaults():
    assert SYSTEM.normalise({}) == {
        "action_dice": 0,
        "skill_dice": 0,
        "max_dice": None,
        "sequence": True,
        "modifier": 0,
        "difficulty": None,
        "average": False,
    }


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        ({"action_dice": 600, "skill_dice": 401}, "skill_dice"),
        ({"action_dice": -1}, "action_dice"),
        ({"skill_dice": 1001}, "skill_dice"),
        ({"max_dice": 0}, "max_dice"),
        ({"modifier": 1_000_001}, "modifier"),
        ({"difficulty": "hard"}, "difficulty"),
        ({"sequence": "no"}, "sequence"),
        ({"explode": True}, "explode"),
    ],
)
def test_bad_requests_name_the_field(request_, field):
    with pytest.raises(RuleError) as err:
        SYSTEM.normalise(request_)
    assert err.value.field == field


def test_odds_past_the_caps_say_so_quickly():
    # Refused by the odds budget's work estimate, before the work (see docs/benchmarks.md
    # for wall-clock figures).
    for req in (
        {"action_dice": 200, "skill_dice": 10},
        {"skill_dice": 1000},
        {"action_dice": 11, "skill_dice": 5, "max_dice": 3},
        {"action_dice": 1, "skill_dice": 40, "max_dice": 3},
    ):
        with pytest.raises(OddsTooLarge):
            SYSTEM.odds(req)
    assert len(SYSTEM.roll({"skill_dice": 1000}, FairStream(SEED, "", 1))["dice"]) == 1000


# -- combat -----------------------------------------------------------------------------------


def test_defense_rating():
    assert defense_rating(7) == 11  # Fencing +7d6 from the source
    assert defense_rating(2, 3) == 9
    with pytest.raises(RuleError):
        defense_rating(-1)


def test_round_defense_takes_the_better_not_both():
    assert round_defense(10, 9) == {"against_opponent": 10, "against_everyone_else": 4}
    assert round_defense(3, 9) == {"against_opponent": 4, "against_everyone_else": 4}
    assert round_defense(None, 9) == {"against_opponent": 4, "against_everyone_else": 4}
    assert round_defense(6) == {"against_opponent": 6, "against_everyone_else": 0}
    assert round_defense() == {"against_opponent": 0, "against_everyone_else": 0}


def test_group_attack():
    assert group_attack(15) == {"per_member": 7, "target_multiplier": 1}
    assert group_attack(16, 2) == {"per_member": 8, "target_multiplier": 3}
    with pytest.raises(RuleError):
        group_attack(10, -1)


def test_action_dice_per_round():
    left = new_round({"action_dice": 3})
    assert spend_action_dice(left, 2) == 1
    with pytest.raises(RuleError):
        spend_action_dice(1, 2)


# -- exact odds -------------------------------------------------------------------------------


def test_top_helpers_match_brute_force():
    for low, sixes, keep in itertools.product(range(4), range(4), range(5)):
        lowest, ways = top_plain(low, sixes, keep).dense()
        seen: dict[int, int] = {}
        for combo in itertools.product(*([range(1, 6)] * low + [range(1, 7)] * sixes)):
            s = sum(sorted(combo, reverse=True)[:keep])
            seen[s] = seen.get(s, 0) + 1
        assert {lowest + i: w for i, w in enumerate(ways) if w} == seen
    assert top_uniform(4, 2, 6).dense() == top_plain(0, 4, 2).dense()


@pytest.mark.parametrize(
    "req",
    [
        {"action_dice": 1, "skill_dice": 2, "difficulty": 8},
        {"action_dice": 2, "skill_dice": 1, "max_dice": 2, "difficulty": 9},
        {"action_dice": 2, "skill_dice": 2, "max_dice": 1},
        {"action_dice": 3, "skill_dice": 0, "max_dice": 2},
        {"action_dice": 3, "skill_dice": 2, "sequence": False, "max_dice": 2, "modifier": 1},
        {"action_dice": 0, "skill_dice": 4, "max_dice": 2, "difficulty": 10},
    ],
)
def test_odds_match_brute_force_below_the_explosions(req):
    norm = SYSTEM.normalise(req)
    action = norm["action_dice"] if norm["sequence"] else min(norm["action_dice"], 1)
    flat = 0 if norm["sequence"] else max(norm["action_dice"] - 1, 0)
    keep = norm["max_dice"] or action + norm["skill_dice"]
    law, past = open_ended_d6(2)
    exact: dict[int, Fraction] = {}
    for actions in itertools.product(law.items(), repeat=action):
        p = math.prod((q for _, q in actions), start=Fraction(1))
        for skills in itertools.product(range(1, 7), repeat=norm["skill_dice"]):
            values = sorted([v for v, _ in actions] + list(skills), reverse=True)
            total = sum(values[:keep]) + flat + norm["modifier"]
            exact[total] = exact.get(total, Fraction(0)) + p / 6 ** norm["skill_dice"]
    # A die past the enumerated tosses shows at least ``past``, so every total it makes is
    # at least past + flat + modifier: the exact law below that is complete.
    safe = past + flat + norm["modifier"]
    odds = SYSTEM.odds(req)
    assert_matches_below(odds, exact, safe)
    if "difficulty" in req and req["difficulty"] < safe:
        below = sum(p for v, p in exact.items() if v < req["difficulty"])
        assert odds["p_success"] == pytest.approx(1 - float(below), abs=1e-12)


@pytest.mark.parametrize(
    ("action", "skill", "keep"), [(1, 3, 2), (2, 3, 3), (3, 1, 1), (4, 0, 2), (2, 5, 4)]
)
def test_keep_highest_matches_icepool(action, skill, keep):
    exploding = icepool.d6.explode(depth=20)
    die = icepool.Pool([exploding] * action + [icepool.d6] * skill).highest(keep).sum()
    lowest, weights = keep_top(action, skill, keep).dense()
    mass = sum(weights)
    den = die.denominator()
    for outcome, quantity in die.items():
        if outcome < 6 * 15:
            mine = weights[outcome - lowest] / mass if 0 <= outcome - lowest < len(weights) else 0
            assert mine == pytest.approx(quantity / den, abs=1e-12)


def test_odds_by_hand():
    assert SYSTEM.odds({"action_dice": 1, "difficulty": 7})["p_success"] == pytest.approx(
        1 / 6, abs=1e-12
    )
    assert SYSTEM.odds({"action_dice": 2, "skill_dice": 0, "max_dice": 1, "difficulty": 7})[
        "p_success"
    ] == pytest.approx(1 - (5 / 6) ** 2, abs=1e-12)
    average = SYSTEM.odds({"skill_dice": 3, "average": True, "difficulty": 11})
    assert average["distribution"] == {"11": 1.0}
    assert average["p_success"] == 1.0
    assert average["events"] == {}


def test_fair_stream_sample_agrees_with_exact_odds():
    req = {"action_dice": 2, "skill_dice": 3, "max_dice": 4, "difficulty": 17}
    odds = SYSTEM.odds(req)
    _, _, wins = sample(SYSTEM, req, SEED)
    assert agrees(wins, odds["p_success"])


# -- properties -------------------------------------------------------------------------------

requests = st.fixed_dictionaries(
    {
        "action_dice": st.integers(0, 5),
        "skill_dice": st.integers(0, 8),
        "max_dice": st.none() | st.integers(1, 10),
        "sequence": st.booleans(),
        "modifier": st.integers(-5, 5),
    },
    optional={"difficulty": st.integers(0, 40), "average": st.booleans()},
)


@settings(max_examples=80, deadline=None)
@given(req=requests, seq=st.integers(1, 10**6))
def test_result_is_consistent_with_its_dice(req, seq):
    try:
        norm = SYSTEM.normalise(req)
    except RuleError as err:
        assert err.field == "average"
        return
    result = checked_roll(SYSTEM, norm, FairStream(SEED, "prop", seq))
    dice = result["dice"]
    groups: dict[int, int] = {}
    for d in dice:
        groups[d["group"]] = groups.get(d["group"], 0) + d["value"]
    dropped = {d["group"] for d in dice if d.get("dropped")}
    counted = [v for g, v in groups.items() if g not in dropped]
    if norm["average"]:
        assert dice == []
    else:
        assert result["total"] == sum(counted) + result["flat_bonus"] + norm["modifier"]
        assert len(counted) == result["counted"]
        if dropped:
            assert min(counted) >= max(groups[g] for g in dropped)
    rolled_action = norm["action_dice"] if norm["sequence"] else min(norm["action_dice"], 1)
    assert sum(1 for d in dice if d["role"] == "action" and not d.get("exploded")) == (
        0 if norm["average"] else rolled_action
    )
    if "difficulty" in req:
        assert result["degree"] == result["total"] - req["difficulty"]
    assert result["text"] == SYSTEM.describe(result)


@settings(max_examples=60, deadline=None)
@given(req=requests)
def test_odds_are_a_distribution(req):
    try:
        odds = SYSTEM.odds(req)
    except RuleError:
        return
    assert_distribution(odds, req.get("difficulty"))


@settings(max_examples=150, deadline=None)
@given(data=junk_requests(SYSTEM, max_size=6))
def test_bad_input_raises_rule_error_only(data):
    assert_refused_or_usable(SYSTEM, data)


# -- sheets -----------------------------------------------------------------------------------

SHEET = {
    "action_dice": 3,
    "attributes": {"Running": "+2d6 (3d6; 12m)", "Toughness": "2d6", "Strength": "+0d6 (1d6)"},
    "skills": {"Driving": "+1d6"},
    "combat_skills": {"Fencing": "+7d6"},
}


def test_traits():
    assert parse_trait("+4d6 (5d6)", field="x") == {"active": True, "dice": 4, "max_dice": 5}
    assert parse_trait("2d6", field="x") == {"active": False, "dice": 2, "max_dice": None}
    with pytest.raises(RuleError):
        parse_trait("+4", field="x")


def test_request_from_sheet():
    req = SYSTEM.request_from_sheet(SHEET, {}, {"trait": "Running", "difficulty": 10})
    assert (req["action_dice"], req["skill_dice"], req["max_dice"]) == (1, 2, 3)
    req = SYSTEM.request_from_sheet(SHEET, {}, {"trait": "Fencing", "action_dice": 3})
    assert (req["action_dice"], req["skill_dice"]) == (3, 7)
    passive = SYSTEM.request_from_sheet(SHEET, {"average_passive": True}, {"trait": "Toughness"})
    assert (passive["action_dice"], passive["average"]) == (0, True)
    with pytest.raises(RuleError) as err:
        SYSTEM.request_from_sheet(SHEET, {}, {"trait": "Fencing", "action_dice": 4})
    assert err.value.field == "options.action_dice"
    with pytest.raises(RuleError) as err:
        SYSTEM.request_from_sheet(SHEET, {}, {"trait": "Flying"})
    assert err.value.field == "options.trait"
    with pytest.raises(RuleError) as err:
        SYSTEM.validate_sheet({"skills": {"Driving": "lots"}})
    assert err.value.field == "sheet.skills.Driving"


def test_quick_rolls():
    labels = [r["label"] for r in SYSTEM.quick_rolls(SHEET, {})]
    assert labels == [
        "Running +2d6 (3d6)",
        "Toughness 2d6",
        "Strength +0d6 (1d6)",
        "Driving +1d6",
        "Fencing +7d6",
    ]
    assert SYSTEM.validate_sheet({})["attributes"]["Running"] == "+2d6 (3d6)"


def test_a_sheet_keeps_restricted_action_dice_by_class_or_skill() -> None:
    """Action dice usable only for one class of actions or one skill, per round (the table deals
    them as stacks of their own)."""
    system = ActionDice()
    assert system.validate_sheet({"restricted_dice": {"Firearms": 2}})["restricted_dice"] == {
        "Firearms": 2
    }
    assert system.validate_sheet({})["restricted_dice"] == {}
    with pytest.raises(RuleError) as caught:
        system.validate_sheet({"restricted_dice": {"Firearms": 21}})
    assert caught.value.field == "sheet.restricted_dice.Firearms"
    assert "restricted_dice" in [f["name"] for f in system.schema()["sheet"]]
