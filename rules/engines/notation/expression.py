"""A parsed, checked dice expression: the tree and what callers read off it."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from .nodes import Dice, Node, RollGroup, walk, walk_dice

if TYPE_CHECKING:
    from fractions import Fraction

    from ..dist import Dist
    from .evaluator import Roller
    from .printer import Printer


class Worked(TypedDict, total=False):
    """What rolling, printing and the odds work out once per expression and keep on it."""

    roller: Roller
    printer: Printer
    weights: Dist  # the headline's exact weights
    dist: dict[int, Fraction]  # the same, as fractions
    # Per die size held fixed: the headline's law given each face of the first die.
    joint: dict[int, dict[int, dict[int, Fraction]]]


class Expression:
    """A parsed, checked dice expression. Shared between callers: treat as read-only.

    ``notation`` is the canonical form (the tree printed, then any free text); ``label`` the
    free text after the expression ("Roll for Initiative"), ``labels`` every ``[label]``.
    """

    __slots__ = (
        "_cache",
        "counts",
        "dice_count",
        "dice_terms",
        "expected_draws",
        "field",
        "label",
        "labels",
        "notation",
        "root",
        "text",
    )

    def __init__(
        self, root: Node, text: str, field: str, notation: str, label: str, dice_count: int
    ) -> None:
        self.root = root
        self.text = text
        self.field = field
        self.label = label
        self.notation = f"{notation} {label}" if label else notation
        self.dice_terms: tuple[Dice, ...] = tuple(walk_dice(root))
        # The most dice a roll can ask for before explosions and rerolls (computed counts at
        # their highest; the parser works those out).
        self.dice_count = dice_count
        # About how many dice a roll draws with its explosions and rerolls (the parser's
        # estimate, set as it checks the expression's limits).
        self.expected_draws = 0.0
        # With any success count in it, the headline number is successes.
        nodes = walk(root)
        self.counts = any(isinstance(n, (Dice, RollGroup)) and n.counts for n in nodes)
        self._cache: Worked = {}

    def lone_first_die(self, sides: int) -> Dice | None:
        """The first dice term drawn when it is a lone plain ``1dN``/``dN`` with N == ``sides``
        whose face is the term's value (a check like ``1d20+7``: its natural roll), else None."""
        first = self.dice_terms[0] if self.dice_terms else None
        if (
            first is None
            or first.computed
            or first.count != 1
            or first.kind != "number"
            or first.sides != sides
            or not first.plain
            or first.keep is not None
            or first.counts
            or first.match == "mt"
            or any(first in n.pooled for n in walk(self.root) if isinstance(n, RollGroup))
        ):
            return None
        return first

    def __repr__(self) -> str:
        return f"Expression({self.notation!r})"
