"""Every framework internal tabletop/adapters.py reads, checked against the pinned versions: an
upgrade that moves one fails here, naming it, instead of a socket quietly doing without."""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.utils.functional import empty
from hypothesis import example, given
from hypothesis import strategies as st
from twisted.internet import abstract, tcp
from twisted.internet.address import IPv4Address
from twisted.internet.testing import StringTransport

from tabletop import adapters


def daphne_protocol() -> tuple[Any, StringTransport]:
    """A websocket connection as daphne makes one (its factory, set up as ``Server.run`` does),
    on a transport that records what is written."""
    from daphne.server import Server
    from daphne.ws_protocol import WebSocketFactory

    server = Server(application=None, endpoints=["tcp:port=0:interface=127.0.0.1"])
    factory = WebSocketFactory(server, server="daphne")
    factory.setProtocolOptions(allowNullOrigin=True, maxFramePayloadSize=1024)
    protocol = factory.buildProtocol(IPv4Address("TCP", "127.0.0.1", 50000))
    transport = StringTransport()
    protocol.makeConnection(transport)
    return protocol, transport


@pytest.mark.asyncio
async def test_daphne_hands_each_socket_the_connection_behind_it() -> None:
    from daphne.server import Server

    protocol, _ = daphne_protocol()
    given = {}

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        given["send"] = send

    server = Server(application=application, endpoints=["tcp:port=0:interface=127.0.0.1"])
    server.connections = {protocol: {}}
    server.create_application(protocol, {"type": "websocket"})
    await asyncio.sleep(0)
    send = given["send"]
    assert isinstance(send, functools.partial) and send.func.__name__ == "handle_reply", send
    assert adapters.daphne_connection(send) is protocol


def test_another_servers_send_has_no_connection_and_a_moved_daphne_is_reported(caplog):
    async def send(message: dict[str, Any]) -> None: ...

    assert adapters.daphne_connection(send) is None  # (uvicorn's, a test's)

    async def handle_reply(protocol: Any, message: dict[str, Any]) -> None: ...

    handle_reply.__module__ = "daphne.server"
    adapters._reported.clear()
    with caplog.at_level(logging.ERROR, logger="tabletop.adapters"):
        assert adapters.daphne_connection(functools.partial(handle_reply, object())) is None
    assert "daphne's websocket protocol" in caplog.text and "sendClose" in caplog.text


def test_a_protocol_fault_is_answered_with_a_close_frame_not_a_drop() -> None:
    protocol, transport = daphne_protocol()
    assert protocol.failByDrop is True  # daphne's default: the adapter is what changes it
    adapters.close_frame_on_protocol_faults(protocol)
    protocol.state = protocol.STATE_OPEN
    protocol._fail_connection(1009, "message too big")
    written = transport.value()
    assert written[:1] == b"\x88" and b"message too big" in written  # a close frame
    assert not transport.disconnecting


def test_a_close_carries_its_code_and_reason_and_a_drop_lets_the_connection_go() -> None:
    protocol, transport = daphne_protocol()
    protocol.state = protocol.STATE_OPEN
    adapters.close_with_reason(protocol, code=4408, reason="too far behind", drop=True)
    written = transport.value()
    assert written[:1] == b"\x88" and (4408).to_bytes(2, "big") + b"too far behind" in written
    assert transport.disconnecting


class Wire(tcp.Server):
    """The transport daphne serves a socket on, with its own write path, on a network that
    takes ``taking`` bytes a write (no socket: only how bytes leave is replaced)."""

    taking = 0

    def __init__(self) -> None:
        class Reactor:
            def addWriter(self, _: Any) -> None: ...

            def removeWriter(self, _: Any) -> None: ...

        abstract.FileDescriptor.__init__(self, reactor=Reactor())
        self.connected = True

    def writeSomeData(self, data: bytes) -> int:
        return min(self.taking, len(data))


def test_the_send_buffer_counts_what_the_network_has_not_taken() -> None:
    wire = Wire()
    unsent = adapters.unsent_bytes(type("Connection", (), {"transport": wire})())
    assert unsent() == 0
    wire.write(b"x" * 5000)
    wire.write(b"y" * 3000)
    assert unsent() == 8000
    wire.taking = 1500
    wire.doWrite()
    assert unsent() == 6500
    wire.write(b"z" * 100)
    assert unsent() == 6600
    wire.taking = 10**6
    wire.doWrite()
    assert unsent() == 0


