"""roll-and-keep (docs/rules.md, "Mana roll and keep"): one test per rule, exact odds,
properties."""

from __future__ import annotations

import functools
import math

import icepool
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.engines.errors import RuleError
from rules.engines.fair import FairStream
from rules.engines.roll_and_keep import (
    COLOURS,
    DEFAULT_LINKS,
    RollAndKeep,
    degree,
    keep_from_mana,
)
from tests.rules.helpers import (
    agrees,
    assert_brute_force_agrees,
    assert_distribution,
    assert_refused_or_usable,
    checked_roll,
    junk_requests,
    roles,
    sample,
    scripted_roll,
)

SYSTEM = RollAndKeep()
SEED = bytes(range(32))
roll = functools.partial(scripted_roll, SYSTEM)


# -- roll and keep from the sheet -------------------------------------------------------------

SEED_MANA = {"black": 3, "blue": 2}


@pytest.mark.parametrize(
    ("colour", "specialities", "keep"),
    [
        ("black", 1, 4),  # a lie: Cunning + Deceit, 3 black + 1
        ("blue", 0, 2),  # a text on enchantments: Intelligence, 2 blue
        ("green", 1, 2),  # resist fire: Endurance + speciality, 5 // 3 missing colours + 1
        ("red", 0, 1),  # a staff in daylight: Strength, 5 // 3 = 1
        (None, 0, 1),  # an attribute linked to no colour uses the same division
    ],
)
def test_keep_follows_the_source_examples(colour, specialities, keep):
    req = SYSTEM.normalise(
        {
            "attribute": 4,
            "specialities": specialities,
            "mana": SEED_MANA,
            "colour": colour,
            "difficulty": 7,
        }
    )
    assert req["roll"] == 4 + specialities
    assert req["keep"] == keep


def test_keep_with_no_colour_missing_divides_by_one():
    mana = dict.fromkeys(COLOURS, 2)
    assert keep_from_mana(mana, None, 0) == 10


def test_keep_is_at_least_one_without_mana():
    assert keep_from_mana({}, "red", 0) == 1
    assert keep_from_mana({}, None, 2) == 3


def test_linked_colour_without_mana_uses_the_division():
    assert keep_from_mana({"white": 7}, "red", 0) == 7 // 4


def test_normalised_sheet_form_shows_roll_and_keep_and_is_stable():
    req = SYSTEM.normalise(
        {"attribute": 5, "specialities": 1, "mana": SEED_MANA, "colour": "black", "difficulty": 7}
    )
    assert req == {
        "roll": 6,
        "keep": 4,
        "attribute": 5,
        "specialities": 1,
        "mana": {"white": 0, "blue": 2, "black": 3, "red": 0, "green": 0},
        "colour": "black",
        "difficulty": 7,
        "required": 1,
    }
    assert SYSTEM.normalise(req) == req


def test_sheet_form_refuses_a_roll_it_does_not_give():
    with pytest.raises(RuleError) as err:
        SYSTEM.normalise({"attribute": 5, "roll": 3, "keep": 1, "difficulty": 7})
    assert err.value.field == "roll"


def test_direct_form_needs_roll_and_keep_and_difficulty():
    for missing in ("roll", "keep", "difficulty"):
        req = {"roll": 3, "keep": 2, "difficulty": 6}
        del req[missing]
        with pytest.raises(RuleError) as err:
            SYSTEM.normalise(req)
        assert err.value.field == missing


def test_direct_defaults():
    assert SYSTEM.normalise({"roll": 6, "keep": 3, "difficulty": 7}) == {
        "roll": 6,
        "keep": 3,
        "difficulty": 7,
        "required": 1,
    }


# -- the roll ---------------------------------------------------------------------------------


def test_dice_are_d10s_and_the_highest_are_kept():
    result = roll({"roll": 6, "keep": 3, "difficulty": 7}, [2, 9, 5, 9, 1, 7])
    assert {d["die"] for d in result["dice"]} == {"d10"}
    assert roles(result) == ["dropped", "kept", "dropped", "kept", "dropped", "kept"]
    assert result["successes"] == 3


def test_first_drawn_is_kept_among_equal_values():
    result = roll({"roll": 3, "keep": 1, "difficulty": 4}, [5, 5, 5])
    assert roles(result) == ["kept", "dropped", "dropped"]


def test_never_keeps_more_than_rolled():
    result = roll({"roll": 2, "keep": 5, "difficulty": 6}, [6, 8])
    assert roles(result) == ["kept", "kept"]
    assert result["successes"] == 2


