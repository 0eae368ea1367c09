"""What the systems' table rules share: the live-session guard every change goes through, the
GM's tools' lock, spends paid for a roll, rounds and scenes, and per-character resources (the
table actions that cost Luck, Instant Karma or a character point)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from rules.engines.schema import Field

from ..models import Character, Event, GameSession, Seat, SessionStatus, status_word
from ..protocol import events as ev
from ..protocol.commands import ID, Command
from ..selectors.events import Viewer, can_see
from ..selectors.pools import resource_snapshot
from ..services.errors import conflict, forbidden, invalid, not_found
from ..services.events import UnitOfWork, change, sent_by
from ..services.initiative import round_began
from ..services.pools import (
    character_for,
    grant_resource,
    pools_changed,
    record_pool_event,
    spend_resource,
)
from ..services.round_trips import Unit
from ..services.store import seat_at_table as seat_of
from ..services.store import take_seq
from .registry import RollContext

# Field declarations the systems' commands share.
SEQ = Field("roll", "int", label="Roll (its seq)", required=True, **ID)
CHARACTER = Field("character", "int", label="Character", required=True, **ID)
CLIENT_SEED = Field("client_seed", "text", label="Client seed", default="", max_length=200)
NOTE = Field("note", "text", label="Note", default="", max_length=200)


def folded(text: str) -> str:
    """Words as the table compares them: case, spacing and punctuation folded ("The Seal." and
    " the  seal" are one subject; "Climb the wall!" and "climb the wall" one action)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(" " if unicodedata.category(ch)[0] in "PSZC" else ch for ch in text)
    return " ".join(kept.split())


def seen_by(seat: Seat, event: Event) -> bool:
    """Whether ``seat`` sees what ``event`` (a change about a roll, as hidden as the roll)
    says: it may see the event, or the roll it is about has been revealed since."""
    viewer = Viewer(seat_id=seat.pk, is_gm=seat.is_gm)
    owner = event.owner_id if event.owner_id is not None else event.actor_id
    if can_see(visibility=event.visibility, actor_seat_id=owner, viewer=viewer):
        return True
    return Event.objects.filter(
        session_id=event.session_id, kind="roll.reveal", data__seq=event.data.get("roll")
    ).exists()


def live_seq(*, session_id: int, sent: Unit | None = None) -> int:
    """The next seq of a live session. Taking it locks the session row, so a change that
    passes here cannot land after the session's end: once ended, nothing changes. ``sent``:
    the unit's way of sending its statements (``uow.sent``)."""
    taken = take_seq(session_id=session_id, sent=sent)
    if taken.status != SessionStatus.LIVE:
        raise conflict(
            _("the session is %(status)s: nothing at the table changes now")
            % {"status": status_word(taken.status)}
        )
    return taken.seq


def gm_session(seat: Seat, *, sent: Unit | None = None) -> tuple[GameSession, int]:
    """For the GM's table tools: the session, live and locked, and the seq of the change."""
    if not seat.is_gm:
        raise forbidden(_("only the GM does that"))
    seq = live_seq(session_id=seat.session_id, sent=sent)
    session = GameSession.objects.select_related("campaign").get(pk=seat.session_id)
    return session, seq


def save_table_state(session: GameSession, state: dict[str, Any]) -> None:
    GameSession.objects.filter(pk=session.pk).update(table_state=state)
    session.table_state = state


def need_character(ctx: RollContext, what: str) -> Character:
    if ctx.character is None:
        raise invalid(_("choose the character who %(what)s") % {"what": what}, field="character")
    return ctx.character


def whose_roll(ctx: RollContext) -> Character:
    """At a table whose every roll is some character's: the character named, else the seat's
    only one (set on ``ctx``, so the roll records it); refused when there is none to take."""
    if ctx.character is not None:
        return ctx.character
    if not ctx.seat.is_gm:
        mine = list(ctx.seat.characters.all()[:2])
        if len(mine) == 1:
            ctx.character = mine[0]
            return mine[0]
        if mine:
            raise invalid(
                _("name the character who rolls: you play more than one"), field="character"
            )
        raise invalid(
            _("every roll at this table is a character's: sit down with one"), field="character"
        )
    raise invalid(
        _("name the character who rolls: every roll at this table is a character's"),
        field="character",
    )


