"""One webhook POST, whole within a wall-clock limit, to exactly the address that was checked.

No HTTP library decides where this goes: the address is read by ``address.parse``, its name is
resolved once and every address checked, the socket connects to one of those addresses, and TLS
is verified against the name. Redirects are never followed (an answer is only read as far as its
status line and headers), and the limit covers everything: the lookup, the connection, TLS, the
request and the answer, so a receiver that dribbles its answer a byte at a time is cut off at the
limit like one that never answers.

What the GM is told says what they can act on ("the receiver answered 404", "could not reach the
address"), never what a network answered in its own words."""

from __future__ import annotations

import http.client
import io
import socket
import ssl
import time
from dataclasses import dataclass

from .address import AddressRefused, NameNotFound, Target, checked, parse

MAX_ANSWER_HEADERS = 64 * 1024  # what is read of an answer (its status line and headers)


@dataclass(frozen=True)
class Outcome:
    status: int | None  # the receiver's HTTP status, when it answered
    error: str  # for the GM, "" when delivered
    retry: bool  # worth trying again later
    retry_after: float | None = None  # seconds the receiver asked us to wait (429)

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def post(
    url: str, *, body: bytes, headers: dict[str, str], seconds: float, private_ok: bool
) -> Outcome:
    """POST ``body`` to ``url``, all within ``seconds``."""
    deadline = time.monotonic() + seconds
    try:
        target = parse(url)
        addresses = checked(target, timeout=seconds, private_ok=private_ok)
    except AddressRefused as exc:
        return Outcome(None, exc.reason, retry=False)
    except NameNotFound:
        return Outcome(None, "could not reach the address: its name was not found", retry=True)
    late = f"the receiver did not answer within {seconds:g} s"
    try:
        sock = _connect(addresses, deadline)
    except TimeoutError:
        return Outcome(None, late, retry=True)
    except OSError:
        return Outcome(None, "could not reach the address", retry=True)
    try:
        if target.scheme == "https":
            sock = _tls(sock, target, deadline)
        _send(sock, _request(target, body, headers), deadline)
        answer = http.client.HTTPResponse(_Deadline(sock, deadline), method="POST")  # type: ignore[arg-type]
        answer.begin()
        status = answer.status
    except ssl.SSLCertVerificationError:
        return Outcome(
            None,
            f"could not make a secure connection: the certificate is not valid for {target.host}",
            retry=True,
        )
    except (TimeoutError, _Late):
        return Outcome(None, late, retry=True)
    except (http.client.HTTPException, ValueError):
        return Outcome(None, "the receiver's answer was not HTTP", retry=True)
    except OSError:
        return Outcome(None, "could not reach the address", retry=True)
    finally:
        sock.close()
    return _judge(status, answer.getheader("Retry-After"))


def _judge(status: int, retry_after: str | None) -> Outcome:
    if 200 <= status < 300:
        return Outcome(status, "", retry=False)
    if 300 <= status < 400:
        return Outcome(
            status,
            f"the receiver answered {status}, a redirect: webhooks are never redirected, so "
            "add the address it points to instead",
            retry=False,
        )
    if status == 429:
        wait = None
        if retry_after and retry_after.strip().isdigit():
            wait = float(int(retry_after.strip()))
        return Outcome(status, "the receiver answered 429: too many posts", True, wait)
    if status == 408 or status >= 500:
        return Outcome(status, f"the receiver answered {status}", retry=True)
    # The receiver refuses this request as it is (a hook deleted at the chat's end answers 404).
    return Outcome(status, f"the receiver answered {status}", retry=False)


class _Late(Exception):
    """The delivery's time is up."""


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _Late
    return left


def _connect(addresses: list[tuple[int, tuple]], deadline: float) -> socket.socket:
    error: OSError = OSError("no address")
    for family, sockaddr in addresses[:4]:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(_left(deadline))
            sock.connect(sockaddr)
            return sock
        except _Late:
            sock.close()
            raise TimeoutError from None
        except OSError as exc:
            sock.close()
            error = exc
    raise error


def _tls(sock: socket.socket, target: Target, deadline: float) -> socket.socket:
    context = ssl.create_default_context()  # certificates verified, against the name
    sock.settimeout(_left(deadline))  # the handshake as a whole
    return context.wrap_socket(sock, server_hostname=target.host)


def _request(target: Target, body: bytes, headers: dict[str, str]) -> bytes:
    lines = [f"POST {target.path} HTTP/1.1", f"Host: {target.host_header}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("ascii") + body


def _send(sock: socket.socket, data: bytes, deadline: float) -> None:
    view = memoryview(data)
    while view:
        sock.settimeout(_left(deadline))
        sent = sock.send(view[:65536])
        view = view[sent:]


class _Deadline:
    """What ``http.client`` reads the answer from: the socket, each read given only the time
    left, and no more than ``MAX_ANSWER_HEADERS`` bytes in all."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.raw = _DeadlineReader(sock, deadline)

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(self.raw, buffer_size=4096)


class _DeadlineReader(io.RawIOBase):
    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock, self.deadline, self.budget = sock, deadline, MAX_ANSWER_HEADERS

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.budget <= 0:
            raise http.client.HTTPException("answer too long")
        self.sock.settimeout(_left(self.deadline))
        view = memoryview(buffer)[: self.budget]
        n = self.sock.recv_into(view)
        self.budget -= n
        return n
