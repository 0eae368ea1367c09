"""The table's ASGI application with timers around the steps of a roll, for profiling benchmark
servers only (``bench/server_profile.py`` serves ``bench.instrumented_asgi:application``).

Nothing here changes what the table does: each wrapper calls the original and records how long
it took. Timers (milliseconds, per call):

- ``orm.wait.<fn>`` / ``orm.run.<fn>``: a consumer's ``database_sync_to_async`` call waiting for
  the process's one ORM thread, then running on it (``roll`` is the roll handler,
  ``events_after`` a gap fill, ``resolve_access``/``_connect_snapshot`` a connect);
- ``close_old_connections``: Django's connection check/close around every ORM-thread call
  (and ``aclose_old_connections`` before every action);
- ``db.connect``/``db.execute``/``db.commit``/``db.close``: the database driver calls;
- ``broadcast``: ``events.broadcast`` after commit (on the ORM thread);
- ``layer.group_send``: the channel layer's ``group_send`` on the event loop;
- ``event.room_payload``: making the event's channel-layer message (its JSON made once per room);
- ``socket.hub_deliver``: per socket per event, the room hub's fast path (in order: straight
  out; otherwise onto the socket's channel, counted as ``socket.hub_to_ordered_path``);
- ``socket.room_event``: per socket per event taking the ordered path (gap fill from the
  store if needed); ``socket.send``: handing one frame to daphne (``socket.frames`` counts them);
  ``socket.dumps``/``socket.redact``: serialisation and redaction still done per socket;
- ``fanout.spread``: per event, first to last socket of this process done with it;
- ``loop.lag``: how late the event loop wakes from a 10 ms sleep.

Counters: ``layer.channel_full`` (messages the in-memory layer dropped), ``db.queries``, ...

Every ``--interval`` seconds the numbers are written to ``$BENCH_PROFILE_OUT`` (``{pid}`` is
replaced). ``kill -USR1 <pid>`` starts a new measurement window (clears everything).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from collections import Counter, defaultdict
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.bench_settings")

import django

django.setup()  # before any model import (tabletop.asgi would do it too)

import channels.db  # noqa: E402
import channels.layers  # noqa: E402
from django.db import connections  # noqa: E402
from django.db.backends import utils as db_utils  # noqa: E402

from tabletop import consumers  # noqa: E402
from tabletop.asgi import application  # noqa: E402
from tabletop.services import events as events_service  # noqa: E402

__all__ = ["application"]

_lock = threading.Lock()
_times: dict[str, list[float]] = defaultdict(list)
_counts: Counter[str] = Counter()
_spread: dict[int, list[float]] = {}
_window_start = time.time()
MAX_SAMPLES = 400_000


def record(name: str, ms: float) -> None:
    with _lock:
        values = _times[name]
        if len(values) < MAX_SAMPLES:
            values.append(ms)


def count(name: str, n: int = 1) -> None:
    with _lock:
        _counts[name] += n


def reset(*_: Any) -> None:
    global _window_start
    with _lock:
        _times.clear()
        _counts.clear()
        _spread.clear()
        _window_start = time.time()


def snapshot() -> dict[str, Any]:
    with _lock:
        spread = [(v[1] - v[0]) * 1e3 for v in _spread.values()]
        items = {k: sorted(v) for k, v in _times.items()}
        counts = dict(_counts)
        window = time.time() - _window_start
    if spread:
        items["fanout.spread"] = sorted(spread)
    out: dict[str, Any] = {"pid": os.getpid(), "window_s": window, "counts": counts, "timers": {}}
    for name, values in sorted(items.items()):
        n = len(values)
        if not n:
            continue
        out["timers"][name] = {
            "n": n,
            "total_ms": sum(values),
            "mean": sum(values) / n,
            "p50": values[n // 2],
            "p99": values[min(n - 1, int(n * 0.99))],
            "max": values[-1],
        }
    return out


def _writer(path: str, interval: float) -> None:
    while True:
        time.sleep(interval)
        try:
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(snapshot(), f)
            os.replace(tmp, path)
        except Exception:
            pass


# --- the ORM thread -------------------------------------------------------------------------
_original_dsta = consumers.database_sync_to_async


def _timed_dsta(func: Any) -> Any:
    name = getattr(func, "__name__", type(func).__name__)

    def inner(*args: Any, _called: float, **kwargs: Any) -> Any:
        # A socket action runs as _in_time(handler, ...): name it by its handler ("roll").
        label = getattr(args[0], "__name__", name) if name == "_in_time" and args else name
        started = time.perf_counter()
        record(f"orm.wait.{label}", (started - _called) * 1e3)
        try:
            return func(*args, **kwargs)
        finally:
            record(f"orm.run.{label}", (time.perf_counter() - started) * 1e3)

    wrapped = _original_dsta(inner)

    async def call(*args: Any, **kwargs: Any) -> Any:
        return await wrapped(*args, _called=time.perf_counter(), **kwargs)

    return call


consumers.database_sync_to_async = _timed_dsta

_original_close_old = channels.db.close_old_connections


def _timed_close_old(**kwargs: Any) -> None:
    t = time.perf_counter()
    try:
        _original_close_old(**kwargs)
    finally:
        record("close_old_connections", (time.perf_counter() - t) * 1e3)


channels.db.close_old_connections = _timed_close_old

# --- the database driver --------------------------------------------------------------------
_db_class = type(connections["default"])


def _timed(owner: Any, attr: str, name: str) -> None:
    """Replace ``owner.attr`` (a module's function or a class's method) with a timed call."""
    original = getattr(owner, attr, None)
    if original is None:
        return

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            record(name, (time.perf_counter() - t) * 1e3)

    setattr(owner, attr, wrapper)


_timed(_db_class, "connect", "db.connect")
_timed(_db_class, "commit", "db.commit")
_timed(_db_class, "close", "db.close")
_original_execute = db_utils.CursorWrapper.execute


def _timed_execute(self: Any, sql: Any, params: Any = None) -> Any:
    t = time.perf_counter()
    try:
        return _original_execute(self, sql, params)
    finally:
        record("db.execute", (time.perf_counter() - t) * 1e3)
        count("db.queries")


db_utils.CursorWrapper.execute = _timed_execute

# --- broadcast and the channel layer --------------------------------------------------------
_original_broadcast = events_service.broadcast


def _timed_broadcast(event: Any) -> None:
    t = time.perf_counter()
    try:
        _original_broadcast(event)
    finally:
        record("broadcast", (time.perf_counter() - t) * 1e3)
        count("events.broadcast")


events_service.broadcast = _timed_broadcast


def _wrap_group_send(cls: type) -> None:
    original = cls.group_send

    async def group_send(self: Any, group: str, message: dict[str, Any]) -> None:
        t = time.perf_counter()
        try:
            await original(self, group, message)
        finally:
            record("layer.group_send", (time.perf_counter() - t) * 1e3)

    cls.group_send = group_send


_wrap_group_send(channels.layers.InMemoryChannelLayer)
_original_mem_send = channels.layers.InMemoryChannelLayer.send


async def _counted_mem_send(self: Any, channel: str, message: dict[str, Any]) -> None:
    try:
        await _original_mem_send(self, channel, message)
    except channels.layers.ChannelFull:
        count("layer.channel_full")
        raise


channels.layers.InMemoryChannelLayer.send = _counted_mem_send
try:
    from channels_redis.pubsub import RedisPubSubLoopLayer

    _wrap_group_send(RedisPubSubLoopLayer)
except ImportError:  # pragma: no cover
    pass

# --- the sockets ----------------------------------------------------------------------------
# Wrappers take (*args, **kwargs): the consumer's internals change; the timers must not care.
Consumer = consumers.RoomConsumer
_original_room_event = Consumer.room_event
_original_send = Consumer.send
_original_connect = Consumer.connect
_monitor_started = False


def _note_spread(seq: int, done: float) -> None:
    with _lock:
        span = _spread.get(seq)
        if span is None:
            if len(_spread) < MAX_SAMPLES:
                _spread[seq] = [done, done]
        else:
            span[1] = done


async def _room_event(self: Any, message: dict[str, Any], *args: Any, **kwargs: Any) -> None:
    """The ordered path: an event through the socket's own channel (gap fill if needed)."""
    t = time.perf_counter()
    seq = message["event"]["seq"]
    if seq > getattr(self, "delivered", 0) + 1:
        count("socket.gap_fill")
    try:
        await _original_room_event(self, message, *args, **kwargs)
    finally:
        done = time.perf_counter()
        record("socket.room_event", (done - t) * 1e3)
        _note_spread(seq, done)


