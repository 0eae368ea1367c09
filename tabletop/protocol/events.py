"""Events out: one typed definition per event kind (and per ``action`` of a ``pool`` event),
with who may see it and the line a person reads in the log.

Every stored event is checked against this catalogue in the test suite (as a client would
read it), and ``docs/protocol.md``'s event tables are tested against it, so neither drifts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rules.engines import RuleError
from rules.engines.schema import Field, validate

PUBLIC = frozenset({"public"})
ANY = frozenset({"public", "gm", "blind", "self"})
SAID = frozenset({"public", "whisper"})
TURN_ACTIONS = ("enter", "add", "remove", "turn", "next", "round", "delay", "act", "clear")

LogLine = Callable[[Mapping[str, Any], str], str]


def _text(data: Mapping[str, Any], actor: str) -> str:
    return str(data.get("text") or "")


@dataclass(frozen=True)
class EventType:
    kind: str
    action: str | None  # a ``pool`` event's ``data.action``; None for other kinds
    fields: tuple[Field, ...]  # its ``data``, field by field (``action`` included)
    visibilities: frozenset[str]  # what its ``visibility`` may be
    rule: str  # who sees it, in words (docs/protocol.md)
    doc: str  # what it records, one line (docs/protocol.md)
    line: LogLine = _text  # the log line a person reads
    # Beyond the fields declared here, data carries an engine's result (docs/rules.md, "Results").
    open_ended: bool = False
    # Among several shapes of one action: whether ``data`` is this one.
    matches: Callable[[Mapping[str, Any]], bool] = lambda data: True
    # The stored ``data.text`` is this line (the services' words give way to it); otherwise
    # the line is for reading the record (exports, the log) and the stored data stays as made.
    writes_text: bool = False

    @property
    def name(self) -> str:
        return f"{self.kind}/{self.action}" if self.action else self.kind


class EventShapeError(AssertionError):
    """A stored event that its catalogue entry does not describe."""


def int_field(name: str, **kw: Any) -> Field:
    return Field(name, "int", min=kw.pop("min", None), max=kw.pop("max", None), **kw)


def obj_field(name: str, **kw: Any) -> Field:
    return Field(name, "json", **kw)


def objs_field(name: str, **kw: Any) -> Field:
    return Field(name, "list", fields=(Field("item", "json"),), **kw)


TEXT = Field("text", "text", required=True, max_length=2000, help="the log line")
ACTION = Field("action", "text", required=True)
ROLL_SEQ = int_field("roll", min=1, nullable=True, help="the roll it is about (a seq)")
POOLS = objs_field("pools", help="the new state of every pool it changed")
RESOURCES = objs_field("resources", help="the new amount of every resource it changed")
CHARACTER = obj_field("character", help='{"id", "name"}')
SEAT = int_field("seat", min=1, help="a seat id")
COUNT = int_field("count", min=0)
OPEN_ROLL = obj_field("open_roll", nullable=True, help="the roll's new open-roll state")
TABLE = obj_field("table", help="the table's new rule state (hello.state.table)")
NOTE = Field("note", "text", max_length=200)
DICE = objs_field("dice", help="dice drawn, verifiable like a roll's")
CLIENT_SEED = Field("client_seed", "text", max_length=200)


@dataclass(frozen=True)
class UseWords:
    """How a spend's ``use`` reads in the log (the protocol's id stays in ``data.use``):
    ``one`` for an amount of 1, ``many`` (with ``{amount}``) for more, ``nothing`` (with
    ``{who}``) for a spend of 0, when it reads differently."""

    one: str
    many: str = ""
    nothing: str = ""


# The words systems declare (``declare``): a spend's use, a resource's name (one, many).
_USE_WORDS: dict[str, UseWords] = {}
_RESOURCE_WORDS: dict[str, tuple[str, str]] = {}


def use_words(use: str) -> UseWords | None:
    """The words a system declared for a spend's ``use``."""
    return _USE_WORDS.get(use)


def resource_words(name: str, amount: int) -> str:
    """A resource's name as a person reads it, for ``amount`` of it."""
    one, many = _RESOURCE_WORDS.get(name, (name.replace("_", " "),) * 2)
    return one if abs(amount) == 1 else many


def _join_line(data: Mapping[str, Any], actor: str) -> str:
    seat = data.get("seat") or {}
    characters = [c.get("name") for c in seat.get("characters") or [] if c.get("name")]
    playing = f" playing {', '.join(characters)}" if characters else ""
    return f"{seat.get('name') or actor} sits down{playing}"


def roller_words(roll: Mapping[str, Any], roller: str) -> str:
    """Who rolled and what for, as every place that shows a roll names it:
    "Ana as Kael (Attack)"."""
    character = (roll.get("character") or {}).get("name")
    label = roll.get("label")
    return (
        roller
        + (f" as {character}" if character and character != roller else "")
        + (f" ({label})" if isinstance(label, str) and label else "")
    )


def roll_words(roll: Mapping[str, Any], roller: str) -> str:
    """One roll's line: who rolled, as whom, what for, and what the dice said."""
    return f"{roller_words(roll, roller)}: {roll.get('text') or ''}".strip()


