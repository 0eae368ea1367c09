"""What an odds worker process runs: the engine alone (no Django), answering in plain JSON,
within its time budget."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import threading
import time

from rules.engines import OddsTooLarge, RuleError, get_system

# prctl(2): ask the kernel to signal this process when its parent ends.
PR_SET_PDEATHSIG = 1
# How often a worker looks for the server that started it (the portable way).
WATCH_SECONDS = 0.5


def watch_server(server_pid: int) -> None:
    """Every worker's initializer: end with the server that started the pool, however it
    ends (a SIGKILL runs no clean-up, and a worker waiting for work would wait forever).

    On Linux the kernel kills the worker when its parent, the fork server, ends (and the fork
    server ends when its pipe from the server closes). Everywhere, a thread checks twice a
    second that the server and the worker's parent are still there."""
    parent = end_with_parent()
    if not _still_there(server_pid, parent):  # it ended before the worker could ask
        os._exit(0)
    threading.Thread(
        target=_watch, args=(server_pid, parent), name="watch-server", daemon=True
    ).start()


def end_with_parent() -> int:
    """On Linux, have the kernel kill this process when its parent ends; the parent's pid. A
    process whose parent already ended ends now. (The kernel ties this to the parent's thread
    that started the process: a worker's parent, the fork server, has only one. The fork
    server's own parent may start it from a passing thread, so it is not tied this way.)"""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            return parent  # the fork server's pipe and the workers' watch remain
        if os.getppid() != parent:
            os._exit(0)
    return parent


def _watch(server_pid: int, parent: int) -> None:
    while _still_there(server_pid, parent):
        time.sleep(WATCH_SECONDS)
    os._exit(0)


def _still_there(server_pid: int, parent: int) -> bool:
    if os.getppid() != parent:  # the parent ended and the worker was handed to another
        return False
    try:
        os.kill(server_pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user took the pid: the server is gone
        return False
    return True


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
