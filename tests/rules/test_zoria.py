"""zoria (docs/rules.md, "Zoria action dice"): one test per rule, exact odds, pools, properties."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import icepool
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.engines.errors import OddsTooLarge, RuleError
from rules.engines.fair import FairStream, ScriptedSource
from rules.engines.limits import MAX_CHAIN
from rules.engines.zoria import (
    ACTION_DICE,
    FLAGS,
    ODDS_MAX_ACTION_DICE,
    Zoria,
    gm_die,
    gm_pool,
    gm_pool_growth,
    insight_request,
    player_pool,
    pool_for_level,
    roll_action_die,
)
from tests.rules.helpers import (
    agrees,
    assert_brute_force_agrees,
    assert_distribution,
    assert_refused_or_usable,
    checked_roll,
    junk,
    roles,
    sample,
    scripted_roll,
)

SYSTEM = Zoria()
SEED = bytes(range(96, 128))
roll = functools.partial(scripted_roll, SYSTEM)


# -- request -----------------------------------------------------------------------------------


def test_request_is_normalised_with_the_contract_defaults():
    assert SYSTEM.normalise({}) == {
        "check": "1d20",
        "action_dice": [],
        "dc": None,
        "crit_range": 20,
        "botch_range": 1,
    }


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        ({"check": "1d20+"}, "check"),
        ({"check": 20}, "check"),
        ({"check": "3d6>4"}, "check"),
        ({"check": "x" * 501}, "check"),
        ({"action_dice": ["d5"]}, "action_dice.0"),
        ({"action_dice": ["d8", "d2"]}, "action_dice.1"),
        ({"action_dice": ["d30"]}, "action_dice.0"),
        ({"action_dice": "d8"}, "action_dice"),
        ({"dc": "15"}, "dc"),
        ({"dc": 10**7}, "dc"),
        ({"crit_range": 21}, "crit_range"),
        ({"crit_range": 1}, "crit_range"),
        ({"botch_range": 0}, "botch_range"),
        ({"botch_range": 5}, "botch_range"),
        ({"crit_range": 4, "botch_range": 4}, "crit_range"),
        ({"check": "1000d6", "action_dice": ["d4"]}, "action_dice"),
        ({"bonus": 1}, "bonus"),
        ("1d20", "request"),
    ],
)
def test_bad_requests_name_the_field(request_, field):
    with pytest.raises(RuleError) as err:
        SYSTEM.normalise(request_)
    assert err.value.field == field


def test_allowed_action_dice():
    assert ACTION_DICE == ("d3", "d4", "d6", "d8", "d10", "d12", "d14", "d16", "d20", "d24")
    SYSTEM.normalise({"action_dice": list(ACTION_DICE)})


# -- the roll ----------------------------------------------------------------------------------


def test_the_check_is_generic_notation_and_its_dice_come_first():
    result = roll({"check": "1d20+2d4+3", "action_dice": ["d6"]}, [11, 2, 3, 4])
    assert roles(result) == ["base", "base", "base", "action"]
    assert result["check_total"] == 11 + 2 + 3 + 3
    assert result["total"] == 19 + 4
    assert result["successes"] is None


def test_a_natural_roll_at_or_above_crit_range_is_a_critical_threat():
    assert roll({"check": "1d20+7"}, [20])["flags"] == ["critical-threat"]
    assert roll({"check": "1d20+7"}, [19])["flags"] == []
    assert roll({"check": "1d20+7", "crit_range": 19}, [19])["flags"] == ["critical-threat"]


def test_a_natural_roll_at_or_below_botch_range_is_a_botch_threat():
    assert roll({"check": "1d20"}, [1])["flags"] == ["botch-threat"]
    assert roll({"check": "1d20"}, [2])["flags"] == []
    assert roll({"check": "1d20", "botch_range": 4}, [4])["flags"] == ["botch-threat"]
    assert roll({"check": "1d20", "botch_range": 4}, [5])["flags"] == []


def test_natural_rolls_never_decide_success():
    result = roll({"check": "1d20", "dc": 22}, [20])
    assert (result["outcome"], result["flags"]) == ("failure", ["critical-threat"])
    result = roll({"check": "1d20+30", "dc": 10}, [1])
    assert (result["outcome"], result["flags"]) == ("success", ["botch-threat"])


def test_only_the_first_d20_decides_threats():
    result = roll({"check": "1d20+1d20"}, [10, 20])
    assert result["natural"] == 10
    assert result["flags"] == []
    # A constant before the die does not matter; a d6 first does.
    assert roll({"check": "5+1d20"}, [20])["flags"] == ["critical-threat"]
    assert roll({"check": "1d6+1d20"}, [3, 20])["flags"] == []


def test_a_check_with_no_d20_raises_no_threat_flags():
    result = roll({"check": "3d6+2"}, [1, 1, 1])
    assert result["flags"] == []
    assert result["natural"] is None
    # Nor does a d20 that is not a lone plain die (advantage, explosions).
    assert roll({"check": "2d20kh1"}, [20, 1])["flags"] == []


def test_action_dice_are_rolled_and_added():
    result = roll({"check": "1d20+1", "action_dice": ["d8", "d4"]}, [10, 3, 2])
    assert roles(result) == ["base", "action", "action"]
    assert result["action_totals"] == [3, 2]
    assert result["total"] == 11 + 3 + 2


def test_an_action_die_cascades_on_its_highest_face_without_limit():
    result = roll({"action_dice": ["d6"]}, [10, 6, 6, 6, 3])
    assert roles(result) == ["base"] + ["action"] * 4
    assert [d.get("exploded", False) for d in result["dice"][1:]] == [False, True, True, True]
    assert result["action_totals"] == [21]
    assert result["total"] == 31


def test_a_cascade_stops_at_the_cap_and_says_so():
    result = roll({"action_dice": ["d3"]}, [10] + [3] * (MAX_CHAIN + 1))
    assert len(result["dice"]) == 1 + 1 + MAX_CHAIN
    assert result["dice"][-1]["capped"] is True
    assert result["capped"] is True
    assert "cap" in result["text"]


def test_outcome_against_the_dc_is_meet_or_beat():
    assert roll({"check": "1d20+5", "dc": 15}, [10])["outcome"] == "success"
    assert roll({"check": "1d20+5", "dc": 15}, [9])["outcome"] == "failure"
    result = roll({"check": "1d20+5"}, [9])
    assert result["outcome"] is None
    assert result["margin"] is None


def test_failing_by_five_or_more_is_a_special_botch_threat():
    result = roll({"check": "1d20", "dc": 18}, [13])
    assert result["flags"] == ["special-botch-threat"]
    assert roll({"check": "1d20", "dc": 18}, [14])["flags"] == []
    # Whatever the natural roll.
    result = roll({"check": "1d20", "dc": 45, "crit_range": 20}, [20])
    assert result["flags"] == ["critical-threat", "special-botch-threat"]
    # Action dice count toward the total first.
    result = roll({"check": "1d20", "dc": 18, "action_dice": ["d4"]}, [13, 1])
    assert result["flags"] == []


# -- pools -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "pool"),
    [(0, (2, 3)), (1, (3, 4)), (5, (3, 4)), (6, (4, 6)), (10, (4, 6)), (11, (5, 8)),
     (15, (5, 8)), (16, (6, 10)), (20, (6, 10)), (21, (7, 12)), (25, (7, 12)), (26, (8, 14)),
     (30, (8, 14)), (31, (9, 16)), (35, (9, 16)), (36, (10, 16)), (40, (10, 16)),
     (41, (11, 16)), (45, (11, 16)), (46, (12, 16)), (50, (12, 16)), (51, (13, 16)),
     (100, (22, 16)), (1000, (202, 16))],
)  # fmt: skip
def test_player_pool_by_level(level, pool):
    assert pool_for_level(level) == pool


@pytest.mark.parametrize("level", [-1, 1001, 2.5, "3", True])
def test_bad_levels_are_refused(level):
    with pytest.raises(RuleError) as err:
        pool_for_level(level)
    assert err.value.field == "level"


@pytest.mark.parametrize(
    ("player", "gm"),
    [(3, 6), (4, 8), (6, 10), (8, 12), (10, 14), (12, 16), (14, 20), (16, 24)],
)
def test_gm_die_type_from_the_highest_player_die_type(player, gm):
    assert gm_die(player) == gm


def test_gm_die_refuses_other_dice():
    with pytest.raises(RuleError):
        gm_die(20)


def test_gm_pool_is_players_plus_the_largest_starting_pool():
    # Three players, one with a level-11 character (5d8, the table stands): 3 + 5 = 8 d12.
    assert gm_pool([(5, 8), (3, 4), (3, 4)]) == (8, 12)
    # Six players, the largest pool four dice: 10.
    assert gm_pool([(4, 6)] + [(3, 4)] * 5) == (10, 10)
    # A divided pool counts all its dice; its highest type counts.
    assert gm_pool([[(2, 6), (1, 4)], (3, 4)]) == (5, 10)
    # Pools straight from JSON (lists, not tuples) read the same.
    assert gm_pool([[5, 8], [[3, 4]], [3, 4]]) == (8, 12)
    with pytest.raises(RuleError):
        gm_pool([])


def test_a_late_player_grows_the_gm_pool_and_die_never_shrinks_it():
    before = [(5, 8), (3, 4)]
    assert gm_pool_growth(before=before, after=[*before, (6, 10)]) == (2, 14)
    assert gm_pool_growth(before=before, after=[*before, (2, 3)]) == (1, 12)


def test_several_characters_highest_option():
    assert player_pool([2, 8]) == [(4, 6)]
    assert player_pool([2, 8], option="highest") == [(4, 6)]
    assert player_pool([12]) == [(5, 8)]


def test_several_characters_balanced_option():
    # Within 3 levels: the highest's pool.
    assert player_pool([8, 11], option="balanced") == [(5, 8)]
    # 4 or more apart: one die fewer of the highest type, or one more of the lower type.
    assert player_pool([3, 12], option="balanced", balanced_choice="fewer") == [(4, 8)]
    assert player_pool([3, 12], option="balanced", balanced_choice="extra") == [(6, 4)]


def test_several_characters_divided_option():
    assert player_pool([2, 8], option="divided") == [(2, 6), (1, 4)]
    assert player_pool([8, 9], option="divided") == [(4, 6)]
    assert player_pool([1, 1, 1, 1], option="divided") == []


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"levels": []}, "levels"),
        ({"levels": [3, -2]}, "levels.1"),
        ({"levels": [3], "option": "average"}, "option"),
        ({"levels": [3], "balanced_choice": "both"}, "balanced_choice"),
    ],
)
def test_player_pool_refuses_bad_input(kwargs, field):
    with pytest.raises(RuleError) as err:
        player_pool(**kwargs)
    assert err.value.field == field


def test_using_a_pool_die_rolls_one_cascading_action_die():
    source = ScriptedSource([4, 4, 1])
    records = roll_action_die(4, source)
    assert source.exhausted
    assert [r["value"] for r in records] == [4, 4, 1]
    assert [r["role"] for r in records] == ["action"] * 3
    assert [r.get("exploded", False) for r in records] == [False, True, True]
    with pytest.raises(RuleError):
        roll_action_die(5, ScriptedSource([]))


def test_the_insight_roll_is_d20_plus_level_plus_modifier():
    assert insight_request(7, 2, dc=15)["check"] == "1d20+9"
    assert insight_request(1, -3)["check"] == "1d20-2"
    assert insight_request(0)["check"] == "1d20"


# -- exact odds --------------------------------------------------------------------------------


def test_hand_computed_check_odds():
    answer = SYSTEM.odds({"check": "1d20+7", "dc": 15})
    assert answer["p_success"] == pytest.approx(13 / 20, abs=1e-15)
    assert answer["events"] == pytest.approx(
        {"critical-threat": 1 / 20, "botch-threat": 1 / 20, "special-botch-threat": 3 / 20},
        abs=1e-15,
    )
    answer = SYSTEM.odds({"check": "1d20", "crit_range": 18, "botch_range": 4})
    assert answer["events"]["critical-threat"] == pytest.approx(3 / 20)
    assert answer["events"]["botch-threat"] == pytest.approx(4 / 20)
    assert answer["events"]["special-botch-threat"] == 0
    assert answer["p_success"] is None


def test_hand_computed_cascading_die():
    # A lone d4 action die on a check of 0: P(4m + r) = (1/4)^m * 1/4 for r = 1..3.
    answer = SYSTEM.odds({"check": "0", "action_dice": ["d4"]})
    for m in range(5):
        for r in range(1, 4):
            expected = Fraction(1, 4) ** m / 4
            assert answer["distribution"][str(4 * m + r)] == pytest.approx(
                float(expected), abs=1e-13
            )
    assert "4" not in answer["distribution"]
    assert answer["events"] == dict.fromkeys(FLAGS, 0.0)


@pytest.mark.parametrize(
    "request_",
    [
        {"check": "1d20+3", "action_dice": ["d6", "d8"], "dc": 20},
        {"check": "1d20-2", "action_dice": ["d3", "d3", "d24"], "dc": 12, "crit_range": 19,
         "botch_range": 3},
        {"check": "4d6kh3+1", "action_dice": ["d4"], "dc": 14},
    ],
)  # fmt: skip
def test_exact_odds_match_icepool(request_):
    expr = {
        "1d20+3": icepool.d20 + 3,
        "1d20-2": icepool.d20 - 2,
        "4d6kh3+1": icepool.d6.highest(4, 3) + 1,
    }[request_["check"]]
    die = expr
    for action in request_["action_dice"]:
        die = die + icepool.d(int(action[1:])).explode(depth=40)
    answer = SYSTEM.odds(request_)
    for total, p in answer["distribution"].items():
        assert p == pytest.approx(float(die.probability(int(total))), abs=1e-12)
    dc = request_["dc"]
    assert answer["p_success"] == pytest.approx(float(die.probability(">=", dc)), abs=1e-12)
    special = float(die.probability("<=", dc - 5))
    assert answer["events"]["special-botch-threat"] == pytest.approx(special, abs=1e-12)
    first_d20 = request_["check"].startswith("1d20")
    crit = (21 - request_.get("crit_range", 20)) / 20 if first_d20 else 0
    botch = request_.get("botch_range", 1) / 20 if first_d20 else 0
    assert answer["events"]["critical-threat"] == pytest.approx(crit, abs=1e-15)
    assert answer["events"]["botch-threat"] == pytest.approx(botch, abs=1e-15)


def test_exact_odds_match_brute_force_enumeration_of_the_roller():
    request = {"check": "1d20+1", "action_dice": ["d3", "d4"], "dc": 12, "crit_range": 19,
               "botch_range": 2}  # fmt: skip
    answer = assert_brute_force_agrees(SYSTEM, request, "total", request["dc"], prune=1e-8)
    assert set(answer["events"]) == set(FLAGS)


def test_odds_past_the_cap_say_so_and_at_the_cap_are_quick():
    with pytest.raises(OddsTooLarge) as err:
        SYSTEM.odds({"action_dice": ["d4"] * (ODDS_MAX_ACTION_DICE + 1)})
    assert err.value.field == "action_dice"
    request = {"check": "3d6+1d20", "action_dice": ["d24"] * ODDS_MAX_ACTION_DICE, "dc": 200}
    # Answered at all means answered within the odds budget (its work estimate).
    answer = SYSTEM.odds(request)
    assert math.fsum(answer["distribution"].values()) == pytest.approx(1, abs=1e-9)
    # Rolling is never capped.
    SYSTEM.roll({"action_dice": ["d3"] * 500}, FairStream(SEED, "", 1))


def test_seeded_fair_rolls_agree_with_the_exact_odds():
    request = {"check": "1d20+4", "action_dice": ["d6"], "dc": 16, "crit_range": 19}
    answer = SYSTEM.odds(request)
    _, flags, wins = sample(SYSTEM, request, SEED)
    assert agrees(wins, answer["p_success"])
    for flag, p in answer["events"].items():
        assert agrees(flags[flag], p), flag


# -- properties --------------------------------------------------------------------------------

checks = st.sampled_from(["1d20", "1d20+7", "d20-3", "5+1d20", "2d20kh1+2", "3d6", "1d20+1d6",
                          "d20!+1", "1d8+2"])  # fmt: skip
zoria_requests = st.fixed_dictionaries(
    {"check": checks, "action_dice": st.lists(st.sampled_from(ACTION_DICE), max_size=4)},
    optional={
        "dc": st.integers(-5, 40),
        "crit_range": st.integers(15, 20),
        "botch_range": st.integers(1, 4),
    },
)


@settings(max_examples=150, deadline=None)
@given(zoria_requests, st.integers(1, 10**6))
def test_total_is_the_check_plus_every_action_die_and_every_die_is_listed(request, seq):
    result = checked_roll(SYSTEM, request, FairStream(SEED, "prop", seq))
    action = [d for d in result["dice"] if d["role"] == "action"]
    assert result["total"] == result["check_total"] + sum(d["value"] for d in action)
    assert sum(result["action_totals"]) == sum(d["value"] for d in action)
    assert len([d for d in action if not d.get("exploded")]) == len(request["action_dice"])
    req = result["request"]
    natural = result["natural"]
    assert ("critical-threat" in result["flags"]) == (
        natural is not None and natural >= req["crit_range"]
    )
    assert ("botch-threat" in result["flags"]) == (
        natural is not None and natural <= req["botch_range"]
    )
    if req["dc"] is None:
        assert result["outcome"] is None
    else:
        assert result["outcome"] == ("success" if result["total"] >= req["dc"] else "failure")
        assert ("special-botch-threat" in result["flags"]) == (result["total"] <= req["dc"] - 5)


@settings(max_examples=60, deadline=None)
@given(zoria_requests)
def test_odds_sum_to_one(request):
    answer = SYSTEM.odds(request)
    assert_distribution(answer, answer["request"]["dc"])
    assert set(answer["events"]) == set(FLAGS)


anything = junk(ints=30, text=8, items=4, leaves=12)
almost = st.fixed_dictionaries(
    {},
    optional={
        "check": st.one_of(
            st.text(max_size=12), st.sampled_from(["1d20+", "d0", "1d20/0", "dF"]), anything
        ),
        "action_dice": st.one_of(
            st.lists(st.sampled_from(["d3", "d5", "d24", 8, None]), max_size=3), anything
        ),
        "dc": anything,
        "crit_range": anything,
        "botch_range": anything,
    },
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(anything, almost))
def test_bad_requests_raise_rule_error_only(request):
    assert_refused_or_usable(SYSTEM, request)


# -- sheet, settings, quick rolls --------------------------------------------------------------

SHEET = {
    "level": 7,
    "class": "Wizard",
    "abilities": {"Reason": 3, "Intuition": 1},
    "skills": {"Climb": 4, "Defense": 14},
    "class_bonus_dice": ["d6"],
}


def test_request_from_sheet():
    request = SYSTEM.request_from_sheet(
        SHEET, {}, {"skill": "Climb", "dc": 18, "action_dice": ["d6"]}
    )
    assert request["check"] == "1d20+4"
    assert (request["dc"], request["action_dice"]) == (18, ["d6"])
    insight = SYSTEM.request_from_sheet(SHEET, {}, {"insight": "reason", "modifier": -1})
    assert insight["check"] == "1d20+9"  # 7 + 3 - 1
    with pytest.raises(RuleError) as err:
        SYSTEM.request_from_sheet(SHEET, {}, {"skill": "Swim"})
    assert err.value.field == "options.skill"


def test_quick_rolls_are_valid_requests():
    rolls = SYSTEM.quick_rolls(SHEET, {})
    assert [r["label"] for r in rolls] == ["d20", "Climb", "Defense", "Insight (Reason)"]
    for r in rolls:
        assert SYSTEM.normalise(r["request"]) == r["request"]


def test_settings_pick_the_several_characters_option():
    assert SYSTEM.validate_settings({}) == {
        "multi_character": "highest",
        "balanced_choice": "fewer",
    }
    settings_ = {"multi_character": "divided"}
    assert SYSTEM.starting_pool([2, 8], settings_) == [(2, 6), (1, 4)]
    with pytest.raises(RuleError) as err:
        SYSTEM.validate_settings({"multi_character": "most"})
    assert err.value.field == "settings.multi_character"
