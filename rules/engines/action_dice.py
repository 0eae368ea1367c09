"""The Action Dice System (RULES.md section 7).

Open-ended d6 action dice plus plain d6 skill dice, summed and compared with a difficulty
(meet or beat; ``degree`` = total - difficulty). Outside an action sequence one action die is
rolled and each further one adds a flat +1. ``max_dice`` counts only the highest dice; a
passive roll (no action dice) may take its average instead of being rolled.

Draw order in ``dice``: each action die in turn with its re-rolls right after it, then the skill
dice. Every record carries ``group``, the index of the die it belongs to (0, 1, ... in draw
order), so an action die and its re-rolls (``"exploded": true``) share one group: they are one
die. When ``max_dice`` leaves dice out, every record of a die that does not count has
``"dropped": true`` (the role stays ``action`` or ``skill``).

Exact odds: see ``keep_top`` for the ``max_dice`` case; without it the sum is the shared
open-ended d6 law of ``open_ended.open_ended_counts``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from itertools import repeat
from operator import add, mul
from typing import Any

from . import system
from .dice import DieRecord, draw
from .dist import Budget
from .errors import OddsTooLarge, RuleError
from .fair import DiceSource
from .limits import MAX_CHAIN, MAX_DICE, MAX_MODIFIER
from .odds import convolve_weights, from_weights
from .open_ended import CHAIN_EPS, open_ended_counts, roll_open_ended, uniform_counts
from .results import meet_or_beat, with_notes
from .schema import Field, whole_number
from .system import passed_on

# Exact-odds caps (measured on 2 cores; the worst cases inside them take 55-90 ms): a plain
# sum of up to ODDS_MAX_DICE dice, at most ODDS_MAX_ACTION of them action dice; with max_dice
# leaving dice out, up to ODDS_MAX_KEEP_POOL dice rolled, at most ODDS_MAX_KEEP_ACTION action.
ODDS_MAX_DICE = 400
ODDS_MAX_ACTION = 50
ODDS_MAX_KEEP_POOL = 30
ODDS_MAX_KEEP_ACTION = 10

BASE_DEFENSE = 4  # the base difficulty to hit a moving, human-sized target

Dist = tuple[int, list[int], int]  # (lowest value, weights, exponent): P(lowest+i) = w[i]/6**exp


# -- exact keep-highest of open-ended and plain d6 ---------------------------------------------


def _mix(pieces: list[Dist]) -> Dist:
    """Sum of weighted pieces, brought to one exponent."""
    exp = max(p[2] for p in pieces)
    lowest = min(p[0] for p in pieces)
    out = [0] * (max(p[0] + len(p[1]) for p in pieces) - lowest)
    for off, weights, e in pieces:
        scale = 6 ** (exp - e)
        lo = off - lowest
        hi = lo + len(weights)
        out[lo:hi] = map(add, out[lo:hi], map(mul, weights, repeat(scale)))
    return lowest, out, exp


def _place_down(
    count: int, keep: int, states: dict[int, tuple[int, list[int]]], top_face: int, out: list[int]
) -> None:
    """Place the rest of ``count`` dice on faces ``top_face``..1, highest first, into ``out``.

    ``states`` maps dice placed so far (fewer than ``keep``) to ``(lowest, ways)``: ways by
    kept sum from ``lowest`` up. At each face some of the dice left land on it; once ``keep``
    dice are placed, the others only need to show less than that face, which is a single
    count, so states stay below ``keep``. Each die left has one way per face, whatever its
    size was.
    """
    size = len(out)
    for face in range(top_face, 0, -1):
        acc: dict[int, list[int]] = {}
        span: dict[int, tuple[int, int]] = {}
        for placed, (lo, ways) in states.items():
            left = count - placed
            need = keep - placed
            width = len(ways)
            done = sum(math.comb(left, t) * (face - 1) ** (left - t) for t in range(need, left + 1))
            if done:
                at = lo + need * face
                out[at : at + width] = map(add, out[at : at + width], map(mul, ways, repeat(done)))
            if face == 1:
                continue  # every die is placed by the last face
            for t in range(min(left, need - 1) + 1):
                q = placed + t
                arr = acc.get(q)
                if arr is None:
                    arr = acc[q] = [0] * size
                at = lo + t * face
                part = map(mul, ways, repeat(math.comb(left, t))) if t else ways
                arr[at : at + width] = map(add, arr[at : at + width], part)
                first, last = span.get(q, (at, at + width))
                span[q] = (min(first, at), max(last, at + width))
        states = {q: (span[q][0], arr[span[q][0] : span[q][1]]) for q, arr in acc.items()}


def top_uniform(count: int, keep: int, faces: int) -> tuple[int, list[int]]:
    """Ways the highest ``keep`` of ``count`` dice with faces 1..faces add to each sum, as
    ``(lowest, ways)``."""
    if keep <= 0:
        return 0, [faces**count]
    if keep >= count:
        return count, uniform_counts(count, faces)
    out = [0] * (faces * keep + 1)
    _place_down(count, keep, {0: (0, [1])}, faces, out)
    return keep, out[keep:]


def top_plain(low: int, sixes: int, keep: int) -> tuple[int, list[int]]:
    """Ways the highest ``keep`` of ``low`` dice on faces 1..5 and ``sixes`` d6 add to each sum
    (the action dice that stopped below 6, and the skill dice), as ``(lowest, ways)``.

    Only the d6 can show 6, so face 6 is placed first for them alone; below it every die left
    is alike.
    """
    count = low + sixes
    if keep <= 0:
        return 0, [5**low * 6**sixes]
    if keep >= count:
        return count, uniform_counts(low, 5, uniform_counts(sixes, 6))
    out = [0] * (6 * keep + 1)
    states: dict[int, tuple[int, list[int]]] = {}
    for j in range(sixes + 1):
        ways = math.comb(sixes, j)
        if j >= keep:
            out[6 * keep] += ways * 5 ** (count - j)
        else:
            states[j] = (6 * j, [ways])
    _place_down(count, keep, states, 5, out)
    return keep, out[keep:]


def keep_top(action: int, skill: int, keep: int, memo: dict[Any, Any] | None = None) -> Dist:
    """Exact law of the sum of the highest ``keep`` of ``action`` open-ended d6 and ``skill``
    plain d6 (an open-ended die counts as one die, with its whole value).

    Every die first shows a face 1..6. An action die on 6 is "high": 6 + a fresh open-ended
    die, so it beats every other die (which show at most 6). So with H high action dice the
    kept dice are the best min(H, keep) high dice (6 each plus the best of H fresh open-ended
    dice: the same question, smaller) and the best of the others, which are the skill dice and
    the action dice that stopped on 1..5 (``top_plain``). When every action die is high and
    there are no skill dice the question repeats itself 6 x keep higher with chance 6^-action;
    that geometric series is summed until its tail is below CHAIN_EPS.
    """
    memo = {} if memo is None else memo
    if keep >= action + skill:
        key: tuple[Any, ...] = ("sum", action, skill)
        if key not in memo:
            memo[key] = open_ended_counts(action, skill)
        return memo[key]
    key = (action, skill, keep)
    if key in memo:
        return memo[key]
    repeats_itself = skill == 0 and action > keep
    pieces: list[Dist] = []
    for high in range(action + 1):
        if repeats_itself and high == action:
            continue
        h = min(high, keep)
        top_low, top_w, top_exp = keep_top(high, 0, h, memo)
        rest_low, rest_w = top_plain(action - high, skill, keep - h)
        weights = convolve_weights(top_w, rest_w)
        coef = math.comb(action, high)
        if coef != 1:
            weights = [w * coef for w in weights]
        pieces.append((top_low + rest_low + 6 * h, weights, top_exp + action + skill))
    lowest, weights, exp = _mix(pieces)
    if repeats_itself:
        reps = 0
        while 6.0 ** (-action * (reps + 1)) >= CHAIN_EPS:
            reps += 1
        step = 6 * keep
        width = len(weights)
        out = [0] * (width + step * reps)
        for i in range(reps + 1):
            coef = 6 ** (action * (reps - i))
            lo = step * i
            out[lo : lo + width] = map(add, out[lo : lo + width], map(mul, weights, repeat(coef)))
        weights, exp = out, exp + action * reps
    memo[key] = (lowest, weights, exp)
    return memo[key]


# -- request ---------------------------------------------------------------------------------

_REQUEST_FIELDS: tuple[Field, ...] = (
    Field(
        "action_dice",
        "int",
        label="Action dice",
        help="Open-ended d6 (a 6 rolls again and adds). 0 for a passive attribute.",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "skill_dice",
        "int",
        label="Skill dice",
        help="Plain d6 of the skill or attribute (the 4 of +4d6).",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "max_dice",
        "int",
        label="Maximum dice",
        help="The (5d6) of +4d6 (5d6): only the highest this many dice count.",
        default=None,
        nullable=True,
        min=1,
        max=MAX_DICE,
    ),
    Field(
        "sequence",
        "bool",
        label="In an action sequence",
        help="Outside one, only one action die is rolled and each further one adds +1.",
        default=True,
    ),
    Field(
        "modifier",
        "int",
        label="Modifier",
        default=0,
        min=-MAX_MODIFIER,
        max=MAX_MODIFIER,
    ),
    Field(
        "difficulty",
        "int",
        label="Difficulty",
        help="A fixed number or another character's total; meet or beat it.",
        default=None,
        nullable=True,
        min=-MAX_MODIFIER,
        max=MAX_MODIFIER,
    ),
    Field(
        "average",
        "bool",
        label="Take the average",
        help="Passive rolls only: 3.5 per die counted, rounded up, no dice rolled.",
        default=False,
    ),
)


def _plan(req: Mapping[str, Any]) -> dict[str, int]:
    action = req["action_dice"]
    rolled_action = action if req["sequence"] else min(action, 1)
    flat = 0 if req["sequence"] else max(action - 1, 0)
    rolled = rolled_action + req["skill_dice"]
    counted = rolled if req["max_dice"] is None else min(rolled, req["max_dice"])
    return {"action": rolled_action, "flat": flat, "rolled": rolled, "counted": counted}


def average_total(dice: int) -> int:
    """ceil(3.5 x dice): 7 per 2d6, +4 for an odd die."""
    return (7 * dice + 1) // 2


# -- combat helpers ---------------------------------------------------------------------------


def defense_rating(best_combat_skill_dice: int, resisting_attribute_dice: int = 0) -> int:
    """Difficulty to hit a character: 4 + dice of the best combat skill, +1 per die of a
    passive attribute that resists the attack."""
    best = whole_number(best_combat_skill_dice, "best_combat_skill_dice", minimum=0)
    resisting = whole_number(resisting_attribute_dice, "resisting_attribute_dice", minimum=0)
    return BASE_DEFENSE + best + resisting


def round_defense(
    defense_action_total: int | None = None, general_defense_total: int | None = None
) -> dict[str, int]:
    """What a round's defensive actions add to the defense rating.

    A defense action adds its whole total against the one opponent it targets; a general
    defense adds half its total (rounded down) against everyone. They do not stack: against
    the targeted opponent the better of the two counts.
    """
    specific = (
        None
        if defense_action_total is None
        else whole_number(defense_action_total, "defense_action_total")
    )
    general = (
        0
        if general_defense_total is None
        else whole_number(general_defense_total, "general_defense_total") // 2
    )
    against_opponent = general if specific is None else max(specific, general)
    return {"against_opponent": against_opponent, "against_everyone_else": general}


def group_attack(total: int, extra_action_dice: int = 0) -> dict[str, int]:
    """A group attack: half the total (rounded down) applies to every member of the group;
    each extra action die committed (not rolled) adds the usual number of targets again."""
    total = whole_number(total, "total")
    extra = whole_number(extra_action_dice, "extra_action_dice", minimum=0)
    return {"per_member": total // 2, "target_multiplier": 1 + extra}


# -- sheets ----------------------------------------------------------------------------------

_TRAIT = re.compile(
    r"^\s*(\+)?\s*(\d{1,4})\s*[dD]6?\s*(?:\(\s*(\d{1,4})\s*[dD]6?\s*(?:;[^)]*)?\))?\s*$"
)


def parse_trait(text: str, *, field: str) -> dict[str, Any]:
    """``"+4d6 (5d6)"`` -> active (added to action dice), 4 dice, at most 5 counted;
    ``"2d6"`` -> passive (no action die), 2 dice. A note after ``;`` in the brackets
    (``"+2d6 (3d6; 12m)"``) is allowed and ignored."""
    match = _TRAIT.match(text) if isinstance(text, str) else None
    if match is None:
        raise RuleError(field, f"expected dice like '+4d6', '+4d6 (5d6)' or '2d6', got {text!r}")
    dice = int(match.group(2))
    most = None if match.group(3) is None else int(match.group(3))
    if dice > MAX_DICE or (most is not None and not 1 <= most <= MAX_DICE):
        raise RuleError(field, f"dice counts run up to {MAX_DICE}")
    return {"active": match.group(1) == "+", "dice": dice, "max_dice": most}


def format_trait(trait: Mapping[str, Any]) -> str:
    text = ("+" if trait["active"] else "") + f"{trait['dice']}d6"
    if trait["max_dice"] is not None:
        text += f" ({trait['max_dice']}d6)"
    return text


def new_round(sheet: Mapping[str, Any]) -> int:
    """Action dice a character has at the start of a round."""
    return whole_number(sheet.get("action_dice", 0), "sheet.action_dice", minimum=0)


def spend_action_dice(left: int, count: int = 1) -> int:
    """Commit ``count`` action dice this round (rolled, or spent on a group attack's targets);
    returns how many are left."""
    left = whole_number(left, "action_dice_left", minimum=0)
    count = whole_number(count, "count", minimum=1)
    if count > left:
        raise RuleError("action_dice_left", f"only {left} action dice left this round")
    return left - count


_TRAIT_MAP = (Field("trait", "text", max_length=40),)
_GROUPS = ("attributes", "skills", "combat_skills")
_OPTIONS = frozenset({"trait", "action_dice", "sequence", "modifier", "difficulty", "average"})


class ActionDice(system.GameSystem):
    id = "action-dice"
    title = "Action Dice System"
    summary = (
        "Open-ended d6 action dice plus d6 skill dice, summed against a difficulty; the "
        "margin is the degree of success. Maximum dice, passive attributes, averages."
    )
    outcome = "total"
    flags = ()
    request_fields = _REQUEST_FIELDS
    sheet_fields = (
        Field(
            "action_dice",
            "int",
            label="Action dice",
            help="Per round: 1 for ordinary people, 2 trained, 3-4 heroes and villains.",
            default=1,
            min=0,
            max=20,
        ),
        Field(
            "attributes",
            "map",
            label="Attributes",
            help="Name -> dice: '+4d6 (5d6)' needs an action, '2d6' is passive.",
            default={"Strength": "+0d6 (1d6)", "Toughness": "0d6", "Running": "+2d6 (3d6)"},
            max_items=100,
            fields=_TRAIT_MAP,
        ),
        Field(
            "skills",
            "map",
            label="Skills",
            help="Name -> dice, e.g. Driving: +1d6.",
            default={},
            max_items=500,
            fields=_TRAIT_MAP,
        ),
        Field(
            "combat_skills",
            "map",
            label="Combat skills",
            help="Name -> dice, e.g. Fencing: +7d6; the best one sets the defense rating.",
            default={},
            max_items=100,
            fields=_TRAIT_MAP,
        ),
    )
    settings_fields = (
        Field(
            "average_passive",
            "bool",
            label="Passive attributes roll average",
            help="Passive attributes take 3.5 per die (rounded up) instead of being rolled.",
            default=False,
        ),
    )
    resources = (
        Field(
            "action_dice_left",
            "int",
            label="Action dice left this round",
            help="Back to the sheet's action dice at the start of each round.",
            default=0,
            min=0,
            max=20,
        ),
    )

    # -- request ---------------------------------------------------------------------------

    def normalise(self, request: Any) -> dict[str, Any]:
        req = super().normalise(request)
        if req["action_dice"] + req["skill_dice"] > MAX_DICE:
            raise RuleError(
                "skill_dice",
                f"at most {MAX_DICE} dice in one request, got "
                f"{req['action_dice'] + req['skill_dice']} (action and skill dice)",
            )
        if req["average"] and req["action_dice"]:
            raise RuleError("average", "only a passive roll (no action dice) may take the average")
        return req

    # -- roll ------------------------------------------------------------------------------

    def _roll(self, request: Any, source: DiceSource) -> dict[str, Any]:
        req = self.normalise(request)
        plan = _plan(req)
        dice: list[DieRecord] = []
        capped = False
        if req["average"]:
            counted_total = average_total(plan["counted"])
        else:
            values: list[int] = []
            for group in range(plan["action"]):
                records, value, cut = roll_open_ended(source, "action", group=group)
                dice += records
                values.append(value)
                capped = capped or cut
            for group in range(plan["action"], plan["rolled"]):
                record = draw(source, 6, "skill", group=group)
                dice.append(record)
                values.append(record["value"])
            # The highest dice count; between equal values the one drawn first.
            order = sorted(range(len(values)), key=lambda g: (-values[g], g))
            dropped = set(order[plan["counted"] :])
            for record in dice:
                if record["group"] in dropped:  # type: ignore[typeddict-item]
                    record["dropped"] = True  # type: ignore[typeddict-unknown-key]
            counted_total = sum(v for g, v in enumerate(values) if g not in dropped)
        total = counted_total + plan["flat"] + req["modifier"]
        difficulty = req["difficulty"]
        return self._result(
            req,
            dice=dice,
            total=total,
            successes=None,
            outcome=meet_or_beat(total, difficulty),
            flags=[],
            degree=None if difficulty is None else total - difficulty,
            counted=plan["counted"],
            flat_bonus=plan["flat"],
            capped=capped,
        )

    def describe(self, result: Mapping[str, Any]) -> str:
        req = result["request"]
        action = req["action_dice"]
        # Written as on a sheet: "+4d6 (5d6)" added to action dice, "2d6" for a passive roll.
        head = f"{action} action {'die' if action == 1 else 'dice'} +" if action else ""
        head += f"{req['skill_dice']}d6"
        if req["max_dice"] is not None:
            head += f" ({req['max_dice']}d6)"
        if action and not req["sequence"]:
            head += ", outside a sequence"
        if req["average"]:
            body = f"average of {result['counted']}d6"
        else:
            groups: dict[int, list[int]] = {}
            dropped = set()
            for d in result["dice"]:
                groups.setdefault(d["group"], []).append(d["value"])
                if d.get("dropped"):
                    dropped.add(d["group"])
            shown = [
                ("+".join(map(str, vals)) + (" (dropped)" if g in dropped else ""))
                for g, vals in groups.items()
            ]
            body = ", ".join(shown) if shown else "no dice"
        extra = []
        if result["flat_bonus"]:
            extra.append(f"+{result['flat_bonus']}")
        if req["modifier"]:
            extra.append(f"{req['modifier']:+d}")
        line = f"{head}: {body}"
        if extra:
            line += " " + " ".join(extra)
        line += f" = {result['total']}"
        if result["outcome"] is not None:
            line += f" vs {req['difficulty']}: {result['outcome']} (degree {result['degree']})"
        notes = []
        if result.get("capped"):
            notes.append(f"an action die stopped at the {MAX_CHAIN}-roll cap")
        return with_notes(line, notes)

    # -- odds ------------------------------------------------------------------------------

    def _odds(self, request: Any, budget: Budget) -> dict[str, Any]:
        req = self.normalise(request)
        plan = _plan(req)
        shift = plan["flat"] + req["modifier"]
        if req["average"]:
            lowest, weights = average_total(plan["counted"]) + shift, [1]
        else:
            if plan["counted"] == plan["rolled"]:
                if plan["rolled"] > ODDS_MAX_DICE or plan["action"] > ODDS_MAX_ACTION:
                    raise OddsTooLarge(
                        "skill_dice",
                        f"exact odds go up to {ODDS_MAX_DICE} dice, {ODDS_MAX_ACTION} of them "
                        f"action dice; this roll has {plan['rolled']} ({plan['action']} action)",
                    )
            elif plan["rolled"] > ODDS_MAX_KEEP_POOL or plan["action"] > ODDS_MAX_KEEP_ACTION:
                raise OddsTooLarge(
                    "max_dice",
                    f"exact odds with max_dice leaving dice out go up to {ODDS_MAX_KEEP_POOL} "
                    f"dice, {ODDS_MAX_KEEP_ACTION} of them action dice; this roll has "
                    f"{plan['rolled']} ({plan['action']} action)",
                )
            lowest, weights, _ = keep_top(plan["action"], req["skill_dice"], plan["counted"])
            lowest += shift
        distribution, p_success = from_weights(lowest, weights, req["difficulty"])
        return self._odds_answer(req, distribution, p_success, {})

    # -- sheets ----------------------------------------------------------------------------

    def validate_sheet(self, sheet: Any) -> dict[str, Any]:
        out = super().validate_sheet(sheet)
        for group in _GROUPS:
            # A new mapping: the field's default must never be changed in place.
            out[group] = {
                name: format_trait(parse_trait(text, field=f"sheet.{group}.{name}"))
                for name, text in out[group].items()
            }
        return out

    def request_from_sheet(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Options: ``trait`` (an attribute, skill or combat skill on the sheet), and
        ``action_dice`` (default 1 for a trait that needs an action, 0 for a passive one; never
        more than the sheet's), ``sequence``, ``modifier``, ``difficulty``, ``average``
        (default: the campaign's ``average_passive`` for a passive roll)."""
        sheet = self.validate_sheet(sheet)
        settings = self.validate_settings(settings)
        self._check_options(options, _OPTIONS)
        name = options.get("trait")
        found = next((g for g in _GROUPS if isinstance(name, str) and name in sheet[g]), None)
        if found is None:
            raise RuleError("options.trait", f"no attribute or skill named {name!r} on the sheet")
        trait = parse_trait(sheet[found][name], field=f"sheet.{found}.{name}")
        action = options.get("action_dice", min(1, sheet["action_dice"]) if trait["active"] else 0)
        if (
            isinstance(action, int)
            and not isinstance(action, bool)
            and action > sheet["action_dice"]
        ):
            raise RuleError(
                "options.action_dice", f"the character has {sheet['action_dice']} action dice"
            )
        request: dict[str, Any] = {
            "action_dice": action,
            "skill_dice": trait["dice"],
            "max_dice": trait["max_dice"],
            **passed_on(options, ("sequence", "modifier", "difficulty", "average")),
        }
        if "average" not in options and action == 0 and settings["average_passive"]:
            request["average"] = True
        return self.normalise(request)

    def quick_rolls(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        sheet = self.validate_sheet(sheet)
        return [
            self._quick_roll(f"{name} {text}", sheet, settings, {"trait": name})
            for group in _GROUPS
            for name, text in sheet[group].items()
        ]


ACTION_DICE = ActionDice()
