"""Kingyak's Workshop: the game system (request, roll, odds, sheets)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import system
from ..dist import Budget
from ..errors import RuleError
from ..fair import DiceSource
from ..limits import MAX_DICE
from ..odds import OddsAnswer
from ..schema import Field
from ..system import QuickRoll, passed_on
from .fields import FLAGS, PC_DICE, PC_SIDES, REQUEST_FIELDS, TNS, count_dice, tidy_side
from .odds import SideOdds, check_odds_size, costly_chance, side_remaining
from .roll import roll_side
from .text import roll_line


class Discordian(system.GameSystem):
    id = "discordian"
    title = "Kingyak's Workshop (Discord Die)"
    summary = (
        "Pools of d4-d12 against a Target Number of 4, 5 or 6, Challenge Dice that cancel "
        "successes, the GM's Discord Die, the Law of Fives, lucky and bad breaks, flukes."
    )
    outcome = "net_successes"
    flags = FLAGS
    request_fields = REQUEST_FIELDS
    sheet_fields = (
        Field(
            "hero_dice",
            "dice",
            label="Hero Dice",
            help="From the Hero Factor; in every roll.",
            default=["d6"],
            choices=PC_DICE,
            max_items=50,
        ),
        Field(
            "tropes",
            "counts",
            max_items=50,
            label="Tropes",
            help="Trope name -> die size (4, 6, 8, 10 or 12); one trope die per roll.",
            default={},
            min=4,
            max=12,
        ),
        Field(
            "trademarks",
            "counts",
            max_items=50,
            label="Trademarks",
            help="Trademark name -> die size (4, 6, 8, 10 or 12); added when it applies.",
            default={},
            min=4,
            max=12,
        ),
        Field(
            "hooks",
            "text",
            label="Hooks",
            help="They set the TN of each roll.",
            default="",
            max_length=500,
        ),
        Field("tn", "int", label="Usual TN", default=5, choices=TNS),
        Field("luck_die", "die", label="Luck die", default="d6", choices=PC_DICE),
        Field(
            "infinite_fives",
            "bool",
            label="Law of Infinite Fives",
            help="An ability lets this character apply the Law of Infinite Fives to its rolls.",
            default=False,
        ),
        Field("luck", "int", label="Luck", default=0, min=0, max=1000),
        Field("instant_karma", "int", label="Instant Karma", default=0, min=0, max=1000),
    )
    settings_fields = (
        Field(
            "discord_mode",
            "choice",
            label="Discord Die",
            help="Rolled each round, or once per scene (then a wander-off lasts the adventure).",
            default="round",
            choices=("round", "scene"),
        ),
    )
    resources = (
        Field(
            "luck",
            "int",
            label="Luck",
            help="1 Luck: +1 success on a successful roll, or avoid a costly success.",
            default=0,
            min=0,
            max=1000,
        ),
        Field(
            "instant_karma",
            "int",
            label="Instant Karma",
            help="1 IK: add a luck die to a pool, or protect a die from the Discord Die; "
            "IK equal to the 1s avoids a costly success.",
            default=0,
            min=0,
            max=1000,
        ),
    )

    # -- request ---------------------------------------------------------------------------

    def normalise(self, request: Any) -> dict[str, Any]:
        req = super().normalise(request)
        if not req["pool"]:
            raise RuleError("pool", "needs at least one die")
        count = count_dice(req)
        opponent = req.pop("opponent", None)
        if opponent is not None:
            if not opponent["pool"]:
                raise RuleError("opponent.pool", "needs at least one die")
            count += count_dice(opponent)
            req["opponent"] = tidy_side(opponent)
        if count > MAX_DICE:
            raise RuleError("pool", f"at most {MAX_DICE} dice in one request, got {count}")
        return tidy_side(req)

    # -- roll ------------------------------------------------------------------------------

    def _roll(self, request: Any, source: DiceSource) -> dict[str, Any]:
        req = self.normalise(request)
        discord = req["discord"]
        own = roll_side(req, discord, source, 0, {})
        opp_req = req.get("opponent")
        dice = list(own["dice"])
        successes = own["successes"]
        flags = list(own["flags"])
        if opp_req is None:
            net = successes - own["challenge_hits"]
        else:
            opp = roll_side(opp_req, discord, source, len(dice), {"side": "opponent"})
            dice += opp["dice"]
            own_left = max(0, successes - own["challenge_hits"])
            opp_left = max(0, opp["successes"] - opp["challenge_hits"])
            net = own_left - opp_left
            opp_flags = list(opp["flags"])
            if net <= -1 and opp["ones"] > -net:
                opp_flags.append("costly")
        if net >= 1 and own["ones"] > net:
            flags.append("costly")
        pvp: dict[str, Any] = {}
        if opp_req is not None:
            pvp = {
                "remaining": own_left,
                "winner": "self" if net > 0 else "opponent" if net < 0 else None,
                "opponent": {
                    "successes": opp["successes"],
                    "challenge_hits": opp["challenge_hits"],
                    "remaining": opp_left,
                    "ones": opp["ones"],
                    "protected": opp["protected"],
                    "infinite_fives": opp["infinite_fives"],
                    "flags": opp_flags,
                },
            }
        return self._result(
            req,
            dice=dice,
            total=None,
            successes=successes,
            challenge_hits=own["challenge_hits"],
            net=net,
            fails=max(0, -net),
            outcome="success" if net >= 1 else "failure",
            flags=flags,
            ones=own["ones"],
            protected=own["protected"],
            discord=discord,
            infinite_fives=own["infinite_fives"],
            capped=own["capped"] or (opp_req is not None and opp["capped"]),
            **pvp,
        )

    def describe(self, result: Mapping[str, Any]) -> str:
        return roll_line(result)

    # -- odds ------------------------------------------------------------------------------

    def _odds(self, request: Any, budget: Budget) -> OddsAnswer:
        req = self.normalise(request)
        check_odds_size(req)
        opp_req = req.get("opponent")
        discord = req["discord"]
        own = SideOdds(req, discord, budget.naming("pool"))
        # The opponent's remaining successes, independent of this side (none when alone).
        against = (
            {0: 1.0} if opp_req is None else side_remaining(SideOdds(opp_req, discord, budget))
        )
        left = side_remaining(own, pvp=opp_req is not None)
        net: dict[int, float] = {}
        for n, pn in left.items():
            for r, pr in against.items():
                net[n - r] = net.get(n - r, 0.0) + pn * pr
        events = {flag: p / own.mass for flag, p in own.events.items()}
        events["costly"] = costly_chance(own, against)
        return self._odds_answer(req, net, sum(p for n, p in net.items() if n >= 1), events)

    # -- sheets ----------------------------------------------------------------------------

    def validate_sheet(self, sheet: Any) -> dict[str, Any]:
        out = super().validate_sheet(sheet)
        for group in ("tropes", "trademarks"):
            for name, sides in out[group].items():
                if sides not in PC_SIDES:
                    raise RuleError(f"sheet.{group}.{name}", f"die size must be one of {PC_SIDES}")
        return out

    def _from_checked(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Options: ``trope`` and ``trademark`` (names on the sheet), ``luck_dice`` (luck dice
        bought with Instant Karma), ``bonus_dice`` (GM's extra dice), ``tn`` (default the
        sheet's), ``challenge``, ``discord``, ``protect``, ``opponent`` (a request)."""
        known = {
            "trope", "trademark", "luck_dice", "bonus_dice", "tn", "challenge", "discord",
            "protect", "opponent", "infinite_fives",
        }  # fmt: skip
        self._check_options(options, known)
        pool = list(sheet["hero_dice"])
        for group, key in (("tropes", "trope"), ("trademarks", "trademark")):
            name = options.get(key)
            if name is None:
                continue
            if name not in sheet[group]:
                raise RuleError(f"options.{key}", f"no {key} named {name!r} on the sheet")
            pool.append(f"d{sheet[group][name]}")
        luck_dice = options.get("luck_dice", 0)
        if isinstance(luck_dice, bool) or not isinstance(luck_dice, int) or luck_dice < 0:
            raise RuleError("options.luck_dice", "expected a whole number, 0 or more")
        pool += [sheet["luck_die"]] * luck_dice
        bonus = options.get("bonus_dice", [])
        if not isinstance(bonus, list):
            raise RuleError("options.bonus_dice", "expected a list of dice like ['d6']")
        pool += bonus
        request: dict[str, Any] = {
            "pool": pool,
            "tn": options.get("tn", sheet["tn"]),
            "challenge": options.get("challenge", 0),
            "discord": options.get("discord"),
            "protect": options.get("protect", 0),
            "luck_die": sheet["luck_die"],
            **passed_on(options, ("opponent", "infinite_fives")),
        }
        return self.normalise(request)

    def quick_rolls(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any]
    ) -> list[QuickRoll]:
        sheet = self.validate_sheet(sheet)
        settings = self.validate_settings(settings)  # (once, for all the rolls)
        choices: list[tuple[str, dict[str, str]]] = []
        if sheet["hero_dice"]:
            choices.append(("Hero Dice", {}))
        choices += [(name, {"trope": name}) for name in sheet["tropes"]]
        return [
            self._quick_roll(f"{name} (TN {sheet['tn']})", sheet, settings, options)
            for name, options in choices
        ]


DISCORDIAN = Discordian()