def test_success_is_meeting_the_difficulty():
    assert roll({"roll": 1, "keep": 1, "difficulty": 7}, [7])["successes"] == 1
    assert roll({"roll": 1, "keep": 1, "difficulty": 7}, [6])["successes"] == 0


def test_dropped_dice_do_not_score():
    result = roll({"roll": 3, "keep": 1, "difficulty": 5}, [9, 8, 7])
    assert result["successes"] == 1
    assert [d.get("success", False) for d in result["dice"]] == [True, False, False]


@pytest.mark.parametrize(
    ("successes", "name"),
    [
        (0, None),
        (1, "marginal"),
        (2, "moderate"),
        (3, "complete"),
        (4, "exceptional"),
        (5, "phenomenal"),
        (7, "phenomenal"),
    ],
)
def test_degrees(successes, name):
    assert degree(successes) == name
    values = [9] * successes + [2] * (7 - successes)
    assert roll({"roll": 7, "keep": 7, "difficulty": 8}, values)["degree"] == name


def test_required_successes():
    req = {"roll": 3, "keep": 3, "difficulty": 6, "required": 2}
    assert roll(req, [6, 2, 3])["outcome"] == "failure"
    assert roll(req, [6, 7, 3])["outcome"] == "success"
    assert roll({"roll": 1, "keep": 1, "difficulty": 6}, [6])["outcome"] == "success"


def test_botch_is_no_success_and_a_one_even_dropped():
    result = roll({"roll": 3, "keep": 1, "difficulty": 9}, [5, 1, 3])
    assert result["dice"][1]["role"] == "dropped"
    assert result["flags"] == ["botch"]
    assert result["outcome"] == "failure"


def test_no_botch_with_a_success_or_without_a_one():
    assert roll({"roll": 2, "keep": 2, "difficulty": 9}, [9, 1])["flags"] == []
    assert roll({"roll": 2, "keep": 2, "difficulty": 9}, [2, 3])["flags"] == []


def test_tens_do_not_explode():
    result = roll({"roll": 2, "keep": 2, "difficulty": 6}, [10, 10])
    assert len(result["dice"]) == 2
    assert result["successes"] == 2


def test_difficulty_above_ten_cannot_succeed():
    result = roll({"roll": 3, "keep": 3, "difficulty": 11}, [10, 10, 10])
    assert result["successes"] == 0
    assert result["outcome"] == "failure"
    assert SYSTEM.odds({"roll": 5, "keep": 5, "difficulty": 11})["p_success"] == 0


def test_any_number_is_a_difficulty_for_indirect_opposition():
    assert roll({"roll": 2, "keep": 2, "difficulty": 2}, [2, 1])["successes"] == 1


@pytest.mark.parametrize(
    ("name", "number"),
    [
        ("easy", 3),
        ("routine", 4),
        ("straightforward", 5),
        ("standard", 6),
        ("challenging", 7),
        ("Difficult", 8),
        ("extremely difficult", 9),
        ("virtually-impossible", 10),
        ("Extremely_Difficult", 9),
    ],
)
def test_difficulty_names(name, number):
    assert SYSTEM.normalise({"roll": 1, "keep": 1, "difficulty": name})["difficulty"] == number


def test_unknown_difficulty_name():
    with pytest.raises(RuleError) as err:
        SYSTEM.normalise({"roll": 1, "keep": 1, "difficulty": "hard"})
    assert err.value.field == "difficulty"


# -- directly opposed -------------------------------------------------------------------------


def test_opposed_race_from_the_source():
    req = {"roll": 6, "keep": 6, "difficulty": 7, "opponent": {"roll": 3, "keep": 3}}
    result = roll(req, [7, 8, 9, 2, 3, 4, 7, 8, 1])
    assert result["successes"] == 3
    assert result["opponent_successes"] == 2
    assert result["net"] == 1
    assert result["winner"] == "self"
    assert result["outcome"] == "success"
    assert result["degree"] == "marginal"
    assert [d["side"] for d in result["dice"]] == ["self"] * 6 + ["opponent"] * 3


def test_opposed_loss_and_tie():
    req = {"roll": 1, "keep": 1, "difficulty": 6, "opponent": {"roll": 2, "keep": 1}}
    lost = roll(req, [3, 9, 6])
    assert (lost["net"], lost["winner"], lost["outcome"]) == (-1, "opponent", "failure")
    assert [d["role"] for d in lost["dice"]] == ["kept", "kept", "dropped"]
    tie = roll(req, [6, 9, 6])
    assert (tie["net"], tie["winner"], tie["outcome"]) == (0, None, "failure")


