"""Where a webhook may post: one canonical spelling of an http(s) address, and only to public
internet addresses.

A hook's address is read once, strictly, by this module (never by an HTTP library that would
decode or guess): a host written any other way than its one plain spelling is refused, so the
name that is checked is the name that is resolved. The name is resolved once, every address it
gives is checked, and the POST connects to one of exactly those addresses (``post.py``)."""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL = 500
# What a GM is told when an address is refused for where it points (never which address a
# name gave: that would tell them about the server's own network).
NOT_PUBLIC = "the address is not a public internet address"
# ... and in development, where this machine and private networks are allowed too.
NOT_PUBLIC_OR_PRIVATE = (
    "the address is not on the public internet, this machine or a private network"
)


class AddressRefused(Exception):
    """The address may not be posted to: ``reason`` says why, in a GM's words. Not retried."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NameNotFound(Exception):
    """The name could not be resolved (now): worth trying again later."""


@dataclass(frozen=True)
class Target:
    """A hook's address, read: what to connect to and what to ask for."""

    scheme: str  # "http" or "https"
    host: str  # a lowercase DNS name, or an IP address's canonical text (no brackets)
    port: int
    explicit_port: bool
    path: str  # the request target: path and query, at least "/"
    ip: IPAddress | None  # the host, when it is an address

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if isinstance(self.ip, ipaddress.IPv6Address) else self.host
        return f"{host}:{self.port}" if self.explicit_port else host

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host_header}{self.path}"


# --- the one spelling ---------------------------------------------------------------------------
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f\\\"<>^`{|}]")
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")
_PORT = re.compile(r"^[1-9][0-9]{0,4}$")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def parse(url: object) -> Target:
    """Read a hook's address in its one canonical spelling, or say why it is refused."""
    if not isinstance(url, str) or not url:
        raise AddressRefused("give the http:// or https:// address chat gave you")
    if len(url) > MAX_URL:
        raise AddressRefused(f"an address has at most {MAX_URL} characters")
    if not url.isascii() or _FORBIDDEN.search(url):
        raise AddressRefused(
            "an address may not contain spaces, backslashes or other special characters, and "
            "an internationalised name must be written in its xn-- form"
        )
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        raise AddressRefused("the address must start with https:// (or http://)")
    if "#" in rest:
        raise AddressRefused("the address may not have a #fragment")
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, path = rest[:cut], rest[cut:]
    if "@" in authority:
        raise AddressRefused("the address may not carry a user name or password (user@host)")
    if "%" in authority:
        raise AddressRefused("the address's host may not be percent-encoded (%xx)")
    host, port_text = _split_port(authority)
    explicit = port_text is not None
    if explicit and not _PORT.match(port_text or ""):
        raise AddressRefused("the port must be a number from 1 to 65535, without leading zeros")
    port = int(port_text) if port_text is not None else (443 if scheme == "https" else 80)
    if port > 65535:
        raise AddressRefused("the port must be a number from 1 to 65535, without leading zeros")
    if _BAD_ESCAPE.search(path):
        raise AddressRefused("the address's path has a broken percent escape")
    if path.startswith("?"):
        path = "/" + path
    host, ip = _host(host)
    return Target(scheme, host, port, explicit, path or "/", ip)


def _split_port(authority: str) -> tuple[str, str | None]:
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise AddressRefused("an IPv6 address must be written in [brackets]")
        host, after = authority[: end + 1], authority[end + 1 :]
        if not after:
            return host, None
        if not after.startswith(":"):
            raise AddressRefused("the address's host is not written plainly")
        return host, after[1:]
    if authority.count(":") > 1:
        raise AddressRefused("an IPv6 address must be written in [brackets]")
    host, sep, port = authority.partition(":")
    return host, (port if sep else None)


def _host(text: str) -> tuple[str, IPAddress | None]:
    if text.startswith("["):
        inner = text[1:-1].lower()
        try:
            ip = ipaddress.IPv6Address(inner)
        except ValueError:
            raise AddressRefused("that is not an IPv6 address") from None
        if ip.ipv4_mapped is not None or _ipv4_compatible(ip):
            raise AddressRefused("write an IPv4 address as itself, not inside an IPv6 address")
        if str(ip) != inner:
            raise AddressRefused(f"write that IPv6 address in its short form: [{ip}]")
        return inner, ip
    host = text.lower()
    if not host:
        raise AddressRefused("the address has no host")
    if host.endswith("."):
        raise AddressRefused("write the host name without a trailing dot")
    if len(host) > 253:
        raise AddressRefused("the host name is too long")
    labels = host.split(".")
    if _NUMERIC_LABEL.match(labels[-1]):
        # A URL whose last label is a number names an IPv4 address (decimal, octal, hex and
        # short forms all do): only its four-number dotted spelling is accepted.
        try:
            ip4 = ipaddress.IPv4Address(host)
        except ValueError:
            ip4 = None
        if ip4 is None or str(ip4) != host:
            raise AddressRefused(
                "write an IPv4 address as four plain numbers from 0 to 255 (like 203.0.113.7)"
            )
        return host, ip4
    if not all(_LABEL.match(label) for label in labels):
        raise AddressRefused(
            "the host name may hold only letters, digits, hyphens and single dots between them"
        )
    return host, None


def _ipv4_compatible(ip: ipaddress.IPv6Address) -> bool:
    """::a.b.c.d, the deprecated IPv4-compatible form (:: and ::1 aside)."""
    return int(ip) >> 32 == 0 and int(ip) > 1


