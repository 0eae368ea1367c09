"""Mana roll and keep.

Roll d10s, keep the highest ``keep`` of them (never more than were rolled), and count each kept
die that meets the difficulty as a success. ``required`` successes (default 1) make the roll a
success; no successes with any die showing 1 is a botch. Tens do not explode.

A request is either direct, ``{"roll", "keep", ...}``, or from a sheet, ``{"attribute",
"specialities", "mana", "colour", ...}``, which the engine turns into roll and keep (the
normalised request shows both). A directly opposed roll adds ``opponent: {"roll", "keep"}``
at the same difficulty.

Draw order in ``dice``: the roller's dice, then (opposed) the opponent's. Every die is
``kept`` or ``dropped``; among equal values the one drawn first is kept. A kept die that scores
has ``"success": true``; in an opposed roll every die has ``"side": "self"`` or ``"opponent"``.

Exact odds in closed form: the highest ``keep`` dice hold min(keep, X) successes where X, the
number of dice meeting the difficulty, is binomial; a botch is "every die below the difficulty,
not every die above 1". Counted in integers, so every pool up to the dice limit is answered.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from . import system
from .dice import DieMarks, DieRecord, Side, draw
from .dist import Budget, Dist
from .errors import RuleError
from .fair import DiceSource
from .limits import MAX_DICE, MAX_MODIFIER
from .odds import OddsAnswer, Outcome, from_weights
from .results import meet_or_beat, with_notes
from .schema import Field
from .system import QuickRoll, passed_on

SIDES = 10
COLOURS = ("white", "blue", "black", "red", "green")
DIFFICULTIES = {
    "easy": 3,
    "routine": 4,
    "straightforward": 5,
    "standard": 6,
    "challenging": 7,
    "difficult": 8,
    "extremely difficult": 9,
    "virtually impossible": 10,
}
DEGREES = ("marginal", "moderate", "complete", "exceptional", "phenomenal")

# The attributes the source text names, and a default link to a colour of mana that the GM
# changes in the campaign settings. The source fixes Cunning -> black and Intelligence ->
# blue (its example character keeps 3 black dice on Cunning, 2 blue on Intelligence), and
# neither Endurance nor Strength links to black or blue.
DEFAULT_LINKS: dict[str, str | None] = {
    "Strength": "red",
    "Finesse": None,
    "Endurance": "green",
    "Intelligence": "blue",
    "Cunning": "black",
    "Acuity": None,
    "Charisma": "white",
}

FLAGS = ("botch", "opponent-botch")


def degree(successes: int | None) -> str | None:
    """1 marginal, 2 moderate, 3 complete, 4 exceptional, 5 or more phenomenal; else None."""
    if successes is None or successes < 1:
        return None
    return DEGREES[min(successes, len(DEGREES)) - 1]


def parse_difficulty(value: Any, field: str = "difficulty") -> Any:
    """A difficulty name (``"challenging"``, ``"extremely difficult"``; case, hyphens and
    underscores do not matter) becomes its number; anything else is left for validation."""
    if isinstance(value, str):
        key = " ".join(value.lower().replace("-", " ").replace("_", " ").split())
        if key not in DIFFICULTIES:
            raise RuleError(
                field, f"unknown difficulty {value!r}; use a number or one of {list(DIFFICULTIES)}"
            )
        return DIFFICULTIES[key]
    return value


def keep_from_mana(mana: Mapping[str, int], colour: str | None, specialities: int) -> int:
    """Dice kept: the mana of the linked colour if the character has any, else
    max(1, total mana // colours with no mana (1 if none is missing)); then + specialities."""
    if colour is not None and mana.get(colour, 0) > 0:
        base = mana[colour]
    else:
        missing = sum(1 for c in COLOURS if mana.get(c, 0) <= 0)
        base = max(1, sum(mana.get(c, 0) for c in COLOURS) // (missing or 1))
    return base + specialities


# -- exact odds ------------------------------------------------------------------------------


def success_weights(roll: int, keep: int, difficulty: int) -> list[int]:
    """Ways (out of 10**roll) to score 0, 1, ... min(keep, roll) successes."""
    hits = min(max(SIDES + 1 - difficulty, 0), SIDES)  # faces meeting the difficulty
    weights = [math.comb(roll, x) * hits**x * (SIDES - hits) ** (roll - x) for x in range(roll + 1)]
    top = min(keep, roll)
    return [*weights[:top], sum(weights[top:])]


def botch_chance(roll: int, difficulty: int) -> Fraction:
    """P(no die meets the difficulty and at least one shows 1)."""
    below = min(max(difficulty - 1, 0), SIDES)  # faces that fail
    return Fraction(below**roll - max(below - 1, 0) ** roll, SIDES**roll)


# -- request ---------------------------------------------------------------------------------

_POOL = (
    Field("roll", "int", label="Dice rolled", required=True, min=1, max=MAX_DICE),
    Field("keep", "int", label="Dice kept", required=True, min=1, max=MAX_MODIFIER),
)

_REQUEST_FIELDS: tuple[Field, ...] = (
    Field(
        "roll",
        "int",
        label="Dice rolled",
        help="d10s to roll (attribute + specialities). Give roll and keep, or the sheet fields.",
        min=1,
        max=MAX_DICE,
    ),
    Field(
        "keep",
        "int",
        label="Dice kept",
        help="The highest this many dice are kept (never more than were rolled).",
        min=1,
        max=MAX_MODIFIER,
    ),
    Field(
        "attribute",
        "int",
        label="Attribute",
        help="Sheet form: the attribute's dice.",
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "specialities",
        "int",
        label="Specialities",
        help="Sheet form: +1 die rolled and kept per relevant speciality.",
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "mana",
        "counts",
        label="Mana",
        help="Sheet form: permanent mana by colour.",
        choices=COLOURS,
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "colour",
        "choice",
        label="Linked colour",
        help="Sheet form: the colour the attribute links to (null: none).",
        choices=COLOURS,
        nullable=True,
    ),
    Field(
        "difficulty",
        "int",
        label="Difficulty",
        help="A kept die showing this or more is a success. Names work too: easy 3, routine 4, "
        "straightforward 5, standard 6, challenging 7, difficult 8, extremely difficult 9, "
        "virtually impossible 10.",
        required=True,
        min=-MAX_MODIFIER,
        max=MAX_MODIFIER,
    ),
    Field(
        "required",
        "int",
        label="Successes required",
        default=1,
        min=1,
        max=MAX_DICE,
    ),
    Field(
        "opponent",
        "object",
        label="Opponent (directly opposed)",
        help="The opponent's roll and keep, at the same difficulty.",
        nullable=True,
        fields=_POOL,
    ),
)

_SHEET_KEYS = ("attribute", "specialities", "mana", "colour")


def _opposed(req: Mapping[str, Any]) -> bool:
    return req.get("opponent") is not None


def _roll_k_keep(side: Mapping[str, Any]) -> str:
    """A side's dice as players write them: ``"5k3"`` rolls 5 and keeps 3."""
    return f"{side['roll']}k{min(side['keep'], side['roll'])}"


def _select(values: list[int], keep: int) -> set[int]:
    """Indices of the kept dice: the highest, the first drawn among equal values."""
    order = sorted(range(len(values)), key=lambda i: (-values[i], i))
    return set(order[:keep])


class RollAndKeep(system.GameSystem):
    id = "roll-and-keep"
    title = "Mana Roll and Keep"
    summary = (
        "Roll d10s for attribute and specialities, keep as many as your mana allows, count "
        "the kept dice that meet the difficulty. Degrees of success, botches, opposed rolls."
    )
    outcome = "successes"
    flags = FLAGS
    request_fields = _REQUEST_FIELDS
    sheet_fields = (
        Field(
            "attributes",
            "counts",
            max_items=50,
            label="Attributes",
            help="Name -> dice.",
            default=dict.fromkeys(DEFAULT_LINKS, 1),
            min=0,
            max=MAX_DICE,
        ),
        Field(
            "specialities",
            "counts",
            max_items=200,
            label="Specialities",
            help="Name -> count, e.g. Deceit: 1.",
            default={},
            min=0,
            max=MAX_DICE,
        ),
        Field(
            "mana",
            "counts",
            max_items=50,
            label="Mana",
            help="Permanent mana by colour.",
            default={},
            choices=COLOURS,
            min=0,
            max=MAX_DICE,
        ),
    )
    settings_fields = (
        Field(
            "links",
            "map",
            label="Attribute colours",
            help="Which colour of mana each attribute links to (null: none).",
            default=dict(DEFAULT_LINKS),
            max_items=100,
            fields=(Field("colour", "choice", choices=COLOURS, nullable=True),),
        ),
        Field(
            "difficulty",
            "int",
            label="Usual difficulty",
            help="For quick rolls.",
            default=DIFFICULTIES["standard"],
            min=-MAX_MODIFIER,
            max=MAX_MODIFIER,
        ),
    )

    # -- request ---------------------------------------------------------------------------

    def normalise(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, Mapping):
            raise RuleError("request", f"expected a JSON object, got {type(request).__name__}")
        data = dict(request)
        if "difficulty" in data:
            data["difficulty"] = parse_difficulty(data["difficulty"])
        req = super().normalise(data)
        if any(key in req for key in _SHEET_KEYS):
            if "attribute" not in req:
                raise RuleError("attribute", "is required with specialities, mana or colour")
            specialities = req.setdefault("specialities", 0)
            mana = req.get("mana") or {}
            req["mana"] = {c: mana.get(c, 0) for c in COLOURS}
            colour = req.setdefault("colour", None)
            roll = req["attribute"] + specialities
            keep = keep_from_mana(req["mana"], colour, specialities)
            if roll < 1:
                raise RuleError("attribute", "attribute + specialities must be at least 1 die")
            if roll > MAX_DICE:
                raise RuleError("attribute", f"at most {MAX_DICE} dice, got {roll}")
            for key, value in (("roll", roll), ("keep", keep)):
                if req.get(key, value) != value:
                    raise RuleError(key, f"the sheet fields give {value}, not {req[key]}")
            req["roll"], req["keep"] = roll, keep
        else:
            for key in ("roll", "keep"):
                if key not in req:
                    raise RuleError(key, "is required (or give the sheet form: attribute, ...)")
        if req.get("opponent", 0) is None:
            del req["opponent"]
        if _opposed(req) and req["roll"] + req["opponent"]["roll"] > MAX_DICE:
            raise RuleError(
                "opponent.roll",
                f"at most {MAX_DICE} dice in one request, both sides together; got "
                f"{req['roll'] + req['opponent']['roll']}",
            )
        order = ("roll", "keep", *_SHEET_KEYS, "difficulty", "required", "opponent")
        return {key: req[key] for key in order if key in req}

    # -- roll ------------------------------------------------------------------------------

    def _side(
        self, source: DiceSource, roll: int, keep: int, difficulty: int, side: Side | None
    ) -> tuple[list[DieRecord], int, bool]:
        extra: DieMarks = {} if side is None else {"side": side}
        dice = [draw(source, SIDES, "kept", **extra) for _ in range(roll)]
        values = [d["value"] for d in dice]
        kept = _select(values, keep)
        successes = 0
        for i, record in enumerate(dice):
            if i not in kept:
                record["role"] = "dropped"
            elif record["value"] >= difficulty:
                record["success"] = True
                successes += 1
        botch = successes == 0 and 1 in values
        return dice, successes, botch

    def _roll(self, request: Any, source: DiceSource) -> dict[str, Any]:
        req = self.normalise(request)
        difficulty = req["difficulty"]
        opposed = _opposed(req)
        dice, successes, botch = self._side(
            source, req["roll"], req["keep"], difficulty, "self" if opposed else None
        )
        flags = ["botch"] if botch else []
        vs: dict[str, Any] = {}
        if opposed:
            opp = req["opponent"]
            opp_dice, opp_successes, opp_botch = self._side(
                source, opp["roll"], opp["keep"], difficulty, "opponent"
            )
            dice += opp_dice
            if opp_botch:
                flags.append("opponent-botch")
            net = successes - opp_successes
            headline = net
            vs = {
                "opponent_successes": opp_successes,
                "net": net,
                "winner": "self" if net > 0 else "opponent" if net < 0 else None,
            }
        else:
            headline = successes
        return self._result(
            req,
            **vs,
            dice=dice,
            total=None,
            successes=successes,
            outcome=meet_or_beat(headline, req["required"]),
            flags=flags,
            degree=degree(headline),
        )

    def describe(self, result: Mapping[str, Any]) -> str:
        req = result["request"]
        own = [d for d in result["dice"] if d.get("side", "self") == "self"]
        kept = " ".join(str(d["value"]) for d in own if d["role"] == "kept")
        dropped = " ".join(str(d["value"]) for d in own if d["role"] == "dropped")
        head = _roll_k_keep(req)
        if "opponent" in req:
            head += f" vs {_roll_k_keep(req['opponent'])}"
        line = f"{head} at {req['difficulty']}: kept {kept}"
        if dropped:
            line += f", dropped {dropped}"
        s = result["successes"]
        if "opponent" in req:
            line += f": {s} against {result['opponent_successes']}, net {result['net']}"
        else:
            line += f": {s} success{'' if s == 1 else 'es'}"
        if result.get("degree"):
            line += f" ({result['degree']})"
        if req["required"] > 1:
            line += f", {req['required']} needed"
        line += f": {result['outcome']}"
        if "opponent" in req:
            winner = {"self": "roller wins", "opponent": "opponent wins", None: "tie"}
            line += f" ({winner[result['winner']]})"
        return with_notes(line, result["flags"])

    # -- odds ------------------------------------------------------------------------------

    def _odds(self, request: Any, budget: Budget) -> OddsAnswer:
        req = self.normalise(request)
        difficulty = req["difficulty"]
        # A closed form per side (see success_weights); the budget adds the caller's deadline.
        budget.naming("roll").spend(req["roll"] * 2.0, "this roll")
        own = success_weights(req["roll"], req["keep"], difficulty)
        events = {"botch": botch_chance(req["roll"], difficulty)}
        if _opposed(req):
            opp = req["opponent"]
            budget.spend(opp["roll"] * 2.0 + len(own) * 0.5, "this opposed roll")
            against = success_weights(opp["roll"], opp["keep"], difficulty)
            # Each side is exact; their difference is convolved in floats (error near 1e-16),
            # since exact integers for two 500-die sides take most of a second.
            own_p = Dist.from_run(0, [w / SIDES ** req["roll"] for w in own])
            against_p = Dist.from_run(0, [w / SIDES ** opp["roll"] for w in against])
            net = own_p.convolve(against_p.neg(), budget, "this opposed roll")
            lowest, probs = net.dense()
            events["opponent-botch"] = botch_chance(opp["roll"], difficulty)
            start = max(0, req["required"] - lowest)
            distribution = {lowest + i: p for i, p in enumerate(probs) if p}
            p_success: Fraction | float | None = math.fsum(probs[start:]) / math.fsum(probs)
            outcome: Outcome = "net_successes"
        else:
            distribution, p_success = from_weights(0, own, req["required"])
            outcome = self.outcome
        return self._odds_answer(req, distribution, p_success, events, outcome=outcome)

    # -- sheets ----------------------------------------------------------------------------

    def _from_checked(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Options: ``attribute`` (a name on the sheet), ``speciality`` (a name, a list of
        names, or null), ``difficulty`` (number or name; default the campaign's usual),
        ``required``, ``opponent`` (``{"roll", "keep"}``). The attribute's colour comes from
        the campaign's ``links`` (an attribute not listed links to no colour)."""
        self._check_options(
            options, {"attribute", "speciality", "difficulty", "required", "opponent"}
        )
        name = options.get("attribute")
        if not isinstance(name, str) or name not in sheet["attributes"]:
            raise RuleError("options.attribute", f"no attribute named {name!r} on the sheet")
        chosen = options.get("speciality")
        names = [] if chosen is None else [chosen] if isinstance(chosen, str) else chosen
        if not isinstance(names, list):
            raise RuleError("options.speciality", "expected a speciality name or a list of them")
        specialities = 0
        for item in names:
            if not isinstance(item, str) or item not in sheet["specialities"]:
                raise RuleError("options.speciality", f"no speciality named {item!r} on the sheet")
            specialities += sheet["specialities"][item]
        request: dict[str, Any] = {
            "attribute": sheet["attributes"][name],
            "specialities": specialities,
            "mana": sheet["mana"],
            "colour": settings["links"].get(name),
            "difficulty": options.get("difficulty", settings["difficulty"]),
            **passed_on(options, ("required", "opponent")),
        }
        return self.normalise(request)

    def quick_rolls(self, sheet: Mapping[str, Any], settings: Mapping[str, Any]) -> list[QuickRoll]:
        sheet = self.validate_sheet(sheet)
        settings = self.validate_settings(settings)  # (once, for all the rolls)
        rolls: list[QuickRoll] = []
        for name, dice in sheet["attributes"].items():
            if dice < 1:
                continue
            request = self.request_from_sheet(sheet, settings, {"attribute": name}, checked=True)
            rolls.append({"label": f"{name} {_roll_k_keep(request)}", "request": request})
        return rolls


ROLL_AND_KEEP = RollAndKeep()
