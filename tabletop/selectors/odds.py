"""Exact odds for the room's roll panel; pure, so answers are cached by request."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from rules.engines import get_system


def odds_for(*, system_id: str, request: Any) -> dict[str, Any]:
    """The engine's odds answer. RuleError (incl. OddsTooLarge) passes through to the caller."""
    key = json.dumps(request, sort_keys=True, separators=(",", ":"))
    return json.loads(_cached(system_id, key))


@lru_cache(maxsize=2048)
def _cached(system_id: str, request_json: str) -> str:
    return json.dumps(get_system(system_id).odds(json.loads(request_json)))
