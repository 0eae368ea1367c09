"""Where the table reads its frameworks past their public interfaces: all of it, in one place.

ASGI and the frameworks' documented APIs do not say everything the table needs: how many bytes
a socket's client has not read yet, closing a socket with a reason, keeping seat tokens out of
daphne's access log, a consumer that does not hop to the database thread for every message, a
logged-in user read only when something asks, a socket's frames of one turn sent in one system
call rather than three each, no debug dump of autobahn's configuration on every connection,
nor colouring of its debug lines' arguments on every frame, when no debug line is written, and a
client's small frames unmasked and checked without letting go of the interpreter lock.
Each such read lives here, named for what it reads (daphne, autobahn, Twisted, Channels),
and ``tests/tabletop/test_adapters.py`` checks every one against the versions pyproject.toml pins,
so an upgrade that moves one fails there, by name, and not in a room.

At run time a read that finds its internal gone logs an ERROR naming it (once) and the table
does without what it gave (a socket's send buffer goes unbounded, a close loses its reason, a
frame takes Twisted's three system calls);
the access log refuses to load rather than print tokens.
"""

from __future__ import annotations

import codecs
import functools
import inspect
import logging
import pprint
import sys
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from channels.auth import AuthMiddleware
from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.contrib import auth
from django.utils.functional import SimpleLazyObject

log = logging.getLogger(__name__)

_reported: set[str] = set()


def _moved(what: str, detail: str) -> None:
    """Say once, loudly, that an internal this module reads is not where the pinned version
    keeps it (the table goes on without it)."""
    if what not in _reported:
        _reported.add(what)
        log.error("%s is not what tabletop/adapters.py reads (%s); doing without", what, detail)


# -- daphne, autobahn, Twisted: the websocket connection behind a socket ------------------------


def daphne_connection(send: Any) -> Any | None:
    """The connection behind a socket's ``send`` when daphne serves it (autobahn's websocket
    protocol, on a Twisted transport), else None (another server, a test without one).

    Daphne hands each application ``functools.partial(server.handle_reply, protocol)``."""
    target = send.func if isinstance(send, functools.partial) else send
    if not (getattr(target, "__module__", None) or "").startswith("daphne."):
        return None
    if not (isinstance(send, functools.partial) and target.__name__ == "handle_reply"):
        _moved("daphne's send callable", f"not partial(handle_reply, protocol): {send!r}")
        return None
    protocol = send.args[0] if send.args else None
    missing = [a for a in ("sendClose", "transport", "failByDrop") if not hasattr(protocol, a)]
    if missing:
        _moved("daphne's websocket protocol", f"no {', '.join(missing)}")
        return None
    return protocol


def daphne_http_request(send: Any) -> Any | None:
    """The request behind an HTTP response's ``send`` when daphne serves it (Twisted's
    ``http.Request``, whose ``transport`` is the connection's), else None."""
    target = send.func if isinstance(send, functools.partial) else send
    if not (getattr(target, "__module__", None) or "").startswith("daphne."):
        return None
    request = send.args[0] if isinstance(send, functools.partial) and send.args else None
    if request is None or not hasattr(request, "transport"):
        _moved("daphne's HTTP request", f"no transport behind {send!r}")
        return None
    return request


def abort(connection: Any) -> None:
    """Drop the connection at once (a download its client stopped reading: ending the body
    normally would pass a cut-off file for a whole one)."""
    transport = getattr(connection, "transport", None)
    if transport is not None:
        transport.abortConnection()


def close_frame_on_protocol_faults(connection: Any) -> None:
    """A frame over daphne's 1 MiB limit (or another protocol fault) is answered with a close
    frame carrying its code and reason (1009 "message too big"), not a dropped connection
    (autobahn's ``failByDrop`` option, which daphne leaves on)."""
    connection.failByDrop = False


def unsent_bytes(connection: Any) -> Callable[[], int | None]:
    """How many bytes were written to the connection and not yet taken by the network (what its
    client has not read, past the kernel's buffers): Twisted's ``FileDescriptor`` write buffer,
    ``dataBuffer`` from ``offset`` on plus what waits in ``_tempDataBuffer`` (``_tempDataLen``).
    None once the connection has no transport."""

    def unsent() -> int | None:
        transport = getattr(connection, "transport", None)
        if transport is None:
            return None
        try:
            return len(transport.dataBuffer) - transport.offset + transport._tempDataLen
        except AttributeError as exc:
            _moved("Twisted's transport write buffer", str(exc))
            return None

    return unsent


