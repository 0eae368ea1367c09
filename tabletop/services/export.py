"""A session's record to take away: the events a viewer may see, as JSON (which the verifier in
``docs/fairness.md`` checks offline), Markdown (play-by-post, campaign notes) and printable HTML.

Everything comes from the event store, redacted for the viewer exactly as the socket does."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
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


# A record is read from the store this many events at a time (a few milliseconds of the
# database thread each), written out and let go before the next page is read.
EXPORT_PAGE = 100


@dataclass(frozen=True)
class Record:
    """What a record says before its events (``head``: format, when, whose view, the session,
    its fairness) and whose view its events are read in; the events are read page by page."""

    session: GameSession
    viewer: Viewer
    viewer_label: str
    head: dict[str, Any]

    @property
    def everything(self) -> bool:
        return self.viewer is EVERYTHING and self.session.status == SessionStatus.ENDED

    def page(self, after: int) -> list[dict[str, Any]]:
        """The next page of events after seq ``after``, as this record's viewer sees them."""
        events = events_after(session_id=self.session.pk, after=after, limit=EXPORT_PAGE)
        if self.everything:
            return [for_everyone(e) for e in events]
        return [for_viewer(e, self.viewer) for e in events]

    def pages(self) -> Iterator[list[dict[str, Any]]]:
        after = 0
        while page := self.page(after):
            yield page
            after = page[-1]["seq"]


def session_record(*, session: GameSession, viewer: Viewer, viewer_label: str) -> Record:
    """The events ``viewer`` may see, with the commitment and (after the end) the seed."""
    head = {
        "format": RECORD_FORMAT,
        "exported_at": timezone.now().isoformat().replace("+00:00", "Z"),
        "viewer": viewer_label,
        "session": without_invite(session_summary(session))
        if viewer is SPECTATOR
        else session_summary(session),
        "fairness": fairness(session),
    }
    return Record(session=session, viewer=viewer, viewer_label=viewer_label, head=head)


def spectator_record(session: GameSession) -> Record:
    return session_record(session=session, viewer=SPECTATOR, viewer_label="spectator")


def filename(record: Record, fmt: str) -> str:
    slug = "".join(c if c.isalnum() else "-" for c in record.session.title.lower()).strip("-")
    # (never a piece of the invite code: spectators download these too)
    when = record.session.started_at or record.session.created_at
    return f"{slug or 'session'}-{when:%Y-%m-%d}.{fmt}"


class Writer:
    """One format's text in three parts: before the events, a page of events, after them.
    ``events`` counts what it wrote (the printable page says when there was nothing)."""

    def __init__(self, record: Record) -> None:
        self.record = record
        self.events = 0

    def start(self) -> str:
        raise NotImplementedError

    def page(self, events: list[dict[str, Any]]) -> str:
        raise NotImplementedError

    def end(self) -> str:
        raise NotImplementedError


class JsonWriter(Writer):
    def start(self) -> str:
        # The head as before, its events list opened: every event on a line of its own.
        head = json.dumps({**self.record.head, "events": []}, indent=1, ensure_ascii=False)
        return head[: -len("[]\n}")] + "["

    def page(self, events: list[dict[str, Any]]) -> str:
        lines = [json.dumps(e, ensure_ascii=False) for e in events]
        first, self.events = self.events == 0, self.events + len(events)
        return ("\n  " if first else ",\n  ") + ",\n  ".join(lines)

    def end(self) -> str:
        return ("\n " if self.events else "") + "]\n}\n"


class MarkdownWriter(Writer):
    def start(self) -> str:
        return markdown_head(self.record.head)

    def page(self, events: list[dict[str, Any]]) -> str:
        self.events += len(events)
        return "".join(
            f"{line}\n"
            for event in events
            if not unseen_whisper(event)
            for line in markdown_lines(event)
        )

    def end(self) -> str:
        return markdown_foot(self.record.head)


class HtmlWriter(Writer):
    MARK = "\x00rows\x00"

    def __init__(self, record: Record) -> None:
        super().__init__(record)
        page = render_to_string(
            "tabletop/export.html",
            {"record": record.head, "viewer": record.viewer_label, "rows": mark_safe(self.MARK)},
        )
        self.head, self.foot = page.split(self.MARK)

    def start(self) -> str:
        return self.head

    def page(self, events: list[dict[str, Any]]) -> str:
        self.events += len(events)
        return render_to_string("tabletop/export_rows.html", {"rows": html_rows(events)})

    def end(self) -> str:
        empty = "" if self.events else "<li>Nothing has happened yet.</li>\n"
        return empty + self.foot


