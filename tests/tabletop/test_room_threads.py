"""A room's socket actions run on its own database thread on PostgreSQL, always the same one."""

from __future__ import annotations

import asyncio
import threading

import pytest
from channels.db import database_sync_to_async

from tabletop.room_threads import for_room

pytestmark = pytest.mark.asyncio


async def test_one_room_thread_is_channels_database_thread(settings):
    settings.TABLETOP = {**settings.TABLETOP, "ROOM_THREADS": 1}
    channels_thread = await database_sync_to_async(threading.get_ident)()
    assert await for_room(1, threading.get_ident) == channels_thread
    assert await for_room(2, threading.get_ident) == channels_thread


async def test_each_room_keeps_its_thread_and_rooms_spread_over_them(settings):
    settings.TABLETOP = {**settings.TABLETOP, "ROOM_THREADS": 3}
    channels_thread = await database_sync_to_async(threading.get_ident)()
    first = [await for_room(room, threading.get_ident) for room in (1, 2, 3)]
    again = [await for_room(room, threading.get_ident) for room in (1, 2, 3)]
    assert first == again  # a room's actions keep their order: one thread each
    assert len(set(first)) == 3 and channels_thread not in first
    assert await for_room(4, threading.get_ident) == first[0]  # 4 % 3 == 1 % 3


async def test_a_room_waiting_on_the_database_does_not_hold_another_room(settings):
    settings.TABLETOP = {**settings.TABLETOP, "ROOM_THREADS": 2}
    held = threading.Event()
    waiting = asyncio.ensure_future(for_room(1, held.wait, 5))
    try:
        # room 2's action is done while room 1's still waits (on one thread it would wait 5 s)
        assert await asyncio.wait_for(for_room(2, lambda: "done"), 2) == "done"
        assert not waiting.done()
    finally:
        held.set()
    assert await waiting is True


async def test_actions_of_one_room_run_in_the_order_asked(settings):
    settings.TABLETOP = {**settings.TABLETOP, "ROOM_THREADS": 4}
    order: list[int] = []
    await asyncio.gather(*(for_room(7, order.append, i) for i in range(50)))
    assert order == list(range(50))
