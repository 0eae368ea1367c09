"""Reading gettext catalogues for the translation tests: a .po file's entries (with their
flags and where they come from) and a compiled .mo file's texts, so the tests can say which
text is missing, where it is used, and whether the compiled file matches its source."""

from __future__ import annotations

import ast
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

# The key gettext files under: "context\x04msgid" when there is a context.
CONTEXT_SEPARATOR = "\x04"
# %(name)s, %(count)d and the like: a translation keeps every one of its source's.
PLACEHOLDER = re.compile(r"%\(\w+\)[sdif]|%[sdif]")


@dataclass
class Entry:
    key: str
    plural: str | None = None
    translations: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    where: list[str] = field(default_factory=list)
    obsolete: bool = False

    @property
    def msgid(self) -> str:
        return self.key.split(CONTEXT_SEPARATOR)[-1]


def _text(quoted: str) -> str:
    # A .po string is a C string literal; Python's reading of one agrees for what gettext writes.
    return ast.literal_eval(quoted) if quoted.startswith('"') else ""


def read_po(path: Path) -> dict[str, Entry]:
    """The entries of a .po file by key (the header, msgid "", is left out)."""
    entries: dict[str, Entry] = {}
    for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
        entry = Entry(key="")
        fields: dict[str, str] = {}
        current = ""
        for line in block.splitlines():
            if line.startswith("#~"):
                entry.obsolete = True
                line = line[2:].lstrip()
            if line.startswith("#,"):
                entry.flags |= {flag.strip() for flag in line[2:].split(",")}
            elif line.startswith("#:"):
                entry.where += line[2:].split()
            elif line.startswith('"'):
                fields[current] += _text(line.strip())
            elif line and not line.startswith("#"):
                current, _, rest = line.partition(" ")
                fields[current] = _text(rest.strip())
        msgid = fields.get("msgid", "")
        if not msgid:
            continue
        context = fields.get("msgctxt")
        entry.key = f"{context}{CONTEXT_SEPARATOR}{msgid}" if context is not None else msgid
        entry.plural = fields.get("msgid_plural")
        entry.translations = [v for k, v in sorted(fields.items()) if k.startswith("msgstr")]
        entries[entry.key] = entry
    return entries


def read_mo(path: Path) -> dict[str, list[str]]:
    """A compiled catalogue's texts by key (plural forms as a list)."""
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">"
    _revision, count, originals, translations = struct.unpack(order + "4I", data[4:20])
    out: dict[str, list[str]] = {}
    for i in range(count):
        length, offset = struct.unpack(
            order + "2I", data[originals + 8 * i : originals + 8 * i + 8]
        )
        key = data[offset : offset + length].decode("utf-8")
        length, offset = struct.unpack(
            order + "2I", data[translations + 8 * i : translations + 8 * i + 8]
        )
        value = data[offset : offset + length].decode("utf-8")
        if key:
            out[key.split("\0")[0]] = value.split("\0")
    return out


def placeholders(text: str) -> list[str]:
    return sorted(PLACEHOLDER.findall(text))