def close_with_reason(
    connection: Any, *, code: int, reason: str, drop: bool, drop_queued: float | None = None
) -> None:
    """Send a close frame with a reason (daphne's own close message carries only a code);
    ``drop``: let the connection go at once, unread buffer and all. ``drop_queued``: first
    forget the frames queued and not yet handed to the network (Twisted's ``_tempDataBuffer``,
    whole writes, one frame each, so the stream stays whole), then wait that many seconds for
    the client to read up to the close frame and answer it (autobahn's
    ``closeHandshakeTimeout``) before the connection is dropped."""
    if drop_queued is not None:
        transport: Any = getattr(connection, "transport", None)
        try:
            transport._tempDataBuffer.clear()
            transport._tempDataLen = 0
        except AttributeError as exc:
            _moved("Twisted's transport write buffer", str(exc))
        connection.closeHandshakeTimeout = drop_queued
    connection.sendClose(code=code, reason=reason)
    transport = getattr(connection, "transport", None)
    if drop and transport is not None:
        transport.abortConnection()


# Connections with frames written this turn of the reactor, each sent once at its end.
_due: list[Callable[[], None]] = []


def _send_due() -> None:
    due = _due[:]
    _due.clear()
    for send in due:
        try:
            send()
        except Exception:  # one connection's fault must not keep the others' frames back
            log.exception("sending a connection's frames failed")


def write_at_once(connection: Any) -> None:
    """Send what a connection is written in one turn of the reactor with one system call.

    Twisted's ``FileDescriptor.write`` queues a frame and registers the socket for writing; the
    reactor's next turn sends it and unregisters the socket: three system calls (``epoll_ctl``,
    ``send``, ``epoll_ctl``) for every socket of a room, for every event. Here a frame for a
    connection with nothing waiting goes into Twisted's own queue (``_tempDataBuffer``, so the
    send buffer, ``unsent_bytes``, counts it as before, and a close for a client too far behind
    forgets it as before) without registering the socket, and at the end of the turn the
    transport's own ``doWrite`` sends everything queued for it in one ``send`` (a room's events
    that arrive together leave together). Whatever the network does not take, a connection
    closing, and every frame while Twisted is itself waiting to send, are left to Twisted's
    reactor as before. Only a plain TCP connection (daphne's ``tcp.Server``, no TLS layer) is
    changed; its producer (Twisted's HTTP channel, which daphne upgraded to the socket) is paused
    and resumed by what waits in the queue, as before."""
    from twisted.internet import tcp

    transport = getattr(connection, "transport", None)
    if type(transport) is not tcp.Server:
        return  # (TLS, a test's transport: Twisted's write as it is)
    missing = [
        a
        for a in (
            "dataBuffer",
            "offset",
            "_tempDataBuffer",
            "_tempDataLen",
            "_writeDisconnected",
            "_maybePauseProducer",
            "doWrite",
            "startWriting",
            "reactor",
        )
        if not hasattr(transport, a)
    ]
    if missing:
        _moved("Twisted's TCP transport", f"no {', '.join(missing)}")
        return
    queue = transport.write
    due = False  # this connection's frames wait for the end of the turn

    def send() -> None:
        nonlocal due
        due = False
        if not transport.connected or transport.disconnecting:
            return  # (closing: Twisted's reactor sends what waits, then closes)
        lost = transport.doWrite()
        if (
            lost is not None
            or transport._tempDataBuffer
            or transport.offset < len(transport.dataBuffer)
        ):
            transport.startWriting()  # the rest, or the loss, is the reactor's to handle

    def write(data: bytes) -> None:
        nonlocal due
        closing = not transport.connected or transport.disconnecting or transport._writeDisconnected
        waiting = transport._tempDataBuffer or transport.offset < len(transport.dataBuffer)
        if closing or not data or not isinstance(data, bytes) or (waiting and not due):
            queue(data)  # (Twisted's own write: it is sending, or the connection is going)
            return
        transport._tempDataBuffer.append(data)
        transport._tempDataLen += len(data)
        transport._maybePauseProducer()
        if not due:
            due = True
            if not _due:
                transport.reactor.callLater(0, _send_due)
            _due.append(send)

    # (an attribute of this connection's transport only: Twisted's class is left as it is)
    transport.write = write  # type: ignore[method-assign]