def hidden_as_roll(ctx: RollContext) -> dict[str, Any]:
    """What a roll spends tells of its request (a luck die, protected dice, action dice): a
    spend for a hidden roll is as hidden as the roll, and so is what it moves of the counts
    until the roll is revealed (services/pools.record_pool_event)."""
    if ctx.visibility == "public":
        return {}
    return {"visibility": ctx.visibility, "owner": ctx.seat}


def spend_for_roll(
    ctx: RollContext, *, name: str, amount: int, use: str, text: str, **more: Any
) -> Event:
    """A character's resource spent on the roll being made (an event before the roll, as
    hidden as the roll; ``more``: what else the event records)."""
    character = need_character(ctx, f"spends {name.replace('_', ' ')}")
    row = spend_resource(ctx.uow, character=character, name=name, amount=amount)
    return roll_change(
        ctx,
        data={
            "action": "spend",
            "use": use,
            "character": {"id": character.pk, "name": character.name},
            "amount": amount,
            "resources": [resource_snapshot(row)],
            **more,
            "text": text,
        },
    )


def seat_change(
    uow: UnitOfWork, seat: Seat, seq: int, *, data: dict[str, Any], **hidden: Any
) -> Event:
    """A change a seat made at the table, stored as pool event ``seq`` (``hidden``: as hidden as
    the roll it is about)."""
    return record_pool_event(
        uow, session_id=seat.session_id, actor=seat, seq=seq, data=data, **hidden
    )


def roll_change(ctx: RollContext, *, data: dict[str, Any]) -> Event:
    """A change that comes with the roll being made (paid before it, or following from it): as
    hidden as the roll."""
    return record_pool_event(
        ctx.uow, session_id=ctx.session.pk, actor=ctx.seat, data=data, **hidden_as_roll(ctx)
    )


# --- the events these helpers record, declared with the commands that record them ------------


def _spend_line(data: Mapping[str, Any], actor: str) -> str:
    who = (data.get("character") or {}).get("name") or actor
    amount = data.get("amount") or 0
    name = ((data.get("resources") or [{}])[0] or {}).get("name", "")
    said = ev.use_words(str(data.get("use")))
    if said is not None and said.nothing and not amount:
        return said.nothing.format(who=who)
    words = ""
    if said is not None:
        words = said.many.format(amount=amount) if said.many and amount != 1 else said.one
    line = f"{who} spends {amount} {ev.resource_words(name, amount)}"
    return f"{line} {words}".strip() if words else line


def _award_line(data: Mapping[str, Any], actor: str) -> str:
    who = (data.get("character") or {}).get("name") or "?"
    amount = int(data.get("amount") or 0)
    name = ((data.get("resources") or [{}])[0] or {}).get("name", "")
    words = ev.resource_words(name, amount)
    if amount < 0:
        return f"GM takes back {-amount} {words} from {who}"
    return f"GM awards {who} {amount} {words}"


def _resource_spend(data: Mapping[str, Any]) -> bool:
    return "use" in data


def resource_award(data: Mapping[str, Any]) -> bool:
    """Whether an ``award`` is a resource's (a system may award other things)."""
    return "character" in data


