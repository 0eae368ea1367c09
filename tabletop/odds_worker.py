"""What an odds worker process runs: the engine alone (no Django), answering in plain JSON,
within its time budget."""

from __future__ import annotations

import json
import signal
import time

from rules.engines import OddsTooLarge, RuleError, get_system


class _OutOfTime(BaseException):
    """Raised in the worker when a computation's time is up (a BaseException, so no engine's
    ``except Exception`` can swallow it)."""


def _time_is_up(signum: int, frame: object) -> None:
    raise _OutOfTime()


# The engine checks its deadline as it works; the alarm stops only work that does not check
# it in time (a single step longer than this), so a slow request gets the engine's own words.
ALARM_GRACE = 0.5


def compute(system_id: str, request_json: str, seconds: float | None = None) -> tuple[str, str]:
    """The engine's answer, or its refusal, as JSON. Never raises: whatever the engine does,
    the table answers a clean error. With ``seconds``, the computation itself (not the wait for
    a worker, nor the worker's start) has that much time: the engine refuses past it, and an
    alarm stops it shortly after if it has not."""
    deadline = None
    if seconds:
        deadline = time.monotonic() + seconds
        signal.signal(signal.SIGALRM, _time_is_up)
        signal.setitimer(signal.ITIMER_REAL, seconds + ALARM_GRACE)
    try:
        system = get_system(system_id)
        return "ok", json.dumps(system.odds(json.loads(request_json), deadline=deadline))
    except _OutOfTime:
        field = "notation" if '"notation"' in request_json else "request"
        reason = "too large to work out exact odds in time"
        return "too-large", json.dumps({"field": field, "reason": reason})
    except OddsTooLarge as exc:
        return "too-large", json.dumps(exc.as_dict())
    except RuleError as exc:
        return "refused", json.dumps(exc.as_dict())
    except RecursionError:
        return "failed", "the request nests too deeply to work out exact odds"
    except Exception as exc:  # an engine fault must not become a 500
        return "failed", f"the odds could not be worked out ({type(exc).__name__})"
    finally:
        if seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
