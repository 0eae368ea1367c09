"""``python manage.py play``: migrate, set up the demo table, serve it on 127.0.0.1:8000."""

from __future__ import annotations

import daphne.server  # noqa: F401  # isort: skip  (installs Twisted's asyncio reactor first)

import sys
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...services.demo import ensure_demo_tables, reset_demo_gm


class Command(BaseCommand):
    help = "Set up the demo table (migrations, demo GM and campaigns) and serve it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--no-serve",
            action="store_true",
            help="set everything up and print it, but do not serve",
        )

    def handle(self, *args: Any, host: str, port: int, no_serve: bool, **options: Any) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        gm, password = reset_demo_gm()
        tables = ensure_demo_tables(gm=gm)
        base = f"http://{host}:{port}"
        lines = [f"{t.system} invite: {base}/play/{t.session.invite_code}/" for t in tables]
        lines += [f"{t.system} gm dashboard: {base}/gm/{t.session.pk}/" for t in tables]
        lines.append(f"gm login: {gm.get_username()} {password}")
        lines.append(f"home: {base}/  (log in at {base}/accounts/login/)")

        def announce() -> None:
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()

        if no_serve:
            announce()
            return
        self._serve(host=host, port=port, on_ready=announce)

    def _serve(self, *, host: str, port: int, on_ready: Any) -> None:
        from daphne.server import Server
        from twisted.internet import reactor

        from tabletop.asgi import application

        def announce_when_listening() -> None:
            if server.listening_addresses:
                on_ready()

        server = Server(
            application=application,
            endpoints=[f"tcp:port={port}:interface={host}"],
            # The socket is listening before the reactor runs; announce once it is accepting.
            ready_callable=lambda: reactor.callWhenRunning(announce_when_listening),
            verbosity=0,
        )
        server.run()
        if not server.listening_addresses:
            raise CommandError(f"could not listen on {host}:{port} (is another server using it?)")
