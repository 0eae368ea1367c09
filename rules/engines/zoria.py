"""Zoria RPG action dice (RULES.md section 3): the check, cascading action dice, threats, and the
per-session pool rules the table runs (pool by level, the GM's pool, several characters).

Draw order in ``dice``: the check's dice as the notation engine draws them (role ``base``, or
``kept``/``dropped``...), then each action die in request order followed by its cascade
(role ``action``, ``"exploded": true`` on every cascade draw).
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from . import system
from .dice import DieRecord, draw, parse_die
from .dist import Budget
from .errors import OddsTooLarge, RuleError
from .fair import DiceSource
from .limits import MAX_CHAIN, MAX_DICE, MAX_MODIFIER, ODDS_TAIL
from .notation import Expression, evaluate, joint_with_first_die, parse
from .results import meet_or_beat, with_notes
from .schema import Field, whole_number
from .system import passed_on

ACTION_SIDES = (3, 4, 6, 8, 10, 12, 14, 16, 20, 24)
ACTION_DICE = tuple(f"d{n}" for n in ACTION_SIDES)
THREAT_SIDES = 20
SPECIAL_BOTCH_MARGIN = 5  # failing by 5 or more: total <= dc - 5
FLAGS = ("critical-threat", "botch-threat", "special-botch-threat")

# Exact-odds size cap: the cascading action dice added to one check.
ODDS_MAX_ACTION_DICE = 20
# Below this a probability is dropped while action dice are combined (the mass left out is
# counted into the renormalisation; it stays far below ODDS_TAIL).
_PRUNE = 1e-19

MAX_LEVEL = 1000
MULTI_OPTIONS = ("highest", "balanced", "divided")
BALANCED_CHOICES = ("fewer", "extra")
INSIGHT_ABILITIES = ("reason", "intuition", "knowledge")

_REQUEST_FIELDS: tuple[Field, ...] = (
    Field(
        "check",
        "text",
        label="Check",
        help="Dice notation for the base roll, usually 1d20+modifier; its first d20 decides "
        "critical and botch threats.",
        default="1d20",
        max_length=500,
    ),
    Field(
        "action_dice",
        "dice",
        label="Action dice",
        help="Action dice used on this roll; each cascades on its highest face.",
        default=[],
        choices=ACTION_DICE,
        max_items=MAX_DICE,
    ),
    Field(
        "dc", "int", label="DC", default=None, nullable=True, min=-MAX_MODIFIER, max=MAX_MODIFIER
    ),
    Field(
        "crit_range",
        "int",
        label="Critical threat from",
        help="A natural d20 at or above this is a critical threat.",
        default=20,
        min=2,
        max=20,
    ),
    Field(
        "botch_range",
        "int",
        label="Botch threat up to",
        help="A natural d20 at or below this is a botch threat (weapons: 1 to 4).",
        default=1,
        min=1,
        max=4,
    ),
)


# ---------------------------------------------------------------------------------------------
# Pools (per game session)
# ---------------------------------------------------------------------------------------------

_LEVEL_TABLE = (  # (highest level of the band, count, sides)
    (5, 3, 4),
    (10, 4, 6),
    (15, 5, 8),
    (20, 6, 10),
    (25, 7, 12),
    (30, 8, 14),
    (35, 9, 16),
    (40, 10, 16),
)
_GM_DIE = {3: 6, 4: 8, 6: 10, 8: 12, 10: 14, 12: 16, 14: 20, 16: 24}


def _level(value: Any, where: str) -> int:
    value = whole_number(value, where)
    if not 0 <= value <= MAX_LEVEL:
        raise RuleError(where, f"levels run from 0 to {MAX_LEVEL}, got {value}")
    return value


def pool_for_level(level: int) -> tuple[int, int]:
    """Starting action dice of a character of ``level``: ``(count, sides)``.

    Below 1: 2d3; 1-5: 3d4; ... 36-40: 10d16; from 41 on d16 and one more die per started five
    levels past 40 (41-45: 11, 46-50: 12, ...). Never bigger than d16.
    """
    level = _level(level, "level")
    if level < 1:
        return (2, 3)
    for top, count, sides in _LEVEL_TABLE:
        if level <= top:
            return (count, sides)
    return (10 + math.ceil((level - 40) / 5), 16)


def gm_die(highest_player_sides: int) -> int:
    """The GM's die type, from the highest die type among the players (d3 -> d6 ... d16 -> d24)."""
    try:
        return _GM_DIE[highest_player_sides]
    except (KeyError, TypeError):
        raise RuleError(
            "highest_player_sides",
            f"player action dice are d3 to d16 ({sorted(_GM_DIE)}), not {highest_player_sides!r}",
        ) from None


