"""``generic``: ordinary dice notation, e.g. ``4d6kh3+2`` or ``10d10>8f1``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import system
from .dist import Budget
from .fair import DiceSource
from .limits import MAX_CHAIN, MAX_MODIFIER, MAX_NOTATION_LENGTH
from .notation import evaluate, odds_table, parse
from .odds import OddsAnswer
from .results import meet_or_beat
from .schema import Field


class Generic(system.GameSystem):
    id = "generic"
    title = "Dice notation"
    summary = (
        "Roll20-style notation: NdX, d%, dF, keep/drop (kh kl dh dl), exploding (! !! !p), "
        "rerolls (r ro), success counting (> < = with f failures), groups {a, b}kh1, "
        "computed dice (1d4)d6, min/max, matching (m mt), critical marks (cs cf), sorting, "
        "floor ceil round abs, + - * / % ** arithmetic, [labels] and free text."
    )
    outcome = "total"  # "successes" for an expression that counts them; see odds()
    flags = ()
    request_fields = (
        Field(
            "notation",
            "text",
            label="Dice",
            help="e.g. 4d6kh3+2, 6d10!!k3, 5d10>8f1, {1d20, 1d20}kh1, 1d20+5 Initiative",
            required=True,
            max_length=MAX_NOTATION_LENGTH,
        ),
        Field(
            "difficulty",
            "int",
            label="Difficulty",
            help="success when the result is at least this",
            default=None,
            nullable=True,
            min=-MAX_MODIFIER,
            max=MAX_MODIFIER,
        ),
    )

    def normalise(self, request: Any) -> dict[str, Any]:
        out = super().normalise(request)
        parse(out["notation"])  # every notation error surfaces here, naming "notation"
        return out

    dice_field = "notation"

    def expected_dice(self, request: Any) -> float:
        return parse(self.normalise(request)["notation"]).expected_draws

    def _roll(self, request: Any, source: DiceSource) -> dict[str, Any]:
        req = self.normalise(request)
        expr = parse(req["notation"])
        ev = evaluate(expr, source)
        # Free text after the notation says what the roll is for: the result's ``label``, the
        # same key the table gives a roll its player labelled (absent when there is none).
        said = {"label": expr.label} if expr.label else {}
        return self._result(
            req,
            notation=expr.notation,
            **said,
            dice=ev.dice,
            total=ev.total,
            successes=ev.successes,
            outcome=meet_or_beat(ev.value, req["difficulty"]),
            flags=[],
            capped=ev.capped,
            breakdown=ev.text,
        )

    def _odds(self, request: Any, budget: Budget) -> OddsAnswer:
        req = self.normalise(request)
        expr = parse(req["notation"])
        dist, p_success = odds_table(expr, req["difficulty"], budget)
        return self._odds_answer(
            req, dist, p_success, {}, outcome="successes" if expr.counts else "total"
        )

    def describe(self, result: Mapping[str, Any]) -> str:
        text = str(result.get("breakdown") or result.get("notation") or "")
        difficulty = (result.get("request") or {}).get("difficulty")
        if result.get("outcome") is not None and difficulty is not None:
            text += f" vs {difficulty}: {result['outcome']}"
        if result.get("capped") and "cap" not in text:
            text += f" (a chain stopped at the cap of {MAX_CHAIN} extra rolls)"
        return text


GENERIC = Generic()
