"""Sockets arriving at a table: who they are, and their ``hello``, read for many at once.

A connect needs two reads: the seat behind its token (before it may join the room) and, once it
has joined the room's fan-out, the room's state at the store's ``last_seq`` (joined first, so
anything committed after that read reaches it live). Each read is one trip to the process's
database thread, and a socket's trip waits behind every other socket's. When a stream starts or
a class logs in, hundreds of sockets arrive at once and each paid two trips of its own: 200
sockets took ~0.8 s to get their hello.

Here the sockets arriving while a read is under way wait for the next one and share it: one trip
resolves every waiting token (a query for the rooms, one for the seats), and one trip reads
the rooms' ``last_seq`` for every waiting hello (one query for all the rooms; the room's shared
state, ``selectors.room.room_state``, is read once per room and ``last_seq``, and each hello's
``seat``, characters included, is the room's entry for it: ``selectors.room.seat_in_room``).
Each socket still joins the room before its hello's ``last_seq`` is read, so the order that
makes the room lossless is unchanged; a lone socket pays what it paid before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from importlib import import_module
from typing import Any, Generic, TypeVar

from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from channels.sessions import CookieMiddleware
from django.conf import settings

from .adapters import LazyUserMiddleware
from .models import GameSession
from .outage import run_with_database
from .selectors.events import Viewer, dumps, events_after
from .selectors.room import SharedState, room_state, seat_in_room, table_states_at
from .services import presence
from .services.access import Access, Arrival, resolve_accesses

Request = TypeVar("Request")
Answer = TypeVar("Answer")

# What the hello carries of the session row (read again for it: the row changes as the room plays).
HELLO_FIELDS = ("last_seq", "status", "ended_at", "table_state", "server_seed")


class Coalescer(Generic[Request, Answer]):
    """Calls made while a batch is on the database thread wait and go together in the next one.

    ``work`` runs on the database thread with every waiting request and returns one answer (or
    exception) per request, in order. A call that finds nothing under way starts a batch at
    once, so nothing waits for a timer."""

    def __init__(self, work: Callable[[list[Request]], Sequence[Answer | BaseException]]) -> None:
        self._work = database_sync_to_async(work)
        self._waiting: list[tuple[Request, asyncio.Future[Answer]]] = []
        self._running: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __call__(self, request: Request) -> Awaitable[Answer]:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # (a new event loop: tests run one each)
            self._loop, self._waiting, self._running = loop, [], None
        future: asyncio.Future[Answer] = loop.create_future()
        self._waiting.append((request, future))
        if self._running is None or self._running.done():
            self._running = loop.create_task(self._drain())
        return future

    async def _drain(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                answers = await self._work([request for request, _ in batch])
            except BaseException as exc:  # the batch failed as a whole: each caller hears it
                answers = [exc] * len(batch)
            for (_, future), answer in zip(batch, answers, strict=True):
                if future.done():  # the socket went away meanwhile
                    continue
                if isinstance(answer, BaseException):
                    future.set_exception(answer)
                else:
                    future.set_result(answer)


def hello_for(
    access: Access, after: int | None, *, table: dict[str, Any] | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """hello (``last_seq`` already read into ``access.session``, before the state, so the state
    is never older than it) and the events to replay after ``after``. ``table``: the room's
    state at that ``last_seq`` (``selectors.room.table_states_at``), when already read."""
    session = access.session
    last_seq = session.last_seq
    if table is None:
        table = table_states_at([(session, last_seq)])[session.pk]
    hello = {
        "type": "hello",
        "seat": seat_in_room(table, access.seat),
        "role": access.seat.role,
        "last_seq": last_seq,
        "state": room_state(
            session=session,
            viewer=Viewer(seat_id=access.seat.pk, is_gm=access.seat.is_gm),
            last_seq=last_seq,
            table=table,
        ),
    }
    replay = [] if after is None else events_after(session_id=session.pk, after=after, limit=None)
    return hello, [e for e in replay if e["seq"] <= last_seq]


def hello_text(hello: dict[str, Any]) -> str:
    """The hello as JSON, its room state's part made once for the whole room when every seat
    sees the room alike (``selectors.room.SharedState``)."""
    state = hello["state"]
    if not isinstance(state, SharedState):
        return dumps(hello)
    head = dumps({k: v for k, v in hello.items() if k != "state"})
    return f'{head[:-1]},"state":{state.text}}}'


def hellos(
    requests: list[tuple[Access, int | None]],
) -> list[tuple[dict[str, Any], list[dict[str, Any]]] | BaseException]:
    """Every waiting socket's hello: the rooms' rows read in one query, then the states of
    the rooms not read at that seq just now, together (one query per part for all rooms)."""
    rows = {
        row["pk"]: row
        for row in GameSession.objects.filter(
            pk__in={access.session.pk for access, _ in requests}
        ).values("pk", *HELLO_FIELDS)
    }
    rooms: dict[int, tuple[GameSession, int]] = {}
    for access, _ in requests:
        row = rows.get(access.session.pk)
        if row is not None:
            for field in HELLO_FIELDS:
                setattr(access.session, field, row[field])
            rooms[access.session.pk] = (access.session, row["last_seq"])
    tables = table_states_at(list(rooms.values()))
    out: list[tuple[dict[str, Any], list[dict[str, Any]]] | BaseException] = []
    for access, after in requests:
        if access.session.pk not in rows:
            out.append(GameSession.DoesNotExist(access.session.pk))
            continue
        try:
            out.append(hello_for(access, after, table=tables[access.session.pk]))
        except Exception as exc:
            out.append(exc)
    return out


def _counted(change: Callable[..., None]) -> Callable[[list[int]], list[None]]:
    def work(seat_ids: list[int]) -> list[None]:
        change(seat_ids=seat_ids)
        return [None] * len(seat_ids)

    return work


class Arrivals:
    """The process's arrivals: ``await arrivals.access(...)`` then, once joined, ``hello``;
    ``present``/``gone`` count the seat's open sockets (``services.presence``), also together."""

    def __init__(self) -> None:
        self._present: Coalescer[int, None] = Coalescer(_counted(presence.count_arrivals))
        self._gone: Coalescer[int, None] = Coalescer(_counted(presence.count_departures))
        # While the database is away, a socket is refused at once (tabletop/outage.py).
        self._access: Coalescer[Arrival, Access | None] = Coalescer(
            lambda batch: run_with_database(lambda: resolve_accesses(batch, characters=False))
        )
        self._hello: Coalescer[
            tuple[Access, int | None], tuple[dict[str, Any], list[dict[str, Any]]]
        ] = Coalescer(hellos)

    async def access(
        self, *, code: str, token: str | None, cookie_token: str | None, user: Any
    ) -> Access | None:
        return await self._access(Arrival(code, token, cookie_token, user))

    async def hello(
        self, access: Access, after: int | None
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        return await self._hello((access, after))

    async def present(self, seat_id: int) -> None:
        await self._present(seat_id)

    async def gone(self, seat_id: int) -> None:
        await self._gone(seat_id)


arrivals = Arrivals()


class ReadSessionMiddleware(BaseMiddleware):
    """``scope["session"]``: the browser's Django session, for reading only. The sockets read
    who is logged in and never change the session, so nothing here saves it. Channels' own
    ``SessionMiddleware`` wraps ``send`` to save a changed session, and that wrapper looked at
    the session on every frame of every socket (about a tenth of the event loop's time when a
    room of 200 all roll at once, docs/benchmarks.md)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        store = import_module(settings.SESSION_ENGINE).SessionStore
        key = scope["cookies"].get(settings.SESSION_COOKIE_NAME)
        # (a store is only a key until something reads it: no database trip here)
        # A copy with the session, as Channels' own middleware makes; its stubs take the scope
        # for a TypedDict built with every key, which a copy made by spreading is not to mypy.
        with_session = {**scope, "session": store(key)}
        return await super().__call__(with_session, receive, send)  # type: ignore[arg-type]


def lazy_user_stack(inner: Any) -> Any:
    """``channels.auth.AuthMiddlewareStack`` with the session read-only and the user read on
    first use."""
    return CookieMiddleware(ReadSessionMiddleware(LazyUserMiddleware(inner)))