def _reveal_line(data: Mapping[str, Any], actor: str) -> str:
    roller = (data.get("roller") or {}).get("name") or "?"
    roll = data.get("roll") or {}
    return f"{actor} reveals roll #{data.get('seq')} by " + roll_words(roll, roller)


def _roll_line(data: Mapping[str, Any], actor: str) -> str:
    return roll_words(data, actor)


def inline_text(data: Mapping[str, Any]) -> str:
    """A message as people read it: each ``[[notation]]`` shown as its result, ``[17]``."""
    rolls = list(data.get("rolls") or ())
    message = str(data.get("message") or "")
    if not rolls:
        return message
    out, at = [], 0
    for roll in rolls:
        start = message.find("[[", at)
        end = message.find("]]", start + 2) if start >= 0 else -1
        if start < 0 or end < 0:
            break
        out.append(message[at:start] + f"[{roll.get('total')}]")
        at = end + 2
    return "".join(out) + message[at:]


def _chat_line(data: Mapping[str, Any], actor: str) -> str:
    text = inline_text(data)
    if data.get("me"):
        return f"* {actor} {text}"
    to = (data.get("to") or {}).get("name")
    return f"{actor} (whispers to {to}): {text}" if to else f"{actor}: {text}"


def _turns_line(data: Mapping[str, Any], actor: str) -> str:
    return str(data.get("text") or "")


POOL_RULE = "public; about a hidden roll, as hidden as the roll (judged for its roller)"


CORE: tuple[EventType, ...] = (
    EventType(
        "session.start",
        None,
        (
            Field("commitment", "text", required=True),
            Field("title", "text", required=True),
            Field("started_at", "text", help="ISO-8601"),
        ),
        PUBLIC,
        "everyone",
        "the session went live; `commitment` is the hash of its secret seed",
        lambda data, actor: "The session starts",
    ),
    EventType(
        "seat.join",
        None,
        (obj_field("seat", required=True, help='{"id", "name", "role", "characters"}'),),
        PUBLIC,
        "everyone",
        "someone sat down at the table",
        _join_line,
    ),
    EventType(
        "seat.leave",
        None,
        (
            int_field("seat", min=1, required=True),
            Field("name", "text", required=True),
            Field("removed", "bool", help="the GM took the seat away"),
        ),
        PUBLIC,
        "everyone",
        "a seat left the table (the GM removed it): every screen drops it from the seats",
        lambda data, actor: f"{data.get('name') or '?'} leaves the table",
    ),
    EventType(
        "roll",
        None,
        (
            Field("system", "text", required=True),
            obj_field("request", required=True),
            Field("text", "text", required=True, max_length=100_000),
            CLIENT_SEED,
            obj_field("character", nullable=True, help='{"id", "name"} or null'),
            int_field("reroll_of", min=1, help="the roll this one replaces"),
            obj_field(
                "open_roll", help="the open roll it starts, where the table keeps rolls open"
            ),
            Field("in_message", "bool", help="an inline roll of the chat message after it"),
            obj_field("to", help='a whispered inline roll\'s recipient: {"seat", "name"}'),
            Field("gm_reads", "bool", help="a whispered inline roll: the GM sees it too"),
        ),
        ANY | SAID,
        "as the roller chose: public everyone, gm the GM and the roller, blind the GM, "
        "self the roller; a whisper's inline roll as its whisper",
        "dice rolled: the engine's result ([rules.md](rules.md#results)) with `client_seed` and "
        "`character`",
        _roll_line,
        open_ended=True,
    ),
    EventType(
        "roll.reveal",
        None,
        (
            int_field("seq", min=1, required=True),
            Field("visibility", "choice", choices=("gm", "blind", "self"), required=True),
            obj_field("roller", required=True, help='{"seat", "name"}'),
            obj_field("roll", required=True, help="the revealed roll's data"),
            obj_field(
                "open_roll", help="the roll's open-roll state, now the room's, while it is open"
            ),
            POOLS,
            RESOURCES,
        ),
        PUBLIC,
        "everyone",
        "a hidden roll shown to the room",
        _reveal_line,
    ),
    EventType(
        "session.end",
        None,
        (
            Field("server_seed", "text", required=True),
            Field("commitment", "text"),
            Field("ended_at", "text", help="ISO-8601"),
            POOLS,
            RESOURCES,
        ),
        PUBLIC,
        "everyone",
        "the session ended; `server_seed` lets anyone verify every roll",
        lambda data, actor: "The session ends: every roll can now be verified",
    ),
    EventType(
        "chat",
        None,
        (
            Field("message", "text", required=True, max_length=1000, help="what was written"),
            Field("me", "bool", help="an emote (/me): the line reads * Name ..."),
            Field(
                "rolls",
                "list",
                fields=(Field("item", "json"),),
                help='its inline rolls in order, each {"seq", "notation", "total", "text"}: the '
                "roll events just before it",
            ),
            obj_field("to", help='a whisper\'s recipient: {"seat", "name"}'),
            Field("gm_reads", "bool", help="a whisper: the GM reads it too"),
            Field("webhooks", "bool", help="sent to the table's webhooks (the GM's setting)"),
        ),
        SAID,
        "public everyone; a whisper its sender and recipient (and the GM where `gm_reads`); "
        "a third seat gets its seq alone, with no sender",
        "someone said something at the table (`/me`: an emote; `[[1d20]]`: inline rolls)",
        _chat_line,
    ),
    EventType(
        "chat.settings",
        None,
        (
            obj_field("talk", required=True, help='{"gm_reads_whispers", "to_webhooks"}'),
            TEXT,
        ),
        PUBLIC,
        "everyone",
        "the GM changed the campaign's talk settings (`hello.state.talk`)",
    ),
    EventType(
        "turns",
        None,
        (
            Field(
                "action",
                "choice",
                required=True,
                choices=TURN_ACTIONS,
            ),
            int_field("entry", min=1, nullable=True, help="the entry it is about"),
            int_field("roll", min=1, help="the roll that entered it (enter)"),
            TABLE,
            TEXT,
        ),
        PUBLIC,
        "everyone",
        "the turn order changed (`table.turns`; `table.round`: the round)",
        _turns_line,
    ),
    # --- pool: every change to a pool, a resource or the table's rule state ----------------
    EventType(
        "pool",
        "counts",
        (
            ACTION,
            int_field("of", min=1, required=True),
            POOLS,
            RESOURCES,
            ROLL_SEQ,
            objs_field(
                "withheld",
                help='{"count": ["pools", id] or ["resources", character, name], "moved"} each',
            ),
            TEXT,
        ),
        ANY,
        "as hidden as the change it notes (`withheld`), or its seat alone (`self`)",
        "counts a hidden roll's spends moved, withheld from the room until the roll is revealed "
        "or the session ends (`of`: that change's seq); or the counts as one seat sees them "
        "after a public change while some are withheld",
    ),
    EventType(
        "pool",
        "expire",
        (ACTION, int_field("lost", min=0), POOLS, TEXT),
        PUBLIC,
        "everyone",
        "the session ended: what was left in every pool is lost",
    ),
)