PoolGroups = list[tuple[int, int]]  # one player's pool as (count, sides) groups


def _groups(pool: tuple[int, int] | Sequence[tuple[int, int]], where: str) -> PoolGroups:
    """A player's pool given as one (count, sides) or a list of them (the divided option)."""
    if (
        isinstance(pool, (tuple, list))
        and len(pool) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in pool)
    ):
        items: Iterable[Any] = [pool]
    elif isinstance(pool, (list, tuple)):
        items = pool
    else:
        raise RuleError(where, f"expected (count, sides) or a list of them, got {pool!r}")
    out: PoolGroups = []
    for i, item in enumerate(items):
        try:
            count, sides = item
        except (TypeError, ValueError):
            raise RuleError(f"{where}.{i}", f"expected (count, sides), got {item!r}") from None
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise RuleError(f"{where}.{i}", f"a count is a whole number, 0 or more, not {count!r}")
        if sides not in _GM_DIE:
            raise RuleError(f"{where}.{i}", f"player action dice are d3 to d16, not {sides!r}")
        out.append((count, sides))
    return out


def gm_pool(player_pools: Sequence[tuple[int, int] | Sequence[tuple[int, int]]]) -> tuple[int, int]:
    """The GM's starting pool: ``(count, sides)``.

    count = number of players (GM excluded) + the largest starting pool of any one player; the
    die type comes from the highest die type any player has. Each player's pool is one
    ``(count, sides)`` or, under the divided option, a list of them.
    """
    if not isinstance(player_pools, (list, tuple)) or not player_pools:
        raise RuleError("player_pools", "needs at least one player")
    players = [_groups(pool, f"player_pools.{i}") for i, pool in enumerate(player_pools)]
    largest = max(sum(count for count, _ in groups) for groups in players)
    highest = max((sides for groups in players for count, sides in groups if count), default=None)
    if highest is None:
        raise RuleError("player_pools", "no player has a die to take the GM's die type from")
    return (len(players) + largest, gm_die(highest))


def gm_pool_growth(
    *,
    before: Sequence[tuple[int, int] | Sequence[tuple[int, int]]],
    after: Sequence[tuple[int, int] | Sequence[tuple[int, int]]],
) -> tuple[int, int]:
    """When a player sits down after the start: ``(dice to add to the GM's pool, GM die type)``.

    The late player counts as if present at the start; the GM's pool and die type grow to
    match, never shrink.
    """
    old_count, old_sides = gm_pool(before)
    new_count, new_sides = gm_pool(after)
    return (max(0, new_count - old_count), max(old_sides, new_sides))


