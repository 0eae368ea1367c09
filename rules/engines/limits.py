"""Hard limits (docs/rules.md, "Limits"), checked before any work is done."""

MAX_DICE = 1_000
MIN_SIDES = 2
MAX_SIDES = 1_000
MAX_MODIFIER = 1_000_000
MAX_NOTATION_LENGTH = 500
# A roll lists at most this many dice in all (explosions, rerolls and bonus dice included).
MAX_LISTED_DICE = 10_000
# An exploding, cascading or open-ended chain stops after this many extra rolls.
MAX_CHAIN = 100
# Exact odds sum infinite explosions until the tail left out is below this.
ODDS_TAIL = 1e-12