class _Later:
    """A value for a log line, made only when a line that shows it is written."""

    __slots__ = ("args", "kwargs", "make")

    def __init__(self, make: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]):
        self.make = make
        self.args = args
        self.kwargs = kwargs

    def __str__(self) -> str:
        return str(self.make(*self.args, **self.kwargs))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    __repr__ = __str__


def _made_later(make: Callable[..., Any]) -> Callable[..., _Later]:
    """``make``, called when a log line shows what it made and not before."""

    def later(*args: Any, **kwargs: Any) -> _Later:
        return _Later(make, args, kwargs)

    later.makes = make  # type: ignore[attr-defined]
    return later


def _pformat(value: Any) -> str:
    return pprint.pformat(value)  # (looked up when called: a debug line reads as pprint's)


def defer_autobahn_debug_dumps() -> None:
    """Autobahn builds the arguments of its debug lines before the logger is asked whether
    debug lines are wanted (txaio turns ``debug`` into a do-nothing below the debug level, but
    the arguments are made by then), and no log level or txaio setting skips them:

    - on every connection it pretty-prints its whole configuration (about 40 options) and the
      transport's details (``WebSocketProtocol._connectionMade``, ``startHandshake``): 7-12 %
      of the event loop's time in a burst of connects;
    - on every frame received and every frame sent (``dataReceived``, ``sendData``) it colours
      the method's qualified name, the peer and the length with click (``hltype``, ``hlval``):
      about 3 us a frame, 4 % of the event loop's samples at 200 tables (docs/benchmarks.md).

    Those modules' ``pformat``, ``hltype`` and ``hlval`` become ones that make their text when
    a line shows it, so a debug log, when on, reads as before. (The module's ``Timings`` prints
    with the real ``pformat``, as its ``__str__`` must answer a string.)"""
    try:
        from autobahn import util
        from autobahn.twisted import websocket
        from autobahn.websocket import protocol
    except ImportError:  # another server
        return
    timings = getattr(protocol, "Timings", None)
    if timings is None or "__str__" not in timings.__dict__:
        _moved("autobahn's Timings", "no Timings.__str__")
        return
    # name: (what autobahn's modules call, what makes the text later)
    deferred: dict[str, tuple[Any, Callable[..., Any]]] = {
        "pformat": (pprint.pformat, _pformat),
        "hltype": (util.hltype, util.hltype),
        "hlval": (util.hlval, util.hlval),
    }
    for module, names in (
        (protocol, ("pformat", "hltype", "hlval")),
        (websocket, ("hltype", "hlval")),
    ):
        for name in names:
            current = module.__dict__.get(name)
            if getattr(current, "makes", None) is not None:
                continue  # (deferred already)
            called, make = deferred[name]
            if current is not called:
                _moved(f"{module.__name__}.{name}", f"not {called!r}: {current!r}")
                continue
            # (called only for keyword arguments of log lines: a lazy stand-in for the str)
            setattr(module, name, _made_later(make))
    timings.__str__ = lambda self: pprint.pformat(self._timings)


# -- autobahn: a received frame's unmasking and its text's UTF-8 check -----------------------------

# Up to this many bytes a frame is unmasked by HeldMasker; a longer one by autobahn's own (its
# SIMD loop is quicker from about 2 KB on: docs/benchmarks.md).
HELD_MASK_BYTES = 2048