def player_pool(
    levels: Sequence[int],
    *,
    option: str = "highest",
    balanced_choice: str = "fewer",
) -> list[tuple[int, int]]:
    """One player's starting pool from the levels of every character they control.

    - ``highest``: the pool of the highest-level character.
    - ``balanced``: within 3 levels, the highest's pool; 4 or more apart, either one die fewer
      of the highest's type (``balanced_choice="fewer"``) or one die more but of the lowest
      character's type (``"extra"``).
    - ``divided``: each character gives its own type, floor(its count / characters) dice.

    Returns ``(count, sides)`` groups, biggest dice first, empty groups left out.
    """
    if not isinstance(levels, (list, tuple)) or not levels:
        raise RuleError("levels", "needs the level of at least one character")
    checked = [_level(level, f"levels.{i}") for i, level in enumerate(levels)]
    if option not in MULTI_OPTIONS:
        raise RuleError("option", f"must be one of {list(MULTI_OPTIONS)}, got {option!r}")
    if balanced_choice not in BALANCED_CHOICES:
        raise RuleError(
            "balanced_choice", f"must be one of {list(BALANCED_CHOICES)}, got {balanced_choice!r}"
        )
    top, low = max(checked), min(checked)
    count, sides = pool_for_level(top)
    if option == "highest" or len(checked) == 1:
        return [(count, sides)]
    if option == "balanced":
        if top - low <= 3:
            return [(count, sides)]
        if balanced_choice == "fewer":
            return [(count - 1, sides)]
        return [(count + 1, pool_for_level(low)[1])]
    by_sides: dict[int, int] = {}
    for level in checked:
        c, s = pool_for_level(level)
        by_sides[s] = by_sides.get(s, 0) + c // len(checked)
    return [(c, s) for s, c in sorted(by_sides.items(), reverse=True) if c]


def roll_action_die(sides: int, source: DiceSource) -> list[DieRecord]:
    """Roll one action die: on its highest face it cascades (rolled again and added), without
    limit but for the MAX_CHAIN cap. The first record has role ``action``; every cascade draw
    also carries ``"exploded": true``; the last carries ``"capped": true`` if the cap stopped it.
    The die's value is the sum of the records' values."""
    if sides not in ACTION_SIDES:
        raise RuleError("sides", f"action dice are {list(ACTION_DICE)}, not {sides!r}")
    records = [draw(source, sides, "action")]
    extra = 0
    while records[-1]["value"] == sides:
        if extra == MAX_CHAIN:
            records[-1]["capped"] = True  # type: ignore[typeddict-unknown-key]
            break
        records.append(draw(source, sides, "action", exploded=True))
        extra += 1
    return records


def insight_request(
    level: int, modifier: int = 0, *, dc: int | None = None, action_dice: Sequence[str] = ()
) -> dict[str, Any]:
    """The GM's insight roll, 1d20 + character level + Reason, Intuition or Knowledge modifier,
    as a normalised ``zoria`` request."""
    level = _level(level, "level")
    modifier = whole_number(modifier, "modifier")
    return ZORIA.normalise(
        {"check": _check_text(level + modifier), "action_dice": list(action_dice), "dc": dc}
    )


def _check_text(bonus: int) -> str:
    if bonus == 0:
        return "1d20"
    return f"1d20{bonus:+d}"


# ---------------------------------------------------------------------------------------------
# The roll
# ---------------------------------------------------------------------------------------------


def _threat_die(expr: Expression) -> bool:
    """True when the check's first dice term is a lone plain 1d20: the die whose natural value
    decides threats (the same test ``joint_with_first_die`` applies to its odds)."""
    if not expr.dice_terms:
        return False
    first = expr.dice_terms[0]
    return (
        first.count == 1
        and first.kind == "number"
        and first.sides == THREAT_SIDES
        and first.plain
        and first.keep is None
        and not first.counts
    )


def _threat_flags(natural: int | None, req: Mapping[str, Any]) -> list[str]:
    flags = []
    if natural is not None:
        if natural >= req["crit_range"]:
            flags.append("critical-threat")
        if natural <= req["botch_range"]:
            flags.append("botch-threat")
    return flags


# ---------------------------------------------------------------------------------------------
# Exact odds
# ---------------------------------------------------------------------------------------------


