"""Tokens of dice notation. Case-insensitive; whitespace only separates tokens."""

from __future__ import annotations

import string
from typing import NamedTuple

from ..errors import RuleError

# Letter words, longest first so "kh" wins over "k" and "df" over "d".
_WORDS = ("kh", "kl", "dh", "dl", "ro", "df", "d", "k", "r", "f")
_SYMBOLS = (">=", "<=", "!", ">", "<", "=", "%", "+", "-", "*", "/", "(", ")")
_WORD_LETTERS = frozenset("".join(_WORDS))
# ASCII only: str.lower() can change the length of some non-ASCII text and shift the columns.
_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


class Token(NamedTuple):
    kind: str  # "int", "end", or the word/symbol itself ("kh", "!", "(", ...)
    value: int
    col: int  # 1-based column in the text as written


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
        for kind in _WORDS if ch in _WORD_LETTERS else _SYMBOLS:
            if lowered.startswith(kind, i):
                tokens.append(Token(kind, 0, col))
                i += len(kind)
                break
        else:
            raise RuleError(field, f"unexpected '{text[i]}' at column {col}")
    tokens.append(Token("end", 0, n + 1))
    return tokens