def test_a_transport_without_that_buffer_is_reported_not_read_as_empty(caplog) -> None:
    adapters._reported.clear()
    unsent = adapters.unsent_bytes(type("C", (), {"transport": object()})())
    with caplog.at_level(logging.ERROR, logger="tabletop.adapters"):
        assert unsent() is None
    assert "write buffer" in caplog.text


def test_daphnes_logs_take_the_argument_the_redaction_rewrites() -> None:
    from daphne.access import AccessLogGenerator
    from daphne.management.commands import runserver

    from tabletop.access_log import install

    install()  # raises if either is gone
    assert getattr(AccessLogGenerator.write_entry, "redacts", False)
    assert getattr(runserver.Command.log_action, "redacts", False)


def test_a_log_that_moved_stops_the_server_rather_than_print_tokens() -> None:
    class Log:
        def write_entry(self, host: str, date: str, line: str) -> None: ...

    with pytest.raises(RuntimeError, match="seat tokens would reach the log"):
        adapters._wrap(Log, "write_entry", "request", str)
    with pytest.raises(RuntimeError, match="seat tokens would reach the log"):
        adapters._wrap(Log, "gone", "request", str)


class Echo(adapters.LeanWebsocketConsumer):
    async def websocket_connect(self, message: dict[str, Any]) -> None:
        await self.accept()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        await self.send_text(f"echo {text_data}")


@pytest.mark.asyncio
async def test_the_lean_consumer_handles_messages_without_a_trip_to_the_database_thread(
    monkeypatch,
) -> None:
    from channels import consumer

    hops = []

    async def close_old_connections() -> None:
        hops.append(1)

    # Channels' own dispatch makes the hop the lean consumer saves ...
    monkeypatch.setattr(consumer, "aclose_old_connections", close_old_connections)
    await (await _opened(_PlainEcho)).disconnect()
    assert hops, "Channels no longer closes connections per message: the override can go"
    hops.clear()
    # ... and the lean one, dispatched by name as Channels does, does not.
    lean = await _opened(Echo)
    await lean.send_to(text_data="hi")
    assert await lean.receive_from() == "echo hi"
    await lean.disconnect()
    assert hops == []


async def _opened(consumer: type[Echo]) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(consumer.as_asgi(), "/")
    assert (await communicator.connect())[0]
    return communicator


class _PlainEcho(Echo):
    dispatch = adapters.AsyncWebsocketConsumer.dispatch


class _EchoWithoutAChannel(Echo):
    channel_layer_alias = None  # type: ignore[assignment]
    ended: list[int] = []  # the codes of the disconnects it handled

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        self.ended.append(message["code"])
        await super().websocket_disconnect(message)


@pytest.mark.asyncio
async def test_a_consumer_without_a_channel_takes_its_messages_straight_from_the_server(
    monkeypatch,
) -> None:
    from channels import consumer

    waits = []
    waited = consumer.await_many_dispatch

    def counted(callables: Any, dispatch: Any) -> Any:
        waits.append(len(callables))
        return waited(callables, dispatch)

    monkeypatch.setattr(consumer, "await_many_dispatch", counted)
    # Channels waits on a list of sources for a consumer with a channel of its own ...
    await (await _opened(Echo)).disconnect()
    assert waits, "Channels no longer waits on a list of sources: the override can go"
    waits.clear()
    # ... and for one without, each message is taken from the server and handled in order.
    lean = await _opened(_EchoWithoutAChannel)
    for n in range(3):
        await lean.send_to(text_data=f"hi {n}")
    assert [await lean.receive_from() for _ in range(3)] == ["echo hi 0", "echo hi 1", "echo hi 2"]
    _EchoWithoutAChannel.ended.clear()
    await lean.disconnect(code=1001)
    assert waits == []
    # Its disconnect handled, and the consumer ended there.
    assert _EchoWithoutAChannel.ended == [1001]


