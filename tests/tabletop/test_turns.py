"""Whose action goes to the database thread next: the seat that has asked least lately, with
at most a few on the thread, and straight through when nobody waits."""

from __future__ import annotations

import asyncio

import pytest

from tabletop.turns import Turns

pytestmark = pytest.mark.asyncio


async def test_a_seat_that_asks_now_and_then_goes_before_a_flood():
    turns, order, gate = Turns(in_flight=1), [], asyncio.Event()

    async def work(name: str) -> str:
        order.append(name)
        await gate.wait()  # the thread is busy until the gate opens
        return name

    flood = [
        asyncio.create_task(turns.run("flood", lambda i=i: work(f"flood{i}"))) for i in range(6)
    ]
    await asyncio.sleep(0)
    bystander = asyncio.create_task(turns.run("bystander", lambda: work("bystander")))
    await asyncio.sleep(0)
    gate.set()
    assert await bystander == "bystander"
    await asyncio.gather(*flood)
    # flood0 was already on the thread; the bystander came next, the flood kept its order
    assert order == ["flood0", "bystander", *(f"flood{i}" for i in range(1, 6))]


async def test_flooding_seats_take_turns_among_themselves():
    turns, order, gate = Turns(in_flight=1), [], asyncio.Event()

    async def work(name: str) -> None:
        order.append(name)
        await gate.wait()

    first = asyncio.create_task(turns.run("warm", lambda: work("warm")))
    await asyncio.sleep(0)
    tasks = [
        asyncio.create_task(turns.run(seat, lambda seat=seat, i=i: work(f"{seat}{i}")))
        for i in range(3)
        for seat in ("a", "a", "b")  # a asks twice as often as b
    ]
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(first, *tasks)
    last_b = max(i for i, name in enumerate(order) if name.startswith("b"))
    # turn by turn: each of b's three goes before a has had more than three
    assert sum(name.startswith("a") for name in order[:last_b]) <= 3


async def test_nobody_waiting_means_no_wait_and_no_more_than_in_flight_on_the_thread():
    turns, running, most = Turns(in_flight=2), 0, 0

    async def work() -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.01)
        running -= 1

    await turns.run(1, work)  # alone: runs at once
    await asyncio.gather(*(turns.run(seat, work) for seat in range(10)))
    assert most == 2


async def test_a_cancelled_wait_gives_its_turn_on():
    turns, gate = Turns(in_flight=1), asyncio.Event()

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
