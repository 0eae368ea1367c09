"""The names people sit down under: what a log line can show safely, and who may take which name.

A name is shown in every log line and seat list, so it must read as what it says: characters that
reorder or hide text (bidirectional controls, zero-width and other control characters) are
removed, and two names that look alike ("Ana" and a full-width "ANA", "GM" with a Cyrillic M) are
the same name. Nobody but the GM sits down as the GM.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

from .errors import invalid

MAX_LENGTH = 40

# Letters that look like Latin ones in common fonts (Cyrillic, Greek), folded to them for the
# comparison only; NFKC already folds full-width and mathematical letters.
LOOK_ALIKES = str.maketrans(
    "\u0430\u0432\u0441\u0435\u04bb\u0456\u0458\u043a"
    "\u043c\u043d\u043e\u0440\u0455\u0442\u0443\u0445"
    "\u050d\u0261\u03b1\u03b2\u03b5\u03b7\u03b9\u03ba"
    "\u03bc\u03bd\u03bf\u03c1\u03c4\u03c5\u03c7\u04cf",
    "abcehijkmhopstyxggabenikmvoptuxl",
)

# What a player may not call themselves: the GM's title in the words tables use.
RESERVED = frozenset({"gm", "gamemaster", "dm", "dungeonmaster", "mj", "sl"})


def _shown(character: str) -> bool:
    """Keep letters, marks, numbers, punctuation, symbols and plain spaces; drop controls,
    format characters (bidi overrides, zero-width joiners), separators other than a space."""
    category = unicodedata.category(character)
    return not (
        category in ("Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp")
        or (category == "Zs" and character != " ")
    )


def clean_name(name: Any) -> str:
    """The name as it will be shown, or an error naming the field."""
    if not isinstance(name, str):
        raise invalid("pick a name to sit down with", field="name")
    # Spaces of every kind become one plain space; what is not shown goes.
    name = "".join(
        c if _shown(c) else " " if c.isspace() else "" for c in unicodedata.normalize("NFC", name)
    )
    name = " ".join(name.split())
    if not name:
        raise invalid("pick a name to sit down with", field="name")
    if len(name) > MAX_LENGTH:
        raise invalid(f"at most {MAX_LENGTH} characters", field="name")
    return name


MAX_LABEL = 60


def clean_label(label: Any) -> str:
    """What a roll is for ("Attack", "Stealth"), shown in its log line: text as typed, minus
    what hides or reorders text; "" when there is none."""
    if label is None:
        return ""
    if not isinstance(label, str):
        raise invalid("text, like Attack or Stealth", field="label")
    text = " ".join("".join(c if _shown(c) else " " if c.isspace() else "" for c in label).split())
    if len(text) > MAX_LABEL:
        raise invalid(f"at most {MAX_LABEL} characters", field="label")
    return text


def skeleton(name: str) -> str:
    """What a name looks like: case, width, accents, look-alike letters and punctuation folded."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name).casefold())
    folded = "".join(c for c in folded if not unicodedata.combining(c)).translate(LOOK_ALIKES)
    return "".join(c for c in folded if c.isalnum())


def check_player_name(name: str, *, taken: Iterable[str]) -> None:
    """A player's new seat: not the GM's title, not a name already at the table."""
    shape = skeleton(name)
    if shape in RESERVED:
        raise invalid(f"{name!r} is the GM's title at this table; pick another name", field="name")
    if shape and any(skeleton(other) == shape for other in taken):
        raise invalid(
            f"someone at the table is already called {name!r}; pick another name", field="name"
        )
