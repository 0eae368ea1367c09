"""``python manage.py play``: migrate, set up the demo table, serve it (127.0.0.1:8000 unless
``--host``/``--port`` say otherwise; ``--host 0.0.0.0`` serves the local network, and then,
as on any address but loopback, never with Django's debug pages)."""

from __future__ import annotations

import daphne.server  # noqa: F401  # isort: skip  (installs Twisted's asyncio reactor first)

import ipaddress
import socket
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...selectors.campaign_link import campaign_link
from ...services.demo import ensure_demo_gm, ensure_demo_tables

EVERYWHERE = {"0.0.0.0", "::", ""}
# Connections waiting to be accepted (the listen backlog), as README's deployment starts daphne.
BACKLOG = 1024


def lan_addresses() -> list[str]:
    """This machine's addresses other machines can reach it by (no loopback), best first."""
    found: list[str] = []
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        # No packet is sent: connecting a UDP socket only picks the outgoing interface.
        probe.connect(("10.255.255.255", 1))
        found.append(probe.getsockname()[0])
    except OSError:
        pass
    finally:
        probe.close()
    for name in {socket.gethostname(), socket.getfqdn()}:
        try:
            infos = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
        except OSError:
            continue
        found += [str(info[4][0]) for info in infos]
    seen: list[str] = []
    for address in found:
        ip = ipaddress.ip_address(address.split("%")[0])
        if not ip.is_loopback and not ip.is_unspecified and address not in seen:
            seen.append(address)
    return sorted(seen, key=lambda a: ":" in a)  # IPv4 first


def _loopback(host: str) -> bool:
    """Whether ``host`` serves this machine alone (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in {"localhost", "localhost."}:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0]).is_loopback
    except ValueError:
        return False  # a name: whatever it points at, assume others can reach it


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


class Command(BaseCommand):
    help = "Set up the demo table (migrations, demo GM and campaigns) and serve it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--host",
            default="127.0.0.1",
            help="address to listen on: 0.0.0.0 for every interface (other machines on the "
            "network can join), or one of this machine's addresses (default 127.0.0.1)",
        )
        parser.add_argument("--port", type=int, default=8000, help="default 8000")
        parser.add_argument(
            "--no-serve",
            action="store_true",
            help="set everything up and print it, but do not serve",
        )

    def handle(self, *args: Any, host: str, port: int, no_serve: bool, **options: Any) -> None:
        if not no_serve:
            self._check_free(host, port)  # before anything changes
        beyond = not _loopback(host)
        if beyond:
            # Django's debug pages show settings, source and tracebacks to whoever asks: never
            # to the rest of the network.
            settings.DEBUG = False
        shown = self._allow(host)
        call_command("migrate", interactive=False, verbosity=0)
        gm, password = ensure_demo_gm(secret_file=settings.DATA_DIR / "demo-gm-password")
        tables = ensure_demo_tables(gm=gm)
        base = f"http://{_url_host(shown[0])}:{port}"
        lines = [f"{t.system} invite: {base}/play/{t.session.invite_code}/" for t in tables]
        lines += [f"{t.system} campaign: {base}{campaign_link(t.session.campaign)}" for t in tables]
        lines += [f"{t.system} gm dashboard: {base}/gm/{t.session.pk}/" for t in tables]
        if password is None:
            lines.append(f"gm login: {gm.get_username()} (the password you set for it)")
        else:
            lines.append(f"gm login: {gm.get_username()} {password}")
        lines.append(f"home: {base}/  (log in at {base}/accounts/login/)")
        for other in shown[1:]:
            lines.append(f"also at: http://{_url_host(other)}:{port}/")
        if beyond:
            lines.append("debug pages: off (serving beyond this machine)")

        def announce() -> None:
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()

        if no_serve:
            announce()
            return
        self._serve(host=host, port=port, on_ready=announce)

    @staticmethod
    def _check_free(host: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        probe = socket.socket(family, socket.SOCK_STREAM)
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host or "0.0.0.0", port))
        except OSError as exc:
            raise CommandError(
                f"could not listen on {host}:{port} ({exc.strerror}); is another server using "
                f"it? Pick another with --port."
            ) from None
        finally:
            probe.close()

    @staticmethod
    def _allow(host: str) -> list[str]:
        """The addresses links are printed with, best first; each is added to ALLOWED_HOSTS
        (which also says which pages may open a socket), so a link works from another
        machine."""
        shown = [*lan_addresses(), "127.0.0.1"] if host in EVERYWHERE else [host]
        allowed = list(settings.ALLOWED_HOSTS)
        for address in shown:
            entry = _url_host(address)
            if entry not in allowed and "*" not in allowed:
                allowed.append(entry)
        settings.ALLOWED_HOSTS = allowed
        return shown

    def _serve(self, *, host: str, port: int, on_ready: Any) -> None:
        from daphne.server import Server
        from twisted.internet import reactor

        from tabletop.asgi import application

        def announce_when_listening() -> None:
            if server.listening_addresses:
                on_ready()

        interface = host.replace(":", r"\:") if ":" in host else host
        server = Server(
            application=application,
            # 1,024 connections may wait to be accepted (Twisted's default is 50: a room of
            # players reconnecting at once would have the rest wait a second for a retry).
            endpoints=[f"tcp:port={port}:interface={interface or '0.0.0.0'}:backlog={BACKLOG}"],
            # The socket is listening before the reactor runs; announce once it is accepting.
            ready_callable=lambda: reactor.callWhenRunning(announce_when_listening),
            verbosity=0,
        )
        server.run()
        if not server.listening_addresses:
            raise CommandError(f"could not listen on {host}:{port} (is another server using it?)")