class HeldMasker:
    """Unmasks a client's frame (RFC 6455 5.3: each byte XORed with the key's byte at its
    position) as one integer XOR, holding the interpreter lock throughout. The payload may come
    in pieces; ``pointer`` is how far into the frame the next piece starts."""

    __slots__ = ("_key", "_ptr")

    def __init__(self, key: bytes) -> None:
        self._key = bytes(key)
        self._ptr = 0

    def pointer(self) -> int:
        return self._ptr

    def reset(self) -> None:
        self._ptr = 0

    def process(self, data: bytes) -> bytes:
        n = len(data)
        turn = self._ptr & 3
        self._ptr += n
        key = self._key[turn:] + self._key[:turn]
        keys = (key * (n // 4 + 1))[:n]
        unmasked = int.from_bytes(data, "little") ^ int.from_bytes(keys, "little")
        return unmasked.to_bytes(n, "little")


class HeldUtf8Validator:
    """Checks a text message's UTF-8 as its pieces come (autobahn's validator's answers: valid
    so far, ends on a whole code point, where in the piece, how far in the message) with
    Python's strict decoder, holding the interpreter lock throughout."""

    __slots__ = ("_decoder", "_total")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._total = 0

    def reset(self) -> None:
        self._decoder.reset()
        self._total = 0

    def validate(self, piece: bytes) -> tuple[bool, bool, int, int]:
        try:
            self._decoder.decode(piece)
        except UnicodeDecodeError as exc:
            return (False, False, exc.start, self._total + exc.start)
        partial = self._decoder.getstate()[0]  # (the bytes of a code point not yet whole)
        if len(partial) > 1 and partial[0] == 0xED and partial[1] > 0x9F:
            # A surrogate's half (ED A0-BF) is refused at its second byte, as autobahn does and
            # as the standard asks; Python's decoder would wait for the third before refusing.
            at = len(piece) - len(partial) + 1
            return (False, False, at, self._total + at)
        self._total += len(piece)
        return (True, not partial, len(piece), self._total)


def unmask_and_check_text_holding_the_lock() -> None:
    """Autobahn unmasks every frame a client sends, and checks a text message's UTF-8, with its
    compiled helpers (``autobahn.nvx``, through cffi): a new masker for every frame, made in two
    calls, a third to unmask and a fourth when it is freed, and four calls a message for the
    check. cffi lets go of the interpreter lock on every call: a point where the database
    thread, waiting for the lock whenever rooms are busy, can take it in the middle of a frame.
    Here a frame of a few hundred bytes is unmasked as one integer XOR (1.5 us alone, against
    6.1 us for autobahn's masker) and checked with Python's own strict decoder, neither letting
    go of the lock; a frame over ``HELD_MASK_BYTES`` is unmasked by autobahn's own, as before.
    (A long text message is decoded once more for the check, as daphne decodes it anyway; the
    server takes none over 1 MiB.)"""
    try:
        from autobahn.websocket import protocol
    except ImportError:  # another server
        return
    current = protocol.__dict__.get("create_xor_masker")
    if getattr(current, "native", None) is not None:
        return  # (done already)
    if current is None or protocol.__dict__.get("Utf8Validator") is None:
        _moved("autobahn's masker and UTF-8 validator", "not in autobahn.websocket.protocol")
        return
    native: Callable[..., Any] = current

    def create_xor_masker(mask: bytes, length: int | None = None) -> Any:
        if length is not None and length <= HELD_MASK_BYTES:
            return HeldMasker(mask)
        return native(mask, length)

    create_xor_masker.native = native  # type: ignore[attr-defined]
    protocol.create_xor_masker = create_xor_masker
    protocol.Utf8Validator = HeldUtf8Validator  # type: ignore[misc,assignment]


# -- daphne: its access logs --------------------------------------------------------------------


def redact_daphne_logs(redact: Callable[[str], str]) -> None:
    """Make daphne's access log (``daphne ...`` and ``manage.py play``) and its development
    server's request log (``manage.py runserver``) print each request line through ``redact``.
    Raises RuntimeError, at startup, if daphne is there and its log is not where it was: better
    no server than one that prints seat tokens."""
    try:
        from daphne.access import AccessLogGenerator
    except ImportError:  # another server: its own access log is the operator's to configure
        return
    _wrap(AccessLogGenerator, "write_entry", "request", redact)
    # The development server's command is loaded (before the application) only when it runs.
    runserver = sys.modules.get("daphne.management.commands.runserver")
    if runserver is not None:
        _wrap(runserver.Command, "log_action", "details", lambda d: _redact_path(d, redact))


def _redact_path(details: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(details, dict) and isinstance(details.get("path"), str):
        return {**details, "path": redact(details["path"])}
    return details


def _wrap(owner: type, name: str, argument: str, clean: Callable[[Any], Any]) -> None:
    """Replace ``owner.name`` by a wrapper that passes ``argument`` through ``clean`` first."""
    original = getattr(owner, name, None)
    if original is None or argument not in inspect.signature(original).parameters:
        raise RuntimeError(
            f"{owner.__module__}.{owner.__name__}.{name}({argument}=...) is gone: seat tokens "
            "would reach the log. tabletop/adapters.py must learn the new version."
        )
    if getattr(original, "redacts", False):
        return
    signature = inspect.signature(original)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if argument in kwargs:  # (as daphne passes it: binding the signature cost 25 us a line)
            return original(*args, **{**kwargs, argument: clean(kwargs[argument])})
        bound = signature.bind(*args, **kwargs)
        bound.arguments[argument] = clean(bound.arguments[argument])
        return original(*bound.args, **bound.kwargs)

    wrapper.redacts = True  # type: ignore[attr-defined]
    setattr(owner, name, wrapper)


# -- psycopg_pool: how a pooled connection is checked when taken ---------------------------------


def check_pooled_connections_with(pool: Any, check: Callable[[Any], None]) -> None:
    """Have ``pool`` check each connection it hands out with ``check``, in place of the check
    it was made with (``ConnectionPool._check``). Django makes its pool with psycopg_pool's own
    check and passes ``check`` itself, so no setting can name another. A pool made without a
    check (health checks turned off) is left without one."""
    if not hasattr(pool, "_check"):
        _moved("psycopg_pool's check of a connection taken from the pool", "no pool._check")
        return
    if pool._check is not None and pool._check is not check:
        pool._check = check


# -- Channels: consumers and middleware -------------------------------------------------------


class LeanWebsocketConsumer(AsyncWebsocketConsumer):
    """Channels' websocket consumer without three costs every message pays there.

    Channels' ``dispatch`` runs ``close_old_connections()`` on the ORM thread before every
    handler: a hop onto the process's one ORM thread for each message, even a ping. These
    consumers reach the database only through ``database_sync_to_async``, which closes stale
    connections on that thread itself, so a message waits for the ORM thread only when it needs
    it. ``send_text`` hands a frame straight to the server (the consumer's ``send`` builds
    the same message through two more calls), since every frame of every socket comes here.
    And a consumer without a channel of its own (``channel_layer_alias = None``: the room's
    sockets hear their room through the hub) takes its messages straight from the server:
    Channels' ``__call__`` waits on a list of sources even when there is one, making a task and
    an ``asyncio.wait`` for every message (13 us a message on a quiet event loop, against
    0.3)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.channel_layer_alias is not None:
            await super().__call__(scope, receive, send)
            return
        # What Channels' __call__ does for a consumer with no channel layer, one message at a
        # time as there: the next is not taken until this one is handled.
        self.scope = scope
        self.channel_layer = None
        self.base_send = send
        try:
            while True:
                await self.dispatch(await receive())
        except StopConsumer:
            pass

    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"no handler for message type {message['type']}")
        await handler(message)

    async def send_text(self, text: str) -> None:
        # ASGI lets a text frame leave out "bytes"; asgiref's TypedDict requires the key.
        await self.base_send({"type": "websocket.send", "text": text})  # type: ignore[arg-type]


class LazyUserMiddleware(AuthMiddleware):
    """``scope["user"]`` read from the session on first use, by the code that needs it (on the
    database thread), instead of one database trip per socket before it may even connect: a
    socket with a seat token or a seat cookie never needs it. Channels' own middleware makes that
    trip for every socket (its ``resolve_scope``), and in a burst each one waits behind every
    other."""

    # (Channels' scope: the stubs' TypedDict of it is private to them, and this one carries more)
    async def resolve_scope(self, scope: Any) -> None:
        request = SimpleNamespace(session=scope["session"])
        # get_user reads only the request's session; the stubs ask for a whole request.
        scope["user"] = SimpleLazyObject(lambda: auth.get_user(request))  # type: ignore[arg-type]
