"""The table-system seam: what a game system adds around a roll, at a seat's joining, at a
session's start and end, and the socket commands it brings; and the registry of systems by
engine id, filled once at app start (``TabletopConfig.ready``).

Core services call only this module; it imports no system. A table whose engine has no
module here (ordinary notation) plays by ``TableSystem``'s defaults: nothing around a roll."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from rules.engines import GameSystem
from rules.engines.schema import Field

from ..models import Character, Event, GameSession, Seat
from ..protocol import events as catalogue
from ..protocol.commands import Command

if TYPE_CHECKING:
    from ..services.events import UnitOfWork


@dataclass
class RollContext:
    """One roll on its way through ``make_roll``: who rolls, at which (locked) session, for
    which character, with which of the system's roll options. ``prepare`` may name the
    character (a seat's only one) and hide the roll further (``visibility``); what it sets is
    what the roll records."""

    uow: UnitOfWork  # what the roll's change records in
    seat: Seat
    session: GameSession  # locked for this transaction
    system: str
    character: Character | None
    options: dict[str, Any] = field(default_factory=dict)
    visibility: str = "public"
    label: str = ""  # what the roll is for ("Climb the wall"), as the player wrote it


class TableSystem:
    """A game system's table rules. Every hook has a default that does nothing, so a system
    overrides only what its seed asks of the table."""

    id: ClassVar[str] = ""
    # Extra fields a ``roll`` message may carry at this table (checked before the roll).
    roll_options: ClassVar[tuple[Field, ...]] = ()
    # Roll options whose effect the whole table sees: only a public roll may carry them.
    public_options: ClassVar[tuple[str, ...]] = ()
    # Characters the demo campaign (``manage.py play``) starts with.
    demo_characters: ClassVar[tuple[Mapping[str, Any], ...]] = ()
    # The events its rules record beyond the core's and its commands' (kinds, data, who sees
    # them, the log line), and the words its log lines use: a spend's ``use``, a resource's
    # name (one, many).
    events: ClassVar[tuple[catalogue.EventType, ...]] = ()
    use_words: ClassVar[Mapping[str, catalogue.UseWords]] = {}
    resource_words: ClassVar[Mapping[str, tuple[str, str]]] = {}
    # Its own keys of ``hello.state``, each with the value a table that has none of it shows
    # (every table's state has every system's keys: one shape for every screen).
    state_keys: ClassVar[Mapping[str, Any]] = {}

    def kept_resources(self, engine: GameSystem) -> list[str]:
        """The engine's per-character resources the table keeps as amounts on the character
        (spent and awarded by name); by default all of them."""
        return [f.name for f in engine.resources]

    def prepare(self, ctx: RollContext, request: dict[str, Any]) -> dict[str, Any]:
        """Adjust the normalised request and pay for it before the dice are drawn."""
        return request

    @property
    def pays_before_rolling(self) -> bool:
        """Whether this table has a ``prepare`` of its own: what it pays is stored before the
        roll, so the roll locks the session first and takes its seq after (a plain roll's seq
        is its lock: one statement fewer while the room's rolls wait for each other)."""
        return type(self).prepare is not TableSystem.prepare

    def annotate(self, ctx: RollContext, result: dict[str, Any]) -> None:
        """Marks the system adds to the result before it is stored."""

    def settle(self, ctx: RollContext, roll: Event) -> None:
        """What follows a stored roll, in the same transaction."""

    def seat_joined(self, uow: UnitOfWork, seat: Seat) -> None:
        """A seat sat down (at any time; the session may be live)."""

    def start_round(self, uow: UnitOfWork, *, seat_id: int) -> Event | None:
        """The GM moves the turn order past its last turn: a system that keeps rounds of its
        own starts one here (as its ``round.new`` does) and returns its event, so the tracker's
        round and the system's are the same round, started once. None: the table has no rounds
        of its own and the tracker counts them."""
        return None

    def session_started(self, uow: UnitOfWork, session: GameSession) -> None:
        """The session went live (inside its transaction)."""

    def session_ended(self, uow: UnitOfWork, session: GameSession, by: Seat) -> None:
        """The session is ending (inside its transaction, before the ``session.end`` event):
        close what is still open; nothing changes after this."""

    def room_state(self, session_ids: list[int]) -> dict[int, dict[str, Any]]:
        """Its keys of ``hello.state`` (``state_keys``) as each of these sessions has them, as
        the whole table sees them: one query each for all the sessions."""
        return {}

    def fold(self, state: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        """The room reducer's part for this system: ``state`` (the core's rule already
        applied) after one event, as the seat received it; a new dict, ``state`` unchanged.
        The browser's ``systems/<id>.js`` declares the same rule (``fold``)."""
        return state


_PLAIN = TableSystem()
_SYSTEMS: dict[str, TableSystem] = {}
_COMMANDS: dict[str, dict[str, Command]] = {}
# Modules of this package that are no system ("texts" lists the systems' words for translation).
SEAM_MODULES = frozenset({"base", "registry", "texts"})


def register(table: TableSystem, commands: tuple[Command, ...]) -> None:
    if table.id in _SYSTEMS:
        raise AssertionError(f"table system {table.id!r} registered twice")
    by_type = {command.type: command for command in commands}
    if len(by_type) != len(commands):
        raise AssertionError(f"table system {table.id!r} declares a command twice")
    _SYSTEMS[table.id] = table
    _COMMANDS[table.id] = by_type
    declared = [*table.events, *(e for c in commands for e in c.events)]
    catalogue.declare(events=tuple(declared), uses=table.use_words, resources=table.resource_words)


def load() -> None:
    """Register every system module of this package (idempotent)."""
    if _SYSTEMS:
        return
    package = importlib.import_module(__package__ or "tabletop.systems")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name in SEAM_MODULES:
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        register(module.table, tuple(module.commands))


def state_keys() -> dict[str, Any]:
    """Every system's own keys of ``hello.state``, with the values of a table without them."""
    return {key: value for table in _SYSTEMS.values() for key, value in table.state_keys.items()}


def keeping_state() -> list[TableSystem]:
    """The systems with keys of their own in ``hello.state``."""
    return [table for table in _SYSTEMS.values() if table.state_keys]


def table_system(engine_id: str) -> TableSystem:
    return _SYSTEMS.get(engine_id, _PLAIN)


def commands_for(engine_id: str) -> tuple[Command, ...]:
    return tuple(_COMMANDS.get(engine_id, {}).values())


def command(engine_id: str, kind: str) -> Command | None:
    return _COMMANDS.get(engine_id, {}).get(kind)
