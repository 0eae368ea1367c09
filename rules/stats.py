"""Are these dice fair? Face counts, a goodness-of-fit test and a verdict a player understands.

Pure maths: no Django, no I/O, no global random state. A Monte Carlo p-value (for counts too
small for the chi-square approximation) uses its own generator seeded from the counts, so the
same dice always get the same verdict.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

ALPHA = 0.05  # "a sign of bias" below this
STRONG = 0.001  # so unlikely for fair dice that even a handful of rolls tell
# "Enough rolls to notice": the textbook power analysis (noncentral chi-square, Cohen's w) at
# this power. It is conservative: simulating the test itself catches such a die more often.
POWER = 0.9
MIN_EXPECTED = 5.0  # the chi-square approximation's rule of thumb, per face
MC_DRAWS = 100_000  # Monte Carlo budget per test: trials x (rolls + faces), never more
# A simulated test runs at most the second; ``simulated`` sends it only counts the first fits.
MC_TRIALS = (200, 2000)


# --- the chi-square distribution ------------------------------------------------------------
def _gamma_series(a: float, x: float) -> float:
    """Regularised lower incomplete gamma P(a, x) by its series (x < a + 1)."""
    term = total = 1.0 / a
    n = a
    for _ in range(10_000):
        n += 1
        term *= x / n
        total += term
        if abs(term) < abs(total) * 1e-15:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_fraction(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) by its continued fraction (x >= a + 1)."""
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square distributed with ``df`` degrees of freedom."""
    if x <= 0:
        return 1.0
    a, half = df / 2, x / 2
    if half < a + 1:
        return max(0.0, 1.0 - _gamma_series(a, half))
    return min(1.0, _gamma_fraction(a, half))


def chi2_critical(df: int, alpha: float = ALPHA) -> float:
    """The x with chi2_sf(x, df) == alpha (bisection: the survival function falls as x grows)."""
    lo, hi = 0.0, max(10.0, df * 4.0)
    while chi2_sf(hi, df) > alpha:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if chi2_sf(mid, df) > alpha:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def noncentral_chi2_sf(x: float, df: int, nc: float) -> float:
    """P(X >= x) for a noncentral chi-square: a Poisson(nc/2) mixture of central ones."""
    if nc <= 0:
        return chi2_sf(x, df)
    if x <= 0:
        return 1.0
    half, y = nc / 2, x / 2
    # Sum outward from the Poisson mode, where the weights are largest. Only the mode's central
    # term is worked out in full: its neighbours follow from Q(a + 1, y) = Q(a, y) + t(a), with
    # t(a) = y^a e^-y / Gamma(a + 1), so a die of a thousand faces (a hundred terms or so, each
    # a series of hundreds of steps) costs one series, not a hundred.
    mode = int(half)
    log_w = -half + mode * math.log(half) - math.lgamma(mode + 1) if mode else -half
    at_mode = chi2_sf(x, df + 2 * mode)

    def step_term(a: float) -> float:  # t(a): what Q gains from a to a + 1
        return math.exp(a * math.log(y) - y - math.lgamma(a + 1))

    total = 0.0
    for step in (1, -1):
        j = mode if step == 1 else mode - 1
        lw = log_w if step == 1 else log_w - math.log(half) + math.log(mode) if mode else None
        q = at_mode if step == 1 else at_mode - step_term(df / 2 + mode - 1) if mode else 0.0
        while j >= 0 and lw is not None:
            w = math.exp(lw)
            total += w * min(1.0, max(0.0, q))
            if w < 1e-14 and abs(j - mode) > 10:
                break
            a = df / 2 + j
            if step == 1:
                lw += math.log(half) - math.log(j + 1)
                q += step_term(a)
            elif j > 0:
                lw += math.log(j) - math.log(half)
                q -= step_term(a - 1)
            j += step
    return min(1.0, total)


# --- what a test can notice ------------------------------------------------------------------
@cache  # (one figure per die size: at most the engines' thousand sizes, at the defaults)
def rolls_needed(sides: int, alpha: float = ALPHA, power: float = POWER) -> int:
    """About how many rolls the chi-square test needs to notice, ``power`` of the time at level
    ``alpha``, a die with ``sides`` faces that never shows its lowest face (and shows the others
    equally often): the table's yardstick for "enough rolls to tell"."""
    k = sides
    if k < 2:
        raise ValueError("a die has at least two faces")
    df = k - 1
    critical = chi2_critical(df, alpha)
    # Noncentrality per roll: sum over faces of (p1 - p0)^2 / p0, which here is 1/(k - 1).
    per_roll = 1.0 / (k - 1)

    def enough(n: int) -> bool:
        return noncentral_chi2_sf(critical, df, n * per_roll) >= power

    lo, hi = 1, 2
    while not enough(hi):
        lo, hi = hi, hi * 2
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


def round_figure(n: int) -> int:
    """A figure to say aloud: two significant digits (487 -> 490, 1234 -> 1200)."""
    if n < 100:
        return n
    scale = 10 ** (len(str(n)) - 2)
    return int(round(n / scale) * scale)


# --- the test --------------------------------------------------------------------------------
def chi_square(counts: Sequence[int]) -> float:
    n = sum(counts)
    if n == 0:
        return 0.0
    expected = n / len(counts)
    return sum((c - expected) ** 2 for c in counts) / expected


