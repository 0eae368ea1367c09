"""The names people sit down under: what a log line can show safely, and who may take which name.

A name is shown in every log line and seat list, so it must read as what it says: characters that
reorder or hide text (bidirectional controls, zero-width and other control characters, Unicode's
default-ignorable code points such as the Hangul fillers U+3164 and U+115F) are removed, and two
names that look alike are the same name. "Look alike" is Unicode's own answer, the confusable
skeleton of UTS #39 (ICU's, through PyICU), taken of the case-folded, compatibility-normalised
name: "Ana" and a full-width or Cyrillic "ANA", "GM" and a Cherokee or small-capital "GM".
Nobody but the GM sits down as the GM, nor as "the GM".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache

import icu
from django.utils.translation import gettext as _

from .errors import invalid

MAX_LENGTH = 40

# What a player may not call themselves: the GM's title in the words tables use.
RESERVED = frozenset({"gm", "gamemaster", "dm", "dungeonmaster", "mj", "sl"})
# Words that make a title a name ("The GM", "Your DM") without making it another one.
ARTICLES = frozenset({"the", "a", "an", "your", "our", "le", "la", "der", "die", "el"})

_SPOOF = icu.SpoofChecker()
_DEFAULT_IGNORABLE = icu.UProperty.DEFAULT_IGNORABLE_CODE_POINT
# Letters shown as blanks (fillers, the blank Braille pattern): in a name, a space.
BLANK_LETTERS = frozenset("\u2800\u115f\u1160\u3164\uffa0")


def _shown(character: str) -> bool:
    """Keep letters, marks, numbers, punctuation, symbols and plain spaces; drop controls,
    format characters (bidi overrides, zero-width joiners), separators other than a space."""
    category = unicodedata.category(character)
    return not (
        category in ("Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp")
        or (category == "Zs" and character != " ")
        or character in BLANK_LETTERS
        or icu.Char.hasBinaryProperty(character, _DEFAULT_IGNORABLE)
    )


def clean_name(name: str) -> str:
    """The name as it will be shown, or an error naming the field."""
    # Spaces of every kind become one plain space; what is not shown goes.
    name = "".join(
        c if _shown(c) else " " if c.isspace() or c in BLANK_LETTERS else ""
        for c in unicodedata.normalize("NFC", name)
    )
    name = " ".join(name.split())
    if not name:
        raise invalid(_("pick a name to sit down with"), field="name")
    if len(name) > MAX_LENGTH:
        raise invalid(
            _("at most %(max_length)s characters") % {"max_length": MAX_LENGTH}, field="name"
        )
    return name


MAX_LABEL = 60


def clean_label(label: str) -> str:
    """What a roll is for ("Attack", "Stealth"), shown in its log line: text as typed, minus
    what hides or reorders text; "" when there is none."""
    text = " ".join("".join(c if _shown(c) else " " if c.isspace() else "" for c in label).split())
    if len(text) > MAX_LABEL:
        raise invalid(
            _("at most %(max_label)s characters") % {"max_label": MAX_LABEL}, field="label"
        )
    return text


# The blocks that hold small capitals: IPA and phonetic extensions, the Latin blocks C to G.
_LATIN_SUPPLEMENTS = [
    *range(0x0250, 0x0300),
    *range(0x1D00, 0x1E00),
    *range(0x2C60, 0x2C80),
    *range(0xA720, 0xA800),
    *range(0xAB30, 0xAB70),
    *range(0x10780, 0x107C0),
    *range(0x1DF00, 0x1E000),
]


@lru_cache(maxsize=1)
def _small_capitals() -> dict[int, str]:
    """Small-capital letters, and the confusables prototypes they map to, as the capital they
    show ("ɢ" -> "G"; "ᴍ" and Cyrillic "м", both "ʍ" to UTS #39, -> "M"). Unicode's skeleton
    keeps a small capital apart from its letter, yet "ɢᴍ" reads as "GM". Read from the
    character names, once."""
    table: dict[int, str] = {}
    for point in _LATIN_SUPPLEMENTS:
        name = unicodedata.name(chr(point), "")
        for prefix in ("LATIN LETTER SMALL CAPITAL ", "MODIFIER LETTER SMALL CAPITAL "):
            if not name.startswith(prefix):
                continue
            try:
                capital = unicodedata.lookup(f"LATIN CAPITAL LETTER {name[len(prefix) :]}")
            except KeyError:
                continue
            table[point] = capital
            prototype = _SPOOF.getSkeleton(0, chr(point))
            if len(prototype) == 1:
                table.setdefault(ord(prototype), capital)
    return table


@lru_cache(maxsize=4096)
def _words(name: str) -> tuple[str, ...]:
    """The name's words as they look: each word's UTS #39 skeleton, case-folded (mapping and
    folding again until nothing changes, as a mapped letter may have a case), letters and
    digits only."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in text if _shown(c) or c.isspace())
    for _round in range(4):
        # The skeleton first: a capital's look-alikes are not always its small letter's
        # (Cyrillic capital EM looks like "M", its small em like a small-capital M).
        shape = _SPOOF.getSkeleton(0, text.translate(_small_capitals()))
        folded = shape.translate(_small_capitals()).casefold()
        if folded == text:
            break
        text = folded
    words = ("".join(c for c in word if c.isalnum()) for word in _split(text))
    return tuple(word for word in words if word)


def _split(text: str) -> list[str]:
    """Words split at spaces and punctuation ("G.M." is one word, "Game-Master" two)."""
    spaced = "".join(" " if unicodedata.category(c)[0] in "PZS" and c != "." else c for c in text)
    return spaced.split()


def skeleton(name: str) -> str:
    """What a name looks like: case, width, accents, invisible characters, look-alike letters
    and punctuation folded, spaces removed."""
    return "".join(_words(name))


def _title(name: str) -> bool:
    """Whether ``name`` reads as the GM's title, alone or with an article ("The GM")."""
    reserved, articles = _reserved()
    words = _words(name)
    joined = "".join(words)
    if joined in reserved:
        return True
    if words and words[0] in articles and "".join(words[1:]) in reserved:
        return True
    # Written as one word ("TheGM"): only articles too long to start a name by chance.
    return any(
        joined.startswith(article) and joined[len(article) :] in reserved
        for article in articles
        if len(article) > 2
    )


@lru_cache(maxsize=1)
def _reserved() -> tuple[frozenset[str], frozenset[str]]:
    """The reserved words and articles as their skeletons compare ("gm" looks like "grn")."""
    return frozenset(map(skeleton, RESERVED)), frozenset(map(skeleton, ARTICLES))


def check_player_name(name: str, *, taken: Iterable[str]) -> None:
    """A player's new seat: not the GM's title, not a name already at the table."""
    shape = skeleton(name)
    if _title(name):
        raise invalid(
            _("%(name)s is the GM's title at this table; pick another name") % {"name": repr(name)},
            field="name",
        )
    if shape and any(skeleton(other) == shape for other in taken):
        raise invalid(
            _("someone at the table is already called %(name)s; pick another name")
            % {"name": repr(name)},
            field="name",
        )
