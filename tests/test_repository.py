"""The repository stands on its own: what the code keeps is written in its own docs, every
reference to a section of them names a section that exists, and nothing points a reader at a
document that is not here."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_DIRS = {".git", ".venv", "var", "node_modules", "__pycache__", ".pytest_cache"}
TEXT_SUFFIXES = {".py", ".md", ".js", ".html", ".css", ".toml", ".txt", ".cfg", ".sh", ".json"}

# Documents the code was once written against that live outside the repository: the contract
# files, the folder they came in and the source texts beside them. (Spelled so that this file
# does not match itself.)
OUTSIDE = re.compile(r"\b(?:RULES|TABLE|STACK)\.md\b|(?<![\w.-])(?:\.\./)?(?:shared|seeds)[/]")

# "docs/rules.md, "Limits"": a section of one of the repo's docs, by its heading.
SECTION_REFERENCE = re.compile(r"docs/([\w/-]+\.md), \\?\"([^\"\\]+)\\?\"")
# [text](rules.md#limits): a link to a heading of a doc.
ANCHOR_LINK = re.compile(r"\]\(([\w./-]*\.md)?#([\w-]+)\)")


def text_files() -> Iterator[Path]:
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT)
        if any(part in SKIPPED_DIRS or part.startswith(".venv") for part in relative.parts):
            continue
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or relative.parts[0] == ".ci"):
            yield path


def headings(doc: Path) -> list[str]:
    """A markdown file's headings, as a reader sees them (no backticks)."""
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    return [m.group(1).replace("`", "").strip() for m in re.finditer(r"^#+\s+(.*)$", text, re.M)]


def slug(heading: str) -> str:
    """The anchor a heading gets where the docs are read (GitHub's rule)."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def test_no_file_cites_a_document_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in text_files()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, "cite the repo's own docs instead:\n" + "\n".join(found)


def test_the_outside_pattern_catches_every_spelling() -> None:
    md, shared, seeds = ".md", "shared" + "/", "seeds" + "/"
    for cited in (f"RULES{md} section 2", f"(TABLE{md})", f"../{shared}x", f"`{seeds}000_x.txt`"):
        assert OUTSIDE.search(cited), cited
    for fine in ("docs/rules.md", "shared_state", "SharedState", "the seed's words"):
        assert not OUTSIDE.search(fine), fine


def test_every_reference_to_a_section_of_the_docs_names_one_that_exists() -> None:
    missing = []
    for path in text_files():
        for doc, section in SECTION_REFERENCE.findall(path.read_text(errors="replace")):
            target = ROOT / "docs" / doc
            names = headings(target) if target.exists() else []
            section = " ".join(section.split())  # (a name may wrap onto the next line)
            if not any(name == section or name.startswith(f"{section}:") for name in names):
                missing.append(f"{path.relative_to(ROOT)}: docs/{doc}, {section!r}")
    assert not missing, "no such section:\n" + "\n".join(missing)


def test_every_link_to_a_heading_of_the_docs_lands_on_one() -> None:
    missing = []
    for path in sorted((ROOT / "docs").rglob("*.md")):
        for doc, anchor in ANCHOR_LINK.findall(path.read_text()):
            target = (path.parent / doc).resolve() if doc else path
            if not target.exists() or anchor not in {slug(h) for h in headings(target)}:
                missing.append(f"{path.relative_to(ROOT)}: {doc}#{anchor}")
    assert not missing, "no such heading:\n" + "\n".join(missing)
