"""Each system's page (docs/rules/<id>.md) lists its game's source text rule by rule, numbered
without a gap, and every test a row names exists: the table cannot point at a test that was
renamed or never written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("zoria", "roll-and-keep", "d6-chance", "discordian", "action-dice")
HEADING = "## At the table: the seed, rule by rule"
TEST = re.compile(r"^(?:(?P<file>[\w/]+\.py))?(?:::(?P<name>\w+))?$|^(?P<bare>test_\w+)$")
# A row's bare test name ("socket: `test_x`") is one of the socket tests.
SOCKET_TESTS = "test_consumer_systems.py"


def rows(page: str) -> list[list[str]]:
    text = (ROOT / "docs" / "rules" / f"{page}.md").read_text()
    assert HEADING in text, f"{page}: no section {HEADING!r}"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return [
        [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        for line in section.splitlines()
        if re.match(r"^\| (R?\d+) \|", line)
    ]


def source_file(name: str) -> Path | None:
    for folder in ("", "tests/tabletop/", "tests/rules/", "tests/browser/"):
        path = ROOT / f"{folder}{name}"
        if path.exists():
            return path
    return None


@pytest.mark.parametrize("page", PAGES)
def test_the_seeds_rules_are_numbered_without_a_gap(page):
    numbers = [row[0] for row in rows(page)]
    seed = [int(n) for n in numbers if n.isdigit()]
    readings = [int(n[1:]) for n in numbers if n.startswith("R")]
    assert seed == list(range(1, len(seed) + 1)) and len(seed) > 10, page
    assert readings == list(range(1, len(readings) + 1)), page


@pytest.mark.parametrize("page", PAGES)
def test_every_test_a_row_names_exists(page):
    missing = []
    for row in rows(page):
        current = None
        for token in re.findall(r"`([^`]+)`", row[-1]):
            found = TEST.match(token)
            if not found or not (found["file"] or found["name"] or found["bare"]):
                continue
            if found["bare"]:
                source = (ROOT / "tests" / "tabletop" / SOCKET_TESTS).read_text()
                if not re.search(rf"^(?:async )?def {found['bare']}\(", source, re.M):
                    missing.append(f"row {row[0]}: {token} ({SOCKET_TESTS})")
                continue
            if found["file"]:
                current = source_file(found["file"])
                if current is None:
                    missing.append(f"row {row[0]}: {token}")
                    continue
            if found["name"]:
                source = current.read_text() if current else ""
                if not re.search(
                    rf"^(?:async )?def {found['name']}\(|^    def {found['name']}\(", source, re.M
                ):
                    missing.append(f"row {row[0]}: {token} ({current and current.name})")
    assert not missing, "\n".join(missing)
