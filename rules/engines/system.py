"""What every game system gives the table (the systems themselves are listed in registry.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar, TypedDict

from .dist import BUDGET_MICROSECONDS, Budget
from .errors import TOO_LARGE, RuleError
from .fair import DiceSource
from .limits import MAX_LISTED_DICE
from .odds import OddsAnswer, Outcome, odds_answer
from .schema import Field, as_json, validate


class QuickRoll(TypedDict):
    """A ready-made request from a character sheet, and what it is called."""

    label: str
    request: dict[str, Any]


class GameSystem:
    """One game system's engine. Subclasses fill in the class attributes and the methods.

    - ``normalise(request)``: validate and fill defaults (RuleError naming the field).
    - ``roll(request, source, max_dice=...)``: a result dict (docs/rules.md, "Results")
      drawn from ``source``; systems write ``_roll``, which ``roll`` runs under the limit on
      dice listed, after ``check_size`` (systems whose dice grow with explosions or rerolls
      write ``expected_dice``, so a request too large is refused before a die is drawn).
    - ``odds(request, deadline=...)``: the exact odds answer (``odds.odds_answer``); systems
      write ``_odds``, which takes the ``Budget`` the request may spend.
    - ``describe(result)``: one human line; ``roll`` puts it in ``result["text"]``.
    - ``request_from_sheet(sheet, settings, options)``: turn a character sheet into a request.

    The underscored methods are what the systems share in building those answers.
    """

    id: ClassVar[str]
    title: ClassVar[str]
    summary: ClassVar[str]
    outcome: ClassVar[Outcome]
    flags: ClassVar[tuple[str, ...]] = ()
    request_fields: ClassVar[Sequence[Field]] = ()
    sheet_fields: ClassVar[Sequence[Field]] = ()
    settings_fields: ClassVar[Sequence[Field]] = ()
    resources: ClassVar[Sequence[Field]] = ()  # persistent per-character resources
    # Estimated microseconds one odds request may spend (see dist.Budget).
    odds_budget: ClassVar[float] = BUDGET_MICROSECONDS

    def normalise(self, request: Any) -> dict[str, Any]:
        return validate(self.request_fields, request, prefix="")

    def roll(
        self, request: Any, source: DiceSource, *, max_dice: int = MAX_LISTED_DICE
    ) -> dict[str, Any]:
        """A result drawn from ``source``. A request expected to list more than ``max_dice``
        dice (at most MAX_LISTED_DICE) is refused before a die is drawn, and a roll that would
        list more stops at the first die past it: both with a RuleError coded ``too-large``.
        So a refused roll costs at most ``max_dice`` draws, whatever its luck."""
        max_dice = min(max_dice, MAX_LISTED_DICE)
        self.check_size(request, max_dice=max_dice)
        return self._roll(request, ListedDice(source, max_dice))

    def check_size(self, request: Any, *, max_dice: int = MAX_LISTED_DICE) -> None:
        """Refuse, before anything is drawn, a (normalised) request expected to list more
        than ``max_dice`` dice. Cheap: no die is drawn, the request is only read."""
        expected = self.expected_dice(request)
        if expected > max_dice:
            raise RuleError(
                self.dice_field,
                f"would list about {expected:,.0f} dice with its explosions and rerolls; a "
                f"roll lists at most {max_dice:,}. Nothing was rolled",
                code=TOO_LARGE,
            )

    # The request field named when a request would list too many dice.
    dice_field: ClassVar[str] = "dice"

    def expected_dice(self, request: Any) -> float:
        """About how many dice a roll of ``request`` lists, from the request alone. Systems
        whose requests are bounded by their own field limits (a pool of at most MAX_DICE
        dice, a short cascade) leave it at 0: the limit on dice listed bounds them."""
        return 0.0

    def odds(self, request: Any, *, deadline: float | None = None) -> OddsAnswer:
        """The exact odds answer. Past the size cap, or past ``deadline`` (a
        ``time.monotonic()`` instant), OddsTooLarge (coded ``too-large``)."""
        return self._odds(request, Budget(limit=self.odds_budget, deadline=deadline))

    def _roll(self, request: Any, source: DiceSource) -> dict[str, Any]:
        raise NotImplementedError

    def _odds(self, request: Any, budget: Budget) -> OddsAnswer:
        raise NotImplementedError

    def describe(self, result: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def validate_sheet(self, sheet: Any) -> dict[str, Any]:
        return validate(self.sheet_fields, sheet if sheet is not None else {}, prefix="sheet")

    def validate_settings(self, settings: Any) -> dict[str, Any]:
        return validate(
            self.settings_fields, settings if settings is not None else {}, prefix="settings"
        )

    def request_from_sheet(
        self,
        sheet: Mapping[str, Any],
        settings: Mapping[str, Any],
        options: Mapping[str, Any],
        *,
        checked: bool = False,
    ) -> dict[str, Any]:
        """The request ``options`` make from a character's sheet and the campaign's settings,
        both checked first unless ``checked`` says they were (systems with sheets define
        ``_from_checked``)."""
        if checked or not self.sheet_fields:
            return self._from_checked(sheet, settings, options)
        return self._from_checked(
            self.validate_sheet(sheet), self.validate_settings(settings), options
        )

    def _from_checked(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``request_from_sheet`` with the sheet and settings already checked: ``quick_rolls``
        checks them once for all its rolls, so building them costs time linear in the sheet.
        Default: the options are the request."""
        return self.normalise(dict(options))

    def quick_rolls(self, sheet: Mapping[str, Any], settings: Mapping[str, Any]) -> list[QuickRoll]:
        """Ready-made requests from a sheet, each ``{"label": str, "request": {...}}``."""
        return []

    def schema(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "summary": self.summary,
            "outcome": self.outcome,
            "flags": list(self.flags),
            "request": as_json(self.request_fields),
            "sheet": as_json(self.sheet_fields),
            "settings": as_json(self.settings_fields),
            "resources": as_json(self.resources),
        }

    # -- shared by the systems -------------------------------------------------------------

    def _result(self, request: Mapping[str, Any], **fields: Any) -> dict[str, Any]:
        """A roll's result: ``system`` and ``request``, then ``fields`` in the order given
        (``dice``, ``total``, ``successes``, ``outcome``, ``flags`` and the system's own), then
        ``text``, the line ``describe`` makes of it."""
        result: dict[str, Any] = {"system": self.id, "request": request, **fields}
        result["text"] = self.describe(result)
        return result

    def _odds_answer(
        self,
        request: Mapping[str, Any],
        distribution: Mapping[int, Fraction | float],
        p_success: Fraction | float | None,
        events: Mapping[str, Fraction | float],
        *,
        outcome: Outcome | None = None,
    ) -> OddsAnswer:
        """This system's odds answer (``odds.odds_answer``); ``outcome`` defaults to the
        system's."""
        return odds_answer(
            system=self.id,
            request=request,
            outcome=outcome or self.outcome,
            distribution=distribution,
            p_success=p_success,
            events=events,
        )

    def _check_options(self, options: Any, known: Iterable[str]) -> Mapping[str, Any]:
        """The ``options`` of ``request_from_sheet``: an object naming only ``known`` keys."""
        if not isinstance(options, Mapping):
            raise RuleError("options", "expected an object")
        known = sorted(known)
        for key in options:
            if key not in known:
                raise RuleError(f"options.{key}", f"unknown option; expected one of {known}")
        return options

    def _quick_roll(
        self,
        label: str,
        sheet: Mapping[str, Any],
        settings: Mapping[str, Any],
        options: Mapping[str, Any],
    ) -> QuickRoll:
        """One of ``quick_rolls``: ``{"label": label, "request": ...}`` from the sheet and
        settings, both already checked (once, by ``quick_rolls``)."""
        request = self.request_from_sheet(sheet, settings, options, checked=True)
        return {"label": label, "request": request}


class ListedDice:
    """A DiceSource that refuses the die past MAX_LISTED_DICE: every die drawn is listed in
    the result, and a result must stay small enough to store and send."""

    __slots__ = ("_roll", "left", "limit")

    def __init__(self, source: DiceSource, limit: int = MAX_LISTED_DICE) -> None:
        self._roll = source.roll
        self.left = self.limit = limit

    def roll(self, sides: int) -> int:
        if not self.left:
            raise RuleError(
                "dice",
                f"this roll would list more than {self.limit:,} dice (explosions, rerolls "
                "and bonus dice included); nothing was rolled",
                code=TOO_LARGE,
            )
        self.left -= 1
        return self._roll(sides)


def passed_on(options: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """The options among ``keys`` that go into a request as they are."""
    return {key: options[key] for key in keys if key in options}