_original_hub_deliver = getattr(Consumer, "hub_deliver", None)


async def _hub_deliver(self: Any, message: dict[str, Any], *args: Any, **kwargs: Any) -> None:
    """The fast path: the process's room hub hands an event to each of its sockets in turn."""
    t = time.perf_counter()
    before = getattr(self, "queued", 0)
    try:
        await _original_hub_deliver(self, message, *args, **kwargs)
    finally:
        done = time.perf_counter()
        record("socket.hub_deliver", (done - t) * 1e3)
        if getattr(self, "queued", 0) > before:
            count("socket.hub_to_ordered_path")
        _note_spread(message["event"]["seq"], done)


async def _send(self: Any, *args: Any, **kwargs: Any) -> None:
    t = time.perf_counter()
    try:
        await _original_send(self, *args, **kwargs)
    finally:
        record("socket.send", (time.perf_counter() - t) * 1e3)
        count("socket.frames")


# serialisation left per socket (hello, replays, the sender's copy with its ref, errors)
_timed(consumers, "dumps", "socket.dumps")
_timed(consumers, "for_viewer", "socket.redact")
# the event's payload for the room (serialised once per event, where the event is committed)
_timed(events_service, "room_payload", "event.room_payload")


async def _loop_lag() -> None:
    while True:
        t = time.perf_counter()
        await asyncio.sleep(0.01)
        record("loop.lag", (time.perf_counter() - t - 0.01) * 1e3)


async def _connect(self: Any, *args: Any, **kwargs: Any) -> None:
    global _monitor_started
    if not _monitor_started:
        _monitor_started = True
        asyncio.get_running_loop().create_task(_loop_lag())
    t = time.perf_counter()
    try:
        await _original_connect(self, *args, **kwargs)
    finally:
        record("socket.connect", (time.perf_counter() - t) * 1e3)


Consumer.room_event = _room_event
if _original_hub_deliver is not None:
    Consumer.hub_deliver = _hub_deliver
Consumer.send = _send
Consumer.connect = _connect

_out = os.environ.get("BENCH_PROFILE_OUT")
if _out:
    signal.signal(signal.SIGUSR1, reset)
    threading.Thread(
        target=_writer,
        args=(
            _out.replace("{pid}", str(os.getpid())),
            float(os.environ.get("BENCH_PROFILE_INTERVAL", "1")),
        ),
        daemon=True,
    ).start()
