"""The ``generic`` system (docs/rules.md, "Results" and "Ordinary notation"): result shape, outcome,
odds and errors."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from rules.engines import get_system, system_ids
from rules.engines.errors import OddsTooLarge, RuleError
from rules.engines.fair import FairStream, ScriptedSource, SeededRolls
from rules.engines.generic import Generic
from rules.engines.limits import MAX_CHAIN
from tests.rules.helpers import checked_roll

GENERIC = Generic()


def test_registered_under_its_id() -> None:
    assert isinstance(get_system("generic"), Generic)
    assert system_ids()[0] == "generic"  # the registry's explicit order: notation first
    assert GENERIC.schema()["id"] == "generic"
    assert [f["name"] for f in GENERIC.schema()["request"]] == ["notation", "difficulty"]


def test_result_has_the_contract_fields() -> None:
    result = GENERIC.roll({"notation": "4d6kh3+2", "difficulty": 12}, ScriptedSource([6, 5, 1, 3]))
    assert result["system"] == "generic"
    assert result["request"] == {"notation": "4d6kh3+2", "difficulty": 12}
    assert result["dice"] == [
        {"die": "d6", "sides": 6, "value": 6, "role": "kept"},
        {"die": "d6", "sides": 6, "value": 5, "role": "kept"},
        {"die": "d6", "sides": 6, "value": 1, "role": "dropped"},
        {"die": "d6", "sides": 6, "value": 3, "role": "kept"},
    ]
    assert result["total"] == 16
    assert result["successes"] is None
    assert result["outcome"] == "success"
    assert result["flags"] == []
    assert result["capped"] is False
    assert result["notation"] == "4d6kh3 + 2"
    assert result["text"] == "4d6kh3 (6, 5, ~~1~~, 3) + 2 = 16 vs 12: success"
    json.dumps(result)


def test_meeting_the_difficulty_succeeds_and_below_fails() -> None:
    assert GENERIC.roll({"notation": "1d20", "difficulty": 15}, ScriptedSource([15]))[
        "outcome"
    ] == ("success")
    assert GENERIC.roll({"notation": "1d20", "difficulty": 15}, ScriptedSource([14]))[
        "outcome"
    ] == ("failure")


def test_no_difficulty_no_outcome() -> None:
    result = GENERIC.roll({"notation": "2d6"}, ScriptedSource([3, 4]))
    assert result["outcome"] is None
    assert result["request"] == {"notation": "2d6", "difficulty": None}
    assert result["text"] == "2d6 (3, 4) = 7"


def test_counting_puts_successes_in_the_headline() -> None:
    result = GENERIC.roll(
        {"notation": "5d10>8f1", "difficulty": 2}, ScriptedSource([9, 4, 1, 10, 8])
    )
    assert result["successes"] == 2 and result["total"] == 2
    assert result["outcome"] == "success"
    assert result["text"] == "5d10>8f1 (**9**, 4, _1_, **10**, **8**) = 2 successes vs 2: success"


def test_capped_chain_is_reported() -> None:
    result = GENERIC.roll({"notation": "1d2!"}, ScriptedSource([2] * (MAX_CHAIN + 1)))
    assert result["capped"] is True
    assert result["dice"][-1]["capped"] is True
    assert f"cap of {MAX_CHAIN}" in result["text"]
    assert result["flags"] == []


def test_same_seed_same_result() -> None:
    a, b = SeededRolls(7), SeededRolls(7)
    for _ in range(5):
        req = {"notation": "6d10!!k3 + 4dF"}
        assert GENERIC.roll(req, a.next_stream()) == GENERIC.roll(req, b.next_stream())


def test_every_draw_is_in_the_result() -> None:
    stream = FairStream(b"g" * 32, "", 3)
    checked_roll(GENERIC, {"notation": "3d6!r1 + 2d20kh1 + 4dF + d%"}, stream)


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        ({}, "notation"),
        ({"notation": ""}, "notation"),
        ({"notation": "2d"}, "notation"),
        ({"notation": 12}, "notation"),
        ({"notation": "1" * 501}, "notation"),
        ({"notation": "1001d6"}, "notation"),
        ({"notation": "2d6", "difficulty": "high"}, "difficulty"),
        ({"notation": "2d6", "difficulty": True}, "difficulty"),
        ({"notation": "2d6", "difficulty": 1_000_001}, "difficulty"),
        ({"notation": "2d6", "difficulty": -1_000_001}, "difficulty"),
        ({"notation": "2d6", "dc": 3}, "dc"),
    ],
)
def test_bad_requests_name_the_field(request_: dict[str, object], field: str) -> None:
    with pytest.raises(RuleError) as info:
        GENERIC.roll(request_, ScriptedSource([]))
    assert info.value.field == field
    with pytest.raises(RuleError) as info:
        GENERIC.odds(request_)
    assert info.value.field == field


def test_request_that_is_not_an_object() -> None:
    with pytest.raises(RuleError):
        GENERIC.normalise(["2d6"])


def test_difficulty_accepts_a_whole_float() -> None:
    assert GENERIC.normalise({"notation": "2d6", "difficulty": 7.0})["difficulty"] == 7


def test_odds_answer_shape() -> None:
    answer = GENERIC.odds({"notation": "3d6", "difficulty": 11})
    assert answer["system"] == "generic"
    assert answer["request"] == {"notation": "3d6", "difficulty": 11}
    assert answer["outcome"] == "total"
    assert answer["p_success"] == pytest.approx(0.5, abs=1e-15)
    assert answer["events"] == {}
    assert list(answer["distribution"]) == [str(t) for t in range(3, 19)]
    assert answer["distribution"]["10"] == pytest.approx(27 / 216, abs=1e-15)
    assert abs(sum(answer["distribution"].values()) - 1) < 1e-9
    json.dumps(answer)


def test_odds_of_a_counting_roll_are_over_successes() -> None:
    answer = GENERIC.odds({"notation": "5d10>8f1", "difficulty": 1})
    assert answer["outcome"] == "successes"
    dist = {int(k): v for k, v in answer["distribution"].items()}
    assert min(dist) == -5 and max(dist) == 5
    assert answer["p_success"] == pytest.approx(
        sum(p for t, p in dist.items() if t >= 1), abs=1e-12
    )


def test_odds_without_difficulty() -> None:
    assert GENERIC.odds({"notation": "2d6"})["p_success"] is None


def test_odds_of_4d6kh3_plus_2_exactly() -> None:
    answer = GENERIC.odds({"notation": "4d6kh3+2", "difficulty": 20})
    # 18 on 4d6kh3 needs three or four 6s: 21 of 1296.
    assert answer["p_success"] == pytest.approx(float(Fraction(21, 1296)), abs=1e-15)


def test_oversized_odds_are_refused_plainly() -> None:
    with pytest.raises(OddsTooLarge) as info:
        GENERIC.odds({"notation": "100d100"})
    assert info.value.field == "notation"


def test_large_sum_odds_still_sum_to_one() -> None:
    answer = GENERIC.odds({"notation": "1000d6", "difficulty": 3500})
    assert abs(sum(answer["distribution"].values()) - 1) < 1e-9
    assert answer["p_success"] == pytest.approx(0.5, abs=0.01)


def test_describe_from_a_stored_result() -> None:
    result = GENERIC.roll({"notation": "1d20+5", "difficulty": 10}, ScriptedSource([3]))
    assert GENERIC.describe(result) == result["text"] == "1d20 (3) + 5 = 8 vs 10: failure"
