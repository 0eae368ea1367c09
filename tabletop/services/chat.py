"""Talk at the table: messages in the session's log, as events of its store, with slash commands
typed in the same box as Roll20 and Dice Maiden users type them.

    I swing [[1d20+5]] and hit for [[2d6+3]]    a message with two inline rolls
    /me ducks behind the cart                   an emote
    /r 1d20+2 #init   /roll 2d6 Damage          a roll (``#init``: it enters the turn order)
    /gmr 1d100                                  a roll the GM and the roller see
    /w Bo meet me out back                      a whisper to one seat (``/w GM``: to the GM)

Every inline roll is a real roll of the session's fair stream, stored as a ``roll`` event of its
own (as hidden as its message) just before the message that names it, so it is verified like any
other. A whisper is seen by its sender and its recipient; the GM reads players' whispers to each
other only where the campaign says so (``gm_reads_whispers``, off unless the GM turns it on,
shown to the players, and written on each whisper as it was when it was sent).

``/help`` is answered by the page itself: it changes nothing at the table."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from ..models import Campaign, Event, GameSession, Seat, SessionStatus, Visibility
from ..selectors.campaigns import talk_settings
from .errors import ServiceError, conflict, forbidden, invalid
from .events import UnitOfWork, change, sent_by
from .initiative import enter_roller
from .rolls import CheckedRoll, check_roll, make_roll
from .store import seat_at_table, seated, take_seq, take_seq_reading_talk

MAX_MESSAGE_CHARS = 1000  # what one message may hold, as typed
MAX_INLINE_ROLLS = 5  # inline rolls in one message
MAX_INLINE_NOTATION = 100  # the characters of one inline roll's notation
INLINE = re.compile(r"\[\[(.*?)\]\]", re.DOTALL)
INITIATIVE_TAG = re.compile(r"(?<!\S)#init(?!\S)", re.IGNORECASE)
SLASH = re.compile(r"^/(\S+)\s*(.*)$", re.DOTALL)
# The slash commands, as ``/help`` lists them (static/tabletop/chat.js shows the same words).
COMMANDS = {
    "me": gettext_noop("/me TEXT: an emote (* Ana ducks)"),
    "r": gettext_noop("/r NOTATION [#init] [what for]: a roll everyone sees (also /roll)"),
    "gmr": gettext_noop("/gmr NOTATION: a roll only you and the GM see"),
    "w": gettext_noop("/w NAME TEXT: a whisper to one seat (/w GM: to the GM)"),
    "help": gettext_noop("/help: these commands"),
}
ALIASES = {"roll": "r"}


@dataclass(frozen=True)
class Said:
    """One line of the box, read: what it asks for (``say``, ``me``, ``roll``, ``whisper``), its
    text, and for a roll its visibility and whether it is for initiative."""

    what: str
    text: str
    visibility: str = Visibility.PUBLIC
    initiative: bool = False


def read_line(line: str) -> Said:
    """What a line typed in the box asks for; refuses unknown commands and empty ones."""
    line = line.strip()
    if not line:
        raise invalid(_("write something to say"), field="text")
    if line.startswith("//"):
        # "//" at the start: the message itself starts with "/" ("//shrug").
        return Said("say", line[1:])
    if not line.startswith("/"):
        return Said("say", line)
    match = SLASH.match(line)
    if match is None:  # "/" alone, or a space after it: an empty command, never a message
        raise invalid(
            _("name a command right after the /: /help lists them, and // starts a message with /"),
            field="text",
        )
    name, rest = match.group(1).lower(), match.group(2).strip()
    name = ALIASES.get(name, name)
    if name not in COMMANDS:
        raise invalid(
            _("there is no /%(name)s command: /help lists them") % {"name": name[:20]}, field="text"
        )
    if name == "help":
        raise invalid(_("/help is answered by the page: nothing to send"), field="text")
    if not rest:
        raise invalid(_(COMMANDS[name]), field="text")
    if name == "me":
        return Said("me", rest)
    if name == "w":
        return Said("whisper", rest)
    initiative = bool(INITIATIVE_TAG.search(rest))
    notation = " ".join(INITIATIVE_TAG.sub(" ", rest).split())
    if not notation:
        raise invalid(_("which dice: /r 1d20+2"), field="text")
    visibility = Visibility.GM if name == "gmr" else Visibility.PUBLIC
    if initiative and visibility != Visibility.PUBLIC:
        raise invalid(_("an initiative roll is public: everyone sees the turn order"), field="text")
    return Said("roll", notation, visibility=visibility, initiative=initiative)


def _notations(text: str) -> list[str]:
    """The inline rolls' notations, checked for count and length."""
    found = INLINE.findall(text)
    if len(found) > MAX_INLINE_ROLLS:
        raise invalid(
            _("at most %(count)d inline rolls in one message") % {"count": MAX_INLINE_ROLLS},
            field="text",
        )
    notations = []
    for i, notation in enumerate(found):
        notation = " ".join(notation.split())
        if not notation or len(notation) > MAX_INLINE_NOTATION:
            raise invalid(
                _(
                    "inline roll %(number)d needs dice between [[ and ]] (at most "
                    "%(count)d characters)"
                )
                % {"number": i + 1, "count": MAX_INLINE_NOTATION},
                field="text",
            )
        notations.append(notation)
    return notations