WRITERS: dict[str, type[Writer]] = {"json": JsonWriter, "md": MarkdownWriter, "html": HtmlWriter}


def chunks(record: Record, writer: Writer) -> Iterator[str]:
    """The record as ``writer`` writes it, a page of events at a time (for a file or a
    command's output; the web streams it with ``tabletop/views/export.py``)."""
    yield writer.start()
    for page in record.pages():
        yield writer.page(page)
    yield writer.end()


def render(record: Record, fmt: str) -> str:
    """The whole record as one text (small records, tests)."""
    return "".join(chunks(record, WRITERS[fmt](record)))


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
    if kind == "roll" and isinstance(text, str) and text.startswith(f"{name}:"):
        return text  # a record whose roll line already named its roller
    if kind in ("roll", "roll.reveal") or not (isinstance(text, str) and text):
        return log_line(kind=kind, data=data, actor=name)
    return text


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~!])")


def markdown_text(text: str) -> str:
    """Text a player or GM typed, as Markdown that shows it as typed: HTML's ``&``, ``<`` and
    ``>`` as entities, Markdown's marks backslashed, and web addresses not made into links."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text.replace("\n", " ").replace("\r", " "))
    # (a bare address would become a link in most readers: break its "://" and "www.")
    text = re.sub(r"(?i)(\w)://", r"\1\\://", text)
    return re.sub(r"(?i)\bwww\.", r"www\\.", text)


# The engines' marks around dice faces (digits, signs, ^ v ! m, groups): only these stay
# Markdown's own; marks around anything else were typed by someone and are shown as typed.
_FACES = r"[-+\d^v!m,{} ]+?"
_DICE_MARKS = re.compile(rf"~~({_FACES})~~|\*\*({_FACES})\*\*|\b_(-?\d+)_\b")


def markdown_line(line: str, *, name: str = "") -> str:
    """An event's line as Markdown: escaped, but the engines' marks (struck, success,
    failure) on dice kept as Markdown's own. ``name``: the actor's name, when the line starts
    with it (escaped whole: a name is never marks)."""
    if name and line.startswith(name):
        return markdown_text(name) + markdown_line(line[len(name) :])
    out, at = [], 0
    for match in _DICE_MARKS.finditer(line):
        out.append(markdown_text(line[at : match.start()]))
        struck, hit, miss = match.groups()
        if struck is not None:
            out.append(f"~~{markdown_text(struck)}~~")
        elif hit is not None:
            out.append(f"**{markdown_text(hit)}**")
        else:
            out.append(f"_{miss}_")
        at = match.end()
    out.append(markdown_text(line[at:]))
    return "".join(out)


def markdown_head(head: dict[str, Any]) -> str:
    s = head["session"]
    fair = head["fairness"]
    out = [
        f"# {markdown_text(s['title'])}",
        "",
        f"*{markdown_text(s['campaign'])}* · {markdown_text(s['system'])} · {s['status']}"
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
    return "".join(f"{line}\n" for line in out)


def markdown_lines(event: dict[str, Any]) -> list[str]:
    line = markdown_line(event_line(event), name=who(event))
    lock = "(hidden) " if event["visibility"] != "public" else ""
    out = [f"- **#{event['seq']}** {_when(event['at'])} {lock}{line}"]
    dice = (event.get("data") or {}).get("dice")
    if dice and event["kind"] == "roll":
        out.append(f"  - dice: {markdown_text(dice_text(dice))}")
    return out


def markdown_foot(head: dict[str, Any]) -> str:
    return (
        f"\n_Exported {head['exported_at'][:19].replace('T', ' ')} UTC, "
        f"as seen by: {markdown_text(head['viewer'])}._\n"
    )


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


def unseen_whisper(event: dict[str, Any]) -> bool:
    """A whisper this record's viewer may not read: left out of the readable records (the JSON
    record keeps its seq, with no sender, so its numbering has no gap)."""
    return event["visibility"] == "whisper" and bool((event.get("data") or {}).get("hidden"))


def html_rows(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for event in events:
        if unseen_whisper(event):
            continue
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
    return rows