def simulated(n: int, k: int) -> bool:
    """Whether ``n`` rolls of a die of ``k`` faces, too few for the chi-square approximation,
    get a simulated p-value: only while the least trials fit the budget of draws. Past it (a
    die of hundreds of faces rolled a few hundred times) the approximation stands, which many
    faces make good even at a few rolls a face; a simulation would cost up to a second a die,
    worked out again after every roll of it."""
    return (n + k) * MC_TRIALS[0] <= MC_DRAWS


def monte_carlo_p(counts: Sequence[int], trials: int | None = None) -> float:
    """The share of fair dice, rolled as often, that look at least this far from even.

    Seeded from the counts themselves: the same dice always get the same p-value."""
    n, k = sum(counts), len(counts)
    if n == 0:
        return 1.0
    if trials is None:
        trials = max(1, min(MC_TRIALS[1], MC_DRAWS // (n + k)))
    observed = chi_square(counts) - 1e-9
    digest = hashlib.sha256(",".join(map(str, counts)).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    # sum((c - e)^2 / e) = sum(c^2) / e - n, as the counts add up to n: only the faces that came
    # up matter, and Counter counts them in C.
    expected = n / k
    faces = range(k)
    at_least = 0
    for _ in range(trials):
        fair = Counter(rng.choices(faces, k=n)).values()
        if sum(c * c for c in fair) / expected - n >= observed:
            at_least += 1
    return (at_least + 1) / (trials + 1)


@dataclass(frozen=True)
class DieStats:
    die: str  # "d20", "dF", ...
    faces: tuple[int, ...]  # the values it shows, lowest first
    counts: tuple[int, ...]  # how often each face came up
    n: int
    mean: float | None
    expected_mean: float
    chi2: float
    df: int
    p: float | None
    method: str  # "chi-square", "monte-carlo" or "none"
    needed: int  # rolls needed to notice a die that never shows its lowest face
    verdict: str  # "none", "too-few", "fair", "weak", "biased"
    sentence: str

    def as_dict(self) -> dict[str, object]:
        return {
            "die": self.die,
            "faces": list(self.faces),
            "counts": list(self.counts),
            "n": self.n,
            "mean": self.mean,
            "expected_mean": self.expected_mean,
            "chi2": round(self.chi2, 4),
            "df": self.df,
            "p": self.p,
            "method": self.method,
            "needed": self.needed,
            "verdict": self.verdict,
            "sentence": self.sentence,
        }


def _p_text(p: float) -> str:
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.3f}" if p < 0.01 else f"p = {p:.2f}"


def _plural(die: str, n: int) -> str:
    return f"{n} {die}{'' if n == 1 else 's'}"


def analyse(die: str, faces: Sequence[int], counts: Sequence[int]) -> DieStats:
    """Everything the table says about one kind of die: counts, mean, test and verdict."""
    if len(faces) != len(counts) or len(faces) < 2:
        raise ValueError("one count per face, and at least two faces")
    faces, counts = tuple(faces), tuple(counts)
    n, k = sum(counts), len(faces)
    expected_mean = sum(faces) / k
    needed = round_figure(rolls_needed(k))
    lowest = faces[0]
    never = f"a {die} that never shows {lowest}"
    if n == 0:
        return DieStats(
            die,
            faces,
            counts,
            0,
            None,
            expected_mean,
            0.0,
            k - 1,
            None,
            "none",
            needed,
            "none",
            f"no {die}s rolled yet",
        )
    mean = sum(f * c for f, c in zip(faces, counts, strict=True)) / n
    chi2 = chi_square(counts)
    if n / k >= MIN_EXPECTED or not simulated(n, k):
        p, method = chi2_sf(chi2, k - 1), "chi-square"
    else:
        p, method = monte_carlo_p(counts), "monte-carlo"
    rolled = _plural(die, n)
    if p < STRONG:
        verdict = "biased"
        sentence = f"{rolled}: strong sign of bias, {_p_text(p)}{_skew(faces, counts, n)}"
    elif n < needed and p >= ALPHA / 5:
        verdict = "too-few"
        sentence = f"{rolled}: too few rolls to tell: about {needed} are needed to notice {never}"
    elif p >= ALPHA:
        verdict = "fair"
        sentence = f"{rolled}: no sign of bias, {_p_text(p)}"
    elif p >= ALPHA / 5:
        verdict = "weak"
        sentence = (
            f"{rolled}: a weak sign of bias, {_p_text(p)}: one fair die in "
            f"{max(2, round(1 / p))} looks like this, so keep watching{_skew(faces, counts, n)}"
        )
    else:
        verdict = "biased"
        sentence = f"{rolled}: sign of bias, {_p_text(p)}{_skew(faces, counts, n)}"
    return DieStats(
        die,
        faces,
        counts,
        n,
        mean,
        expected_mean,
        chi2,
        k - 1,
        p,
        method,
        needed,
        verdict,
        sentence,
    )


def _skew(faces: tuple[int, ...], counts: tuple[int, ...], n: int) -> str:
    """Which face is furthest from its share, in words."""
    expected = n / len(faces)
    face, count = max(zip(faces, counts, strict=True), key=lambda fc: abs(fc[1] - expected))
    word = "too often" if count > expected else "too rarely"
    return f" ({face} came up {count} times, {word}: about {expected:.0f} expected)"


def faces_of(die: str, sides: int) -> tuple[int, ...]:
    """The values a die shows: 1..sides, or -1, 0, +1 for a Fudge die."""
    if die == "dF":
        return (-1, 0, 1)
    return tuple(range(1, sides + 1))
