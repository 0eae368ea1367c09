"""Kingyak's Workshop (RULES.md section 6): TN pools, Challenge Dice, the Discord Die, the Law of
Fives, breaks and costly successes.

Order of play: roll (pool, then challenge dice) -> Discord Die -> Law of Fives -> breaks ->
successes. Draw order in ``dice``: the roller's pool dice in request order, the roller's challenge
dice, the Law of Fives bonus dice (each surviving 5's chain in full, in pool order), the luck die
(lucky break only); then, in a PvP roll, the opponent's dice in the same order.

Exact odds enumerate the pool die by die (biggest dice first, so protection follows the rule),
keeping the joint law of (successes, 1s) and just enough about the surviving dice to know a lucky
break; bad breaks and flukes are separate small sums. Challenge dice are a closed-form multinomial.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Mapping
from typing import Any

from . import system
from .dice import DieRecord, draw
from .dist import Budget
from .errors import OddsTooLarge, RuleError
from .fair import DiceSource
from .limits import MAX_CHAIN, MAX_DICE, ODDS_TAIL
from .results import with_notes
from .schema import Field
from .system import passed_on

# Dice a character can put in a pool (and roll as a luck die). The source's table of multiple
# successes stops at 12, and the d20 is the Discord Die's; so the polyhedrals d4..d12.
PC_SIDES = (4, 6, 8, 10, 12)
PC_DICE = tuple(f"d{n}" for n in PC_SIDES)
TNS = (4, 5, 6)
CHALLENGE_SIDES = 6
CHALLENGE_HIT = 5  # a challenge die hits on 5 or 6
DISCORD_SIDES = 20
DISCORD_WANDER = 3  # a 20 then a 3: the Discord Die wanders off

# Exact-odds size caps: past these the answer is OddsTooLarge, never a hang. Pool dice count
# both sides of a PvP roll; protection counts only dice that could show the Discord value.
# The worst cases at the caps take about 0.1 s (docs/rules/discordian.md).
ODDS_MAX_POOL = 20
ODDS_MAX_CHALLENGE = 100
ODDS_MAX_PROTECT = 6

FLAGS = ("lucky-break", "bad-break", "fluke", "costly")

_SIDE_FIELDS: tuple[Field, ...] = (
    Field(
        "pool",
        "dice",
        label="Pool",
        help="The PC dice: Hero Dice, trope die, trademark die, luck dice bought with Instant "
        "Karma, GM bonus dice.",
        required=True,
        choices=PC_DICE,
        max_items=MAX_DICE,
    ),
    Field(
        "tn",
        "int",
        label="Target Number",
        help="4 when the hooks help, 6 when they hinder, 5 otherwise.",
        default=5,
        choices=TNS,
    ),
    Field(
        "challenge",
        "int",
        label="Challenge Dice",
        help="d6s that hit on 5-6; each hit cancels one success.",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field(
        "protect",
        "int",
        label="Protect",
        help="Dice to save from the Discord Die (1 Instant Karma each), biggest dice first.",
        default=0,
        min=0,
        max=MAX_DICE,
    ),
    Field("luck_die", "die", label="Luck die", default="d6", choices=PC_DICE),
    Field(
        "infinite_fives",
        "bool",
        label="Law of Infinite Fives",
        help="An ability that applies the Law of Infinite Fives (a Discord Die of 5 always does).",
        default=False,
    ),
)

_REQUEST_FIELDS: tuple[Field, ...] = (
    *_SIDE_FIELDS[:3],
    Field(
        "discord",
        "int",
        label="Discord Die",
        help="The GM's d20 for the round or scene; null when none is in play.",
        default=None,
        nullable=True,
        min=1,
        max=DISCORD_SIDES,
    ),
    *_SIDE_FIELDS[3:],
    Field(
        "opponent",
        "object",
        label="Opponent (PvP)",
        help="The other side's pool, TN, challenge dice and protection, under the same "
        "Discord Die.",
        nullable=True,
        fields=_SIDE_FIELDS,
    ),
)


def _sides(die: str) -> int:
    return int(die[1:])


def _count_dice(side: Mapping[str, Any]) -> int:
    return len(side["pool"]) + side["challenge"]


def _tidy_side(side: dict[str, Any]) -> dict[str, Any]:
    # ``infinite_fives`` is an extension of the contract's request: only shown when switched on.
    if not side.get("infinite_fives"):
        side.pop("infinite_fives", None)
    return side


# ---------------------------------------------------------------------------------------------
# The Discord Die
# ---------------------------------------------------------------------------------------------


def roll_discord_die(source: DiceSource) -> dict[str, Any]:
    """The GM's Discord Die: a d20; on a 20 roll again, and a 3 then means it wanders off.

    Returns ``{"value": int | None, "wandered": bool, "dice": [records], "text": str}``;
    ``value`` None means no Discord Die until the next scene (scene mode: the adventure).
    """
    first = draw(source, DISCORD_SIDES, "discord")
    dice = [first]
    if first["value"] != DISCORD_SIDES:
        value: int | None = first["value"]
        wandered = False
        text = f"Discord Die: {value}"
    else:
        second = draw(source, DISCORD_SIDES, "discord", second_roll=True)
        dice.append(second)
        wandered = second["value"] == DISCORD_WANDER
        value = None if wandered else second["value"]
        text = (
            "Discord Die: 20, then 3: it wanders off"
            if wandered
            else f"Discord Die: 20, rolled again: {value}"
        )
    return {"value": value, "wandered": wandered, "dice": dice, "text": text}


# ---------------------------------------------------------------------------------------------
# Rolling
# ---------------------------------------------------------------------------------------------


def _roll_side(
    side: Mapping[str, Any],
    discord: int | None,
    source: DiceSource,
    offset: int,
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    """One side's dice and tallies; ``offset`` is where its first die sits in the result's list."""
    tn = side["tn"]
    infinite = discord == 5 or side.get("infinite_fives", False)
    pool = [draw(source, _sides(d), "base", **extra) for d in side["pool"]]
    challenge = [
        draw(source, CHALLENGE_SIDES, "challenge", **extra) for _ in range(side["challenge"])
    ]
    for rec in challenge:
        rec["hit"] = rec["value"] >= CHALLENGE_HIT  # type: ignore[typeddict-unknown-key]

    # Discord Die: matching dice go, except the protected ones (most sides first, then draw order).
    matching = [i for i, rec in enumerate(pool) if discord is not None and rec["value"] == discord]
    matching.sort(key=lambda i: -pool[i]["sides"])
    protected = set(matching[: side["protect"]])
    for i in matching:
        if i in protected:
            pool[i]["protected"] = True  # type: ignore[typeddict-unknown-key]
        else:
            pool[i]["role"] = "eliminated"
    survivors = [rec for rec in pool if rec["role"] == "base"]

    # Law of Fives: each surviving 5 brings a bonus die of its size; under Infinite Fives a
    # bonus 5 brings another. Bonus dice are not subject to the Discord Die.
    bonus: list[DieRecord] = []
    capped = False
    base_at = offset + len(pool) + len(challenge)
    for i, rec in enumerate(pool):
        if rec["role"] != "base" or rec["value"] != 5:
            continue
        parent = offset + i
        for extra_rolls in range(1, MAX_CHAIN + 1):
            die = draw(source, rec["sides"], "bonus", **extra)
            die["from"] = parent  # type: ignore[typeddict-unknown-key]
            bonus.append(die)
            if not (infinite and die["value"] == 5):
                break
            if extra_rolls == MAX_CHAIN:
                capped = True
            parent = base_at + len(bonus) - 1

    for rec in survivors + bonus:
        rec["successes"] = rec["value"] // tn  # type: ignore[typeddict-unknown-key]
    successes = sum(rec["value"] // tn for rec in survivors + bonus)

    flags: list[str] = []
    luck: list[DieRecord] = []
    if len(survivors) >= 2:
        values = {rec["value"] for rec in survivors}
        if min(values) >= tn:
            flags.append("lucky-break")
            luck_die = draw(source, _sides(side["luck_die"]), "luck", **extra)
            luck.append(luck_die)
            successes += luck_die["value"]
        if values == {1}:
            flags.append("bad-break")
        elif len(values) == 1:
            flags.append("fluke")

    hits = sum(1 for rec in challenge if rec["value"] >= CHALLENGE_HIT)
    ones = sum(1 for rec in survivors + bonus + challenge if rec["value"] == 1)
    return {
        "dice": pool + challenge + bonus + luck,
        "successes": successes,
        "challenge_hits": hits,
        "ones": ones,
        "protected": len(protected),
        "infinite_fives": bool(infinite),
        "capped": capped,
        "flags": flags,
    }


# ---------------------------------------------------------------------------------------------
# Exact odds
# ---------------------------------------------------------------------------------------------

# A (successes, ones) pair packed into one int so convolution is plain addition of keys.
_STRIDE = 1 << 24
# Entries of a joint law below this are dropped as the pool is built up (see _SideOdds._prune).
_PRUNE = 1e-19


class _Part:
    """One die's outcomes as (key, p) pairs, most likely first, with the mass of each tail, so a
    convolution can stop where the products fall below _PRUNE and count what it left out."""

    def __init__(self, dist: Mapping[int, float]) -> None:
        self.items = sorted(((k, p) for k, p in dist.items() if p > 0), key=lambda kp: -kp[1])
        self.neg = [-p for _, p in self.items]  # ascending, for bisect
        self.tails = [0.0] * (len(self.items) + 1)
        for i in range(len(self.items) - 1, -1, -1):
            self.tails[i] = self.tails[i + 1] + self.items[i][1]

    def __bool__(self) -> bool:
        return bool(self.items)


def _conv_into(out: dict[int, float], a: Mapping[int, float], b: _Part) -> float:
    """Add the law of (a + b) into ``out``; return the mass left out below _PRUNE."""
    get = out.get
    items, neg, tails = b.items, b.neg, b.tails
    whole = len(items)
    dropped = 0.0
    for ka, pa in a.items():
        # Only the outcomes of b with pa * pb >= _PRUNE are worth adding.
        stop = bisect.bisect_right(neg, -_PRUNE / pa)
        if stop < whole:
            dropped += pa * tails[stop]
            if stop == 0:
                continue
            for kb, pb in items[:stop]:
                k = ka + kb
                out[k] = get(k, 0.0) + pa * pb
        else:
            for kb, pb in items:
                k = ka + kb
                out[k] = get(k, 0.0) + pa * pb
    return dropped


def _face_key(value: int, tn: int) -> int:
    return (value // tn) * _STRIDE + (1 if value == 1 else 0)


class _SideOdds:
    """Exact law of one side: the joint (successes, 1s) of its PC dice and its break events."""

    def __init__(self, side: Mapping[str, Any], discord: int | None) -> None:
        self.tn = tn = side["tn"]
        self.sizes = sorted((_sides(d) for d in side["pool"]), reverse=True)
        self.challenge = side["challenge"]
        self.protect = side["protect"]
        self.luck_sides = _sides(side["luck_die"])
        self.discord = discord
        self.infinite = discord == 5 or side.get("infinite_fives", False)
        # Deep enough that the bonus chains left out weigh less than the odds tail, all chains
        # together.
        n = max(1, len(self.sizes))
        self.depth = {
            k: max(1, math.ceil(math.log(ODDS_TAIL / (10 * n)) / math.log(1 / k))) for k in PC_SIDES
        }
        self.dropped = 0.0
        self.joint = self._pc_joint(tn)
        self.mass = sum(self.joint.values())
        self.events = self._break_events()

    def _chain(self, sides: int) -> dict[int, float]:
        """What the Law of Fives adds for one surviving 5: its bonus die, or under Infinite
        Fives the whole chain (cut where the chains left out weigh less than the odds tail)."""
        tn = self.tn
        chain: dict[int, float] = {}
        lengths = min(self.depth[sides], MAX_CHAIN - 1) + 1 if self.infinite else 1
        f5 = _face_key(5, tn)
        for length in range(lengths):
            weight = (1 / sides) ** length / sides
            for w in range(1, sides + 1):
                if w == 5 and self.infinite:
                    continue
                k = length * f5 + _face_key(w, tn)
                chain[k] = chain.get(k, 0.0) + weight
        return chain

    def _outcome(self, sides: int, value: int) -> dict[int, float]:
        """Law of one surviving die showing ``value``: its own score plus its fives chain."""
        base = _face_key(value, self.tn)
        if value != 5:
            return {base: 1.0}
        return {base + k: p for k, p in self._chain(sides).items()}

    def _prune(self, dist: dict[int, float]) -> dict[int, float]:
        # Outcomes this unlikely cannot move any answer; dropping them keeps big pools fast.
        # The mass dropped is counted and stays far below ODDS_TAIL (checked in the tests).
        kept = {k: p for k, p in dist.items() if p >= _PRUNE}
        if len(kept) != len(dist):
            self.dropped += sum(dist.values()) - sum(kept.values())
        return kept

    def _pc_joint(self, tn: int) -> dict[int, float]:
        d = self.discord
        groups: list[tuple[int, int]] = []
        for k in self.sizes:  # biggest first: protection goes to the most sides first
            if groups and groups[-1][0] == k:
                groups[-1] = (k, groups[-1][1] + 1)
            else:
                groups.append((k, 1))

        # State: (protection left, tag) with tag 0 = no survivor yet, 1 = one survivor at or
        # above the TN, 2 = two or more all at or above the TN (a lucky break), 3 = anything else.
        # Protection left never needs to exceed the dice still to come that could match, which
        # folds most protection states together.
        to_come = sum(n for k, n in groups if d is not None and d <= k)
        states: dict[tuple[int, int], dict[int, float]] = {
            (min(self.protect, to_come), 0): {0: 1.0}
        }
        d_high = d is not None and d >= tn
        for k, count in groups:
            hi: dict[int, float] = {}
            lo: dict[int, float] = {}
            for v in range(1, k + 1):
                if v != d:
                    part = hi if v >= tn else lo
                    for key, p in self._outcome(k, v).items():
                        part[key] = part.get(key, 0.0) + p / k
            hi_part, lo_part = _Part(hi), _Part(lo)
            # A protected die shows the Discord value; when that is a 5 it owes a fives chain,
            # added once per group (chain ** number owed) rather than die by die.
            matchable = d is not None and d <= k
            matched = _Part({_face_key(d, tn): 1 / k} if matchable else {})
            matched_owes = int(d == 5)

            # Inside a group the state also carries the chains owed by protected 5s.
            group = {(left, tag, 0): dist for (left, tag), dist in states.items()}
            for _ in range(count):
                out: dict[tuple[int, int, int], dict[int, float]] = {}

                def add(key: tuple[int, int, int], dist: dict[int, float], part: _Part) -> None:
                    self.dropped += _conv_into(out.setdefault(key, {}), dist, part)  # noqa: B023

                for (left, tag, owed), dist in group.items():
                    up = 3 if tag == 3 else min(tag + 1, 2)
                    if hi_part:
                        add((left, up, owed), dist, hi_part)
                    if lo_part:
                        add((left, 3, owed), dist, lo_part)
                    if not matchable:
                        continue
                    if left > 0:
                        add((left - 1, up if d_high else 3, owed + matched_owes), dist, matched)
                    else:
                        same = out.setdefault((left, tag, owed), {})
                        get = same.get
                        for key, p in dist.items():
                            same[key] = get(key, 0.0) + p / k
                group = {key: self._prune(dist) for key, dist in out.items()}

            if matchable:
                to_come -= count
            powers = [_Part({0: 1.0})]
            chain = _Part(self._chain(k)) if k >= 5 else powers[0]
            merged: dict[tuple[int, int], dict[int, float]] = {}
            for (left, tag, owed), dist in group.items():
                target = merged.setdefault((min(left, to_come), tag), {})
                while len(powers) <= owed:
                    nxt: dict[int, float] = {}
                    self.dropped += _conv_into(nxt, dict(powers[-1].items), chain)
                    powers.append(_Part(nxt))
                self.dropped += _conv_into(target, dist, powers[owed])
            states = {key: self._prune(dist) for key, dist in merged.items()}

        joint: dict[int, float] = {}
        lucky: dict[int, float] = {}
        for (_, tag), dist in states.items():
            target = lucky if tag == 2 else joint
            for key, p in dist.items():
                target[key] = target.get(key, 0.0) + p
        self.p_lucky = sum(lucky.values())
        luck = _Part(
            {face * _STRIDE: 1 / self.luck_sides for face in range(1, self.luck_sides + 1)}
        )
        self.dropped += _conv_into(joint, lucky, luck)
        return joint

    def _all_show(self, value: int) -> float:
        """P(at least two surviving pool dice, all showing ``value``)."""
        d = self.discord
        can_match = sum(1 for k in self.sizes if d is not None and d <= k)
        states = {(min(self.protect, can_match), 0): 1.0}
        for k in self.sizes:
            out: dict[tuple[int, int], float] = {}
            for (left, count), p in states.items():
                if value <= k and value != d:
                    key = (left, min(count + 1, 2))
                    out[key] = out.get(key, 0.0) + p / k
                if d is not None and d <= k:
                    if left == 0:
                        key = (left, count)
                    elif d == value:
                        key = (left - 1, min(count + 1, 2))
                    else:
                        continue
                    out[key] = out.get(key, 0.0) + p / k
            states = out
        return sum(p for (_, count), p in states.items() if count == 2)

    def _break_events(self) -> dict[str, float]:
        top = max(self.sizes, default=0)
        return {
            "lucky-break": self.p_lucky,
            "bad-break": self._all_show(1),
            "fluke": sum(self._all_show(v) for v in range(2, top + 1)),
        }

    def successes(self) -> dict[int, float]:
        out: dict[int, float] = {}
        for key, p in self.joint.items():
            s = key // _STRIDE
            out[s] = out.get(s, 0.0) + p / self.mass
        return out


@functools.lru_cache(maxsize=64)
def _challenge_law(count: int) -> dict[tuple[int, int], float]:
    """Joint law of (hits, 1s) among ``count`` challenge d6s: a closed-form multinomial."""
    # Per die: hit (5-6) 2/6, a 1 1/6, anything else 3/6; weights over 6**count, exact in ints.
    total = 6**count
    out = {}
    for h in range(count + 1):
        ways_h = math.comb(count, h) * 2**h
        for o in range(count - h + 1):
            out[(h, o)] = ways_h * math.comb(count - h, o) * 3 ** (count - h - o) / total
    return out


def _side_remaining(side: _SideOdds, *, pvp: bool = True) -> dict[int, float]:
    """Law of successes - challenge hits; in a PvP roll max(0, that), the successes a side
    brings to the comparison."""
    hits: dict[int, float] = {}
    for (h, _), p in _challenge_law(side.challenge).items():
        hits[h] = hits.get(h, 0.0) + p
    out: dict[int, float] = {}
    for s, ps in side.successes().items():
        for h, ph in hits.items():
            r = max(0, s - h) if pvp else s - h
            out[r] = out.get(r, 0.0) + ps * ph
    return out


def _costly(side: _SideOdds, against: Mapping[int, float]) -> float:
    """P(net >= 1 and the side's 1s exceed net), where net = successes - hits - r and r (the
    opponent's remaining successes, 0 alone) is independent of everything on this side."""
    # With A = hits and B = hits + challenge 1s, costly is A <= S - r - 1 and
    # B >= S - r - o + 1 for the PC dice's successes S and 1s o. Tabulate P(A <= a, B >= b) once.
    c = side.challenge
    a_max, b_max = c, 2 * c
    cell = [[0.0] * (b_max + 2) for _ in range(a_max + 1)]
    for (h, o), p in _challenge_law(c).items():
        cell[h][h + o] += p
    # Suffix sums over b, then prefix sums over a.
    for row in cell:
        for b in range(b_max, -1, -1):
            row[b] += row[b + 1]
    for a in range(1, a_max + 1):
        prev, row = cell[a - 1], cell[a]
        for b in range(b_max + 2):
            row[b] += prev[b]
    against_items = list(against.items())
    total = 0.0
    for key, p in side.joint.items():
        s, o = divmod(key, _STRIDE)
        for r, pr in against_items:
            a = s - r - 1
            if a < 0:
                continue
            b = max(0, a - o + 2)
            if b <= b_max:
                total += p * pr * cell[min(a, a_max)][b]
    return total / side.mass


def _check_odds_size(req: Mapping[str, Any]) -> None:
    sides = [("", req)]
    if req.get("opponent") is not None:
        sides.append(("opponent.", req["opponent"]))
    pool = 0
    for where, side in sides:
        pool += len(side["pool"])
        if pool > ODDS_MAX_POOL:
            raise OddsTooLarge(
                f"{where}pool", f"exact odds stop at {ODDS_MAX_POOL} pool dice in one request"
            )
        if side["challenge"] > ODDS_MAX_CHALLENGE:
            raise OddsTooLarge(
                f"{where}challenge",
                f"exact odds stop at {ODDS_MAX_CHALLENGE} challenge dice per side",
            )
        discord = req["discord"]
        could_match = sum(1 for d in side["pool"] if discord is not None and discord <= _sides(d))
        if min(side["protect"], could_match) > ODDS_MAX_PROTECT:
            raise OddsTooLarge(
                f"{where}protect",
                f"exact odds stop at {ODDS_MAX_PROTECT} protected dice that could meet the "
                "Discord Die",
            )


# ---------------------------------------------------------------------------------------------
# The system
# ---------------------------------------------------------------------------------------------


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _pool_text(pool: list[str]) -> str:
    counts: dict[str, int] = {}
    for die in pool:
        counts[die] = counts.get(die, 0) + 1
    order = sorted(counts, key=lambda d: -_sides(d))
    return "+".join(f"{counts[d]}{d}" for d in order)


class Discordian(system.GameSystem):
    id = "discordian"
    title = "Kingyak's Workshop (Discord Die)"
    summary = (
        "Pools of d4-d12 against a Target Number of 4, 5 or 6, Challenge Dice that cancel "
        "successes, the GM's Discord Die, the Law of Fives, lucky and bad breaks, flukes."
    )
    outcome = "net_successes"
    flags = FLAGS
    request_fields = _REQUEST_FIELDS
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
            label="Tropes",
            help="Trope name -> die size (4, 6, 8, 10 or 12); one trope die per roll.",
            default={},
            min=4,
            max=12,
        ),
        Field(
            "trademarks",
            "counts",
            label="Trademarks",
            help="Trademark name -> die size (4, 6, 8, 10 or 12); added when it applies.",
            default={},
            min=4,
            max=12,
        ),
        Field("hooks", "text", label="Hooks", help="They set the TN of each roll.", default=""),
        Field("tn", "int", label="Usual TN", default=5, choices=TNS),
        Field("luck_die", "die", label="Luck die", default="d6", choices=PC_DICE),
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
        count = _count_dice(req)
        opponent = req.pop("opponent", None)
        if opponent is not None:
            if not opponent["pool"]:
                raise RuleError("opponent.pool", "needs at least one die")
            count += _count_dice(opponent)
            req["opponent"] = _tidy_side(opponent)
        if count > MAX_DICE:
            raise RuleError("pool", f"at most {MAX_DICE} dice in one request, got {count}")
        return _tidy_side(req)

    # -- roll ------------------------------------------------------------------------------

    def _roll(self, request: Any, source: DiceSource) -> dict[str, Any]:
        req = self.normalise(request)
        discord = req["discord"]
        own = _roll_side(req, discord, source, 0, {})
        opp_req = req.get("opponent")
        dice = list(own["dice"])
        successes = own["successes"]
        flags = list(own["flags"])
        if opp_req is None:
            net = successes - own["challenge_hits"]
        else:
            opp = _roll_side(opp_req, discord, source, len(dice), {"side": "opponent"})
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
        req = result["request"]
        head = f"{_pool_text(req['pool'])} at TN {req['tn']}"
        if req["challenge"]:
            head += f" vs {req['challenge']} challenge"
        if req.get("discord") is not None:
            head += f", Discord {req['discord']}"
        opp = result.get("opponent")
        if opp is None:
            body = (
                f"{_plural(result['successes'], 'success', 'successes')} - "
                f"{_plural(result['challenge_hits'], 'hit', 'hits')} = net {result['net']}"
            )
        else:
            body = (
                f"{result['remaining']} left vs the opponent's {opp['remaining']} "
                f"= net {result['net']}"
            )
        line = f"{head}: {body}: {result['outcome']}"
        if opp is not None:
            winner = {"self": "roller wins", "opponent": "opponent wins", None: "tie"}
            line += f" ({winner[result['winner']]})"
        elif result["fails"]:
            line += f", {_plural(result['fails'], 'fail', 'fails')}"
        notes = list(result["flags"])
        if result.get("protected"):
            notes.append(f"{result['protected']} protected")
        if result.get("infinite_fives"):
            notes.append("Infinite Fives")
        if opp is not None and opp["flags"]:
            notes.append("opponent " + " ".join(opp["flags"]))
        if result.get("capped"):
            notes.append(f"a fives chain stopped at the {MAX_CHAIN}-roll cap")
        return with_notes(line, notes)

    # -- odds ------------------------------------------------------------------------------

    def _odds(self, request: Any, budget: Budget) -> dict[str, Any]:
        req = self.normalise(request)
        _check_odds_size(req)
        opp_req = req.get("opponent")
        discord = req["discord"]
        own = _SideOdds(req, discord)
        # The opponent's remaining successes, independent of this side (none when alone).
        against = {0: 1.0} if opp_req is None else _side_remaining(_SideOdds(opp_req, discord))
        left = _side_remaining(own, pvp=opp_req is not None)
        net: dict[int, float] = {}
        for n, pn in left.items():
            for r, pr in against.items():
                net[n - r] = net.get(n - r, 0.0) + pn * pr
        events = {flag: p / own.mass for flag, p in own.events.items()}
        events["costly"] = _costly(own, against)
        return self._odds_answer(req, net, sum(p for n, p in net.items() if n >= 1), events)

    # -- sheets ----------------------------------------------------------------------------

    def validate_sheet(self, sheet: Any) -> dict[str, Any]:
        out = super().validate_sheet(sheet)
        for group in ("tropes", "trademarks"):
            for name, sides in out[group].items():
                if sides not in PC_SIDES:
                    raise RuleError(f"sheet.{group}.{name}", f"die size must be one of {PC_SIDES}")
        return out

    def request_from_sheet(
        self, sheet: Mapping[str, Any], settings: Mapping[str, Any], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Options: ``trope`` and ``trademark`` (names on the sheet), ``luck_dice`` (luck dice
        bought with Instant Karma), ``bonus_dice`` (GM's extra dice), ``tn`` (default the
        sheet's), ``challenge``, ``discord``, ``protect``, ``opponent`` (a request)."""
        sheet = self.validate_sheet(sheet)
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
    ) -> list[dict[str, Any]]:
        sheet = self.validate_sheet(sheet)
        choices = [("Hero Dice", {})] if sheet["hero_dice"] else []
        choices += [(name, {"trope": name}) for name in sheet["tropes"]]
        return [
            self._quick_roll(f"{name} (TN {sheet['tn']})", sheet, settings, options)
            for name, options in choices
        ]


DISCORDIAN = Discordian()
