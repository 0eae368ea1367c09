"""What ``roll`` and ``odds`` share: parsing SYSTEM and REQUEST-JSON, and the error contract
(one line ``error: <field>: <reason>`` on stderr, exit status 2)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import NoReturn

from django.core.management.base import CommandParser

from rules.engines import GameSystem, RuleError, get_system


def fail(field: str, reason: str) -> NoReturn:
    sys.stderr.write(f"error: {field}: {reason}\n")
    sys.stderr.flush()
    raise SystemExit(2)


def system_and_request(system_id: str, request_json: str) -> tuple[GameSystem, object]:
    try:
        system = get_system(system_id)
    except RuleError as exc:
        fail(exc.field, exc.reason)
    try:
        request = json.loads(request_json)
    except json.JSONDecodeError as exc:
        fail("request", f"not valid JSON ({exc.msg} at column {exc.colno})")
    except (ValueError, RecursionError):
        fail("request", "not valid JSON (nested too deeply)")
    return system, request


def one_line_errors(parser: CommandParser) -> CommandParser:
    """Argument errors follow the contract too: one ``error:`` line, exit status 2."""

    def error(message: str) -> NoReturn:
        field = "arguments"
        for word in message.replace(":", " ").split():
            if word.startswith("--"):
                field = word.lstrip("-")
                break
        fail(field, message)

    # argparse has no hook for how a bad argument is reported, and Django builds the parser
    # itself (no subclass can be put in): this one parser's method is replaced.
    parser.error = error  # type: ignore[method-assign]
    return parser


def emit(obj: Mapping[str, object]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(", ", ": ")) + "\n")
