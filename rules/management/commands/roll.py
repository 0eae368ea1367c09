"""``python manage.py roll SYSTEM 'REQUEST-JSON' [--seed N] [--count K]``
(docs/rules.md, "The command line")."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from rules.engines import FairStream, RuleError
from rules.engines.fair import SeededRolls, new_server_seed

from ._contract import emit, fail, one_line_errors, system_and_request

MAX_COUNT = 100_000


class Command(BaseCommand):
    help = "Roll a request with a game system's engine; one JSON result per line."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        return one_line_errors(super().create_parser(prog_name, subcommand, **kwargs))

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("system")
        parser.add_argument("request")
        parser.add_argument(
            "--seed", type=int, default=None, help="reproducible dice: server seed sha256(str(N))"
        )
        parser.add_argument("--count", type=int, default=1)

    def handle(
        self, *args: Any, system: str, request: str, seed: int | None, count: int, **options: Any
    ) -> None:
        engine, raw = system_and_request(system, request)
        if not 1 <= count <= MAX_COUNT:
            fail("count", f"must be 1..{MAX_COUNT}, got {count}")
        try:
            normalised = engine.normalise(raw)
        except RuleError as exc:
            fail(exc.field, exc.reason)
        if seed is not None:
            seeded = SeededRolls(seed)
            streams = (seeded.next_stream() for _ in range(count))
        else:
            server_seed = new_server_seed()
            streams = (FairStream(server_seed, "", seq) for seq in range(1, count + 1))
        for stream in streams:
            try:
                emit(engine.roll(normalised, stream))
            except RuleError as exc:
                fail(exc.field, exc.reason)
