"""discordian (docs/rules.md, "Kingyak's Workshop"): one test per rule, exact odds, properties."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.engines.discordian import (
    FLAGS,
    ODDS_MAX_CHALLENGE,
    ODDS_MAX_POOL,
    PC_DICE,
    Discordian,
    roll_discord_die,
)
from rules.engines.discordian.odds import SideOdds
from rules.engines.errors import OddsTooLarge, RuleError
from rules.engines.fair import FairStream, ScriptedSource
from rules.engines.limits import MAX_CHAIN, ODDS_TAIL
from tests.rules.helpers import (
    agrees,
    assert_brute_force_agrees,
    assert_distribution,
    assert_refused_or_usable,
    checked_roll,
    drawn,
    junk,
    roles,
    sample,
    scripted_roll,
)

SYSTEM = Discordian()
SEED = bytes(range(64, 96))
roll = functools.partial(scripted_roll, SYSTEM)


# -- request -----------------------------------------------------------------------------------


def test_request_is_normalised_with_the_contract_defaults():
    assert SYSTEM.normalise({"pool": ["d6", "d8"]}) == {
        "pool": ["d6", "d8"],
        "tn": 5,
        "challenge": 0,
        "discord": None,
        "protect": 0,
        "luck_die": "d6",
    }
    opp = SYSTEM.normalise({"pool": ["d6"], "opponent": {"pool": ["d8"], "tn": 4}})["opponent"]
    assert opp == {"pool": ["d8"], "tn": 4, "challenge": 0, "protect": 0, "luck_die": "d6"}


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        ({}, "pool"),
        ({"pool": []}, "pool"),
        ({"pool": ["d20"]}, "pool.0"),
        ({"pool": ["d6", "d7"]}, "pool.1"),
        ({"pool": "d6"}, "pool"),
        ({"pool": ["d6"], "tn": 3}, "tn"),
        ({"pool": ["d6"], "tn": 7}, "tn"),
        ({"pool": ["d6"], "tn": "5"}, "tn"),
        ({"pool": ["d6"], "challenge": -1}, "challenge"),
        ({"pool": ["d6"], "discord": 0}, "discord"),
        ({"pool": ["d6"], "discord": 21}, "discord"),
        ({"pool": ["d6"], "protect": -1}, "protect"),
        ({"pool": ["d6"], "luck_die": "d20"}, "luck_die"),
        ({"pool": ["d6"], "colour": "red"}, "colour"),
        ({"pool": ["d6"], "opponent": {"pool": []}}, "opponent.pool"),
        ({"pool": ["d6"], "opponent": {"pool": ["d6"], "tn": 9}}, "opponent.tn"),
        ({"pool": ["d6"], "opponent": {"pool": ["d6"], "discord": 3}}, "opponent.discord"),
        ({"pool": ["d6"] * 600, "challenge": 401}, "pool"),
        ({"pool": ["d6"] * 500, "opponent": {"pool": ["d6"] * 500, "challenge": 1}}, "pool"),
        ([], "request"),
    ],
)
def test_bad_requests_name_the_field(request_, field):
    with pytest.raises(RuleError) as err:
        SYSTEM.normalise(request_)
    assert err.value.field == field


def test_pool_dice_run_from_d4_to_d12():
    assert PC_DICE == ("d4", "d6", "d8", "d10", "d12")
    SYSTEM.normalise({"pool": list(PC_DICE), "luck_die": "d12"})


# -- TN and challenge dice ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("die", "tn", "value", "successes"),
    [
        ("d12", 4, 12, 3),
        ("d12", 4, 11, 2),
        ("d12", 4, 7, 1),
        ("d12", 5, 10, 2),
        ("d12", 5, 9, 1),
        ("d12", 6, 12, 2),
        ("d12", 6, 11, 1),
        ("d10", 6, 6, 1),
        ("d6", 6, 4, 0),
        ("d4", 4, 4, 1),
        ("d4", 5, 4, 0),
    ],
)
def test_a_pc_die_scores_floor_value_over_tn(die, tn, value, successes):
    result = roll({"pool": [die], "tn": tn}, [value])
    assert result["successes"] == successes
    assert result["dice"][0]["successes"] == successes


def test_challenge_dice_hit_on_5_or_6_and_each_cancels_a_success():
    result = roll({"pool": ["d12"], "tn": 4, "challenge": 3}, [12, 5, 6, 4])
    assert roles(result) == ["base", "challenge", "challenge", "challenge"]
    assert [d["hit"] for d in result["dice"][1:]] == [True, True, False]
    assert (result["successes"], result["challenge_hits"], result["net"]) == (3, 2, 1)


def test_challenge_dice_are_untouched_by_the_discord_die_and_the_law_of_fives():
    # Discord 5: a challenge 5 is neither eliminated nor given a bonus die; it still hits.
    result = roll({"pool": ["d6"], "challenge": 1, "discord": 5}, [6, 5])
    assert roles(result) == ["base", "challenge"]
    assert result["challenge_hits"] == 1
    assert result["net"] == 0


# -- the Discord Die ---------------------------------------------------------------------------


def test_the_discord_die_eliminates_every_matching_pc_die():
    result = roll({"pool": ["d6", "d6", "d8"], "discord": 3}, [3, 3, 6])
    assert roles(result) == ["eliminated", "eliminated", "base"]
    assert result["successes"] == 1
    assert "successes" not in result["dice"][0]


def test_protection_saves_the_dice_with_the_most_sides_first():
    result = roll({"pool": ["d6", "d12", "d8"], "discord": 3, "protect": 2}, [3, 3, 3])
    assert roles(result) == ["eliminated", "base", "base"]
    assert [d.get("protected", False) for d in result["dice"]] == [False, True, True]
    assert result["protected"] == 2
    # Protected dice count as survivors: two 3s make a fluke.
    assert result["flags"] == ["fluke"]


def test_protection_is_spent_only_on_dice_that_match():
    result = roll({"pool": ["d6", "d8"], "discord": 3, "protect": 3}, [3, 4])
    assert result["protected"] == 1
    assert roles(result) == ["base", "base"]


def test_discord_five_eliminates_unprotected_fives_and_switches_on_infinite_fives():
    # Two 5s, one protection: the first (same size, drawn first) survives and its bonus
    # dice chain on 5s.
    result = roll({"pool": ["d6", "d6"], "discord": 5, "protect": 1}, [5, 5, 5, 5, 2])
    assert roles(result) == ["base", "eliminated", "bonus", "bonus", "bonus"]
    assert result["infinite_fives"] is True
    assert result["successes"] == 3  # the protected 5, then 5, 5, 2 on bonus dice
    assert result["flags"] == []  # one survivor: no break


def test_no_discord_die_eliminates_nothing():
    result = roll({"pool": ["d6", "d8"], "discord": None}, [3, 4])
    assert roles(result) == ["base", "base"]


# -- the Law of Fives --------------------------------------------------------------------------


def test_each_surviving_five_adds_a_bonus_die_of_the_same_size():
    result = roll({"pool": ["d8", "d6"]}, [5, 2, 7])
    assert roles(result) == ["base", "base", "bonus"]
    assert result["dice"][2]["sides"] == 8
    assert result["dice"][2]["from"] == 0
    assert result["successes"] == 2


def test_without_infinite_fives_a_bonus_five_adds_no_further_die():
    result = roll({"pool": ["d6"]}, [5, 5])
    assert roles(result) == ["base", "bonus"]
    assert result["successes"] == 2
    assert result["infinite_fives"] is False


def test_bonus_dice_are_not_subject_to_the_discord_die():
    result = roll({"pool": ["d8"], "discord": 7}, [5, 7])
    assert roles(result) == ["base", "bonus"]
    assert result["successes"] == 2


def test_eliminated_fives_bring_no_bonus_die():
    result = roll({"pool": ["d6", "d6"], "discord": 5}, [5, 6])
    assert roles(result) == ["eliminated", "base"]


def test_infinite_fives_ability_chains_bonus_fives():
    result = roll({"pool": ["d6"], "infinite_fives": True}, [5, 5, 5, 1])
    assert roles(result) == ["base", "bonus", "bonus", "bonus"]
    assert [d["from"] for d in result["dice"][1:]] == [0, 1, 2]
    assert result["successes"] == 3
    assert result["request"]["infinite_fives"] is True


def test_a_fives_chain_stops_at_the_cap_and_says_so():
    result = roll({"pool": ["d6"], "discord": 5, "protect": 1}, [5] + [5] * MAX_CHAIN)
    assert roles(result).count("bonus") == MAX_CHAIN
    assert result["capped"] is True
    assert "cap" in result["text"]


# -- breaks ------------------------------------------------------------------------------------


def test_lucky_break_adds_the_face_of_a_luck_die_roll():
    result = roll({"pool": ["d6", "d8"], "tn": 4, "luck_die": "d8"}, [4, 6, 3])
    assert roles(result) == ["base", "base", "luck"]
    assert result["dice"][2]["sides"] == 8
    assert result["flags"] == ["lucky-break"]
    assert result["successes"] == 1 + 1 + 3


def test_the_luck_die_is_touched_by_nothing_else():
    # Discord 5 and a luck die showing 5: no elimination, no bonus die, all five count.
    result = roll({"pool": ["d6", "d6"], "tn": 4, "discord": 5}, [6, 4, 5])
    assert roles(result) == ["base", "base", "luck"]
    assert result["successes"] == 1 + 1 + 5
    # Its 1s do not count toward a costly success.
    result = roll({"pool": ["d6", "d6"], "tn": 4}, [6, 4, 1])
    assert result["ones"] == 0
    assert "costly" not in result["flags"]


def test_bad_break_when_all_surviving_dice_show_one():
    result = roll({"pool": ["d6", "d8", "d6"]}, [1, 1, 1])
    assert result["flags"] == ["bad-break"]
    assert result["outcome"] == "failure"


def test_fluke_when_all_surviving_dice_show_the_same_value_other_than_one():
    result = roll({"pool": ["d6", "d8"]}, [3, 3])
    assert result["flags"] == ["fluke"]


def test_breaks_combine():
    result = roll({"pool": ["d6", "d6"]}, [6, 6, 2])
    assert result["flags"] == ["lucky-break", "fluke"]
    assert result["successes"] == 4


def test_breaks_need_at_least_two_survivors():
    assert roll({"pool": ["d6"]}, [6])["flags"] == []
    assert roll({"pool": ["d6"]}, [1])["flags"] == []
    result = roll({"pool": ["d6", "d6"], "discord": 3}, [6, 3])
    assert result["flags"] == []


def test_breaks_ignore_bonus_dice():
    result = roll({"pool": ["d6", "d6"]}, [5, 6, 2, 4])
    assert roles(result) == ["base", "base", "bonus", "luck"]
    assert result["flags"] == ["lucky-break"]
    assert result["successes"] == 1 + 1 + 0 + 4


def test_breaks_ignore_eliminated_dice():
    result = roll({"pool": ["d6", "d6", "d6"], "discord": 2}, [6, 6, 2, 1])
    assert result["flags"] == ["lucky-break", "fluke"]


# -- successes, net, fails, costly -------------------------------------------------------------


def test_net_is_successes_minus_hits_and_fails_are_the_shortfall():
    result = roll({"pool": ["d6"], "challenge": 3}, [6, 5, 5, 1])
    assert (result["successes"], result["net"], result["fails"]) == (1, -1, 1)
    assert result["outcome"] == "failure"
    result = roll({"pool": ["d6"], "challenge": 1}, [6, 6])
    assert (result["net"], result["fails"], result["outcome"]) == (0, 0, "failure")
    result = roll({"pool": ["d6"]}, [6])
    assert (result["net"], result["fails"], result["outcome"]) == (1, 0, "success")
    assert result["total"] is None


def test_costly_when_the_ones_exceed_net_on_a_success():
    # 3 successes; 1s: two pool dice and two challenge dice = 4 > 3.
    result = roll({"pool": ["d12", "d6", "d6"], "tn": 4, "challenge": 2}, [12, 1, 1, 1, 1])
    assert (result["net"], result["ones"]) == (3, 4)
    assert "costly" in result["flags"]
    # Three 1s do not exceed 3.
    result = roll({"pool": ["d12", "d6", "d6"], "tn": 4, "challenge": 1}, [12, 1, 1, 1])
    assert "costly" not in result["flags"]


def test_costly_counts_bonus_dice_ones_but_not_eliminated_ones():
    result = roll({"pool": ["d6", "d6"], "discord": 1}, [5, 1, 1])
    assert roles(result) == ["base", "eliminated", "bonus"]
    assert result["ones"] == 1
    assert result["net"] == 1
    assert result["flags"] == []
    result = roll({"pool": ["d6", "d6"]}, [5, 1, 1])
    assert result["ones"] == 2
    assert result["flags"] == ["costly"]


def test_costly_only_on_a_success():
    result = roll({"pool": ["d6", "d6"], "challenge": 2}, [1, 2, 1, 1])
    assert result["outcome"] == "failure"
    assert "costly" not in result["flags"]


# -- PvP ---------------------------------------------------------------------------------------


def test_pvp_compares_the_successes_each_side_keeps_after_its_challenge_dice():
    request = {
        "pool": ["d12"],
        "tn": 4,
        "challenge": 1,
        "opponent": {"pool": ["d8"], "tn": 4},
    }
    result = roll(request, [12, 6, 8])
    assert roles(result) == ["base", "challenge", "base"]
    assert result["dice"][2]["side"] == "opponent"
    assert "side" not in result["dice"][0]
    assert (result["remaining"], result["opponent"]["remaining"]) == (2, 2)
    assert (result["net"], result["winner"], result["outcome"]) == (0, None, "failure")


def test_pvp_remaining_successes_never_go_below_zero():
    request = {"pool": ["d8"], "opponent": {"pool": ["d6"], "challenge": 2}}
    result = roll(request, [6, 2, 6, 6])
    assert result["opponent"]["remaining"] == 0
    assert (result["net"], result["winner"], result["outcome"]) == (1, "self", "success")


def test_pvp_the_opponent_can_win():
    request = {"pool": ["d6"], "opponent": {"pool": ["d12"], "tn": 4}}
    result = roll(request, [2, 12])
    assert (result["net"], result["fails"], result["winner"]) == (-3, 3, "opponent")


def test_pvp_both_sides_face_the_same_discord_die():
    request = {"pool": ["d6", "d6"], "discord": 4, "opponent": {"pool": ["d8", "d8"]}}
    result = roll(request, [4, 6, 4, 8])
    assert roles(result) == ["eliminated", "base", "eliminated", "base"]
    assert result["net"] == 0


def test_pvp_opponent_breaks_and_luck_are_its_own():
    request = {"pool": ["d6"], "opponent": {"pool": ["d8", "d8"], "tn": 4, "luck_die": "d4"}}
    result = roll(request, [2, 6, 7, 4])
    assert result["dice"][3] == {
        "die": "d4",
        "sides": 4,
        "value": 4,
        "role": "luck",
        "side": "opponent",
    }
    assert result["opponent"]["flags"] == ["lucky-break"]
    assert result["opponent"]["successes"] == 1 + 1 + 4
    assert result["flags"] == []


# -- the Discord Die roll ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "value", "wandered"),
    [([7], 7, False), ([1], 1, False), ([20, 3], None, True), ([20, 11], 11, False),
     ([20, 20], 20, False)],
)  # fmt: skip
def test_rolling_the_discord_die(values, value, wandered):
    source = ScriptedSource(values)
    out = roll_discord_die(source)
    assert source.exhausted
    assert (out["value"], out["wandered"]) == (value, wandered)
    assert drawn(out["dice"]) == source.draws
    assert all(d["role"] == "discord" for d in out["dice"])


# -- exact odds --------------------------------------------------------------------------------


# Branches less likely than the prune are not followed (Infinite Fives chains).
BRUTE_CASES = [
    ({"pool": ["d6", "d6", "d8"], "challenge": 1, "discord": 6, "protect": 1}, 0.0),
    ({"pool": ["d12", "d4", "d4"], "tn": 4, "luck_die": "d4", "discord": 4, "protect": 1}, 0.0),
    ({"pool": ["d6", "d6", "d6"], "tn": 6}, 0.0),
    ({"pool": ["d8", "d6", "d6"], "discord": 6, "protect": 2, "challenge": 1}, 0.0),
    ({"pool": ["d6", "d4"], "challenge": 1, "discord": 3, "opponent": {"pool": ["d8"]}}, 0.0),
    ({"pool": ["d8", "d6"], "tn": 4, "challenge": 1, "discord": 5, "protect": 1}, 1e-9),
    ({"pool": ["d6", "d8"], "infinite_fives": True, "challenge": 1}, 1e-9),
    (
        {
            "pool": ["d6", "d4"],
            "tn": 4,
            "discord": 5,
            "protect": 1,
            "opponent": {"pool": ["d6"], "protect": 1, "tn": 4},
        },
        1e-8,
    ),
]


@pytest.mark.parametrize(("request_", "prune"), BRUTE_CASES)
def test_exact_odds_match_brute_force_enumeration(request_, prune):
    answer = assert_brute_force_agrees(SYSTEM, request_, "net", 1, prune)
    assert set(answer["events"]) == set(FLAGS)


def test_hand_computed_single_d6_at_tn_5_with_discord_5():
    # The 5 is eliminated: 1-4 score nothing, the 6 scores one.
    answer = SYSTEM.odds({"pool": ["d6"], "tn": 5, "discord": 5})
    assert answer["distribution"] == pytest.approx({"0": 5 / 6, "1": 1 / 6}, abs=1e-15)
    assert answer["p_success"] == pytest.approx(1 / 6, abs=1e-15)
    assert answer["events"] == {"lucky-break": 0, "bad-break": 0, "fluke": 0, "costly": 0}


def test_hand_computed_protected_five_under_infinite_fives():
    # Protected, the 5 scores 1 and starts a chain: L more 5s (each +1), then a last face
    # (6: +1; 1-4: +0). P(net = n) = 4/6 [n=0] + 1/6 [n=1]
    #   + 1/6 * (1/6)^(n-1) * 4/6 + 1/6 * (1/6)^(n-2) * 1/6   (terms present when n-1, n-2 >= 0)
    answer = SYSTEM.odds({"pool": ["d6"], "tn": 5, "discord": 5, "protect": 1})
    six = Fraction(1, 6)

    def p(n):
        out = Fraction(0)
        if n == 0:
            out += Fraction(4, 6)
        if n == 1:
            out += six
        if n >= 1:
            out += six * six ** (n - 1) * Fraction(4, 6)
        if n >= 2:
            out += six * six ** (n - 2) * six
        return out

    for n in range(8):
        assert answer["distribution"][str(n)] == pytest.approx(float(p(n)), abs=1e-13)


def test_hand_computed_two_d6_breaks_and_costly():
    answer = SYSTEM.odds({"pool": ["d6", "d6"]})
    assert answer["events"]["lucky-break"] == pytest.approx(1 / 9, abs=1e-15)
    assert answer["events"]["bad-break"] == pytest.approx(1 / 36, abs=1e-15)
    assert answer["events"]["fluke"] == pytest.approx(5 / 36, abs=1e-15)
    # Costly: a 1 and a 5 whose bonus die shows 1 (net 1, two 1s).
    assert answer["events"]["costly"] == pytest.approx(2 / 36 / 6, abs=1e-15)


def test_odds_name_the_headline_and_echo_the_request():
    answer = SYSTEM.odds({"pool": ["d8"], "challenge": 1})
    assert answer["system"] == "discordian"
    assert answer["outcome"] == "net_successes"
    assert answer["request"] == SYSTEM.normalise({"pool": ["d8"], "challenge": 1})


def test_odds_past_the_caps_say_so():
    with pytest.raises(OddsTooLarge) as err:
        SYSTEM.odds({"pool": ["d6"] * (ODDS_MAX_POOL + 1)})
    assert err.value.field == "pool"
    with pytest.raises(OddsTooLarge) as err:
        SYSTEM.odds({"pool": ["d6"] * 12, "opponent": {"pool": ["d6"] * (ODDS_MAX_POOL - 11)}})
    assert err.value.field == "opponent.pool"
    with pytest.raises(OddsTooLarge) as err:
        SYSTEM.odds({"pool": ["d6"], "challenge": ODDS_MAX_CHALLENGE + 1})
    assert err.value.field == "challenge"
    with pytest.raises(OddsTooLarge) as err:
        SYSTEM.odds({"pool": ["d6"] * 10, "discord": 3, "protect": 7})
    assert err.value.field == "protect"
    # Rolling is never capped.
    SYSTEM.roll({"pool": ["d6"] * 300, "challenge": 300}, FairStream(SEED, "", 1))


@pytest.mark.parametrize(
    "request_",
    [
        {"pool": ["d12"] * ODDS_MAX_POOL, "tn": 4, "challenge": ODDS_MAX_CHALLENGE, "discord": 5,
         "protect": 6},
        {"pool": ["d6", "d8", "d10", "d12"] * (ODDS_MAX_POOL // 4), "infinite_fives": True,
         "discord": 7, "protect": 6},
        {"pool": ["d12"] * (ODDS_MAX_POOL // 2), "tn": 4, "discord": 5, "protect": 3,
         "challenge": 20, "opponent": {"pool": ["d12"] * (ODDS_MAX_POOL // 2), "tn": 4,
                                       "protect": 3, "challenge": 20}},
    ],
)  # fmt: skip
def test_odds_at_the_caps_are_quick_and_whole(request_):
    # Answered at all means answered within the odds budget (its work estimate).
    answer = SYSTEM.odds(request_)
    assert math.fsum(answer["distribution"].values()) == pytest.approx(1, abs=1e-9)
    side = SideOdds(SYSTEM.normalise(request_), request_.get("discord"))
    assert 1 - side.mass < ODDS_TAIL
    assert side.dropped < ODDS_TAIL


def test_seeded_fair_rolls_agree_with_the_exact_odds():
    request = {"pool": ["d6", "d8", "d10"], "challenge": 2, "discord": 7, "protect": 1}
    answer = SYSTEM.odds(request)
    counts, flags, wins = sample(SYSTEM, request, SEED, "net")
    for value, p in answer["distribution"].items():
        assert agrees(counts[int(value)], p), value
    for flag, p in answer["events"].items():
        assert agrees(flags[flag], p), flag
    assert agrees(wins, answer["p_success"])


# -- properties --------------------------------------------------------------------------------

sides_ = st.sampled_from(PC_DICE)
side_requests = st.fixed_dictionaries(
    {"pool": st.lists(sides_, min_size=1, max_size=5)},
    optional={
        "tn": st.sampled_from([4, 5, 6]),
        "challenge": st.integers(0, 4),
        "protect": st.integers(0, 3),
        "luck_die": sides_,
        "infinite_fives": st.booleans(),
    },
)


@st.composite
def requests(draw, max_pool=5):
    request = draw(side_requests)
    request["pool"] = request["pool"][:max_pool]
    request["discord"] = draw(st.one_of(st.none(), st.integers(1, 20), st.sampled_from([5, 6])))
    if draw(st.booleans()):
        opponent = draw(side_requests)
        opponent["pool"] = opponent["pool"][:max_pool]
        request["opponent"] = opponent
    return request


def _check_side(dice, side, tally, tn):
    counted = [d for d in dice if d["role"] in ("base", "bonus")]
    scored = sum(d["value"] // tn for d in counted)
    assert all(d["successes"] == d["value"] // tn for d in counted)
    luck = sum(d["value"] for d in dice if d["role"] == "luck")
    assert tally["successes"] == scored + luck
    challenge = [d for d in dice if d["role"] == "challenge"]
    assert tally["challenge_hits"] == sum(d["value"] >= 5 for d in challenge)
    assert tally["ones"] == sum(d["value"] == 1 for d in counted + challenge)
    assert ("lucky-break" in tally["flags"]) == bool(luck or any(d["role"] == "luck" for d in dice))
    assert len([d for d in dice if d["role"] in ("base", "eliminated")]) == len(side["pool"])
    assert len(challenge) == side["challenge"]


@settings(max_examples=150, deadline=None)
@given(requests(), st.integers(1, 10**6))
def test_successes_are_what_the_counted_dice_score_and_every_die_is_listed(request, seq):
    result = checked_roll(SYSTEM, request, FairStream(SEED, "prop", seq))
    req = result["request"]
    own = [d for d in result["dice"] if "side" not in d]
    _check_side(own, req, result, req["tn"])
    if "opponent" in req:
        theirs = [d for d in result["dice"] if d.get("side") == "opponent"]
        _check_side(theirs, req["opponent"], result["opponent"], req["opponent"]["tn"])
        assert result["net"] == result["remaining"] - result["opponent"]["remaining"]
    else:
        assert result["net"] == result["successes"] - result["challenge_hits"]
    assert result["fails"] == max(0, -result["net"])
    assert result["outcome"] == ("success" if result["net"] >= 1 else "failure")
    for d in result["dice"]:
        if d["role"] == "eliminated":
            assert d["value"] == req["discord"]
    assert set(result["flags"]) <= set(FLAGS)


@settings(max_examples=60, deadline=None)
@given(requests(max_pool=4))
def test_odds_sum_to_one(request):
    answer = SYSTEM.odds(request)
    assert_distribution(answer, 1)
    assert set(answer["events"]) == set(FLAGS)
    assert all(0 <= p <= 1 + 1e-12 for p in answer["events"].values())


anything = junk(ints=30, text=5, items=4, leaves=12)
almost = st.fixed_dictionaries(
    {},
    optional={
        "pool": st.one_of(
            st.lists(st.sampled_from(["d4", "d6", "d20", "6", 6, None]), max_size=4), anything
        ),
        "tn": anything,
        "challenge": anything,
        "discord": anything,
        "protect": anything,
        "luck_die": anything,
        "opponent": anything,
        "infinite_fives": anything,
    },
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(anything, almost))
def test_bad_requests_raise_rule_error_only(request):
    assert_refused_or_usable(SYSTEM, request)


# -- sheet, settings, quick rolls --------------------------------------------------------------


SHEET = {
    "hero_dice": ["d6", "d6"],
    "tropes": {"Hacker": 8, "Priest": 6},
    "trademarks": {"Lucky hat": 10},
    "tn": 5,
    "luck_die": "d8",
    "luck": 2,
    "instant_karma": 3,
}


def test_request_from_sheet_builds_the_pool():
    request = SYSTEM.request_from_sheet(
        SHEET,
        {"discord_mode": "round"},
        {"trope": "Hacker", "trademark": "Lucky hat", "luck_dice": 1, "challenge": 2,
         "discord": 7, "protect": 1, "tn": 4},
    )  # fmt: skip
    assert request == {
        "pool": ["d6", "d6", "d8", "d10", "d8"],
        "tn": 4,
        "challenge": 2,
        "discord": 7,
        "protect": 1,
        "luck_die": "d8",
    }
    with pytest.raises(RuleError) as err:
        SYSTEM.request_from_sheet(SHEET, {}, {"trope": "Cook"})
    assert err.value.field == "options.trope"


def test_sheet_dice_sizes_are_checked():
    with pytest.raises(RuleError) as err:
        SYSTEM.validate_sheet({"tropes": {"Odd": 7}})
    assert err.value.field == "sheet.tropes.Odd"


def test_quick_rolls_are_valid_requests():
    rolls = SYSTEM.quick_rolls(SHEET, {})
    assert [r["label"] for r in rolls] == ["Hero Dice (TN 5)", "Hacker (TN 5)", "Priest (TN 5)"]
    for r in rolls:
        assert SYSTEM.normalise(r["request"]) == r["request"]


def test_schema_describes_resources_and_settings():
    schema = SYSTEM.schema()
    assert [f["name"] for f in schema["resources"]] == ["luck", "instant_karma"]
    assert schema["settings"][0]["choices"] == ["round", "scene"]
    assert SYSTEM.validate_settings({}) == {"discord_mode": "round"}
    assert schema["flags"] == list(FLAGS)
