"""docs/protocol.md's command, body and event tables, written from the declarations.

The doc keeps each table between ``<!-- protocol:NAME -->`` and ``<!-- /protocol:NAME -->``;
a test checks they match, and ``python -m tabletop.protocol.docs`` writes them again.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from rules.engines import system_ids
from rules.engines.schema import Field

from .bodies import BODIES
from .commands import Command
from .events import EventType, catalogue

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def _field(spec: Field) -> str:
    """``name`` (type; range or choices; default), as a reader of the doc needs it."""
    facts = [spec.type if spec.type != "json" else "object"]
    if spec.type == "int" and (spec.min is not None or spec.max is not None):
        low = "" if spec.min is None else spec.min
        high = "" if spec.max is None or spec.max >= 2**62 else spec.max
        if (low, high) != (1, ""):
            facts.append(f"{low}..{high}")
    if spec.type == "text":
        facts.append(f"≤{spec.max_length} chars")
    if spec.choices is not None and spec.type == "choice":
        facts.append(" ".join(f"`{c}`" for c in spec.choices))
    if spec.nullable:
        facts.append("or null")
    if spec.has_default and spec.default not in (None, "", (), []):
        facts.append(f"default `{spec.default}`")
    marker = "" if spec.required else "?"
    return f"`{spec.name}`{marker} ({', '.join(facts)})"


def _fields(fields: tuple[Field, ...] | list[Field]) -> str:
    return "; ".join(_field(f) for f in fields) or "—"


def command_rows(commands: list[Command]) -> str:
    rows = ["| type | fields | who | what |", "|---|---|---|---|"]
    for command in commands:
        who = "GM" if command.gm_only else "any seat"
        rows.append(f"| `{command.type}` | {_fields(command.fields)} | {who} | {command.doc} |")
    return "\n".join(rows)


def tables() -> dict[str, str]:
    """Every generated table of the doc, by name."""
    from ..systems import registry
    from .core import CORE

    out = {"core-commands": command_rows(list(CORE))}
    for system in system_ids():
        commands = list(registry.commands_for(system))
        options = tuple(registry.table_system(system).roll_options)
        if not commands and not options:
            continue
        parts = []
        if options:
            parts.append(f"`roll` at a {system} table also takes: {_fields(options)}\n")
        if commands:
            parts.append(command_rows(commands))
        out[f"commands-{system}"] = "\n".join(parts)
    out["bodies"] = "\n".join(
        ["| endpoint | fields | what |", "|---|---|---|"]
        + [f"| `{b.endpoint}` | {_fields(b.fields)} | {b.doc} |" for b in BODIES]
    )
    out["events"] = event_rows(catalogue())
    return out


def _event_name(definition: EventType) -> str:
    if definition.action is None:
        return f"`{definition.kind}`"
    return f"`{definition.kind}` `{definition.action}`"


def event_rows(catalogue: tuple[EventType, ...]) -> str:
    rows = ["| kind (action) | who sees it | data | what |", "|---|---|---|---|"]
    for definition in catalogue:
        fields = [f for f in definition.fields if f.name != "action"]
        data = _fields(fields) + ("; and the engine's result" if definition.open_ended else "")
        rows.append(
            f"| {_event_name(definition)} | {definition.rule} | {data} | {definition.doc} |"
        )
    return "\n".join(rows)


def _region(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- protocol:{re.escape(name)} -->\n)(.*?)(<!-- /protocol:{re.escape(name)} -->)",
        re.S,
    )


def regions(text: str) -> dict[str, str]:
    """The generated tables as the doc has them, by name."""
    found = re.finditer(r"<!-- protocol:([\w-]+) -->\n(.*?)<!-- /protocol:\1 -->", text, re.S)
    return {m.group(1): m.group(2) for m in found}


def rewrite(text: str) -> str:
    for name, table in tables().items():

        def filled(m: re.Match[str], table: str = table) -> str:
            return f"{m.group(1)}{table}\n{m.group(3)}"

        text, found = _region(name).subn(filled, text)
        if not found:
            raise SystemExit(f"docs/protocol.md has no <!-- protocol:{name} --> region")
    return text


if __name__ == "__main__":  # python -m tabletop.protocol.docs
    import django

    django.setup()
    DOC.write_text(rewrite(DOC.read_text()))
    sys.stdout.write(f"wrote {len(tables())} tables into {DOC.name}\n")
