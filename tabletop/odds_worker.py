"""What an odds worker process runs: the engine alone (no Django), answering in plain JSON."""

from __future__ import annotations

import json

from rules.engines import OddsTooLarge, RuleError, get_system


def compute(system_id: str, request_json: str) -> tuple[str, str]:
    """The engine's answer, or its refusal, as JSON. Never raises: whatever the engine does,
    the table answers a clean error."""
    try:
        return "ok", json.dumps(get_system(system_id).odds(json.loads(request_json)))
    except OddsTooLarge as exc:
        return "too-large", json.dumps(exc.as_dict())
    except RuleError as exc:
        return "refused", json.dumps(exc.as_dict())
    except RecursionError:
        return "failed", "the request nests too deeply to work out exact odds"
    except Exception as exc:  # an engine fault must not become a 500
        return "failed", f"the odds could not be worked out ({type(exc).__name__})"
