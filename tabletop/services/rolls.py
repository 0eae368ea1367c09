"""Rolling dice at the table: every die from the session's fair stream, stored, then sent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from rules.engines import FairStream, GameSystem, RuleError, get_system
from rules.engines.fair import new_client_seed
from rules.engines.schema import validate

from ..models import Event, GameSession, Seat, SessionStatus, Visibility, status_word
from ..models.pools import OpenRoll
from ..selectors.pools import open_roll_summary
from ..systems.registry import RollContext, table_system
from .errors import ServiceError, conflict, forbidden, invalid, not_found
from .events import (
    MAX_EVENT_BYTES,
    MAX_ROLL_DICE,
    UnitOfWork,
    change,
    lock_session,
    next_seq,
)
from .names import clean_label
from .pools import character_for
from .store import Locked, seated, seated_taking_seq
from .withheld import record_reveal, tie_notes_to_roll


def fair_stream(*, server_seed: bytes, client_seed: str, seq: int) -> tuple[FairStream, str]:
    """The dice stream of the event numbered ``seq``, and the client seed it is drawn with:
    the roller's, or a fresh random one when the roller sent none. Every path that draws dice
    at the table draws them here and stores the seed with its dice (``data.client_seed``), as
    hidden as they are: with an empty seed, anyone holding the seed revealed at the end could
    recompute a hidden roll."""
    client_seed = client_seed or new_client_seed()
    return FairStream(server_seed, client_seed, seq), client_seed


def _engine(table: str, system_id: str | None) -> GameSystem:
    if system_id in (None, table):
        return get_system(table)
    if system_id == "generic":
        return get_system("generic")  # the notation box works at every table
    raise invalid(
        _("this table plays %(campaign_system)s (and ordinary notation)")
        % {"campaign_system": table},
        field="system",
    )


@dataclass(frozen=True)
class CheckedRoll:
    """A roll checked once, before it waits for the database: what ``make_roll`` takes. Its
    engine is the table's own or ordinary notation; its request is the engine's, normalised and
    within the dice an event can hold; its options are the table system's, as the roll
    declaration checked them, public ones only on a public roll; its label is cleaned."""

    table: str  # the system of the table it was checked for
    engine: GameSystem
    request: dict[str, Any]
    visibility: str = Visibility.PUBLIC
    character: int | None = None
    client_seed: str = ""
    label: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)


def check_roll(
    *,
    table: str,
    request: Mapping[str, Any],
    system: str | None = None,
    visibility: str = Visibility.PUBLIC,
    character: int | None = None,
    client_seed: str = "",
    label: str = "",
    options: Mapping[str, Any] | None = None,
) -> CheckedRoll:
    """The one check of a roll at a table playing ``table``, none of it needing the database:
    its system, its engine's request (one that would list too many dice is refused from the
    request alone, before a die is drawn), and which options a hidden roll may not carry. The
    socket runs it once per roll (``Command.precheck``), before the roll
    waits for the database thread; every other caller runs it before ``make_roll``. The
    fields' types and the options' declarations are the edge's (``protocol.core``)."""
    engine = _engine(table, system)
    try:
        normalised = engine.normalise(request)
        engine.check_size(normalised, max_dice=MAX_ROLL_DICE)
    except RuleError as exc:
        raise ServiceError.from_rule(exc) from None
    rules = table_system(engine.id if engine.id == table else "")
    if rules is not table_system(table) and options:
        # The socket's declaration refuses a table option on an ordinary-notation roll; a
        # caller that is not the socket is held to the same rule here, not let drop it.
        try:
            validate(rules.roll_options, dict(options))
        except RuleError as exc:
            raise ServiceError.from_rule(exc, prefix="") from None
    for name in rules.public_options:
        if (options or {}).get(name) and visibility != Visibility.PUBLIC:
            # Their effect is public table state: it would tell everyone of the hidden roll.
            raise invalid(_("only a public roll can count for the whole table"), field=name)
    return CheckedRoll(
        table=table,
        engine=engine,
        request=normalised,
        visibility=visibility,
        character=character,
        client_seed=client_seed,
        label=clean_label(label),
        options=dict(options or {}),
    )


def _must_be_live(status: str) -> None:
    if status != SessionStatus.LIVE:
        raise conflict(
            _("the session is %(status)s; rolls are made only while it is live")
            % {"status": status_word(status)}
        )


def _fresh(session: GameSession, locked: Locked) -> int:
    """The session as its lock found it (read before the lock, it may be behind), if live."""
    _must_be_live(locked.status)
    session.status, session.table_state = locked.status, locked.table_state
    if locked.seq:
        session.last_seq = locked.seq
    return session.last_seq


def _context(uow: UnitOfWork, seat: Seat, roll: CheckedRoll) -> RollContext:
    """The roll's context at this seat's table: refused if it was checked for another table,
    or names a character the seat may not roll for."""
    session = seat.session
    if roll.table != session.campaign.system:
        # Checked for another table: its engine and options are not this table's.
        raise conflict(
            _("this table plays %(campaign_system)s (and ordinary notation)")
            % {"campaign_system": session.campaign.system}
        )
    who = None if roll.character is None else character_for(seat=seat, character_id=roll.character)
    return RollContext(
        uow=uow,
        seat=seat,
        session=session,
        system=roll.engine.id,
        character=who,
        options=dict(roll.options),
        visibility=roll.visibility,
        label=roll.label,
    )