def _refused_roll(exc: ServiceError, i: int | None, notation: str) -> ServiceError:
    """A roll's refusal as the line's (field ``text``), naming the roll: an inline one by its
    place (the message is refused whole), a slash command's by its notation."""
    which = (
        _("inline roll %(number)d ([[%(notation)s]])") % {"number": i + 1, "notation": notation}
        if i is not None
        else _("the roll %(notation)s") % {"notation": repr(notation)}
    )
    error = ServiceError(exc.code, f"Text: {which}: {exc.message}", field="text")
    if hasattr(exc, "cost"):  # dice drawn before the refusal still count against the budgets
        error.cost = exc.cost
    return error


@dataclass(frozen=True)
class Line:
    """A line of the box, read and checked (``check_line``): what it asks for, and its rolls
    checked once, each by its notation (a roll line's one, or the inline rolls')."""

    said: Said
    rolls: Mapping[str, CheckedRoll]
    client_seed: str = ""


class LineValues(TypedDict):
    """What the chat command's handler takes: the line, checked."""

    line: Line


def _checked_roll(table: str, notation: str, *, visibility: str, client_seed: str) -> CheckedRoll:
    return check_roll(
        table=table,
        request={"notation": notation},
        system="generic",
        visibility=visibility,
        client_seed=client_seed,
    )


def _inline_visibility(said: Said) -> str:
    """A message's inline rolls are as hidden as it is (a whisper's)."""
    return Visibility.WHISPER if said.what == "whisper" else Visibility.PUBLIC


def check_line(*, table: str, text: str, client_seed: str = "") -> LineValues:
    """What of a line can be refused with no database (``Command.precheck``, before the
    line waits for the database thread): an unknown command, too many
    inline rolls, and rolls their engine refuses or that would list too many dice. Every roll
    of the line is checked here, once, for a table playing ``table``."""
    said = read_line(text)
    if said.what == "roll":
        try:
            rolled = _checked_roll(
                table, said.text, visibility=said.visibility, client_seed=client_seed
            )
        except ServiceError as exc:
            raise _refused_roll(exc, None, said.text) from None
        return {"line": Line(said, {said.text: rolled}, client_seed)}
    visibility = _inline_visibility(said)
    rolls: dict[str, CheckedRoll] = {}
    for i, notation in enumerate(_notations(said.text)):
        try:
            rolls[notation] = _checked_roll(
                table, notation, visibility=visibility, client_seed=client_seed
            )
        except ServiceError as exc:
            raise _refused_roll(exc, i, notation) from None
    return {"line": Line(said, rolls, client_seed)}


