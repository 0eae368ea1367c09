"""Named timings of the steps a socket action goes through, for profiling a running table.

Off by default: ``span`` hands back one shared do-nothing context and ``record`` returns at once.
Setting ``TABLETOP["TIMING"]`` to the dotted path of a callable ``record(step: str, ms: float)``
turns it on for the process; the profiler (``python -m bench.scenarios.profile``) does that
through its settings module, never by patching the table's code.

The steps the table names (one recorded value per occurrence, in milliseconds):

- ``decode``: a socket message parsed and checked (``consumers.py``);
- ``access``: a connect's seat read from its token, cookie or login, the wait for the database
  thread included (``consumers.py``);
- ``hello``: a connect's hello read, the wait for the database thread included (``consumers.py``);
- ``orm.wait``: an action waiting for the database thread, ``service``: the action running there
  (``protocol/wire.py``);
- ``serialise``: a committed event turned into the room's JSON, once per event;
- ``fanout``: one process handing an event to all of its sockets in a room;
- ``send``: one frame handed to the server for one socket.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

Recorder = Callable[[str, float], None]

_OFF: AbstractContextManager[None] = nullcontext()
_recorder: Recorder | None = None
_loaded = False


def recorder() -> Recorder | None:
    """The configured recorder, imported once per process (``None``: timing is off)."""
    global _recorder, _loaded
    if not _loaded:
        path = settings.TABLETOP.get("TIMING")
        _recorder = import_string(path) if path else None
        _loaded = True
    return _recorder


def reset() -> None:
    """Read the setting again (tests that change it)."""
    global _recorder, _loaded
    _recorder, _loaded = None, False


def record(step: str, ms: float) -> None:
    """Record a duration measured elsewhere (e.g. a wait that began on another thread)."""
    rec = recorder()
    if rec is not None:
        rec(step, ms)


@contextmanager
def _timed(rec: Recorder, step: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        rec(step, (time.perf_counter() - started) * 1e3)


def span(step: str) -> AbstractContextManager[Any]:
    """``with span("service"): ...`` records how long the block took, when timing is on."""
    rec = recorder()
    return _OFF if rec is None else _timed(rec, step)
