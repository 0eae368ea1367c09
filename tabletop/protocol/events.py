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


def _int(name: str, **kw: Any) -> Field:
    return Field(name, "int", min=kw.pop("min", None), max=kw.pop("max", None), **kw)


def _obj(name: str, **kw: Any) -> Field:
    return Field(name, "json", **kw)


def _objs(name: str, **kw: Any) -> Field:
    return Field(name, "list", fields=(Field("item", "json"),), **kw)


TEXT = Field("text", "text", required=True, max_length=2000, help="the log line")
ACTION = Field("action", "text", required=True)
ROLL_SEQ = _int("roll", min=1, nullable=True, help="the roll it is about (a seq)")
POOLS = _objs("pools", help="the new state of every pool it changed")
RESOURCES = _objs("resources", help="the new amount of every resource it changed")
CHARACTER = _obj("character", help='{"id", "name"}')
SEAT = _int("seat", min=1, help="a seat id")
COUNT = _int("count", min=0)
OPEN_ROLL = _obj("open_roll", nullable=True, help="the roll's new open-roll state")
EXTENDED = _obj("extended", help="the extended action's new state")
TABLE = _obj("table", help="the table's new rule state (hello.state.table)")
NOTE = Field("note", "text", max_length=200)
DICE = _objs("dice", help="dice drawn, verifiable like a roll's")
CLIENT_SEED = Field("client_seed", "text", max_length=200)

# The words a person reads for a spend's ``use`` (the protocol's ids stay in ``data.use``).
USE_WORDS = {
    "survive": "to survive",
    "avoid-costly": "to avoid a costly success",
    "avoid-costly-luck": "to avoid a costly success",
    "extra-success": "for an extra success",
    "double-base": "to double the base dice",
    "add-luck-die": "for a luck die",
    "protect": "to protect dice from the Discord Die",
}
RESOURCE_WORDS = {
    "character_points": ("character point", "character points"),
    "luck": ("Luck", "Luck"),
    "instant_karma": ("Instant Karma", "Instant Karma"),
}


def _resource_words(name: str, amount: int) -> str:
    one, many = RESOURCE_WORDS.get(name, (name.replace("_", " "),) * 2)
    return one if abs(amount) == 1 else many


def _spend_line(data: Mapping[str, Any], actor: str) -> str:
    who = (data.get("character") or {}).get("name") or actor
    amount = data.get("amount") or 0
    name = ((data.get("resources") or [{}])[0] or {}).get("name", "")
    words = USE_WORDS.get(str(data.get("use")), "")
    if data.get("use") == "extra-success" and amount != 1:
        words = f"for {amount} extra successes"
    if data.get("use") == "add-luck-die" and amount != 1:
        words = f"for {amount} luck dice"
    if data.get("use") == "protect" and not amount:
        return f"{who}'s protection shielded no die from the Discord Die: nothing to pay"
    line = f"{who} spends {amount} {_resource_words(name, amount)}"
    return f"{line} {words}".strip() if words else line


def _award_line(data: Mapping[str, Any], actor: str) -> str:
    who = (data.get("character") or {}).get("name") or "?"
    amount = int(data.get("amount") or 0)
    name = ((data.get("resources") or [{}])[0] or {}).get("name", "")
    if amount < 0:
        return f"GM takes back {-amount} {_resource_words(name, amount)} from {who}"
    return f"GM awards {who} {amount} {_resource_words(name, amount)}"


def _join_line(data: Mapping[str, Any], actor: str) -> str:
    seat = data.get("seat") or {}
    characters = [c.get("name") for c in seat.get("characters") or [] if c.get("name")]
    playing = f" playing {', '.join(characters)}" if characters else ""
    return f"{seat.get('name') or actor} sits down{playing}"


def _reveal_line(data: Mapping[str, Any], actor: str) -> str:
    roller = (data.get("roller") or {}).get("name") or "?"
    text = (data.get("roll") or {}).get("text") or ""
    return f"{actor} reveals {roller}'s roll #{data.get('seq')}" + (f": {text}" if text else "")


def _roll_line(data: Mapping[str, Any], actor: str) -> str:
    character = (data.get("character") or {}).get("name")
    who = f"{actor} ({character})" if character and character != actor else actor
    return f"{who}: {data.get('text') or ''}".strip()


def _resource_spend(data: Mapping[str, Any]) -> bool:
    return "use" in data


def _resource_award(data: Mapping[str, Any]) -> bool:
    return "character" in data


POOL_RULE = "public; about a hidden roll, as hidden as the roll (judged for its roller)"


