"""The Action Dice System: the game system (request, roll, odds, sheets)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import system
from ..dice import DieRecord, draw
from ..dist import Budget, Dist
from ..errors import OddsTooLarge, RuleError
from ..fair import DiceSource
from ..limits import MAX_DICE
from ..odds import OddsAnswer, from_weights
from ..open_ended import roll_open_ended
from ..results import meet_or_beat
from ..schema import Field
from ..system import QuickRoll, passed_on
from .fields import (
    ODDS_MAX_ACTION,
    ODDS_MAX_DICE,
    ODDS_MAX_KEEP_ACTION,
    ODDS_MAX_KEEP_POOL,
    REQUEST_FIELDS,
    average_total,
    dice_plan,
)
from .odds import keep_top
from .sheets import SHEET_OPTIONS, TRAIT_GROUPS, TRAIT_MAP, format_trait, parse_trait
from .text import roll_line


class ActionDice(system.GameSystem):
    id = "action-dice"
    title = "Action Dice System"
    summary = (
        "Open-ended d6 action dice plus d6 skill dice, summed against a difficulty; the "
        "margin is the degree of success. Maximum dice, passive attributes, averages."
    )
    outcome = "total"
    flags = ()
    request_fields = REQUEST_FIELDS
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
            fields=TRAIT_MAP,
        ),
        Field(
            "skills",
            "map",
            label="Skills",
            help="Name -> dice, e.g. Driving: +1d6.",
            default={},
            max_items=500,
            fields=TRAIT_MAP,
        ),
        Field(
            "combat_skills",
            "map",
            label="Combat skills",
            help="Name -> dice, e.g. Fencing: +7d6; the best one sets the defense rating.",
            default={},
            max_items=100,
            fields=TRAIT_MAP,
        ),
        Field(
            "restricted_dice",
            "counts",
            max_items=50,
            label="Restricted / specialized action dice",
            help="Class of actions or skill -> action dice of their own each round.",
            default={},
            min=0,
            max=20,
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
        plan = dice_plan(req)
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
                if record["group"] in dropped:
                    record["dropped"] = True
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
        return roll_line(result)

    # -- odds ------------------------------------------------------------------------------

    def _odds(self, request: Any, budget: Budget) -> OddsAnswer:
        req = self.normalise(request)
        plan = dice_plan(req)
        shift = plan["flat"] + req["modifier"]
        if req["average"]:
            law = Dist.point(average_total(plan["counted"]))
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
            law = keep_top(
                plan["action"],
                req["skill_dice"],
                plan["counted"],
                budget=budget.naming("skill_dice"),
            )
        distribution, p_success = from_weights(*law.shifted(shift).dense(), req["difficulty"])
        return self._odds_answer(req, distribution, p_success, {})

    # -- sheets ----------------------------------------------------------------------------

    def validate_sheet(self, sheet: Any) -> dict[str, Any]:
        out = super().validate_sheet(sheet)
        for group in TRAIT_GROUPS:
            # A new mapping: the field's default must never be changed in place.
            out[group] = {
                name: format_trait(parse_trait(text, field=f"sheet.{group}.{name}"))
                for name, text in out[group].items()
            }
        return out

    def _from_checked(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Options: ``trait`` (an attribute, skill or combat skill on the sheet), and
        ``action_dice`` (default 1 for a trait that needs an action, 0 for a passive one; never
        more than the sheet's), ``sequence``, ``modifier``, ``difficulty``, ``average``
        (default: the campaign's ``average_passive`` for a passive roll)."""
        self._check_options(options, SHEET_OPTIONS)
        name = options.get("trait")
        found = next((g for g in TRAIT_GROUPS if isinstance(name, str) and name in sheet[g]), None)
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
    ) -> list[QuickRoll]:
        sheet = self.validate_sheet(sheet)
        settings = self.validate_settings(settings)  # (once, for all the rolls)
        return [
            self._quick_roll(f"{name} {text}", sheet, settings, {"trait": name})
            for group in TRAIT_GROUPS
            for name, text in sheet[group].items()
        ]


ACTION_DICE = ActionDice()