def _convolve(a: Mapping[int, float], b: Mapping[int, float]) -> dict[int, float]:
    """Law of the sum, leaving out the products below _PRUNE (b's outcomes are visited most
    likely first, so each row stops at the first product too small to keep)."""
    out: dict[int, float] = {}
    get = out.get
    b_items = sorted(b.items(), key=lambda kv: -kv[1])
    neg = [-p for _, p in b_items]
    for x, px in a.items():
        if px <= 0.0:  # underflowed: nothing of it can reach _PRUNE
            continue
        stop = bisect.bisect_right(neg, -_PRUNE / px)
        for y, py in b_items[:stop]:
            out[x + y] = get(x + y, 0.0) + px * py
    return {t: p for t, p in out.items() if p >= _PRUNE}


def _power(law: Mapping[int, float], n: int) -> dict[int, float]:
    out: dict[int, float] = {0: 1.0}
    power = dict(law)
    while n:
        if n & 1:
            out = _convolve(out, power)
        n >>= 1
        if n:
            power = _convolve(power, power)
    return out


def _cascade_sum_law(sides: int, n: int, tail: float) -> dict[int, float]:
    """Law of the sum of ``n`` cascading d``sides``.

    One die is sides * M + R: M top faces in a row (geometric) and a last face R uniform on
    1..sides-1, independent. So n dice are sides * (a negative binomial count) + a sum of n
    uniforms; the count is followed until the mass left out is below ``tail``.
    """
    q = 1 / sides
    uniforms = _power({r: 1 / (sides - 1) for r in range(1, sides)}, n)
    tops: dict[int, float] = {}
    p = (1 - q) ** n  # P(no top face among n dice)
    seen = 0.0
    j = 0
    while True:
        tops[j * sides] = p
        seen += p
        if 1 - seen < tail or j >= MAX_CHAIN * n:
            break
        p *= (j + n) / (j + 1) * q
        j += 1
    return _convolve(tops, uniforms)


def _action_law(action_dice: Sequence[str]) -> dict[int, float]:
    """Law of the sum of the action dice (cached by the multiset of dice; do not mutate)."""
    counts: dict[int, int] = {}
    for die in action_dice:
        counts[int(die[1:])] = counts.get(int(die[1:]), 0) + 1
    return _action_law_of(tuple(sorted(counts.items())))


@functools.lru_cache(maxsize=256)
def _action_law_of(counts: tuple[tuple[int, int], ...]) -> dict[int, float]:
    total: dict[int, float] = {0: 1.0}
    # The counts of top faces are cheap to follow, so follow them well past the odds tail.
    tail = ODDS_TAIL / 1000 / max(1, len(counts))
    for sides, n in counts:
        total = _convolve(total, _cascade_sum_law(sides, n, tail))
    return total


# ---------------------------------------------------------------------------------------------
# The system
# ---------------------------------------------------------------------------------------------


def _counts_text(dice: Sequence[str]) -> str:
    counts: dict[str, int] = {}
    for die in dice:
        counts[die] = counts.get(die, 0) + 1
    return " + ".join(f"{n}{d}" for d, n in counts.items())


