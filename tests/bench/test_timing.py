"""The table's timing hook: nothing happens unless a recorder is configured; then each step is
recorded once, in milliseconds, even when the step fails."""

from __future__ import annotations

import pytest

from tabletop import timing

recorded: list[tuple[str, float]] = []


def remember(step: str, ms: float) -> None:
    recorded.append((step, ms))


@pytest.fixture
def hook(settings):
    recorded.clear()
    settings.TABLETOP = {**settings.TABLETOP, "TIMING": f"{__name__}.remember"}
    timing.reset()
    yield recorded
    timing.reset()


def test_off_by_default_nothing_is_recorded(settings):
    settings.TABLETOP = {k: v for k, v in settings.TABLETOP.items() if k != "TIMING"}
    timing.reset()
    recorded.clear()
    with timing.span("service"):
        pass
    timing.record("orm.wait", 3.0)
    assert recorded == [] and timing.recorder() is None
    assert timing.span("a") is timing.span("b")  # one shared do-nothing context


def test_a_configured_recorder_gets_each_step(hook):
    with timing.span("service"):
        pass
    timing.record("orm.wait", 2.5)
    with pytest.raises(ValueError), timing.span("decode"):
        raise ValueError("bad input is timed too")
    assert [step for step, _ in hook] == ["service", "orm.wait", "decode"]
    assert hook[1][1] == 2.5 and all(ms >= 0 for _, ms in hook)