@pytest.mark.asyncio
async def test_the_user_is_read_only_when_something_asks(monkeypatch) -> None:
    from channels import auth

    asked = []
    monkeypatch.setattr(auth, "get_user", lambda scope: asked.append(scope))
    seen = {}

    async def inner(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen["user"] = scope["user"]

    scope = {"type": "websocket", "session": object()}
    await adapters.LazyUserMiddleware(inner)(scope, None, None)
    # Channels' AuthMiddleware still hands the scope to resolve_scope, which reads nothing yet
    assert asked == [] and seen["user"]._wrapped is empty


def test_a_turns_frames_leave_together_in_one_send_without_registering_the_socket() -> None:
    wire = Wire()  # (a transport of another type, a test's, is left as it is) ...
    adapters.write_at_once(type("Connection", (), {"transport": wire})())
    assert "write" not in vars(wire)
    # ... daphne's plain TCP connection gets the write that sends at the end of the turn.
    server = tcp.Server.__new__(tcp.Server)
    Wire.__init__(server)
    sent: list[bytes] = []
    taking = [10**6]
    registered: list[str] = []
    later: list[Any] = []

    def write_some(data: Any) -> int:
        n = min(taking[0], len(data))
        sent.append(bytes(data[:n]))
        return n

    server.writeSomeData = write_some  # type: ignore[method-assign]
    server.startWriting = lambda: registered.append("writer")  # type: ignore[method-assign]
    server.reactor.callLater = lambda delay, f: later.append(f)  # type: ignore[attr-defined]

    def end_of_turn() -> None:
        while later:
            later.pop(0)()

    adapters.write_at_once(type("Connection", (), {"transport": server})())
    unsent = adapters.unsent_bytes(type("Connection", (), {"transport": server})())
    # (daphne's upgraded HTTP channel is the connection's streaming producer)
    server.registerProducer(type("Channel", (), {"pauseProducing": lambda self: None})(), True)
    server.write(b"frame one")
    server.write(b"frame two")
    assert sent == [] and unsent() == len(b"frame oneframe two")  # (counted while it waits)
    end_of_turn()
    assert sent == [b"frame oneframe two"] and registered == [] and unsent() == 0
    # The network takes part of the next turn's: the rest is Twisted's reactor's to send, and
    # a frame written meanwhile waits behind it, whole, where a close for a client too far
    # behind forgets it.
    taking[0] = 4
    server.write(b"frame three")
    end_of_turn()
    server.write(b"frame four")
    assert sent[1:] == [b"fram"] and "writer" in registered and later == []
    assert unsent() == len(b"e three") + len(b"frame four")
    assert bytes(server.dataBuffer[server.offset :]) == b"e three"
    assert server._tempDataBuffer == [b"frame four"]
    protocol = type("Connection", (), {"transport": server, "sendClose": lambda *a, **k: None})()
    adapters.close_with_reason(protocol, code=4408, reason="behind", drop=False, drop_queued=1.0)
    assert unsent() == len(b"e three")
    # Once the reactor has sent the rest, frames wait for the end of the turn again.
    taking[0] = 10**6
    server.doWrite()
    server.write(b"frame five")
    end_of_turn()
    assert sent[-2:] == [b"e three", b"frame five"] and unsent() == 0


def test_twisteds_tcp_transport_still_has_what_the_write_at_once_reads() -> None:
    names = ("dataBuffer", "offset", "_tempDataBuffer", "_tempDataLen", "_writeDisconnected")
    for name in (*names, "_maybePauseProducer", "doWrite", "startWriting"):
        assert hasattr(tcp.Server, name) or name in vars(abstract.FileDescriptor()), name
    assert tcp.Connection.writeSomeData is tcp.Server.writeSomeData  # the socket's own send


def test_autobahns_configuration_is_pretty_printed_only_for_a_debug_line_that_is_written(
    monkeypatch,
) -> None:
    import inspect
    import pprint

    from autobahn.websocket import protocol as autobahn_protocol

    # Autobahn's pinned version formats its configuration before the logger is asked ...
    source = inspect.getsource(autobahn_protocol.WebSocketProtocol._connectionMade)
    assert "pformat(configAttrLog)" in source, "autobahn no longer pprints: the override can go"
    made = []
    monkeypatch.setattr(pprint, "pformat", lambda value, *a, **k: made.append(value) or "")
    monkeypatch.setattr(autobahn_protocol, "pformat", pprint.pformat)  # (as imported there)
    daphne_protocol()
    assert made, "autobahn does not pprint its configuration on every connection any more"
    made.clear()
    # ... and after the adapter, a connection formats nothing while debug lines are off ...
    monkeypatch.undo()
    adapters.defer_autobahn_debug_dumps()
    assert autobahn_protocol.pformat.makes is adapters._pformat
    monkeypatch.setattr(pprint, "pformat", lambda value, *a, **k: made.append(value) or "")
    daphne_protocol()
    assert made == []
    monkeypatch.undo()
    # ... a debug line, when written, reads as before, and Timings still prints as a string.
    pretty = autobahn_protocol.pformat([("openHandshakeTimeout", 5, "WebSocketFactory")])
    assert f"\n{pretty}" == "\n" + pprint.pformat([("openHandshakeTimeout", 5, "WebSocketFactory")])
    timings = autobahn_protocol.Timings()
    timings.track("onOpen")
    assert isinstance(str(timings), str) and "onOpen" in str(timings)


def test_autobahn_colours_nothing_for_the_debug_lines_of_frames_no_one_writes(monkeypatch) -> None:
    from autobahn import util
    from autobahn.twisted import websocket
    from autobahn.websocket import protocol as autobahn_protocol

    coloured: list[str] = []
    real_hl = util.hl

    def counting_hl(text: Any, *args: Any, **kwargs: Any) -> str:
        coloured.append(text)
        return real_hl(text, *args, **kwargs)

    def frames_in_and_out() -> None:
        protocol, _ = daphne_protocol()
        coloured.clear()
        protocol.dataReceived(b"GET")
        protocol.sendData(b"x")

    # The pinned autobahn colours a debug line's arguments for every frame in and out ...
    monkeypatch.setattr(util, "hl", counting_hl)
    for module in (websocket, autobahn_protocol):
        for name in ("hltype", "hlval"):
            made_later = module.__dict__[name]
            if getattr(made_later, "makes", None) is not None:
                monkeypatch.setattr(module, name, made_later.makes)
    frames_in_and_out()
    assert len(coloured) >= 6, coloured  # (a name in two parts, a peer and a length, twice)
    # ... after the adapter, none while debug lines are off ...
    monkeypatch.undo()
    adapters.defer_autobahn_debug_dumps()
    monkeypatch.setattr(util, "hl", counting_hl)
    frames_in_and_out()
    assert coloured == []
    # ... and a line that is written shows what it showed before.
    protocol, _ = daphne_protocol()
    assert f"{websocket.hltype(protocol.dataReceived)}" == util.hltype(protocol.dataReceived)
    assert str(autobahn_protocol.hlval(3)) == util.hlval(3) == f"{websocket.hlval(3)}"


def test_a_pool_made_with_psycopg_pools_check_is_given_another() -> None:
    from psycopg_pool import ConnectionPool

    def quiet(conn: Any) -> None:
        return None

    checked = ConnectionPool("", open=False, check=ConnectionPool.check_connection)
    adapters.check_pooled_connections_with(checked, quiet)
    assert checked._check is quiet  # (what the pinned psycopg_pool calls on a connection taken)
    unchecked = ConnectionPool("", open=False)
    adapters.check_pooled_connections_with(unchecked, quiet)
    assert unchecked._check is None


def client_frame(payload: bytes, key: bytes, *, opcode: int = 0x1) -> bytes:
    """A frame as a client sends it (RFC 6455 5.2): final, masked with ``key``."""
    n = len(payload)
    length = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
    masked = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return bytes([0x80 | opcode]) + length + key + masked


def open_protocol() -> tuple[Any, StringTransport, list[tuple[bytes, bool]]]:
    """An autobahn server connection (what daphne's is made of) past its opening handshake,
    what it writes, and the messages it reads."""
    from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol

    read: list[tuple[bytes, bool]] = []

    class Reader(WebSocketServerProtocol):
        def onMessage(self, payload: bytes, isBinary: bool) -> None:
            read.append((payload, isBinary))

    factory = WebSocketServerFactory("ws://127.0.0.1:50000")
    factory.protocol = Reader
    protocol = factory.buildProtocol(IPv4Address("TCP", "127.0.0.1", 50001))
    transport = StringTransport()
    protocol.makeConnection(transport)
    transport.registerProducer(protocol, True)  # (as Twisted's TCP transport has it)
    adapters.close_frame_on_protocol_faults(protocol)  # (as the table's sockets are)
    protocol.dataReceived(
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1:50000\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        b"Sec-WebSocket-Version: 13\r\n\r\n"
    )
    assert transport.value().startswith(b"HTTP/1.1 101"), transport.value()
    transport.clear()
    return protocol, transport, read


def test_a_rolls_frame_is_unmasked_and_checked_without_autobahns_compiled_helpers(
    monkeypatch,
) -> None:
    from autobahn.websocket import protocol as autobahn_protocol

    adapters.unmask_and_check_text_holding_the_lock()
    adapters.unmask_and_check_text_holding_the_lock()  # (once is enough; twice changes nothing)
    # The maskers made for the frames read (autobahn's own are cffi's: each call lets go of
    # the interpreter lock):
    made: list[type] = []
    factory = autobahn_protocol.create_xor_masker

    def counted(mask: bytes, length: int | None = None) -> Any:
        masker = factory(mask, length)
        made.append(type(masker))
        return masker

    monkeypatch.setattr(autobahn_protocol, "create_xor_masker", counted)
    protocol, transport, read = open_protocol()
    roll = '{"type":"roll","ref":"r1","notation":"4d6kh3+2 \u00e9"}'.encode()
    frame = client_frame(roll, b"\x01\x82\x43\xf4")
    for i in range(0, len(frame), 7):  # (the network hands it over in pieces)
        protocol.dataReceived(frame[i : i + 7])
    assert read == [(roll, False)]
    assert made == [adapters.HeldMasker]
    assert type(protocol.utf8validator) is adapters.HeldUtf8Validator
    # A frame over HELD_MASK_BYTES is unmasked by autobahn's own, and reads the same.
    long_text = ("\u00e9" * adapters.HELD_MASK_BYTES).encode()
    protocol.dataReceived(client_frame(long_text, b"\x9a\x00\x17\x66"))
    assert read[-1] == (long_text, False)
    assert made[0] is adapters.HeldMasker and made[1] is not adapters.HeldMasker
    # Text that is not UTF-8 closes the connection (1007), as autobahn's check does.
    protocol.dataReceived(client_frame(b'{"type":"roll","notation":"\xed\xa0\x80"}', b"abcd"))
    written = transport.value()
    assert len(read) == 2
    assert written[:1] == b"\x88" and (1007).to_bytes(2, "big") in written


@given(
    key=st.binary(min_size=4, max_size=4),
    payload=st.binary(max_size=600),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=4),
)
def test_the_held_masker_unmasks_as_the_rfc_and_autobahn_do(
    key: bytes, payload: bytes, cuts: list[int]
) -> None:
    from autobahn.websocket.xormasker import create_xor_masker

    masked = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    held = adapters.HeldMasker(key)
    bounds = [0, *sorted(c for c in cuts if c <= len(payload)), len(payload)]
    pieces = [held.process(masked[a:b]) for a, b in itertools.pairwise(bounds)]
    assert b"".join(pieces) == payload == create_xor_masker(key, len(payload)).process(masked)
    assert held.pointer() == len(payload)
    held.reset()
    assert held.pointer() == 0


