"""One socket's ordering (tabletop/delivery.py), without a socket: every seq once, in order,
gaps filled from the store, undeliverable events as stand-ins, the send buffer bounded."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabletop.delivery import DELIVERABLE, Delivery, TooFarBehind
from tabletop.selectors.events import Viewer, dumps, for_viewer
from tabletop.services.events import message_payload
from tabletop.transport import batched_replay

ANA, BO = Viewer(seat_id=1, is_gm=False), Viewer(seat_id=2, is_gm=False)


def event(seq: int, *, visibility: str = "public", data: dict | None = None) -> dict[str, Any]:
    return {
        "type": "event",
        "seq": seq,
        "kind": "roll",
        "at": "2026-11-23T19:00:00Z",
        "actor": {"seat": 1, "name": "Ana"},
        "visibility": visibility,
        "data": data if data is not None else {"total": seq},
    }


class Store:
    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.reads = 0

    async def after(self, after: int, limit: int) -> list[dict[str, Any]]:
        self.reads += 1
        return [e for e in self.events if e["seq"] > after][:limit]


def socket(viewer: Viewer, store: Store, **kwargs: Any) -> tuple[Delivery, list[dict]]:
    sent: list[dict] = []

    async def send_text(text: str) -> None:
        assert len(text) < DELIVERABLE + 4096
        sent.append(json.loads(text))

    return Delivery(viewer=viewer, send_text=send_text, fetch_after=store.after, **kwargs), sent


@pytest.mark.asyncio
async def test_live_events_in_order_go_straight_out_and_a_gap_is_filled_from_the_store():
    store = Store([event(1), event(2), event(3)])
    delivery, sent = socket(ANA, store)
    await delivery.replay(after=None, upto=0)
    await delivery.offer(message_payload(event(1)))
    assert store.reads == 0
    # 2 was lost on the way: 3 waits, the store brings 2, then 3 goes out.
    assert await delivery.offer(message_payload(event(3)))
    await delivery.in_order(delivery.backlog.get_nowait())
    await delivery.offer(message_payload(event(2)))  # the late copy is not sent twice
    assert [m["seq"] for m in sent] == [1, 2, 3]


@pytest.mark.asyncio
async def test_hidden_events_reach_others_redacted_with_their_seq():
    store = Store([event(1, visibility="self")])
    delivery, sent = socket(BO, store)
    await delivery.replay(after=0, upto=1)
    await delivery.offer(message_payload(event(2, visibility="gm")))
    assert [(m["seq"], m["data"]) for m in sent] == [(1, {"hidden": True}), (2, {"hidden": True})]


@pytest.mark.asyncio
async def test_an_event_too_large_to_send_goes_out_as_a_stand_in_never_skipped():
    huge = event(2, data={"dice": ["x" * 100] * 20000})
    store = Store([event(1), huge, event(3)])
    delivery, sent = socket(ANA, store)
    await delivery.replay(after=0, upto=2)  # replay (the stored path)
    await delivery.offer(message_payload(event(3)))
    assert [m["seq"] for m in sent] == [1, 2, 3]
    assert sent[1]["data"]["too_large"] is True and sent[1]["kind"] == "roll"
    live, sent_live = socket(ANA, store)
    await live.replay(after=None, upto=1)
    await live.offer(message_payload(huge))  # the live path (one JSON for the whole room)
    assert sent_live[0]["seq"] == 2 and sent_live[0]["data"]["too_large"] is True
    # A hidden one is small for those who may not see it, and a stand-in for those who may.
    hidden = message_payload(event(4, visibility="self", data=huge["data"]))
    other, other_sent = socket(BO, store)
    await other.replay(after=None, upto=3)
    await other.offer(hidden)
    assert other_sent[0]["data"] == {"hidden": True}


@pytest.mark.asyncio
async def test_a_slow_reader_is_waited_for_without_holding_up_the_room():
    unsent = [0]
    delivery, sent = socket(
        ANA, Store([]), unsent=lambda: unsent[0], max_unsent=1000, stall_seconds=5
    )
    await delivery.replay(after=None, upto=0)
    unsent[0] = 5000  # behind: the hub's offer returns at once, the event waits
    assert await delivery.offer(message_payload(event(1)))
    drain = asyncio.ensure_future(delivery.drain())
    await asyncio.sleep(0.1)
    assert sent == []
    unsent[0] = 0  # the client read its buffer
    await asyncio.sleep(0.1)
    assert [m["seq"] for m in sent] == [1]
    drain.cancel()


@pytest.mark.asyncio
async def test_a_client_too_far_behind_is_let_go_instead_of_buffered():
    unsent = [0]
    delivery, sent = socket(
        ANA, Store([]), unsent=lambda: unsent[0], max_unsent=1000, stall_seconds=0.1
    )
    await delivery.replay(after=None, upto=0)
    await delivery.offer(message_payload(event(1)))
    unsent[0] = 5000  # the client stopped reading
    assert await delivery.offer(message_payload(event(2)))
    with pytest.raises(TooFarBehind):
        await asyncio.wait_for(delivery.drain(), 2)
    assert [m["seq"] for m in sent] == [1]


def test_the_socket_query_gives_the_token_and_the_last_seq_seen():
    from tabletop.transport import BadQuery, socket_query

    assert socket_query({"query_string": b"token=t1&after=7"}) == ("t1", 7)
    assert socket_query({"query_string": b"after=-3"}) == (None, 0)
    assert socket_query({"query_string": b"after="}) == (None, None)
    assert socket_query({}) == (None, None)
    with pytest.raises(BadQuery):
        socket_query({"query_string": b"after=seven"})


@pytest.mark.asyncio
async def test_a_live_frame_asks_once_how_much_its_client_has_not_read():
    """Every frame of every socket comes this way: the send buffer is looked at once a frame."""
    asked = []

    def unsent() -> int:
        asked.append(1)
        return 0

    delivery, sent = socket(ANA, Store([]), unsent=unsent)
    await delivery.replay(after=None, upto=0)
    for seq in (1, 2, 3):
        await delivery.offer(message_payload(event(seq)))
    assert [m["seq"] for m in sent] == [1, 2, 3] and len(asked) == 3


@pytest.mark.asyncio
async def test_a_replay_reads_the_store_a_page_at_a_time_as_the_client_reads():
    """A replay of a long session never reads it whole: one page of the store at a time, each
    sent before the next is read (the database thread serves other rooms in between)."""
    from tabletop.delivery import REPLAY_PAGE

    store = Store([event(seq) for seq in range(1, 3 * REPLAY_PAGE + 8)])
    pages: list[int] = []
    reading = store.after

    async def after(after: int, limit: int) -> list[dict[str, Any]]:
        assert limit <= REPLAY_PAGE
        page = await reading(after, limit)
        pages.append(len(page))
        return page

    store.after = after  # type: ignore[method-assign]
    delivery, sent = socket(ANA, store)
    await delivery.replay(after=5, upto=3 * REPLAY_PAGE + 2)
    assert [m["seq"] for m in sent] == list(range(6, 3 * REPLAY_PAGE + 3))
    assert pages == [REPLAY_PAGE, REPLAY_PAGE, REPLAY_PAGE - 3]
    assert delivery.ready and delivery.delivered == 3 * REPLAY_PAGE + 2


@pytest.mark.asyncio
async def test_a_batched_replay_sends_many_events_a_frame_each_as_it_would_alone():
    events = [
        event(n, visibility="self" if n % 3 == 0 else "public", data={"text": "4d6 " * 100})
        for n in range(1, 301)
    ]
    events[149] = event(150, data={"dice": ["x" * 100] * 20000})  # too large for any frame
    store = Store(events)
    alone, one_by_one = socket(BO, store)
    alone.expect(7, "r7")
    await alone.replay(after=0, upto=300)
    batched, frames = socket(BO, store)
    batched.expect(7, "r7")  # the sender's own copy keeps its ref in a batch too
    await batched.replay(after=0, upto=300, batch=True)
    assert [f["type"] for f in frames] == ["replay"] * len(frames)
    assert 2 <= len(frames) < 20, "a few frames, not one an event"
    assert [e for f in frames for e in f["events"]] == one_by_one
    assert [e["seq"] for f in frames for e in f["events"]] == list(range(1, 301))
    assert len(one_by_one) == 300
    # The event too large went as its stand-in; every frame stays far under the frame limit.
    assert frames and all(len(json.dumps(f)) < DELIVERABLE for f in frames)
    # Live events go on from the replay's last seq, one a frame.
    await batched.offer(message_payload(event(301)))
    assert frames[-1]["type"] == "event" and frames[-1]["seq"] == 301


def test_the_socket_query_asks_for_a_batched_replay_only_in_so_many_words():
    def scope(query: str) -> dict:
        return {"query_string": query.encode()}

    assert batched_replay(scope("after=3&replay=batch"))
    assert not batched_replay(scope("after=3"))
    assert not batched_replay(scope("after=3&replay=yes"))


def raw_socket(viewer: Viewer, store: Store) -> tuple[Delivery, list[str]]:
    sent: list[str] = []

    async def send_text(text: str) -> None:
        sent.append(text)

    return Delivery(viewer=viewer, send_text=send_text, fetch_after=store.after), sent


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    ref=st.one_of(st.integers(), st.text(max_size=20)),
    visibility=st.sampled_from(["public", "gm", "self"]),
)
def test_the_senders_copy_is_the_event_encoded_with_its_ref(data, ref, visibility):
    """The sender's copy is the room's JSON with the ref spliced in: byte for byte what encoding
    the event with its ref gives, whatever the data, the ref and the visibility."""

    async def go() -> list[str]:
        delivery, sent = raw_socket(ANA, Store([]))
        await delivery.replay(after=None, upto=0)
        delivery.expect(1, ref)
        await delivery.offer(message_payload(event(1, visibility=visibility, data=data)))
        return sent

    (text,) = asyncio.run(go())
    expected = {**for_viewer(event(1, visibility=visibility, data=data), ANA), "ref": ref}
    assert text == dumps(expected)
    assert json.loads(text) == expected


@pytest.mark.asyncio
async def test_a_senders_copy_it_may_not_see_or_too_large_is_encoded_for_it():
    store = Store([])
    # Ana's roll blind (the GM's alone): her own copy is redacted, with her ref.
    delivery, sent = raw_socket(ANA, store)
    await delivery.replay(after=None, upto=0)
    delivery.expect(1, "r1")
    await delivery.offer(message_payload(event(1, visibility="blind")))
    assert json.loads(sent[0]) == {**for_viewer(event(1, visibility="blind"), ANA), "ref": "r1"}
    assert json.loads(sent[0])["data"] == {"hidden": True}
    # An event just under the limit with its ref over it goes out as a stand-in with the ref.
    big = event(2, data={"text": "x" * (DELIVERABLE - 200)})
    room_text = message_payload(big)["text"]
    delivery.expect(2, "r" * 100)
    assert len(room_text) <= DELIVERABLE < len(room_text) + 110
    await delivery.offer(message_payload(big))
    stand_in = json.loads(sent[1])
    assert stand_in["seq"] == 2 and stand_in["ref"] == "r" * 100 and stand_in["data"]["too_large"]
