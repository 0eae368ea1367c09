"""Exact odds for the room's roll panel; pure, so answers are cached by request, refusals too
(a request past the odds budget can take a quarter of a second to refuse: once is enough)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from rules.engines import OddsTooLarge, RuleError, get_system


def odds_for(*, system_id: str, request: Any) -> dict[str, Any]:
    """The engine's odds answer. RuleError (incl. OddsTooLarge) passes through to the caller."""
    key = json.dumps(request, sort_keys=True, separators=(",", ":"))
    kind, answer = _cached(system_id, key)
    if kind == "ok":
        return json.loads(answer)
    error = OddsTooLarge if kind == "too-large" else RuleError
    raise error(**json.loads(answer))


@lru_cache(maxsize=2048)
def _cached(system_id: str, request_json: str) -> tuple[str, str]:
    try:
        return "ok", json.dumps(get_system(system_id).odds(json.loads(request_json)))
    except RuleError as exc:
        kind = "too-large" if isinstance(exc, OddsTooLarge) else "refused"
        return kind, json.dumps(exc.as_dict())