utf8ish = st.one_of(
    st.text(max_size=40).map(lambda text: text.encode()),
    st.binary(max_size=40),
    st.lists(
        st.sampled_from([b"a", b"\xc3", b"\xa9", b"\xed\xa0\x80", b"\xf4\x90", b"\xe2\x82"])
    ).map(b"".join),
)


@given(message=utf8ish, cuts=st.lists(st.integers(min_value=0, max_value=120), max_size=4))
# (half a surrogate, refused at its second byte, whole or split: Python's decoder alone waits)
@example(message=b"\xed\xa0", cuts=[])
@example(message=b"a\xed\xbf", cuts=[2])
def test_the_held_utf8_check_answers_as_autobahns_does(message: bytes, cuts: list[int]) -> None:
    from autobahn.websocket.utf8validator import Utf8Validator

    held, native = adapters.HeldUtf8Validator(), Utf8Validator()
    for validator in (held, native):
        validator.reset()
    bounds = [0, *sorted(c for c in cuts if c <= len(message)), len(message)]
    for a, b in itertools.pairwise(bounds):
        mine, theirs = held.validate(message[a:b]), native.validate(message[a:b])
        # (where in the piece a fault lies is only ever printed: the answers that decide agree)
        assert mine[:2] == theirs[:2], (message, a, b)
        if not mine[0]:
            break
    else:
        try:
            message.decode()
            whole = True
        except UnicodeDecodeError:
            whole = False
        assert (mine[0] and mine[1]) is whole


def test_a_moved_masker_is_reported_and_autobahns_own_left(monkeypatch, caplog) -> None:
    from autobahn.websocket import protocol, xormasker

    monkeypatch.setattr(protocol, "create_xor_masker", xormasker.create_xor_masker)
    monkeypatch.delattr(protocol, "Utf8Validator")
    monkeypatch.setattr(adapters, "_reported", set())
    with caplog.at_level(logging.ERROR, logger="tabletop.adapters"):
        adapters.unmask_and_check_text_holding_the_lock()
    assert "autobahn's masker and UTF-8 validator" in caplog.text
    assert protocol.create_xor_masker is xormasker.create_xor_masker


def test_the_redaction_cleans_the_argument_however_it_is_passed() -> None:
    class Log:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def write_entry(self, host: str, request: str, status: int | None = None) -> None:
            self.lines.append(f"{host} {request} {status}")

    adapters._wrap(Log, "write_entry", "request", str.upper)
    log = Log()
    log.write_entry(host="h", request="by name", status=1)
    log.write_entry("h", "by place")
    log.write_entry("h", request="mixed")
    assert log.lines == ["h BY NAME 1", "h BY PLACE None", "h MIXED None"]
