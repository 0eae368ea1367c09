"""Kingyak's Workshop: exact odds of a side, of breaks and of costly successes."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from ..dist import Budget, Dist
from ..errors import OddsTooLarge
from ..limits import MAX_CHAIN, ODDS_TAIL
from .fields import ODDS_MAX_CHALLENGE, ODDS_MAX_POOL, ODDS_MAX_PROTECT, PC_SIDES, sides_of

# A (successes, ones) pair packed into one int so convolution is plain addition of keys.
_STRIDE = 1 << 24


def _face_key(value: int, tn: int) -> int:
    return (value // tn) * _STRIDE + (1 if value == 1 else 0)


class SideOdds:
    """Exact law of one side: the joint (successes, 1s) of its PC dice and its break events."""

    def __init__(
        self, side: Mapping[str, Any], discord: int | None, budget: Budget | None = None
    ) -> None:
        self.budget = budget or Budget("pool")
        self.tn = tn = side["tn"]
        self.sizes = sorted((sides_of(d) for d in side["pool"]), reverse=True)
        self.challenge = side["challenge"]
        self.protect = side["protect"]
        self.luck_sides = sides_of(side["luck_die"])
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
        self.mass: float = self.joint.total()
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

    def _prune(self, dist: Dist) -> Dist:
        # Outcomes this unlikely cannot move any answer; dropping them keeps big pools fast.
        # The mass dropped is counted and stays far below ODDS_TAIL (checked in the tests).
        kept, dropped = dist.pruned()
        self.dropped += dropped
        return kept

    def _pc_joint(self, tn: int) -> Dist:
        """Joint law of (successes, 1s), packed into one key (see ``_face_key``), of the PC
        dice, the luck die added after a lucky break."""
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
        states: dict[tuple[int, int], Dist] = {
            (min(self.protect, to_come), 0): Dist.floats_over_one({0: 1.0})
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
            hi_part, lo_part = Dist.floats_over_one(hi), Dist.floats_over_one(lo)
            # A protected die shows the Discord value; when that is a 5 it owes a fives chain,
            # added once per group (chain ** number owed) rather than die by die.
            matchable = d is not None and d <= k
            matched = Dist.floats_over_one(
                {_face_key(d, tn): 1 / k} if d is not None and matchable else {}
            )
            matched_owes = int(d == 5)

            # Inside a group the state also carries the chains owed by protected 5s.
            group = {(left, tag, 0): dist for (left, tag), dist in states.items()}
            for _ in range(count):
                # The caps keep a pool's work in hand; the budget adds the caller's deadline.
                self.budget.spend(sum(len(d.w) for d in group.values()) * 0.05, "this pool")
                out: dict[tuple[int, int, int], Dist] = {}

                def into(key: tuple[int, int, int]) -> Dist:
                    law = out.get(key)  # noqa: B023
                    if law is None:
                        law = out[key] = Dist.floats_over_one()  # noqa: B023
                    return law

                for (left, tag, owed), dist in group.items():
                    up = 3 if tag == 3 else min(tag + 1, 2)
                    if hi:
                        self.dropped += into((left, up, owed)).add_sum(dist, hi_part)
                    if lo:
                        self.dropped += into((left, 3, owed)).add_sum(dist, lo_part)
                    if not matchable:
                        continue
                    if left > 0:
                        spent = (left - 1, up if d_high else 3, owed + matched_owes)
                        self.dropped += into(spent).add_sum(dist, matched)
                    else:
                        into((left, tag, owed)).add(dist, k)
                group = {key: self._prune(dist) for key, dist in out.items()}

            if matchable:
                to_come -= count
            powers = [Dist.floats_over_one({0: 1.0})]
            chain = Dist.floats_over_one(self._chain(k)) if k >= 5 else powers[0]
            merged: dict[tuple[int, int], Dist] = {}
            for (left, tag, owed), dist in group.items():
                target = merged.get((min(left, to_come), tag))
                if target is None:
                    target = merged[(min(left, to_come), tag)] = Dist.floats_over_one()
                while len(powers) <= owed:
                    nxt = Dist.floats_over_one()
                    self.dropped += nxt.add_sum(powers[-1].most_likely_first(), chain)
                    powers.append(nxt)
                self.dropped += target.add_sum(dist, powers[owed])
            states = {key: self._prune(dist) for key, dist in merged.items()}

        joint = Dist.floats_over_one()
        lucky = Dist.floats_over_one()
        for (_, tag), dist in states.items():
            (lucky if tag == 2 else joint).add(dist)
        self.p_lucky: float = lucky.total()
        luck = Dist.floats_over_one(
            {face * _STRIDE: 1 / self.luck_sides for face in range(1, self.luck_sides + 1)}
        )
        self.dropped += joint.add_sum(lucky, luck)
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
        for key, p in self.joint.w.items():
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


def side_remaining(side: SideOdds, *, pvp: bool = True) -> dict[int, float]:
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


def costly_chance(side: SideOdds, against: Mapping[int, float]) -> float:
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
    for key, p in side.joint.w.items():
        s, o = divmod(key, _STRIDE)
        for r, pr in against_items:
            a = s - r - 1
            if a < 0:
                continue
            b = max(0, a - o + 2)
            if b <= b_max:
                total += p * pr * cell[min(a, a_max)][b]
    return total / side.mass


def check_odds_size(req: Mapping[str, Any]) -> None:
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
        could_match = sum(1 for d in side["pool"] if discord is not None and discord <= sides_of(d))
        if min(side["protect"], could_match) > ODDS_MAX_PROTECT:
            raise OddsTooLarge(
                f"{where}protect",
                f"exact odds stop at {ODDS_MAX_PROTECT} protected dice that could meet the "
                "Discord Die",
            )