SPENT = (
    ev.EventType(
        "pool",
        "spend",
        (
            ev.ACTION,
            Field("use", "text", required=True),
            ev.CHARACTER,
            ev.ROLL_SEQ,
            ev.int_field("amount", min=0),
            ev.RESOURCES,
            ev.int_field("successes", help="the roll's new successes (an extra success)"),
            ev.int_field("net", help="the roll's new net result (an extra success)"),
            Field(
                "roll_text",
                "text",
                max_length=100_000,
                help="the roll's line with its new numbers (an extra success)",
            ),
            Field("costly_avoided", "bool", help="the roll's costly success is avoided"),
            ev.int_field(
                "lasts_round", min=1, help="the round a character point doubles (d6-chance)"
            ),
            ev.TEXT,
        ),
        ev.ANY,
        ev.POOL_RULE,
        "a character spent a resource (`use` says for what)",
        _spend_line,
        matches=_resource_spend,
        writes_text=True,
    ),
)
AWARDED = (
    ev.EventType(
        "pool",
        "award",
        (ev.ACTION, ev.CHARACTER, ev.int_field("amount"), ev.RESOURCES, ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "the GM awarded a character a resource (a negative amount takes some back)",
        _award_line,
        matches=resource_award,
        writes_text=True,
    ),
)


@dataclass(frozen=True)
class Fits:
    """An event shape that fits data carrying no field but its own (``names``): how one of
    several systems' shapes of one kind and action is told apart."""

    names: frozenset[str]

    def __call__(self, data: Mapping[str, Any]) -> bool:
        return set(data) <= self.names


def begun_event(unit: str, records: tuple[Field, ...] = ()) -> ev.EventType:
    """The event a new ``unit`` (round or scene) records: with ``records``, what else a
    system's start of it carries."""
    fields = (
        ev.ACTION,
        ev.int_field(unit, min=1),
        *records,
        ev.TABLE,
        ev.POOLS,
        ev.TEXT,
    )
    return ev.EventType(
        "pool",
        unit,
        fields,
        ev.PUBLIC,
        "everyone",
        f"a new {unit} (the GM's call)",
        matches=Fits(frozenset(f.name for f in fields)),
    )


# --- rounds and scenes ----------------------------------------------------------------------


@dataclass(frozen=True)
class Begun:
    """What a system did as a round or scene began: the pools it dealt, a few words for the log
    line, and what else the event carries (dice drawn as it began, verifiable like a roll's)."""

    dealt: list[int] = field(default_factory=list)
    words: str = ""
    data: dict[str, Any] = field(default_factory=dict)


# What a system does when a round or scene begins: given the locked session, the new table
# state (to change in place), the event's ``seq`` (dice drawn then come from the fair stream at
# that seq) and the command's own fields.
Begin = Callable[..., Begun]


def begin(
    *,
    seat_id: int,
    unit: str,
    then: Begin | None = None,
    uow: UnitOfWork | None = None,
    **fields: Any,
) -> Event:
    """The GM starts a new round (or scene): its number goes up by one, for the whole table."""
    seat = seat_of(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        session, seq = gm_session(seat, sent=uow.sent)
        state = dict(session.table_state or {})
        state[unit] = int(state.get(unit) or 0) + 1
        if unit == "scene":
            state["round"] = 0  # a scene starts outside any round until the GM starts one
        else:  # the turn order's round too: the first in the order has the turn
            round_began(state)
        began = then(uow, session, state, seq=seq, **fields) if then else Begun()
        save_table_state(session, state)
        text = f"{unit.capitalize()} {state[unit]} begins" + (
            f": {began.words}" if began.words else ""
        )
        return seat_change(
            uow,
            seat,
            seq,
            data={
                "action": unit,
                unit: state[unit],
                **began.data,
                "table": state,
                "pools": pools_changed(began.dealt),
                "text": text,
            },
        )


# What a player who sends round.new or scene.new is told.
BEGIN_REFUSALS = {
    "round": gettext_noop("only the GM starts a new round"),
    "scene": gettext_noop("only the GM starts a new scene"),
}


def begin_command(
    unit: str,
    then: Begin | None,
    doc: str,
    fields: tuple[Field, ...] = (),
    records: tuple[Field, ...] = (),
) -> Command:
    """The GM's command that starts a new ``unit`` ("round" or "scene") at the table (``records``:
    what else its event carries, ``Begun.data``)."""
    return Command(
        type=f"{unit}.new",
        fields=fields,
        handler=partial(begin, unit=unit, then=then),
        doc=doc,
        gm_only=True,
        refusal=BEGIN_REFUSALS[unit],
        events=(begun_event(unit, records),),
    )


# --- per-character resources ----------------------------------------------------------------


@dataclass(frozen=True)
class ResourceUse:
    """A table action that costs a resource with no roll of its own. ``for_roll`` uses name the
    roll they act on; ``price`` may set the cost from that roll (else the amount asked);
    ``check`` refuses what the rules refuse; ``effect`` adds what the room must redraw."""

    resource: str
    for_roll: bool = False
    check: Callable[[Event], None] | None = None
    price: Callable[[Event], int] | None = None
    effect: Callable[[Event, int], dict[str, Any]] | None = None


def _their_roll(seat: Seat, character: Character, seq: int | None) -> Event:
    if seq is None:
        raise invalid(_("which roll (its seq) this is for"), field="roll")
    roll = (
        Event.objects.select_for_update()
        .filter(session_id=seat.session_id, seq=seq, kind="roll")
        .first()
    )
    viewer = Viewer(seat_id=seat.pk, is_gm=seat.is_gm)
    if roll is None or not can_see(
        visibility=roll.visibility, actor_seat_id=roll.actor_id, viewer=viewer
    ):
        raise not_found(_("no roll #%(seq)s of yours in this session") % {"seq": seq})
    if (roll.data.get("character") or {}).get("id") != character.pk:
        raise invalid(
            _("roll #%(seq)s is not %(character)s's") % {"seq": seq, "character": character.name},
            field="roll",
        )
    return roll


def _label(name: str, amount: int) -> str:
    """'character_points', 1 -> 'character point'."""
    label = name.replace("_", " ")
    return label.removesuffix("s") if amount == 1 else label


def use_resource(
    *,
    seat_id: int,
    character: int,
    use: str,
    amount: int = 1,
    roll: int | None = None,
    uses: Mapping[str, ResourceUse],
    uow: UnitOfWork | None = None,
) -> Event:
    """Spend a resource on a table action (survive, +1 success, avoid a costly success...)."""
    if use not in uses:
        raise invalid(_("one of %(uses)s") % {"uses": sorted(uses)}, field="use")
    rule = uses[use]
    seat = seat_of(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id, sent=uow.sent)
        who = character_for(seat=seat, character_id=character)
        hidden: dict[str, Any] = {}
        effect: dict[str, Any] = {}
        if rule.for_roll:
            event = _their_roll(seat, who, roll)
            hidden = {"visibility": event.visibility, "owner": event.actor}
            if rule.check:
                rule.check(event)
            if rule.price:
                amount = rule.price(event)
            if rule.effect:
                effect = rule.effect(event, amount)
        row = spend_resource(uow, character=who, name=rule.resource, amount=amount)
        # A spend on a hidden roll is as hidden as the roll: its price tells of its dice.
        return seat_change(
            uow,
            seat,
            seq,
            **hidden,
            data={
                "action": "spend",
                "use": use,
                "character": {"id": who.pk, "name": who.name},
                "roll": roll if rule.for_roll else None,
                "amount": amount,
                "resources": [resource_snapshot(row)],
                **effect,
                "text": f"{who.name} spends {amount} {_label(rule.resource, amount)}: "
                f"{use.replace('-', ' ')}",
            },
        )


def resource_spend_command(uses: Mapping[str, ResourceUse]) -> Command:
    return Command(
        type="resource.spend",
        fields=(
            CHARACTER,
            Field("use", "choice", label="Use", required=True, choices=tuple(uses)),
            Field("amount", "int", label="Amount", default=1, min=1, max=1000),
            Field("roll", "int", label="Roll (its seq)", nullable=True, default=None, **ID),
        ),
        handler=partial(use_resource, uses=uses),
        doc=f"spend a character's resource: {', '.join(uses)}",
        events=SPENT,
    )


# What a player is told of the award: the command declares it, the service says it too.
ONLY_GM_AWARDS_RESOURCES = gettext_noop("only the GM awards or takes back a character's resources")


def award_resource(
    *, seat_id: int, character: int, name: str, amount: int = 1, uow: UnitOfWork | None = None
) -> Event:
    """The GM awards character points, Luck or Instant Karma; a negative amount takes some
    back (a correction), never below zero."""
    seat = seat_of(seat_id, sent=sent_by(uow))
    if not seat.is_gm:
        raise forbidden(_(ONLY_GM_AWARDS_RESOURCES))
    if amount == 0:
        raise invalid(_("a whole number from -1000 to 1000, not 0"), field="amount")
    with change(uow) as uow:
        seq = live_seq(session_id=seat.session_id, sent=uow.sent)
        who = character_for(seat=seat, character_id=character)
        label = name.replace("_", " ")
        if amount > 0:
            row = grant_resource(uow, character=who, name=name, amount=amount)
            text = f"GM awards {who.name} {amount} {label}"
        else:
            row = spend_resource(uow, character=who, name=name, amount=-amount)
            text = f"GM takes back {-amount} {label} from {who.name}"
        return seat_change(
            uow,
            seat,
            seq,
            data={
                "action": "award",
                "character": {"id": who.pk, "name": who.name},
                "amount": amount,
                "resources": [resource_snapshot(row)],
                "text": text,
            },
        )


def resource_award_command(names: tuple[str, ...]) -> Command:
    return Command(
        type="resource.award",
        fields=(
            CHARACTER,
            Field("name", "choice", label="Resource", required=True, choices=names),
            Field("amount", "int", label="Amount", default=1, min=-1000, max=1000),
        ),
        handler=award_resource,
        doc="the GM awards (or, negative, takes back) a character's resource",
        gm_only=True,
        refusal=ONLY_GM_AWARDS_RESOURCES,
        events=AWARDED,
    )