# The events the game systems declare (``declare``), after the core's.
_DECLARED: list[EventType] = []


def declare(
    *,
    events: tuple[EventType, ...] = (),
    uses: Mapping[str, UseWords] | None = None,
    resources: Mapping[str, tuple[str, str]] | None = None,
) -> None:
    """Add a system's own events and log wording to the catalogue (``systems.registry``, as
    each system registers). Declaring the same definition again (a helper's event that
    several systems share) changes nothing; another definition of a declared word is an error."""
    for definition in events:
        if definition not in CORE and definition not in _DECLARED:
            _DECLARED.append(definition)
    for words, table in ((uses or {}, _USE_WORDS), (resources or {}, _RESOURCE_WORDS)):
        for name, said in words.items():
            if table.setdefault(name, said) != said:  # type: ignore[arg-type]
                raise AssertionError(f"the words for {name!r} are declared twice, differently")


def catalogue() -> tuple[EventType, ...]:
    """Every event kind: the core's, then the systems' own."""
    return (*CORE, *_DECLARED)


def types_for(kind: str, action: str | None = None) -> list[EventType]:
    return [t for t in catalogue() if t.kind == kind and t.action == action]


def event_type(kind: str, data: Mapping[str, Any]) -> EventType | None:
    """The catalogue's definition of an event with this ``kind`` and ``data``."""
    action = data.get("action") if kind == "pool" else None
    return next((t for t in types_for(kind, action) if t.matches(data)), None)


def check_event(*, kind: str, visibility: str, data: Any) -> EventType:
    """Raise EventShapeError unless the catalogue describes this event exactly."""
    if not isinstance(data, Mapping):
        raise EventShapeError(f"{kind}: data is not an object")
    definition = event_type(kind, data)
    if definition is None:
        action = f" action {data.get('action')!r}" if kind == "pool" else ""
        raise EventShapeError(f"{kind}{action}: not in the event catalogue")
    if visibility not in definition.visibilities:
        raise EventShapeError(f"{definition.name}: visibility {visibility!r} is not allowed")
    try:
        validate(definition.fields, data, allow_unknown=definition.open_ended)
    except RuleError as exc:
        raise EventShapeError(f"{definition.name}: data.{exc.field}: {exc.reason}") from None
    return definition


def with_log_line(*, kind: str, data: dict[str, Any], actor: str) -> dict[str, Any]:
    """``data`` with its ``text`` written by the catalogue's renderer, for the kinds whose line
    the catalogue writes (the services' own words stand for the others)."""
    definition = event_type(kind, data)
    if definition is None or not definition.writes_text:
        return data
    return {**data, "text": definition.line(data, actor or "The table")}


def log_line(*, kind: str, data: Mapping[str, Any], actor: str) -> str:
    """The line a person reads in the log for this event, in the players' words."""
    definition = event_type(kind, data)
    line = definition.line if definition is not None else _text
    return line(data, actor or "The table")