def test_opponent_botch_is_its_own_flag():
    req = {"roll": 1, "keep": 1, "difficulty": 6, "opponent": {"roll": 1, "keep": 1}}
    assert roll(req, [1, 1])["flags"] == ["botch", "opponent-botch"]
    assert roll(req, [6, 1])["flags"] == ["opponent-botch"]


# -- limits -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        ({"roll": 1001, "keep": 1, "difficulty": 6}, "roll"),
        ({"roll": 0, "keep": 1, "difficulty": 6}, "roll"),
        ({"roll": 3, "keep": 0, "difficulty": 6}, "keep"),
        ({"roll": 3, "keep": 1, "difficulty": 1_000_001}, "difficulty"),
        ({"roll": 3, "keep": 1, "difficulty": 6, "required": 0}, "required"),
        (
            {"roll": 600, "keep": 1, "difficulty": 6, "opponent": {"roll": 401, "keep": 1}},
            "opponent.roll",
        ),
        ({"roll": 3, "keep": 1, "difficulty": 6, "opponent": {"roll": 3}}, "opponent.keep"),
        ({"attribute": 0, "difficulty": 6}, "attribute"),
        ({"attribute": 999, "specialities": 2, "difficulty": 6}, "attribute"),
        ({"attribute": 2, "colour": "purple", "difficulty": 6}, "colour"),
        ({"attribute": 2, "mana": {"gold": 1}, "difficulty": 6}, "mana.gold"),
        ({"specialities": 2, "difficulty": 6}, "attribute"),
        ({"roll": 3, "keep": 1, "difficulty": 6, "explode": True}, "explode"),
        ({"roll": True, "keep": 1, "difficulty": 6}, "roll"),
    ],
)
def test_bad_requests_name_the_field(request_, field):
    with pytest.raises(RuleError) as err:
        SYSTEM.normalise(request_)
    assert err.value.field == field


def test_largest_pool_rolls_and_answers():
    source = FairStream(SEED, "", 1)
    result = SYSTEM.roll({"roll": 1000, "keep": 400, "difficulty": 7}, source)
    assert len(result["dice"]) == 1000 == len(source.draws)
    odds = SYSTEM.odds(
        {"roll": 500, "keep": 500, "difficulty": 6, "opponent": {"roll": 500, "keep": 250}}
    )
    assert abs(sum(odds["distribution"].values()) - 1) < 1e-9


# -- exact odds -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "req",
    [
        {"roll": r, "keep": k, "difficulty": d, "required": q}
        for r, k, d, q in [
            (1, 1, 7, 1),
            (2, 1, 6, 1),
            (3, 2, 8, 2),
            (3, 3, 2, 1),
            (3, 1, 11, 1),
            (3, 5, 1, 3),
            (4, 2, 7, 1),
        ]
    ]
    + [
        {"roll": 2, "keep": 1, "difficulty": 6, "opponent": {"roll": 2, "keep": 2}},
        {"roll": 2, "keep": 2, "difficulty": 8, "required": 2, "opponent": {"roll": 1, "keep": 1}},
    ],
)
def test_odds_match_brute_force(req):
    headline = "net" if "opponent" in req else "successes"
    odds = assert_brute_force_agrees(SYSTEM, req, headline, req.get("required", 1))
    assert odds["outcome"] == ("net_successes" if "opponent" in req else "successes")


def test_odds_by_hand():
    one = SYSTEM.odds({"roll": 1, "keep": 1, "difficulty": 7})
    assert one["p_success"] == pytest.approx(0.4)
    assert one["events"] == {"botch": pytest.approx(0.1)}
    six = SYSTEM.odds({"roll": 6, "keep": 3, "difficulty": 7})
    assert six["events"]["botch"] == pytest.approx(0.6**6 - 0.5**6)
    assert six["p_success"] == pytest.approx(1 - 0.6**6)
    assert six["distribution"]["3"] == pytest.approx(
        sum(math.comb(6, x) * 0.4**x * 0.6 ** (6 - x) for x in range(3, 7))
    )


@pytest.mark.parametrize(("n", "k", "d"), [(6, 3, 7), (10, 5, 7), (8, 2, 4), (12, 4, 9)])
def test_odds_match_icepool(n, k, d):
    die = icepool.d10.pool(n).highest(k).keep_outcomes(lambda x: x >= d).size()
    odds = SYSTEM.odds({"roll": n, "keep": k, "difficulty": d})
    for outcome, quantity in die.items():
        assert odds["distribution"][str(outcome)] == pytest.approx(
            quantity / die.denominator(), abs=1e-12
        )


