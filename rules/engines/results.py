"""What roll results share (docs/rules.md, "Results"): the outcome against a target, and the notes
in brackets that close a result's line of text."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

Verdict = Literal["success", "failure"]  # a roll's ``outcome`` against its target


def meet_or_beat(total: int, target: int | None) -> Verdict | None:
    """``"success"`` when ``total`` is at least ``target``, else ``"failure"``; None when there
    is no target."""
    if target is None:
        return None
    return "success" if total >= target else "failure"


def with_notes(line: str, notes: Iterable[str]) -> str:
    """``line`` followed by ``notes`` in brackets, ``"... [botch, 2 protected]"``; the line
    alone when there are none."""
    notes = list(notes)
    return f"{line} [{', '.join(notes)}]" if notes else line