def _recipient(seat: Seat, rest: str) -> tuple[Seat, str]:
    """The seat a whisper is for (the longest seat name its text starts with; "GM" is the GM)
    and the whisper's text. The sender's own name is read too (the other seats first, so one
    of theirs wins a tie), so a whisper to oneself is told so, not that nobody has that name."""
    seats = sorted(
        Seat.objects.filter(session_id=seat.session_id, removed_at__isnull=True),
        key=lambda s: s.pk == seat.pk,
    )
    folded = rest.casefold()
    best: tuple[Seat, str] | None = None
    for other in seats:
        for name in (other.name, "GM") if other.is_gm else (other.name,):
            key = name.casefold()
            whole = folded.startswith(key) and folded[len(key) : len(key) + 1] in ("", " ")
            if whole and (best is None or len(name) > len(best[1])):
                best = (other, name)
    if best is None:
        first = rest.split()[0][:40] if rest.split() else ""
        raise invalid(
            _("nobody named %(name)s sits at this table") % {"name": repr(first)}, field="text"
        )
    if best[0].pk == seat.pk:
        raise invalid(_("you cannot whisper to yourself"), field="text")
    text = rest[len(best[1]) :].strip()
    if not text:
        raise invalid(_("what to whisper to %(name)s") % {"name": best[0].name}, field="text")
    return best[0], text


def _inline_rolls(
    uow: UnitOfWork,
    *,
    seat: Seat,
    text: str,
    line: Line,
    marks: dict[str, Any],
) -> list[dict[str, Any]]:
    """Each ``[[notation]]`` of ``text`` rolled from the fair stream, as its own roll event
    (with the sender's client seed: each at its own seq, so each is a stream of its own)."""
    rolls = []
    for i, notation in enumerate(_notations(text)):
        try:
            checked = line.rolls.get(notation)
            if checked is None:  # cut out of the line by a name (``/w Bo[[x]] ...``): unchecked
                checked = _checked_roll(
                    seat.session.campaign.system,
                    notation,
                    visibility=_inline_visibility(line.said),
                    client_seed=line.client_seed,
                )
            event = make_roll(
                uow=uow,
                seat_id=seat.pk,
                roll=checked,
                marks={**marks, "in_message": True},
            )
        except ServiceError as exc:  # the message is refused whole, naming the roll
            raise _refused_roll(exc, i, notation) from None
        rolls.append(
            {
                "seq": event.seq,
                "notation": notation,
                "total": event.data.get("total"),
                "text": event.data.get("text") or "",
            }
        )
    return rolls


def _locked_reading_talk(session_id: int) -> tuple[str, Any]:
    """The session locked (its status) and its campaign's talk settings, in one statement,
    without taking a seq. Only the session's row is locked, as a change of the room locks it."""
    status, talk = (
        GameSession.objects.select_for_update(of=("self",))
        .values_list("status", "campaign__talk")
        .get(pk=session_id)
    )
    return status, talk


def _marks(data: dict[str, Any]) -> dict[str, Any]:
    """What a message's inline rolls carry of it: to whom a whisper goes, whether the GM reads."""
    return {k: data[k] for k in ("to", "gm_reads") if k in data}