def make_roll(
    *,
    seat_id: int,
    roll: CheckedRoll,
    reroll_of: int | None = None,
    uow: UnitOfWork | None = None,
    marks: Mapping[str, Any] | None = None,
) -> Event:
    """Pay what the table rules ask, take the next seq, draw the dice for that seq, store the
    event, then settle what follows it: all in one transaction. ``roll`` comes checked
    (``check_roll``: nothing of it is checked again here); ``roll.label``: what the roll is for
    ("Attack"), shown with it; ``marks``: what the roll's data carries besides (a message's
    inline roll: its whisper's recipient)."""
    label = roll.label
    engine = roll.engine
    client_seed = roll.client_seed
    normalised = roll.request
    # The table's own rules apply to rolls in its system, not to the notation box (a roll
    # checked for another table than this seat's is refused below).
    table = table_system(engine.id if engine.id == roll.table else "")
    drawn: list[tuple[int, int]] = []
    with change(uow, roll_being_made=True) as uow:
        # The seat, its session and the campaign in one statement. A table that takes payments
        # for the roll reads them before the session's lock (the other processes' rolls of the
        # room wait while it is held) and locks after paying; any other reads them as the
        # statement that locks the session and takes the roll's seq.
        read = seated if table.pays_before_rolling else seated_taking_seq
        seat = read(seat_id, sent=uow.sent)
        session = seat.session
        ctx = _context(uow, seat, roll)
        _must_be_live(session.status)
        try:
            if table.pays_before_rolling:
                _fresh(session, lock_session(session_id=session.pk))
                prepared = table.prepare(ctx, normalised)
                if prepared != normalised:  # the table's rules changed it: a request anew
                    normalised = engine.normalise(prepared)
                seq = next_seq(session_id=session.pk, sent=uow.sent)
            else:
                seq = session.last_seq
            stream, client_seed = fair_stream(
                server_seed=session.seed, client_seed=client_seed, seq=seq
            )
            drawn = stream.draws
            result = engine.roll(normalised, stream, max_dice=MAX_ROLL_DICE)
        except RuleError as exc:
            error = ServiceError.from_rule(exc)
            if drawn:  # stopped at the limit on dice: the draws were work done all the same
                error.cost = min(len(drawn) * 64, MAX_EVENT_BYTES)
            raise error from None
        result["client_seed"] = client_seed
        who = ctx.character  # the table's rules may name the roller's character (its only one)
        result["character"] = {"id": who.pk, "name": who.name} if who else None
        if reroll_of is not None:
            result["reroll_of"] = reroll_of
        # What the roll is for: the player's "What for", else the notation's own free text
        # ("1d20+5 Stealth"); no key when there is neither.
        if label:
            result["label"] = label
        elif not result.get("label"):
            result.pop("label", None)
        result.update(marks or {})
        table.annotate(ctx, result)
        event = uow.record(
            session_id=session.pk,
            kind="roll",
            actor=seat,
            visibility=ctx.visibility,  # the table's rules may hide it (never show it)
            data=result,
            seq=seq,
        )
        tie_notes_to_roll(uow, event.seq)
        table.settle(ctx, event)
        return event


def reveal_roll(*, seat: Seat, seq: int, uow: UnitOfWork | None = None) -> Event:
    """Show a hidden roll to the whole room, as a new event. The GM may reveal any roll they
    can see; a roller may reveal their own ``gm`` or ``self`` roll."""
    with change(uow) as uow:
        locked = GameSession.objects.select_for_update().get(pk=seat.session_id)
        if locked.status != SessionStatus.LIVE:
            raise conflict(
                _("the session is %(status)s: nothing at the table changes now")
                % {"status": status_word(locked.status)}
            )
        original = Event.objects.filter(session_id=seat.session_id, seq=seq, kind="roll").first()
        if original is None:
            raise not_found(_("no roll #%(seq)s in this session") % {"seq": seq})
        if original.visibility == Visibility.PUBLIC:
            raise conflict(_("roll #%(seq)s is already public") % {"seq": seq})
        is_roller = original.actor_id == seat.pk
        allowed = (seat.is_gm and original.visibility in {Visibility.GM, Visibility.BLIND}) or (
            is_roller and original.visibility in {Visibility.GM, Visibility.SELF}
        )
        if not allowed:
            raise forbidden(_("only the GM or the roller can reveal this roll"))
        if Event.objects.filter(
            session_id=seat.session_id, kind="roll.reveal", data__seq=seq
        ).exists():
            raise conflict(_("roll #%(seq)s was already revealed") % {"seq": seq})
        # What follows about a revealed roll (dice used on it, its result) is public too.
        OpenRoll.objects.filter(session_id=seat.session_id, seq=seq).update(
            visibility=Visibility.PUBLIC
        )
        still_open = (
            OpenRoll.objects.select_related("character")
            .filter(session_id=seat.session_id, seq=seq, is_open=True)
            .first()
        )
        data = {
            "seq": seq,
            "visibility": original.visibility,
            "roller": {"seat": original.actor_id, "name": original.actor_name},
            "roll": original.data,
        }
        if still_open is not None:  # the room now sees the open roll too
            data["open_roll"] = open_roll_summary(still_open)
        return record_reveal(
            uow,
            session_id=seat.session_id,
            roll=seq,
            record=lambda counts: uow.record(
                session_id=seat.session_id,
                kind="roll.reveal",
                actor=seat,
                data={**data, **counts},
            ),
        )
