"""Sunrider D6 with the Chance Die.

Staged actions take 3D per extra action from the base dice; bonus dice (bonuses, doubled time,
synergy) are capped at the base; a Character Point doubles the base dice only. One of the dice
is the Chance Die: a 6 on it explodes (add 6, roll it again, as long as 6s come) and a 1 on its
first toss is a complication.

Draw order in ``dice``: the Chance Die first, then its re-rolls (``"exploded": true``), then the
base dice, then the bonus dice. The Chance Die is one of the base dice, so a 4D roll draws the
Chance Die and three ``base`` dice.

Exact odds: the sum of the ordinary dice is counted exactly (integer ways), the Chance Die is
summed over its chain until the tail left out is below the odds tail (see
``open_ended.open_ended_law``, shared with the Action Dice System).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from . import system
from .dice import draw
from .dist import Budget
from .errors import OddsTooLarge, RuleError
from .fair import DiceSource
from .limits import MAX_CHAIN, MAX_DICE, MAX_MODIFIER
from .odds import OddsAnswer, from_weights
from .open_ended import open_ended_law, roll_open_ended
from .results import meet_or_beat, with_notes
from .schema import Field, whole_number
from .system import QuickRoll, passed_on

# Rushing a task: percent less time -> difficulty added. 25% is the least time a task can take.
RUSH = {0: 0, 25: 5, 50: 10, 75: 20}
STAGED_PENALTY = 3  # dice lost per action after the first
SYNERGY_STEP = 5  # 1D of synergy per full 5D of the complementary skill

# Exact odds count every way the ordinary dice can fall; past this many dice the integers grow
# too long to answer in about 100 ms (measured on 2 cores: 400 dice take 60-80 ms).
ODDS_MAX_DICE = 400

FLAGS = ("complication",)


# -- request ---------------------------------------------------------------------------------

_REQUEST_FIELDS: tuple[Field, ...] = (
    Field(
        "dice",
        "int",
        label="Dice",
        help="The skill or attribute's dice (the 4 of 4D+2; pips go in the modifier).",
        required=True,
        min=1,
        max=MAX_DICE,
    ),
    Field(
        "bonus",
        "int",
        label="Bonus dice",
        help="Bonus dice from advantages, species, gear, spells; capped with the rest at the base.",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "time_doublings",
        "int",
        label="Time doublings",
        help="+1D for each doubling of the time spent.",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "synergy",
        "int",
        label="Synergy skill dice",
        help="Dice of a complementary skill: +1D per full 5D.",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "character_point",
        "bool",
        label="Character Point",
        help="Spent before the roll: doubles the base dice (not the bonus dice).",
        default=False,
    ),
    Field(
        "actions",
        "int",
        label="Actions this round",
        help="-3D per action after the first.",
        default=1,
        min=1,
        max=MAX_DICE,
    ),
    Field(
        "modifier",
        "int",
        label="Modifier",
        help="Pips and other flat additions.",
        default=0,
        min=-MAX_MODIFIER,
        max=MAX_MODIFIER,
    ),
    Field(
        "difficulty",
        "int",
        label="Difficulty",
        help="Meet or beat it.",
        default=None,
        nullable=True,
        min=-MAX_MODIFIER,
        max=MAX_MODIFIER,
    ),
    Field(
        "rush",
        "int",
        label="Rush (% less time)",
        help="25, 50 or 75% less time: +5, +10 or +20 difficulty.",
        default=0,
        choices=tuple(RUSH),
    ),
)


def _plan(req: Mapping[str, Any]) -> dict[str, int]:
    """Dice counts for a normalised request."""
    base = req["dice"] - STAGED_PENALTY * (req["actions"] - 1)
    bonus = req["bonus"] + req["time_doublings"] + req["synergy"] // SYNERGY_STEP
    bonus_dice = min(bonus, base)
    base_dice = base * (2 if req["character_point"] else 1)
    return {
        "base": base,
        "base_dice": base_dice,
        "bonus_dice": bonus_dice,
        "rolled": base_dice + bonus_dice,
    }


def _target(req: Mapping[str, Any]) -> int | None:
    difficulty: int | None = req["difficulty"]
    if difficulty is None:
        return None
    return difficulty + RUSH[req["rush"]]


# -- sheets ----------------------------------------------------------------------------------

_CODE = re.compile(r"^\s*(\d{1,4})\s*[dD]\s*(?:([+-])\s*(\d{1,7}))?\s*$")


def parse_code(text: str, *, field: str) -> tuple[int, int]:
    """A D6 die code: ``"4D+2"`` -> (4, 2); ``"3D"`` -> (3, 0); ``"2D-1"`` -> (2, -1)."""
    match = _CODE.match(text) if isinstance(text, str) else None
    if match is None:
        raise RuleError(field, f"expected a die code like '4D' or '4D+2', got {text!r}")
    dice = int(match.group(1))
    pips = int(match.group(3) or 0) * (-1 if match.group(2) == "-" else 1)
    if dice > MAX_DICE:
        raise RuleError(field, f"at most {MAX_DICE}D, got {dice}D")
    return dice, pips


def format_code(dice: int, pips: int) -> str:
    return f"{dice}D" + (f"{pips:+d}" if pips else "")


_CODE_MAP = (Field("code", "text", max_length=20),)

# Options that go into the request as they are.
_PASSED_ON = (
    "bonus",
    "time_doublings",
    "synergy",
    "character_point",
    "actions",
    "difficulty",
    "rush",
)

_OPTIONS = frozenset(
    {
        "skill",
        "attribute",
        "bonus",
        "time_doublings",
        "synergy",
        "synergy_skill",
        "character_point",
        "actions",
        "modifier",
        "difficulty",
        "rush",
    }
)


class D6Chance(system.GameSystem):
    id = "d6-chance"
    title = "Sunrider D6 (Chance Die)"
    summary = (
        "Roll a skill's D6 dice and add them up, meet or beat the difficulty; the Chance Die "
        "explodes on 6 and brings complications on a 1. Bonus dice up to the base, staged "
        "actions, Character Points."
    )
    outcome = "total"
    flags = FLAGS
    request_fields = _REQUEST_FIELDS
    sheet_fields = (
        Field(
            "attributes",
            "map",
            label="Attributes",
            help="Name -> die code, e.g. Strength: 3D+1.",
            default={},
            max_items=100,
            fields=_CODE_MAP,
        ),
        Field(
            "skills",
            "map",
            label="Skills",
            help="Name -> die code, e.g. Firearms: 4D+2.",
            default={},
            max_items=500,
            fields=_CODE_MAP,
        ),
        Field(
            "character_points",
            "int",
            label="Character Points",
            default=0,
            min=0,
            max=1000,
        ),
    )
    resources = (
        Field(
            "character_points",
            "int",
            label="Character Points",
            help="Spend one before a roll to double the base dice, or one to survive.",
            default=0,
            min=0,
            max=1000,
        ),
    )

    # -- request ---------------------------------------------------------------------------

    def normalise(self, request: Any) -> dict[str, Any]:
        req = super().normalise(request)
        plan = _plan(req)
        if plan["base"] <= 0:
            raise RuleError(
                "actions",
                f"{req['actions']} actions take {STAGED_PENALTY * (req['actions'] - 1)}D from "
                f"{req['dice']}D: the skill cannot be used (base {plan['base']}D)",
            )
        if plan["rolled"] > MAX_DICE:
            raise RuleError("dice", f"at most {MAX_DICE} dice in one request, got {plan['rolled']}")
        return req

    # -- roll ------------------------------------------------------------------------------

    def _roll(self, request: Any, source: DiceSource) -> dict[str, Any]:
        req = self.normalise(request)
        plan = _plan(req)
        dice, chance, capped = roll_open_ended(source, "chance")
        flags = ["complication"] if dice[0]["value"] == 1 else []
        for _ in range(plan["base_dice"] - 1):
            dice.append(draw(source, 6, "base"))
        for _ in range(plan["bonus_dice"]):
            dice.append(draw(source, 6, "bonus"))
        total = sum(d["value"] for d in dice) + req["modifier"]
        target = _target(req)
        return self._result(
            req,
            dice=dice,
            total=total,
            successes=None,
            outcome=meet_or_beat(total, target),
            flags=flags,
            base_dice=plan["base_dice"],
            bonus_dice=plan["bonus_dice"],
            chance=chance,
            target=target,
            capped=capped,
        )

    def describe(self, result: Mapping[str, Any]) -> str:
        req = result["request"]
        rolled = result["base_dice"] + result["bonus_dice"]
        head = format_code(rolled, req["modifier"])
        parts = [f"{result['base_dice']}D base"]
        if result["bonus_dice"]:
            parts.append(f"{result['bonus_dice']}D bonus")
        if req["character_point"]:
            parts.append("Character Point")
        chain = [str(d["value"]) for d in result["dice"] if d["role"] == "chance"]
        line = f"{head} ({', '.join(parts)}): Chance Die {'+'.join(chain)}, total {result['total']}"
        if result["target"] is not None:
            line += f" vs {result['target']}"
            if req["rush"]:
                line += f" ({req['difficulty']} +{RUSH[req['rush']]} rushed)"
            line += f": {result['outcome']}"
        notes = list(result["flags"])
        if result.get("capped"):
            notes.append(f"Chance Die chain stopped at the {MAX_CHAIN}-roll cap")
        return with_notes(line, notes)

    # -- odds ------------------------------------------------------------------------------

    def _odds(self, request: Any, budget: Budget) -> OddsAnswer:
        req = self.normalise(request)
        rolled = _plan(req)["rolled"]
        if rolled > ODDS_MAX_DICE:
            raise OddsTooLarge(
                "dice", f"exact odds go up to {ODDS_MAX_DICE} dice rolled, this roll has {rolled}"
            )
        law = open_ended_law(1, rolled - 1, budget.naming("dice")).shifted(req["modifier"])
        distribution, p_success = from_weights(*law.dense(), _target(req))
        # The Chance Die's first toss is a fair d6 whatever else happens.
        return self._odds_answer(req, distribution, p_success, {"complication": Fraction(1, 6)})

    # -- sheets ----------------------------------------------------------------------------

    def validate_sheet(self, sheet: Any) -> dict[str, Any]:
        out = super().validate_sheet(sheet)
        for group in ("attributes", "skills"):
            # A new mapping: the field's default must never be changed in place.
            out[group] = {
                name: format_code(*parse_code(code, field=f"sheet.{group}.{name}"))
                for name, code in out[group].items()
            }
        return out

    def _code(self, sheet: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[str, int, int]:
        skill, attribute = options.get("skill"), options.get("attribute")
        if (skill is None) == (attribute is None):
            raise RuleError("options.skill", "name one skill or one attribute from the sheet")
        group, key, name = (
            ("skills", "skill", skill)
            if skill is not None
            else ("attributes", "attribute", attribute)
        )
        if not isinstance(name, str) or name not in sheet[group]:
            raise RuleError(f"options.{key}", f"no {key} named {name!r} on the sheet")
        dice, pips = parse_code(sheet[group][name], field=f"sheet.{group}.{name}")
        return name, dice, pips

    def _from_checked(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Options: ``skill`` or ``attribute`` (a name on the sheet; its pips join the
        modifier), ``synergy_skill`` (a complementary skill on the sheet) or ``synergy`` (its
        dice), and any request field: ``bonus``, ``time_doublings``, ``character_point`` (needs
        a point left on the sheet), ``actions``, ``modifier``, ``difficulty``, ``rush``."""
        self._check_options(options, _OPTIONS)
        _, dice, pips = self._code(sheet, options)
        modifier = whole_number(options.get("modifier", 0), "options.modifier")
        request: dict[str, Any] = {"dice": dice, "modifier": pips + modifier}
        synergy_skill = options.get("synergy_skill")
        if synergy_skill is not None:
            if "synergy" in options:
                raise RuleError("options.synergy", "give synergy or synergy_skill, not both")
            if not isinstance(synergy_skill, str) or synergy_skill not in sheet["skills"]:
                raise RuleError("options.synergy_skill", f"no skill named {synergy_skill!r}")
            request["synergy"] = parse_code(sheet["skills"][synergy_skill], field="synergy")[0]
        request.update(passed_on(options, _PASSED_ON))
        if request.get("character_point") is True and sheet["character_points"] < 1:
            raise RuleError("options.character_point", "no Character Points left")
        return self.normalise(request)

    def quick_rolls(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any]
    ) -> list[QuickRoll]:
        sheet = self.validate_sheet(sheet)
        settings = self.validate_settings(settings)  # (once, for all the rolls)
        return [
            self._quick_roll(f"{name} {code}", sheet, settings, {key: name})
            for group, key in (("attributes", "attribute"), ("skills", "skill"))
            for name, code in sheet[group].items()
            if parse_code(code, field=name)[0] > 0  # 0D cannot be rolled
        ]


D6_CHANCE = D6Chance()
