"""A session's record to take away: the events a viewer may see, as JSON (which the verifier in
``docs/fairness.md`` checks offline), Markdown (play-by-post, campaign notes) and printable HTML.

Everything comes from the event store, redacted for the viewer exactly as the socket does."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import mark_safe

from ..models import GameSession, Seat, SessionStatus
from ..protocol.events import log_line
from ..selectors.events import Viewer, events_after, for_everyone, for_viewer
from ..selectors.room import fairness, session_summary
from .watch import SPECTATOR, without_invite

FORMATS = {"json": "application/json", "md": "text/markdown", "html": "text/html"}
RECORD_FORMAT = "tabletop-record/1"


def viewer_for_seat(seat: Seat) -> Viewer:
    return Viewer(seat_id=seat.pk, is_gm=seat.is_gm)


# The whole record, hidden rolls and all: for the server's operator (``manage.py export --as all``)
# once the session has ended; before the end the GM's view is the most anyone gets.
EVERYTHING = Viewer(seat_id=-1, is_gm=True)


@dataclass(frozen=True)
class Record:
    session: GameSession
    viewer_label: str
    body: dict[str, Any]

    @property
    def events(self) -> list[dict[str, Any]]:
        return self.body["events"]


def session_record(*, session: GameSession, viewer: Viewer, viewer_label: str) -> Record:
    """The events ``viewer`` may see, with the commitment and (after the end) the seed."""
    everything = viewer is EVERYTHING and session.status == SessionStatus.ENDED
    events = [
        for_everyone(e) if everything else for_viewer(e, viewer)
        for e in events_after(session_id=session.pk, after=0)
    ]
    body = {
        "format": RECORD_FORMAT,
        "exported_at": timezone.now().isoformat().replace("+00:00", "Z"),
        "viewer": viewer_label,
        "session": without_invite(session_summary(session))
        if viewer is SPECTATOR
        else session_summary(session),
        "fairness": fairness(session),
        "events": events,
    }
    return Record(session=session, viewer_label=viewer_label, body=body)


def spectator_record(session: GameSession) -> Record:
    return session_record(session=session, viewer=SPECTATOR, viewer_label="spectator")


def filename(record: Record, fmt: str) -> str:
    slug = "".join(c if c.isalnum() else "-" for c in record.session.title.lower()).strip("-")
    # (never a piece of the invite code: spectators download these too)
    when = record.session.started_at or record.session.created_at
    return f"{slug or 'session'}-{when:%Y-%m-%d}.{fmt}"


def render(record: Record, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(record.body, indent=1, ensure_ascii=False) + "\n"
    if fmt == "md":
        return to_markdown(record)
    if fmt == "html":
        return to_html(record)
    raise ValueError(fmt)


# --- lines a reader understands --------------------------------------------------------------
def _when(at: str) -> str:
    try:
        moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return at
    return moment.strftime("%H:%M:%S")


def who(event: dict[str, Any]) -> str:
    actor = event.get("actor") or {}
    return actor.get("name") or "The table"


def dice_text(dice: list[dict[str, Any]]) -> str:
    return " ".join(
        f"{d.get('die', '?')}:{d.get('value')}"
        + ("" if d.get("role") in (None, "base", "kept") else f"({d['role']})")
        for d in dice
    )


def event_line(event: dict[str, Any]) -> str:
    """One human line for an event, as the log shows it (without the time and number): the
    event's own line where it carries one, else the event catalogue's."""
    data = event.get("data") or {}
    name = who(event)
    kind = event["kind"]
    if data.get("hidden"):
        return f"{name}: a hidden {'roll' if kind == 'roll' else kind} (only its number is shown)"
    if data.get("too_large"):
        return f"{name}: {kind} (too large to show here; it is in the full record)"
    text = data.get("text")
    if isinstance(text, str) and text:
        # A roll's line names its roller (older records' lines did not: name them here).
        return f"{name}: {text}" if kind == "roll" and not text.startswith(name) else text
    return log_line(kind=kind, data=data, actor=name)


def to_markdown(record: Record) -> str:
    s = record.body["session"]
    fair = record.body["fairness"]
    out = [
        f"# {s['title']}",
        "",
        f"*{s['campaign']}* · {s['system']} · {s['status']}"
        + (f" · started {s['started_at'][:16].replace('T', ' ')}" if s["started_at"] else "")
        + (f" · ended {s['ended_at'][:16].replace('T', ' ')}" if s["ended_at"] else ""),
        "",
        f"Fair dice: commitment `{fair['commitment'] or 'none yet'}`"
        + (
            f", server seed `{fair['server_seed']}`"
            if fair["server_seed"]
            else " (the seed is revealed when the session ends)"
        ),
        "",
    ]
    for event in record.events:
        line = event_line(event).replace("\n", " ")
        lock = "🔒 " if event["visibility"] != "public" else ""
        out.append(f"- **#{event['seq']}** {_when(event['at'])} {lock}{line}")
        dice = (event.get("data") or {}).get("dice")
        if dice and event["kind"] == "roll":
            out.append(f"  - dice: {dice_text(dice)}")
    out += [
        "",
        f"_Exported {record.body['exported_at'][:19].replace('T', ' ')} UTC, "
        f"as seen by: {record.viewer_label}._",
        "",
    ]
    return "\n".join(out)


# The engines' lines mark dice that do not count (~~x~~), successes (**x**) and failures (_x_).
_MARKS = re.compile(r"~~(.+?)~~|\*\*(.+?)\*\*|\b_(-?\d+)_\b")


def rich_html(text: str) -> str:
    """An engine's line as HTML: escaped, its marks as <s>, <b> and <em>."""

    def mark(match: re.Match[str]) -> str:
        struck, hit, miss = match.groups()
        if struck is not None:
            return f"<s>{struck}</s>"
        return f"<b>{hit}</b>" if hit is not None else f"<em>{miss}</em>"

    return mark_safe(_MARKS.sub(mark, escape(text)))  # (escaped first)


def to_html(record: Record) -> str:
    rows = []
    for event in record.events:
        data = event.get("data") or {}
        rows.append(
            {
                "seq": event["seq"],
                "at": _when(event["at"]),
                "kind": event["kind"],
                "hidden": event["visibility"] != "public",
                "line": rich_html(event_line(event)),
                "dice": dice_text(data["dice"])
                if data.get("dice") and event["kind"] == "roll"
                else "",
            }
        )
    return render_to_string(
        "tabletop/export.html",
        {"record": record.body, "viewer": record.viewer_label, "rows": rows},
    )
