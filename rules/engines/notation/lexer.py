"""Tokens of dice notation. Case-insensitive; whitespace only separates tokens."""

from __future__ import annotations

import string
from typing import NamedTuple

from ..errors import RuleError

# Letter words, longest first so "kh" wins over "k", "df" over "d" and "round" over "ro".
_WORDS = tuple(
    sorted(
        (
            *("floor", "ceil", "round", "abs", "min", "max"),
            *("kh", "kl", "dh", "dl", "ro", "df", "sa", "sd", "cs", "cf", "mt"),
            *("d", "k", "r", "f", "s", "m"),
        ),
        key=len,
        reverse=True,
    )
)
_SYMBOLS = (
    *("**", ">=", "<=", "!p", "!", ">", "<", "=", "%", "+", "-", "*", "/"),
    *("(", ")", "{", "}", ","),
)
_WORD_LETTERS = frozenset("".join(_WORDS))
# ASCII only: str.lower() can change the length of some non-ASCII text and shift the columns.
_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# A label: "[" up to the next "]", at most this long.
MAX_LABEL = 100


class Token(NamedTuple):
    kind: str  # "int", "label", "end", or the word/symbol itself ("kh", "!", "(", ...)
    value: int
    col: int  # 1-based column in the text as written
    text: str = ""  # a label's text


class NotationError(RuleError):
    """A RuleError that knows the column where the notation stopped making sense, so a parse
    can read what follows as free text ("1d20+5 Roll for Initiative")."""

    def __init__(self, field: str, reason: str, col: int) -> None:
        super().__init__(field, reason)
        self.col = col


def tokenize(text: str, field: str) -> list[Token]:
    lowered = text.translate(_LOWER)
    tokens: list[Token] = []
    i, n = 0, len(lowered)
    while i < n:
        ch = lowered[i]
        if ch.isspace():
            i += 1
            continue
        col = i + 1
        if "0" <= ch <= "9":
            j = i
            while j < n and "0" <= lowered[j] <= "9":
                j += 1
            tokens.append(Token("int", int(lowered[i:j]), col))
            i = j
            continue
        if ch == "[":
            end = text.find("]", i + 1)
            if end < 0:
                raise NotationError(field, f"the label at column {col} has no closing ']'", col)
            label = " ".join(text[i + 1 : end].split())
            if not label or len(label) > MAX_LABEL or "[" in label:
                raise NotationError(
                    field, f"a label is 1 to {MAX_LABEL} characters in [], at column {col}", col
                )
            tokens.append(Token("label", 0, col, label))
            i = end + 1
            continue
        for kind in _WORDS if ch in _WORD_LETTERS else _SYMBOLS:
            if lowered.startswith(kind, i):
                tokens.append(Token(kind, 0, col))
                i += len(kind)
                break
        else:
            raise NotationError(
                field, f"'{text[i]}' at column {col} is not part of dice notation", col
            )
    tokens.append(Token("end", 0, n + 1))
    return tokens
