"""docs/protocol.md cannot drift from the declarations: its command, body and event tables are
the ones the declarations write (``python -m tabletop.protocol.docs`` writes them again)."""

from __future__ import annotations

from tabletop.protocol.docs import DOC, regions, tables
from tabletop.protocol.events import catalogue
from tabletop.protocol.wire import commands


def test_the_docs_tables_are_the_declarations():
    written = regions(DOC.read_text())
    expected = {name: f"{table}\n" for name, table in tables().items()}
    assert set(written) == set(expected), "a table is missing from docs/protocol.md, or extra"
    for name, table in expected.items():
        assert written[name] == table, f"docs/protocol.md's {name} table is out of date"


def test_every_message_type_and_event_kind_is_in_the_doc():
    text = DOC.read_text()
    for system in ("generic", "zoria", "d6-chance", "discordian", "roll-and-keep", "action-dice"):
        for kind in commands(system):
            assert f"| `{kind}` |" in text, kind
    for definition in catalogue():
        name = f"`{definition.kind}`" + (f" `{definition.action}`" if definition.action else "")
        assert f"| {name} |" in text, name
