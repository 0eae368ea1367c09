"""Whose action goes to the database thread next: a seat that asks now and then at once, the
seats asking several times a second in turn (the one that asked least lately first), a few of
theirs on the thread at most."""

from __future__ import annotations

import asyncio

import pytest

from tabletop.turns import Turns

pytestmark = pytest.mark.asyncio


async def asked(turns: Turns, key: str, times: int) -> None:
    """``key`` has just asked ``times`` times (a seat rolling as fast as it can)."""

    async def done() -> None:
        return None

    for _ in range(times):
        await turns.run(key, done)


async def test_a_bystander_goes_at_once_while_a_flood_waits_its_turn():
    turns, order, gate = Turns(in_flight=1), [], asyncio.Event()
    await asked(turns, "flood", 5)

    async def work(name: str) -> str:
        order.append(name)
        await gate.wait()  # the thread is busy until the gate opens
        return name

    flood = [
        asyncio.create_task(turns.run("flood", lambda i=i: work(f"flood{i}"))) for i in range(4)
    ]
    await asyncio.sleep(0)
    bystander = asyncio.create_task(turns.run("bystander", lambda: work("bystander")))
    await asyncio.sleep(0)
    assert order == ["flood0", "bystander"]  # one of the flood's on the thread; the rest wait
    gate.set()
    assert await bystander == "bystander"
    await asyncio.gather(*flood)
    assert order == ["flood0", "bystander", "flood1", "flood2", "flood3"]


async def test_a_whole_table_rolling_at_once_goes_together():
    turns, running, most, gate = Turns(in_flight=1), 0, 0, asyncio.Event()

    async def work() -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await gate.wait()
        running -= 1

    rolls = [asyncio.create_task(turns.run(seat, work)) for seat in range(20)]
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(*rolls)
    assert most == 20  # nobody held back: each seat asked once


async def test_flooding_seats_take_turns_the_lighter_first():
    turns, order, gate = Turns(in_flight=1), [], asyncio.Event()
    await asked(turns, "a", 8)
    await asked(turns, "b", 4)

    async def work(name: str) -> None:
        order.append(name)
        await gate.wait()

    tasks = [
        asyncio.create_task(turns.run(seat, lambda seat=seat, i=i: work(f"{seat}{i}")))
        for i in range(3)
        for seat in ("a", "b")
    ]
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(*tasks)
    # a0 was on the thread first; then b, who has asked less, before the rest of a's
    assert order[:3] == ["a0", "b0", "b1"]


async def test_no_more_than_in_flight_of_the_flood_on_the_thread():
    turns, running, most = Turns(in_flight=2), 0, 0
    for seat in range(6):
        await asked(turns, f"s{seat}", 5)

    async def work() -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.01)
        running -= 1

    await asyncio.gather(*(turns.run(f"s{seat}", work) for seat in range(6)))
    assert most == 2


async def test_a_cancelled_wait_gives_its_turn_on():
    turns, gate = Turns(in_flight=1), asyncio.Event()
    for seat in (1, 2, 3):
        await asked(turns, seat, 5)

    async def work() -> str:
        await gate.wait()
        return "done"

    first = asyncio.create_task(turns.run(1, work))
    await asyncio.sleep(0)
    gone = asyncio.create_task(turns.run(2, work))
    later = asyncio.create_task(turns.run(3, work))
    await asyncio.sleep(0)
    gone.cancel()  # its socket closed while it waited
    gate.set()
    assert await first == "done" and await later == "done"
    assert gone.cancelled()


async def test_a_seat_asking_a_few_times_a_second_waits_behind_a_first_ask():
    """In a flooded room of many seats each seat's own rate is only a few a second: they still
    wait their turn, and a seat asking for the first time in a while goes first."""
    turns, order, gate = Turns(in_flight=1), [], asyncio.Event()
    for seat in ("a", "b", "c"):
        await asked(turns, seat, 2)

    async def work(name: str) -> None:
        order.append(name)
        await gate.wait()

    tasks = [asyncio.create_task(turns.run(s, lambda s=s: work(s))) for s in ("a", "b", "c")]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(turns.run("new", lambda: work("new"))))
    await asyncio.sleep(0)
    assert order == ["a", "new"]
    gate.set()
    await asyncio.gather(*tasks)