CATALOGUE: tuple[EventType, ...] = (
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
        (_obj("seat", required=True, help='{"id", "name", "role", "characters"}'),),
        PUBLIC,
        "everyone",
        "someone sat down at the table",
        _join_line,
    ),
    EventType(
        "seat.leave",
        None,
        (
            _int("seat", min=1, required=True),
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
            _obj("request", required=True),
            Field("text", "text", required=True, max_length=100_000),
            CLIENT_SEED,
            _obj("character", nullable=True, help='{"id", "name"} or null'),
            _int("reroll_of", min=1, help="the roll this one replaces"),
            _obj("open_roll", help="the open roll it starts, where the table keeps rolls open"),
        ),
        ANY,
        "as the roller chose: public everyone, gm the GM and the roller, blind the GM, "
        "self the roller",
        "dice rolled: the engine's result ([rules.md](rules.md#results)) with `client_seed` and "
        "`character`",
        _roll_line,
        open_ended=True,
    ),
    EventType(
        "roll.reveal",
        None,
        (
            _int("seq", min=1, required=True),
            Field("visibility", "choice", choices=("gm", "blind", "self"), required=True),
            _obj("roller", required=True, help='{"seat", "name"}'),
            _obj("roll", required=True, help="the revealed roll's data"),
            _obj("open_roll", help="the roll's open-roll state, now the room's, while it is open"),
            POOLS,
            RESOURCES,
        ),
        PUBLIC,
        "everyone",
        "a hidden roll shown to the room",
        _reveal_line,
    ),
    EventType(
        "roll.close",
        None,
        (
            _int("roll", min=1, required=True),
            Field("result", "text", max_length=200),
            OPEN_ROLL,
            TEXT,
        ),
        ANY,
        "as hidden as the roll (judged for its roller)",
        "the GM declared an open roll's result: no more dice on it",
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
    # --- pool: every change to a pool, a resource or the table's rule state ----------------
    EventType(
        "pool",
        "counts",
        (
            ACTION,
            _int("of", min=1, required=True),
            POOLS,
            RESOURCES,
            ROLL_SEQ,
            _objs(
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
        "spend",
        (
            ACTION,
            Field("use", "text", required=True),
            CHARACTER,
            ROLL_SEQ,
            _int("amount", min=0),
            RESOURCES,
            _int("successes", help="the roll's new successes (an extra success)"),
            _int("net", help="the roll's new net result (an extra success)"),
            Field("costly_avoided", "bool", help="the roll's costly success is avoided"),
            _int("lasts_round", min=1, help="the round a character point doubles (d6-chance)"),
            TEXT,
        ),
        ANY,
        POOL_RULE,
        "a character spent a resource (`use` says for what)",
        _spend_line,
        matches=_resource_spend,
        writes_text=True,
    ),
    EventType(
        "pool",
        "spend",
        (
            ACTION,
            Field("effect", "text", required=True),
            ROLL_SEQ,
            COUNT,
            NOTE,
            Field(
                "subject", "text", nullable=True, max_length=200, help="what an insight is about"
            ),
            OPEN_ROLL,
            POOLS,
            TABLE,
            TEXT,
        ),
        ANY,
        POOL_RULE,
        "dice spent from a pool for an effect (`effect`)",
        matches=lambda data: not _resource_spend(data),
    ),
    EventType(
        "pool",
        "award",
        (ACTION, CHARACTER, _int("amount"), RESOURCES, TEXT),
        PUBLIC,
        "everyone",
        "the GM awarded a character a resource (a negative amount takes some back)",
        _award_line,
        matches=_resource_award,
        writes_text=True,
    ),
    EventType(
        "pool",
        "award",
        (ACTION, SEAT, COUNT, POOLS, TEXT),
        PUBLIC,
        "everyone",
        "the GM awarded a player dice (the GM's pool grows to match)",
        matches=lambda data: not _resource_award(data),
    ),
    EventType(
        "pool",
        "undo-award",
        (ACTION, _int("undoes", min=1), SEAT, COUNT, POOLS, TEXT),
        PUBLIC,
        "everyone",
        "the GM took back an award (`undoes`: its seq)",
    ),
    EventType(
        "pool",
        "refund",
        (
            ACTION,
            ROLL_SEQ,
            SEAT,
            COUNT,
            _objs("returned", help='{"pool", "count"}: the stacks the dice went back to'),
            NOTE,
            OPEN_ROLL,
            POOLS,
            TEXT,
        ),
        ANY,
        POOL_RULE,
        "the GM gave back dice spent on a roll's critical (`seat`: who spent them)",
    ),
    EventType(
        "pool",
        "bonus",
        (ACTION, CHARACTER, _int("count"), POOLS, TEXT),
        PUBLIC,
        "everyone",
        "the GM awarded a character bonus dice for its next roll (a negative `count` took back "
        "those not rolled yet)",
    ),
    EventType(
        "pool",
        "lucky-break",
        (ACTION, SEAT, _int("given_up", min=0), POOLS, TEXT),
        PUBLIC,
        "everyone",
        "a player gave up their whole pool for a lucky break",
    ),
    EventType(
        "pool",
        "deal",
        (ACTION, SEAT, POOLS, TEXT),
        PUBLIC,
        "everyone",
        "a player's pool dealt (the GM's grows to match)",
    ),
    EventType(
        "pool",
        "use",
        (ACTION, ROLL_SEQ, DICE, CLIENT_SEED, _int("added"), OPEN_ROLL, POOLS, TEXT),
        ANY,
        POOL_RULE,
        "a die from a pool rolled and added to an open roll",
    ),
    EventType(
        "pool",
        "expire",
        (ACTION, _int("lost", min=0), POOLS, TEXT),
        PUBLIC,
        "everyone",
        "the session ended: what was left in every pool is lost",
    ),
    EventType(
        "pool",
        "discord",
        (ACTION, DICE, CLIENT_SEED, _obj("discord"), TABLE, TEXT),
        PUBLIC,
        "everyone",
        "the GM rolled the Discord Die; it applies to every later roll",
    ),
    EventType(
        "pool",
        "extended-open",
        (ACTION, EXTENDED, TEXT),
        PUBLIC,
        "everyone",
        "the GM opened an extended action",
    ),
    EventType(
        "pool",
        "extended-close",
        (ACTION, EXTENDED, TEXT),
        PUBLIC,
        "everyone",
        "the GM closed an extended action",
    ),
    EventType(
        "pool",
        "extended-progress",
        (ACTION, ROLL_SEQ, _int("gained", min=0), EXTENDED, TEXT),
        ANY,
        POOL_RULE,
        "a roll's successes counted toward an extended action",
    ),
    EventType(
        "pool",
        "round",
        (
            ACTION,
            _int("round", min=1),
            DICE,
            CLIENT_SEED,
            _obj("discord", help="the Discord Die rolled as the round began (discordian)"),
            TABLE,
            POOLS,
            TEXT,
        ),
        PUBLIC,
        "everyone",
        "a new round: action dice reset, defenses start over, the Discord Die rolled",
    ),
    EventType(
        "pool",
        "commit",
        (ACTION, CHARACTER, COUNT, POOLS, TEXT),
        ANY,
        POOL_RULE,
        "action dice committed to a roll",
    ),
    EventType(
        "pool",
        "group-attack",
        (ACTION, ROLL_SEQ, TEXT),
        ANY,
        POOL_RULE,
        "a group attack's result",
        open_ended=True,
    ),
    EventType(
        "pool",
        "defense",
        (ACTION, ROLL_SEQ, CHARACTER, _obj("defense"), TABLE, TEXT),
        ANY,
        POOL_RULE,
        "a roll recorded as a character's defense for the round",
    ),
    EventType(
        "pool",
        "close",
        (ACTION, Field("rolls", "list", fields=(_int("seq", min=1),)), TEXT),
        PUBLIC,
        "everyone",
        "the session ends: rolls still open close as they stand",
    ),
    EventType(
        "pool",
        "botch",
        (
            ACTION,
            ROLL_SEQ,
            CHARACTER,
            Field("what", "text", max_length=200, help="the botched action (the roll's label)"),
            Field("folded", "text", max_length=200, help="`what` as compared"),
            TEXT,
        ),
        ANY,
        POOL_RULE,
        "a botched roll: its character cannot repeat the action (roll-and-keep)",
    ),
    EventType(
        "pool",
        "declare",
        (ACTION, CHARACTER, _int("actions", min=1), _int("round", min=1), TABLE, TEXT),
        PUBLIC,
        "everyone",
        "a character's actions declared for the round (d6-chance)",
    ),
    EventType(
        "pool",
        "staged",
        (
            ACTION,
            CHARACTER,
            _int("round", min=1),
            _int("taken", min=1, help="this roll is the character's action number `taken`"),
            _int("declared", min=1),
            _int("actions", min=1, help="the penalty the roll takes: 3D per action after one"),
            Field("defense", "bool"),
            TEXT,
        ),
        ANY,
        POOL_RULE,
        "a roll taken as one of the character's declared actions (d6-chance)",
    ),
    EventType(
        "pool",
        "insight-ask",
        (ACTION, SEAT, Field("subject", "text", max_length=200), TABLE, TEXT),
        PUBLIC,
        "everyone",
        "a player asks the GM to make an inspiration check (zoria)",
    ),
    EventType(
        "pool",
        "insight-answer",
        (ACTION, _int("ask", min=1), SEAT, Field("granted", "bool"), TABLE, TEXT),
        PUBLIC,
        "everyone",
        "the GM grants or refuses an inspiration check (zoria)",
    ),
    EventType(
        "pool",
        "initiative",
        (
            ACTION,
            Field("phase", "bool", help="whether the initiative phase is on"),
            TABLE,
            TEXT,
        ),
        PUBLIC,
        "everyone",
        "the GM begins or ends the initiative phase (zoria)",
    ),
    EventType(
        "pool",
        "scene",
        (ACTION, _int("scene", min=1), TABLE, POOLS, TEXT),
        PUBLIC,
        "everyone",
        "a new scene (the GM's call)",
    ),
)


def types_for(kind: str, action: str | None = None) -> list[EventType]:
    return [t for t in CATALOGUE if t.kind == kind and t.action == action]


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