# --- public addresses ---------------------------------------------------------------------------
_V4_NOT_PUBLIC = [
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",  # "this network", unspecified
        "10.0.0.0/8",  # private
        "100.64.0.0/10",  # carrier-grade NAT
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local (cloud metadata services)
        "172.16.0.0/12",  # private
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation
        "192.88.99.0/24",  # 6to4 relay anycast
        "192.168.0.0/16",  # private
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, broadcast
    )
]
_V6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_V6_NOT_PUBLIC = [
    ipaddress.IPv6Network(n)
    for n in (
        "2001::/23",  # IETF protocol assignments, Teredo
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation
    )
]
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # the well-known prefix: an IPv4 address inside
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")  # 6to4: an IPv4 address in bits 16-48


def is_public(ip: IPAddress) -> bool:
    """Whether ``ip`` is an address on the public internet: not loopback, private, link-local,
    shared (CGNAT), multicast, reserved, unspecified or documentation, nor any of those carried
    inside an IPv6 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip.is_global and not any(ip in net for net in _V4_NOT_PUBLIC)
    if ip.ipv4_mapped is not None:
        return is_public(ip.ipv4_mapped)
    if ip in _NAT64:
        return is_public(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    if ip in _SIX_TO_FOUR:
        return is_public(ipaddress.IPv4Address((int(ip) >> 80) & 0xFFFFFFFF))
    if ip.scope_id or ip not in _V6_GLOBAL_UNICAST:
        return False  # loopback, unspecified, compatible, ULA, link-local, multicast, reserved
    return ip.is_global and not any(ip in net for net in _V6_NOT_PUBLIC)


# What development may post to besides the public internet: a receiver on this machine or on
# the GM's own network. Never link-local (cloud metadata services answer at 169.254.169.254),
# shared, multicast, reserved or unspecified addresses: those are no receiver a GM runs.
_LOOPBACK_AND_PRIVATE = [
    ipaddress.ip_network(n)
    for n in (
        "127.0.0.0/8",  # loopback
        "10.0.0.0/8",  # private (RFC 1918)
        "172.16.0.0/12",  # private
        "192.168.0.0/16",  # private
        "::1/128",  # loopback
        "fc00::/7",  # unique local
    )
]


def is_loopback_or_private(ip: IPAddress) -> bool:
    """Whether ``ip`` is this machine's (loopback) or on a private network (RFC 1918, IPv6
    unique local), also when written as an IPv4-mapped IPv6 address."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in net for net in _LOOPBACK_AND_PRIVATE)


# --- resolving, once ----------------------------------------------------------------------------
_LOOKUPS = threading.BoundedSemaphore(32)  # names being resolved at once, per process


def resolve(target: Target, *, timeout: float, absolute: bool = True) -> list[tuple[int, tuple]]:
    """The (family, socket address) pairs to connect to for ``target``: its own address, or
    every address its name resolves to now, within ``timeout`` seconds. ``absolute``: the name
    is looked up as an absolute one (with a trailing dot), so the resolver's search domains are
    never tried and a short name cannot turn into a name on the server's network; the local
    hosts file is not read then either (development looks names up as the system does)."""
    if target.ip is not None:
        family = socket.AF_INET6 if target.ip.version == 6 else socket.AF_INET
        return [(family, (target.host, target.port))]
    if not _LOOKUPS.acquire(blocking=False):
        raise NameNotFound("too many names being looked up at once")
    done = threading.Event()
    found: list = []

    def lookup() -> None:
        name = target.host + ("." if absolute else "")
        try:
            found.append(socket.getaddrinfo(name, target.port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError) as exc:
            found.append(exc)
        finally:
            _LOOKUPS.release()
            done.set()

    # A thread of its own: getaddrinfo cannot be interrupted, and a name server that never
    # answers must not hold up the delivery past its time (the lookup ends by itself later).
    threading.Thread(target=lookup, name="webhook-lookup", daemon=True).start()
    if not done.wait(timeout) or isinstance(found[0], BaseException):
        raise NameNotFound(target.host)
    infos = found[0]
    out = []
    for family, _type, _proto, _name, sockaddr in infos:
        if family in (socket.AF_INET, socket.AF_INET6):
            out.append((family, sockaddr))
    if not out:
        raise NameNotFound(target.host)
    return out


def address_of(sockaddr: tuple) -> IPAddress:
    return ipaddress.ip_address(str(sockaddr[0]).split("%")[0])


def checked(target: Target, *, timeout: float, private_ok: bool) -> list[tuple[int, tuple]]:
    """``resolve``, then every address checked: one that is not public refuses the whole name
    (``private_ok``, in development: one that is neither public nor loopback or private)."""
    addresses = resolve(target, timeout=timeout, absolute=not private_ok)
    for _family, sockaddr in addresses:
        ip = address_of(sockaddr)
        scoped = isinstance(ip, ipaddress.IPv6Address) and len(sockaddr) > 3 and sockaddr[3]
        if scoped:
            refused = True  # a scope is a link's: link-local, never a receiver's address
        elif private_ok:
            refused = not (is_public(ip) or is_loopback_or_private(ip))
        else:
            refused = not is_public(ip)
        if refused:
            raise AddressRefused(NOT_PUBLIC_OR_PRIVATE if private_ok else NOT_PUBLIC)
    return addresses