class Zoria(system.GameSystem):
    id = "zoria"
    title = "Zoria RPG (action dice)"
    summary = (
        "A d20 check plus cascading action dice from per-session pools; natural rolls raise "
        "critical and botch threats for the pools to activate."
    )
    outcome = "total"
    flags = FLAGS
    request_fields = _REQUEST_FIELDS
    sheet_fields = (
        Field("level", "int", label="Level", default=1, min=0, max=MAX_LEVEL),
        Field("class", "text", label="Class", default="", max_length=100),
        Field(
            "abilities",
            "counts",
            label="Ability modifiers",
            help="Ability name -> modifier (Reason, Intuition and Knowledge feed insight rolls).",
            default={},
            min=-1000,
            max=1000,
        ),
        Field(
            "skills",
            "counts",
            label="Skills",
            help="Skill name -> total check bonus.",
            default={},
            min=-1000,
            max=1000,
        ),
        Field(
            "class_bonus_dice",
            "dice",
            label="Class bonus dice",
            help="Bonus action dice per session from the class; this character's alone.",
            default=[],
            choices=ACTION_DICE,
            max_items=100,
        ),
    )
    settings_fields = (
        Field(
            "multi_character",
            "choice",
            label="Players with several characters",
            help="highest: the highest-level character's pool; balanced: the same within 3 "
            "levels, else one die fewer or one lower-type die more; divided: each character "
            "gives its own dice, divided by the number of characters.",
            default="highest",
            choices=MULTI_OPTIONS,
        ),
        Field(
            "balanced_choice",
            "choice",
            label="Balanced, 4+ levels apart",
            help="fewer: one die fewer of the highest type; extra: one die more, of the lower "
            "character's type.",
            default="fewer",
            choices=BALANCED_CHOICES,
        ),
    )

    # -- request ---------------------------------------------------------------------------

    def _parse(self, req: Mapping[str, Any]) -> Expression:
        expr = parse(req["check"], field="check")
        if expr.counts:
            raise RuleError("check", "a check adds dice up; success counting (>N) is not allowed")
        return expr

    def normalise(self, request: Any) -> dict[str, Any]:
        req = super().normalise(request)
        expr = self._parse(req)
        count = expr.dice_count + len(req["action_dice"])
        if count > MAX_DICE:
            raise RuleError("action_dice", f"at most {MAX_DICE} dice in one request, got {count}")
        if req["crit_range"] <= req["botch_range"]:
            raise RuleError("crit_range", "must be above botch_range")
        return req

    # -- roll ------------------------------------------------------------------------------

    def _roll(self, request: Any, source: DiceSource) -> dict[str, Any]:
        req = self.normalise(request)
        expr = self._parse(req)
        check = evaluate(expr, source, role="base")
        natural = check.dice[0]["value"] if _threat_die(expr) else None
        dice = list(check.dice)
        action_values = []
        capped = check.capped
        for die in req["action_dice"]:
            records = roll_action_die(parse_die(die, field="action_dice"), source)
            capped = capped or any(r.get("capped") for r in records)
            action_values.append(sum(r["value"] for r in records))
            dice += records
        total = check.value + sum(action_values)
        flags = _threat_flags(natural, req)
        dc = req["dc"]
        if dc is not None and total <= dc - SPECIAL_BOTCH_MARGIN:
            flags.append("special-botch-threat")
        return self._result(
            req,
            dice=dice,
            total=total,
            successes=None,
            outcome=meet_or_beat(total, dc),
            flags=flags,
            natural=natural,
            check_total=check.value,
            check_text=check.text,
            action_totals=action_values,
            margin=None if dc is None else total - dc,
            capped=capped,
        )

    def describe(self, result: Mapping[str, Any]) -> str:
        req = result["request"]
        line = result.get("check_text") or f"{req['check']} = {result.get('check_total')}"
        # Each action die with its cascade, e.g. "d6 6+6+2".
        chains: list[list[int]] = []
        for rec in result["dice"]:
            if rec["role"] == "action":
                if rec.get("exploded") and chains:
                    chains[-1].append(rec["value"])
                else:
                    chains.append([rec["value"]])
        if chains:
            shown = ", ".join(
                f"{die} {'+'.join(map(str, values))}"
                for die, values in zip(req["action_dice"], chains, strict=False)
            )
            line += f"; action dice {shown}; total {result['total']}"
        if req["dc"] is not None:
            line += f" vs DC {req['dc']}: {result['outcome']}"
        line = with_notes(line, result["flags"])
        if result.get("capped"):
            line += f" (a chain stopped at the {MAX_CHAIN}-roll cap)"
        return line

    # -- odds ------------------------------------------------------------------------------

    def _odds(self, request: Any, budget: Budget) -> dict[str, Any]:
        req = self.normalise(request)
        if len(req["action_dice"]) > ODDS_MAX_ACTION_DICE:
            raise OddsTooLarge(
                "action_dice", f"exact odds stop at {ODDS_MAX_ACTION_DICE} action dice"
            )
        expr = self._parse(req)
        joint = joint_with_first_die(expr, THREAT_SIDES, budget)
        # Exact fractions for the check alone; floats once cascading dice join in.
        check: dict[int, Fraction] = {}
        events: dict[str, Fraction | float] = dict.fromkeys(FLAGS, Fraction(0))
        for natural, law in joint.items():
            mass = sum(law.values(), Fraction(0))
            for flag in _threat_flags(natural, req):
                events[flag] += mass
            for t, p in law.items():
                check[t] = check.get(t, Fraction(0)) + p
        total_law: Mapping[int, Fraction | float] = check
        if req["action_dice"]:
            floats = {t: float(p) for t, p in check.items()}
            total_law = _convolve(floats, _action_law(req["action_dice"]))
        mass = sum(total_law.values())
        dc = req["dc"]
        p_success = None
        if dc is not None:
            p_success = sum(p for t, p in total_law.items() if t >= dc) / mass
            events["special-botch-threat"] = (
                sum(p for t, p in total_law.items() if t <= dc - SPECIAL_BOTCH_MARGIN) / mass
            )
        return self._odds_answer(req, total_law, p_success, events)

    # -- sheets ----------------------------------------------------------------------------

    def request_from_sheet(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Options: one of ``skill`` (a skill name), ``ability`` (an ability name) or
        ``insight`` (Reason, Intuition or Knowledge: 1d20 + level + that modifier); then
        ``modifier``, ``dc``, ``action_dice``, ``crit_range``, ``botch_range``."""
        sheet = self.validate_sheet(sheet)
        known = {"skill", "ability", "insight", "modifier", "dc", "action_dice", "crit_range",
                 "botch_range"}  # fmt: skip
        self._check_options(options, known)
        chosen = [key for key in ("skill", "ability", "insight") if options.get(key) is not None]
        if len(chosen) > 1:
            raise RuleError(f"options.{chosen[1]}", "choose one of skill, ability or insight")
        bonus = 0
        if chosen:
            key = chosen[0]
            name = options[key]
            table = sheet["skills"] if key == "skill" else sheet["abilities"]
            found = _lookup(table, name)
            if found is None:
                if key == "insight" and isinstance(name, str) and name.lower() in INSIGHT_ABILITIES:
                    found = 0  # an ability not written on the sheet counts +0
                else:
                    raise RuleError(f"options.{key}", f"no {key} named {name!r} on the sheet")
            bonus = found + (sheet["level"] if key == "insight" else 0)
        modifier = whole_number(options.get("modifier", 0), "options.modifier")
        if abs(bonus + modifier) > MAX_MODIFIER:
            raise RuleError("options.modifier", f"modifiers stay within ±{MAX_MODIFIER}")
        request = {
            "check": _check_text(bonus + modifier),
            **passed_on(options, ("dc", "action_dice", "crit_range", "botch_range")),
        }
        return self.normalise(request)

    def quick_rolls(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        sheet = self.validate_sheet(sheet)
        best = max(
            INSIGHT_ABILITIES, key=lambda a: _lookup(sheet["abilities"], a) or 0, default=None
        )
        choices = [("d20", {})] + [(name, {"skill": name}) for name in sheet["skills"]]
        choices.append((f"Insight ({best.capitalize()})", {"insight": best}))
        return [self._quick_roll(label, sheet, settings, options) for label, options in choices]

    def starting_pool(
        self, levels: Sequence[int], settings: Mapping[str, Any]
    ) -> list[tuple[int, int]]:
        """A player's starting pool under the campaign's multi-character setting."""
        settings = self.validate_settings(settings)
        return player_pool(
            levels, option=settings["multi_character"], balanced_choice=settings["balanced_choice"]
        )


def _lookup(table: Mapping[str, int], name: Any) -> int | None:
    """A sheet entry by name, ignoring case."""
    if not isinstance(name, str):
        return None
    if name in table:
        return table[name]
    for key, value in table.items():
        if key.lower() == name.lower():
            return value
    return None


ZORIA = Zoria()
