"""Zoria: the game system (request, roll, odds, sheets)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from .. import system
from ..dice import parse_die
from ..dist import Budget, Dist
from ..errors import OddsTooLarge, RuleError
from ..fair import DiceSource
from ..limits import MAX_DICE, MAX_MODIFIER
from ..notation import Expression, evaluate, joint_with_first_die, parse
from ..odds import OddsAnswer
from ..results import meet_or_beat
from ..schema import Field, whole_number
from ..system import QuickRoll, passed_on
from .fields import (
    ACTION_DICE,
    BALANCED_CHOICES,
    FLAGS,
    INSIGHT_ABILITIES,
    MAX_LEVEL,
    MULTI_OPTIONS,
    ODDS_MAX_ACTION_DICE,
    REQUEST_FIELDS,
    SPECIAL_BOTCH_MARGIN,
    THREAT_SIDES,
)
from .odds import action_law
from .pools import checked_level, player_pool
from .roll import roll_action_die, threat_die, threat_flags
from .text import check_notation, roll_line


class Zoria(system.GameSystem):
    id = "zoria"
    title = "Zoria RPG (action dice)"
    summary = (
        "A d20 check plus cascading action dice from per-session pools; natural rolls raise "
        "critical and botch threats for the pools to activate."
    )
    outcome = "total"
    flags = FLAGS
    request_fields = REQUEST_FIELDS
    sheet_fields = (
        Field("level", "int", label="Level", default=1, min=0, max=MAX_LEVEL),
        Field("class", "text", label="Class", default="", max_length=100),
        Field(
            "abilities",
            "counts",
            max_items=50,
            label="Ability modifiers",
            help="Ability name -> modifier (Reason, Intuition and Knowledge feed insight rolls).",
            default={},
            min=-1000,
            max=1000,
        ),
        Field(
            "skills",
            "counts",
            max_items=200,
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
        natural = check.dice[0]["value"] if threat_die(expr) else None
        dice = list(check.dice)
        action_values = []
        capped = check.capped
        for die in req["action_dice"]:
            records = roll_action_die(parse_die(die, field="action_dice"), source)
            capped = capped or any(r.get("capped") for r in records)
            action_values.append(sum(r["value"] for r in records))
            dice += records
        total = check.value + sum(action_values)
        flags = threat_flags(natural, req)
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
        return roll_line(result)

    # -- odds ------------------------------------------------------------------------------

    def _odds(self, request: Any, budget: Budget) -> OddsAnswer:
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
            natural_mass = sum(law.values(), Fraction(0))
            for flag in threat_flags(natural, req):
                events[flag] += natural_mass
            for t, p in law.items():
                check[t] = check.get(t, Fraction(0)) + p
        total_law: Mapping[int, Fraction | float] = check
        if req["action_dice"]:
            floats = {t: float(p) for t, p in check.items()}
            action = action_law(req["action_dice"], budget)
            total_law = Dist(floats, 1).convolve(action, budget, "this check").w
        mass = sum(total_law.values(), 0)
        dc = req["dc"]
        p_success = None
        if dc is not None:
            p_success = sum(p for t, p in total_law.items() if t >= dc) / mass
            events["special-botch-threat"] = (
                sum(p for t, p in total_law.items() if t <= dc - SPECIAL_BOTCH_MARGIN) / mass
            )
        return self._odds_answer(req, total_law, p_success, events)

    # -- sheets ----------------------------------------------------------------------------

    def _from_checked(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Options: one of ``skill`` (a skill name), ``ability`` (an ability name) or
        ``insight`` (Reason, Intuition or Knowledge: 1d20 + level + that modifier); then
        ``modifier``, ``dc``, ``action_dice``, ``crit_range``, ``botch_range``."""
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
            "check": check_notation(bonus + modifier),
            **passed_on(options, ("dc", "action_dice", "crit_range", "botch_range")),
        }
        return self.normalise(request)

    def quick_rolls(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any]
    ) -> list[QuickRoll]:
        sheet = self.validate_sheet(sheet)
        settings = self.validate_settings(settings)  # (once, for all the rolls)
        best = max(INSIGHT_ABILITIES, key=lambda a: _lookup(sheet["abilities"], a) or 0)
        choices: list[tuple[str, dict[str, str]]] = [("d20", {})]
        choices += [(name, {"skill": name}) for name in sheet["skills"]]
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


def insight_request(
    level: int, modifier: int = 0, *, dc: int | None = None, action_dice: Sequence[str] = ()
) -> dict[str, Any]:
    """The GM's insight roll, 1d20 + character level + Reason, Intuition or Knowledge modifier,
    as a normalised ``zoria`` request."""
    level = checked_level(level, "level")
    modifier = whole_number(modifier, "modifier")
    return ZORIA.normalise(
        {"check": check_notation(level + modifier), "action_dice": list(action_dice), "dc": dc}
    )