def send_message(*, uow: UnitOfWork | None = None, seat_id: int, line: Line) -> Event:
    """One line of the box, checked (``check_line``): a message, an emote, a whisper or a roll;
    its rolls take the line's client seed (none: each gets a fresh random one, as any roll
    does)."""
    seat = seated(seat_id, sent=sent_by(uow))
    said = line.said
    if said.what == "roll":
        with change(uow) as uow:
            try:
                roll = make_roll(uow=uow, seat_id=seat.pk, roll=line.rolls[said.text])
            except ServiceError as exc:
                if exc.field is None:  # not the notation's fault (the session is not live)
                    raise
                raise _refused_roll(exc, None, said.text) from None
            if said.initiative:
                enter_roller(uow, seat=seat, roll=roll, name=roll.data.get("label") or "")
            return roll
    if seat.session.status == SessionStatus.ENDED:
        raise conflict(_("the session has ended: its log does not change"))
    data: dict[str, Any] = {}
    visibility = Visibility.PUBLIC
    body = said.text
    gm_in_it = False  # a whisper to or from the GM: the GM reads it, whatever the campaign says
    if said.what == "whisper":
        to, body = _recipient(seat, said.text)
        visibility = Visibility.WHISPER
        data["to"] = {"seat": to.pk, "name": to.name}
        gm_in_it = to.is_gm or seat.is_gm
    with change(uow) as uow:
        # The campaign's talk settings are read with the session locked, as ``set_talk`` locks
        # it to change them: a message carries the settings in force at its place in the log,
        # not as they stood when the seat was read. A whisper's inline rolls carry whether the
        # GM reads them, and come before it (their seqs first): for those alone the session is
        # locked, and the settings read, ahead of the rolls.
        talk: Any = None
        if said.what == "whisper" and _notations(body):
            status, talk = _locked_reading_talk(seat.session_id)
            if status == SessionStatus.ENDED:
                raise conflict(_("the session has ended: its log does not change"))
            data["gm_reads"] = gm_in_it or talk_settings(talk)["gm_reads_whispers"]
        rolls = _inline_rolls(uow, seat=seat, text=body, line=line, marks=_marks(data))
        taken, read = take_seq_reading_talk(session_id=seat.session_id, sent=uow.sent)
        if taken.status == SessionStatus.ENDED:
            raise conflict(_("the session has ended: its log does not change"))
        settings = talk_settings(talk if talk is not None else read)
        if said.what == "whisper":
            data["gm_reads"] = gm_in_it or settings["gm_reads_whispers"]
        if said.what == "me":
            data["me"] = True
        if visibility == Visibility.PUBLIC and settings["to_webhooks"]:
            data["webhooks"] = True
        return uow.record(
            session_id=seat.session_id,
            kind="chat",
            actor=seat,
            visibility=visibility,
            seq=taken.seq,
            data={"message": body, **({"rolls": rolls} if rolls else {}), **data},
        )


def set_talk(
    *,
    uow: UnitOfWork | None = None,
    seat_id: int,
    gm_reads_whispers: bool | None = None,
    to_webhooks: bool | None = None,
) -> Event:
    """The GM changes the campaign's talk settings; the room is told (players see whether the
    GM can read their whispers to each other). Whispers already sent keep what they said."""
    seat = seat_at_table(seat_id, sent=sent_by(uow))
    if not seat.is_gm:
        raise forbidden(_("only the GM changes the table's talk settings"))
    with change(uow) as uow:
        taken = take_seq(session_id=seat.session_id, sent=uow.sent)
        if taken.status == SessionStatus.ENDED:
            raise conflict(_("the session has ended: its log does not change"))
        campaign = Campaign.objects.select_for_update().get(pk=seat.session.campaign_id)
        talk = talk_settings(campaign.talk)
        if gm_reads_whispers is not None:
            talk["gm_reads_whispers"] = gm_reads_whispers
        if to_webhooks is not None:
            talk["to_webhooks"] = to_webhooks
        Campaign.objects.filter(pk=campaign.pk).update(talk=talk)
        words = [
            "the GM can read whispers between players"
            if talk["gm_reads_whispers"]
            else "whispers between players are theirs alone",
            "public messages go to the table's webhooks"
            if talk["to_webhooks"]
            else "messages stay at the table",
        ]
        return uow.record(
            session_id=seat.session_id,
            kind="chat.settings",
            actor=seat,
            seq=taken.seq,
            data={"talk": talk, "text": "Talk at the table: " + "; ".join(words)},
        )
