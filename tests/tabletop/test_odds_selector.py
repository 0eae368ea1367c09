"""The room's odds: computed in worker processes under a time budget and a cap, each answer
or refusal once per request, and whatever the engine does, a clean answer."""

from __future__ import annotations

import asyncio
import json
import time
from unittest import mock

import pytest
from django.conf import settings

from rules.engines import OddsTooLarge, RuleError, get_system
from tabletop.odds_worker import compute
from tabletop.selectors import odds

SLOW = {"notation": "1000d1000!>999r61kh1"}  # ~16 s of CPU for exact odds


@pytest.fixture(autouse=True)
def _fresh_cache():
    odds._workers.cache.clear()
    yield
    odds._workers.cache.clear()


@pytest.mark.asyncio
async def test_an_answer_is_the_engines_and_is_computed_once():
    first = await odds.odds_for(system_id="generic", request={"notation": "2d6"})
    with mock.patch.object(odds, "_compute", side_effect=AssertionError("computed twice")):
        again = await odds.odds_for(system_id="generic", request={"notation": "2d6"})
    assert first == again == get_system("generic").odds({"notation": "2d6"})


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("request_", "error"),
    [({"notation": "2d6+"}, RuleError), ({"notation": "1000d1000!"}, OddsTooLarge)],
)
async def test_a_refusal_is_remembered_and_raised_the_same_way_each_time(request_, error):
    raised = []
    for attempt in range(2):
        patch = mock.patch.object(odds, "_compute", side_effect=AssertionError("again"))
        with pytest.raises(RuleError) as err, patch if attempt else mock.MagicMock():
            await odds.odds_for(system_id="generic", request=request_)
        raised.append(err.value)
    assert all(type(e) is error for e in raised)
    assert raised[0].field == raised[1].field and raised[0].reason == raised[1].reason


@pytest.mark.asyncio
async def test_a_computation_past_its_time_budget_is_stopped_and_refused_plainly():
    with mock.patch.dict(settings.TABLETOP, {"ODDS_SECONDS": 0.5}):
        await odds.odds_for(system_id="generic", request={"notation": "d6"})  # workers up
        started = time.monotonic()
        with pytest.raises(OddsTooLarge) as err:
            await odds.odds_for(system_id="generic", request=SLOW)
        assert time.monotonic() - started < 3
        # The engine's own refusal: it was handed the budget as its deadline.
        assert err.value.field == "notation" and "took longer" in err.value.reason
        # The stopped worker is replaced: the next request is answered.
        assert await odds.odds_for(system_id="generic", request={"notation": "2d4"})


@pytest.mark.asyncio
async def test_past_the_cap_on_computations_at_once_the_answer_is_busy():
    conf = {"ODDS_SECONDS": 1.0, "ODDS_WORKERS": 1, "ODDS_WAITING": 0}
    with mock.patch.dict(settings.TABLETOP, conf):
        slow = asyncio.ensure_future(odds.odds_for(system_id="generic", request=SLOW))
        await asyncio.sleep(0.05)
        with pytest.raises(odds.OddsBusy):
            await odds.odds_for(system_id="generic", request={"notation": "3d8"})
        with pytest.raises(OddsTooLarge):
            await slow


def test_whatever_the_engine_raises_the_worker_answers_an_error():
    engine = type(get_system("generic"))
    for fault in (RecursionError("deep"), ValueError("bug"), MemoryError()):
        with mock.patch.object(engine, "odds", side_effect=fault):
            kind, message = compute("generic", json.dumps({"notation": "1000d6!dl1"}))
        assert kind == "failed" and "odds" in message


def test_the_worker_stops_a_computation_at_its_own_time_budget():
    started = time.monotonic()
    kind, body = compute("generic", json.dumps(SLOW), 0.3)
    assert time.monotonic() - started < 2
    assert kind == "too-large" and json.loads(body)["field"] == "notation"
    # The budget is the computation's alone: a quick one afterwards is answered.
    assert compute("generic", json.dumps({"notation": "2d6"}), 0.3)[0] == "ok"


def test_the_engine_gets_the_workers_budget_as_its_deadline():
    # The engine's own refusal, not the alarm's: the engine is told when its time is up.
    kind, body = compute("generic", json.dumps(SLOW), 0.3)
    assert kind == "too-large"
    assert "took longer than this table allows" in json.loads(body)["reason"]
    engine = type(get_system("generic"))
    with mock.patch.object(engine, "odds", return_value={"ok": True}) as odds_of:
        before = time.monotonic()
        compute("generic", json.dumps({"notation": "2d6"}), 2.0)
    deadline = odds_of.call_args.kwargs["deadline"]
    assert before + 1.9 < deadline <= time.monotonic() + 2.0
