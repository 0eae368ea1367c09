"""``python manage.py odds SYSTEM 'REQUEST-JSON'`` (docs/rules.md, "The command line")."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from rules.engines import RuleError

from ._contract import emit, fail, one_line_errors, system_and_request


class Command(BaseCommand):
    help = "Exact odds of a request under a game system; one JSON object."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        return one_line_errors(super().create_parser(prog_name, subcommand, **kwargs))

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("system")
        parser.add_argument("request")

    def handle(self, *args: Any, system: str, request: str, **options: Any) -> None:
        engine, raw = system_and_request(system, request)
        try:
            emit(engine.odds(raw))
        except RuleError as exc:
            fail(exc.field, exc.reason)
