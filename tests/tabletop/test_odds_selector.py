"""The room's odds: answers and refusals, each computed once per request."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest

from rules.engines import OddsTooLarge, RuleError, get_system
from tabletop.selectors import odds


@pytest.fixture(autouse=True)
def _fresh_cache():
    odds._cached.cache_clear()
    yield
    odds._cached.cache_clear()


def counting_odds() -> Any:
    engine = type(get_system("generic"))
    return mock.patch.object(engine, "odds", autospec=True, side_effect=engine.odds)


def test_an_answer_is_the_engines_and_is_computed_once():
    engine = get_system("generic")
    with mock.patch.object(
        type(engine), "odds", autospec=True, side_effect=type(engine).odds
    ) as spy:
        first = odds.odds_for(system_id="generic", request={"notation": "2d6"})
        again = odds.odds_for(system_id="generic", request={"notation": "2d6"})
    assert first == again == get_system("generic").odds({"notation": "2d6"})
    assert spy.call_count == 1


@pytest.mark.parametrize(
    ("request_", "error"),
    [({"notation": "2d6+"}, RuleError), ({"notation": "1000d1000!"}, OddsTooLarge)],
)
def test_a_refusal_is_remembered_and_raised_the_same_way_each_time(request_, error):
    engine = get_system("generic")
    with mock.patch.object(
        type(engine), "odds", autospec=True, side_effect=type(engine).odds
    ) as spy:
        raised = []
        for _ in range(2):
            with pytest.raises(RuleError) as err:
                odds.odds_for(system_id="generic", request=request_)
            raised.append(err.value)
    assert spy.call_count == 1
    assert all(type(e) is error for e in raised)
    assert raised[0].field == raised[1].field and raised[0].reason == raised[1].reason