def test_fair_stream_sample_agrees_with_exact_odds():
    req = {"roll": 6, "keep": 3, "difficulty": 7, "opponent": {"roll": 4, "keep": 3}}
    odds = SYSTEM.odds(req)
    counts, flags, _ = sample(SYSTEM, req, SEED, "net")
    for value, p in odds["distribution"].items():
        assert agrees(counts[int(value)], p), value
    assert agrees(flags["botch"], odds["events"]["botch"])


# -- properties -------------------------------------------------------------------------------

pools = st.fixed_dictionaries(
    {
        "roll": st.integers(1, 25),
        "keep": st.integers(1, 30),
        "difficulty": st.integers(-1, 12),
        "required": st.integers(1, 6),
    },
    optional={
        "opponent": st.fixed_dictionaries({"roll": st.integers(1, 15), "keep": st.integers(1, 20)})
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(req=pools, seq=st.integers(1, 10**6))
def test_result_is_consistent_with_its_dice(req, seq):
    result = checked_roll(SYSTEM, req, FairStream(SEED, "prop", seq))
    own = [d for d in result["dice"] if d.get("side", "self") == "self"]
    kept = [d for d in own if d["role"] == "kept"]
    assert len(own) == req["roll"]
    assert len(kept) == min(req["keep"], req["roll"])
    assert min((d["value"] for d in kept), default=11) >= max(
        (d["value"] for d in own if d["role"] == "dropped"), default=0
    )
    assert result["successes"] == sum(1 for d in kept if d["value"] >= req["difficulty"])
    assert result["successes"] == sum(1 for d in own if d.get("success"))
    headline = result["net"] if "opponent" in req else result["successes"]
    assert result["outcome"] == ("success" if headline >= req["required"] else "failure")
    assert ("botch" in result["flags"]) == (
        result["successes"] == 0 and any(d["value"] == 1 for d in own)
    )
    assert result["total"] is None
    assert result["text"] == SYSTEM.describe(result)


@settings(max_examples=60, deadline=None)
@given(req=pools)
def test_odds_are_a_distribution(req):
    odds = SYSTEM.odds(req)
    assert_distribution(odds, req["required"])
    assert set(odds["events"]) <= set(SYSTEM.flags)
    assert all(0 <= p <= 1 for p in odds["events"].values())


@settings(max_examples=150, deadline=None)
@given(data=junk_requests(SYSTEM, max_size=5))
def test_bad_input_raises_rule_error_only(data):
    assert_refused_or_usable(SYSTEM, data)


# -- sheets, settings, extended actions -------------------------------------------------------

SHEET = {
    "attributes": {"Cunning": 4, "Intelligence": 3, "Endurance": 2, "Strength": 3},
    "specialities": {"Deceit": 1, "Stealth": 1, "Elemental Damage": 1},
    "mana": {"black": 3, "blue": 2},
}


def test_request_from_sheet_uses_the_campaign_links():
    req = SYSTEM.request_from_sheet(
        SHEET, {}, {"attribute": "Cunning", "speciality": "Deceit", "difficulty": "difficult"}
    )
    assert (req["roll"], req["keep"], req["colour"], req["difficulty"]) == (5, 4, "black", 8)
    req = SYSTEM.request_from_sheet(SHEET, {"links": {"Cunning": None}}, {"attribute": "Cunning"})
    assert (req["keep"], req["colour"], req["difficulty"]) == (1, None, 6)


def test_request_from_sheet_errors():
    with pytest.raises(RuleError) as err:
        SYSTEM.request_from_sheet(SHEET, {}, {"attribute": "Luck"})
    assert err.value.field == "options.attribute"
    with pytest.raises(RuleError) as err:
        SYSTEM.request_from_sheet(SHEET, {}, {"attribute": "Cunning", "speciality": "Dance"})
    assert err.value.field == "options.speciality"
    with pytest.raises(RuleError) as err:
        SYSTEM.request_from_sheet(SHEET, {"links": {"Cunning": "gold"}}, {"attribute": "Cunning"})
    assert err.value.field == "settings.links.Cunning"


def test_quick_rolls_and_defaults():
    rolls = SYSTEM.quick_rolls(SHEET, {})
    assert [r["label"] for r in rolls] == [
        "Cunning 4k3",
        "Intelligence 3k2",
        "Endurance 2k1",
        "Strength 3k1",
    ]
    assert SYSTEM.validate_settings({})["links"] == DEFAULT_LINKS
    assert set(SYSTEM.validate_sheet({})["attributes"]) == set(DEFAULT_LINKS)
    assert SYSTEM.schema()["settings"][0]["type"] == "map"
