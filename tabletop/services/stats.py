"""Dice statistics from the event store (no second record): per seat and die, and for the whole
table, over a session or a campaign, counting only the dice the viewer may see.

The maths is ``rules/stats.py``'s; this module reads events and decides what counts."""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache
from typing import Any

from rules.stats import analyse, faces_of

from ..models import Campaign, Event, GameSession, SessionStatus, Visibility
from ..selectors.events import Viewer, can_see
from . import Visitor
from .sessions import check_runs_campaign

WHOLE_TABLE = "Whole table"


@lru_cache(maxsize=4096)
def _analysed(die: str, faces: tuple[int, ...], counts: tuple[int, ...]) -> dict[str, Any]:
    # After a roll only its die's groups have new counts: the others are answered from here.
    return analyse(die, faces, counts).as_dict()


MAX_SIDES = 1000  # the engines' largest die (docs/rules.md, "Limits")


class Tally:
    """Face counts per (who, die), filled event by event."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.sides: dict[str, int] = {}
        self.rolls = 0  # events whose dice were counted
        self.rolls_by: dict[str, int] = defaultdict(int)  # the same, per seat
        self.hidden = 0  # events with dice the viewer may not see (not counted)

    def add_dice(self, who: str, dice: Any) -> bool:
        if not isinstance(dice, list):
            return False
        counted = False
        for die in dice:
            if not isinstance(die, dict):
                continue
            label, sides, value = die.get("die"), die.get("sides"), die.get("value")
            if (
                not isinstance(sides, int)
                or not isinstance(value, int)
                or not 2 <= sides <= MAX_SIDES
            ):
                continue
            label = label if label == "dF" else f"d{sides}"
            self.sides[label] = sides
            self.counts[(who, label)][value] += 1
            self.counts[(WHOLE_TABLE, label)][value] += 1
            counted = True
        return counted

    def report(self) -> list[dict[str, Any]]:
        """One entry per seat (the whole table first), each with one analysis per die."""
        people: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for (who, label), by_face in self.counts.items():
            faces = faces_of(label, self.sides[label])
            counts = tuple(by_face.get(f, 0) for f in faces)
            people[who].append(_analysed(label, faces, counts))
        order = sorted(people, key=lambda w: (w != WHOLE_TABLE, w.lower()))
        return [
            {
                "who": who,
                "rolls": self.rolls if who == WHOLE_TABLE else self.rolls_by[who],
                "dice": sorted(people[who], key=lambda d: (d["die"] != "dF", len(d["faces"]))),
            }
            for who in order
        ]


Row = tuple[int, str, int | None, str, int | None, str, dict[str, Any]]


def tally_rows(
    tally: Tally, rows: Iterable[Row], viewer: Viewer | None, counted: set[int | None]
) -> int:
    """Count the dice of one session's ``rows`` (seq, kind, actor id, actor name, owner id,
    visibility, data) that ``viewer`` may see; ``None`` is the GM once the session has ended,
    who sees every roll but the whispers the GM could not read. A revealed roll counts
    once: at the roll, or at its reveal for whoever could not see the roll itself (``counted``
    holds the hidden rolls already counted). Answers the last seq read."""
    last = 0
    for seq, kind, actor_id, actor_name, owner_id, visibility, data in rows:
        last = seq
        if not isinstance(data, dict):
            continue
        if kind == "roll.reveal":
            original = data.get("seq")
            roll = data.get("roll") or {}
            if original in counted or not isinstance(roll, dict):
                continue
            roller = (data.get("roller") or {}).get("name") or actor_name or "?"
            if tally.add_dice(roller, roll.get("dice")):
                counted.add(original)
                tally.rolls += 1
                tally.rolls_by[roller] += 1
                tally.hidden -= 1  # it was hidden from this viewer, and now counts
            continue
        if "dice" not in data:
            continue
        if not _counts_for(
            viewer, visibility, owner_id if owner_id is not None else actor_id, data
        ):
            # Others' whispers (their inline rolls) are not even counted as hidden.
            tally.hidden += visibility != Visibility.WHISPER
            continue
        who = actor_name or "The table"
        if tally.add_dice(who, data["dice"]):
            if visibility != "public":  # (only a hidden roll can be revealed later)
                counted.add(seq)
            tally.rolls += 1
            tally.rolls_by[who] += 1
    return last


def _counts_for(
    viewer: Viewer | None, visibility: str, owner: int | None, data: dict[str, Any]
) -> bool:
    """Whether an event's dice are ``viewer``'s to count. The end of the session reveals every
    hidden roll to the GM (``None``), not a whisper: a whisper stays its sender's and its
    recipient's, and the GM's only where the GM could read it when it was sent (``gm_reads``:
    to or from the GM, or the campaign let the GM read players' whispers)."""
    gm_reads = bool(data.get("gm_reads"))
    if viewer is None:
        return visibility != Visibility.WHISPER or gm_reads
    to = (data.get("to") or {}).get("seat")
    return can_see(
        visibility=visibility, actor_seat_id=owner, viewer=viewer, to=to, gm_reads=gm_reads
    )


def _rows(session_ids: list[int], after: int = 0) -> Iterable[tuple[int, Row]]:
    fields = (
        "session_id",
        "seq",
        "kind",
        "actor_id",
        "actor_name",
        "owner_id",
        "visibility",
        "data",
    )
    qs = Event.objects.filter(session_id__in=session_ids, seq__gt=after)
    qs = qs.order_by("session_id", "seq")
    for session_id, *row in qs.values_list(*fields).iterator(chunk_size=2000):
        yield session_id, tuple(row)  # type: ignore[misc]


def stats_viewer(session: GameSession, viewer: Viewer) -> Viewer | None:
    """Whom the numbers are for: the GM counts every roll the end revealed once it has ended."""
    if viewer.is_gm and session.status == SessionStatus.ENDED:
        return None
    return viewer


# Each viewer's tally of a session, kept per process and brought up to date from the events
# after its last seq (events never change): a refresh after a roll reads one event, not all.
# (session id, commitment, created at), and the viewer's (seat id, is GM) or None for all.
_TallyKey = tuple[tuple[int, str, datetime], tuple[int | None, bool] | None]
_tallies: OrderedDict[_TallyKey, tuple[Tally, set[int | None], int]] = OrderedDict()
_tallies_lock = threading.Lock()
TALLIES = 512


def session_stats(*, session: GameSession, viewer: Viewer | None) -> dict[str, Any]:
    who = stats_viewer(session, viewer) if viewer else None
    # (the commitment and creation time tell a session from another that took its id)
    session_key = (session.pk, session.commitment, session.created_at)
    key = (session_key, None if who is None else (who.seat_id, who.is_gm))
    with _tallies_lock:
        entry = _tallies.pop(key, None)  # taken: no other thread adds to it meanwhile
    tally, counted, last = entry if entry is not None else (Tally(), set(), 0)
    read = tally_rows(tally, (row for _, row in _rows([session.pk], after=last)), who, counted)
    report = _report("session", session.title, tally)
    with _tallies_lock:
        _tallies[key] = (tally, counted, max(last, read))
        while len(_tallies) > TALLIES:
            _tallies.popitem(last=False)
    return report


def forget_tallies() -> None:
    """Drop what this process keeps between requests (the tallies and the analyses of counts),
    so the next request counts from the store: what a request costs on a fresh process."""
    with _tallies_lock:
        _tallies.clear()
    _analysed.cache_clear()


def campaign_stats(*, campaign: Campaign, user: Visitor) -> dict[str, Any]:
    """Every session of the campaign, for its GM: hidden rolls of ended sessions count too."""
    check_runs_campaign(user=user, campaign=campaign)
    return campaign_stats_for_gm(campaign=campaign)


def campaign_stats_for_gm(*, campaign: Campaign) -> dict[str, Any]:
    sessions = {s.pk: s for s in GameSession.objects.filter(campaign=campaign)}
    gm_view = Viewer(seat_id=None, is_gm=True)
    tally = Tally()
    current: int | None = None
    batch: list[Row] = []
    for session_id, row in _rows(list(sessions)):
        if session_id != current and batch:
            viewer = stats_viewer(sessions[current], gm_view)  # type: ignore[index]
            tally_rows(tally, batch, viewer, set())
            batch = []
        current = session_id
        batch.append(row)
    if batch and current is not None:
        tally_rows(tally, batch, stats_viewer(sessions[current], gm_view), set())
    return _report("campaign", campaign.name, tally)


def _report(scope: str, title: str, tally: Tally) -> dict[str, Any]:
    return {
        "scope": scope,
        "title": title,
        "rolls": tally.rolls,
        "hidden": max(0, tally.hidden),
        "seats": tally.report(),
    }


def stats_text(report: dict[str, Any]) -> str:
    """The report as plain text (``manage.py dicestats``)."""
    lines = [
        f"Dice statistics: {report['scope']} {report['title']!r}, {report['rolls']} rolls counted"
    ]
    if report["hidden"]:
        lines.append(f"({report['hidden']} hidden rolls not counted)")
    for seat in report["seats"]:
        lines.append("")
        lines.append(seat["who"])
        for die in seat["dice"]:
            mean = "-" if die["mean"] is None else f"{die['mean']:.2f}"
            lines.append(f"  {die['sentence']}")
            lines.append(
                f"    mean {mean} (fair: {die['expected_mean']:.2f}); "
                f"chi-square {die['chi2']:.2f}, "
                f"{die['df']} df, {die['method']}"
            )
            lines.append(
                "    faces "
                + " ".join(f"{f}:{c}" for f, c in zip(die["faces"], die["counts"], strict=True))
            )
    return "\n".join(lines) + "\n"
