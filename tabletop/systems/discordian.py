"""Kingyak's Workshop at the table: the GM's Discord Die, rolled as each round begins (or once a
scene in scene mode) and applied to every roll; rounds and scenes; every character's roll checked
against its sheet; the GM's bonus dice; Luck and Instant Karma spent on luck dice, on protection
(only for dice actually protected, by either side of a PvP roll), on avoiding a costly success and
on extra successes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from django.db.models import F
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from rules.engines import discordian as rules
from rules.engines.schema import Field

from ..models import Character, Event, GameSession, Seat, SeatRole
from ..models.pools import Pool, PoolKind
from ..protocol import events as ev
from ..protocol.commands import ID, Command
from ..selectors.pools import resource_snapshot
from ..services.errors import conflict, forbidden, invalid
from ..services.events import UnitOfWork, change, sent_by
from ..services.pools import (
    character_for,
    ensure_resources,
    give_dice,
    hold_resource,
    pools_changed,
    resource_names,
    spend_resource,
    take_dice,
)
from ..services.rolls import fair_stream
from .base import (
    CHARACTER,
    CLIENT_SEED,
    Begun,
    ResourceUse,
    begin,
    begin_command,
    gm_session,
    need_character,
    resource_award_command,
    resource_spend_command,
    roll_change,
    save_table_state,
    seat_change,
    seat_of,
    spend_for_roll,
    whose_roll,
)
from .registry import RollContext, TableSystem

MAX_LUCK_DICE = 20  # luck dice one roll may buy
MAX_BONUS_DICE = 20  # bonus dice the GM awards at once


def _mode(session: GameSession) -> str:
    return (session.campaign.settings or {}).get("discord_mode", "round")


def _discord(state: dict[str, Any]) -> dict[str, Any]:
    return dict(state.get("discord") or {})


@dataclass(frozen=True)
class Sheet:
    """What a character's sheet says of its rolls (read leniently: a sheet the GM wrote by
    hand lacks what it lacks)."""

    name: str
    hero_dice: tuple[str, ...]
    tropes: frozenset[str]  # die sizes of its tropes ("d8")
    trademarks: frozenset[str]
    luck_die: str
    infinite_fives: bool

    @classmethod
    def of(cls, character: Character) -> Sheet:
        sheet = character.sheet if isinstance(character.sheet, dict) else {}

        def dice(found: Any) -> tuple[str, ...]:
            return tuple(str(d) for d in found if str(d) in rules.PC_DICE) if found else ()

        def sizes(found: Any) -> frozenset[str]:
            found = found if isinstance(found, dict) else {}
            return frozenset(f"d{n}" for n in found.values() if f"d{n}" in rules.PC_DICE)

        hero = sheet.get("hero_dice")
        luck_die = str(sheet.get("luck_die") or "d6")
        return cls(
            name=character.name,
            hero_dice=dice(hero if isinstance(hero, list) else ["d6"]),
            tropes=sizes(sheet.get("tropes")),
            trademarks=sizes(sheet.get("trademarks")),
            luck_die=luck_die if luck_die in rules.PC_DICE else "d6",
            infinite_fives=sheet.get("infinite_fives") is True,
        )

    def check(self, side: dict[str, Any], field: str) -> dict[str, Any]:
        """A side of a request (the roller's or the opponent's) as the sheet allows it: every
        Hero Die, at most one trope die and one trademark die of the sheet's sizes, the
        sheet's luck die, Infinite Fives only with the ability."""
        rest = Counter(side["pool"])
        rest.subtract(Counter(self.hero_dice))
        extra = sorted(rest.elements())
        fits = not -rest and (
            not extra
            or (len(extra) == 1 and extra[0] in self.tropes | self.trademarks)
            or (
                len(extra) == 2
                and any(a in self.tropes and b in self.trademarks for a, b in (extra, extra[::-1]))
            )
        )
        if not fits:
            raise invalid(
                _("%(name)s rolls %(allowed)s") % {"name": self.name, "allowed": self.allowed()},
                field=f"{field}.pool",
            )
        if side.get("infinite_fives") and not self.infinite_fives:
            raise invalid(
                _("%(name)s has no ability that applies the Law of Infinite Fives (see the sheet)")
                % {"name": self.name},
                field=f"{field}.infinite_fives",
            )
        return {**side, "luck_die": self.luck_die}

    def allowed(self) -> str:
        hero = ", ".join(self.hero_dice) or "none"
        parts = [f"every Hero Die ({hero})"]
        if self.tropes:
            parts.append(f"one trope die ({', '.join(sorted(self.tropes))})")
        if self.trademarks:
            parts.append(f"one trademark die ({', '.join(sorted(self.trademarks))})")
        return (
            " + ".join(parts) + ": luck dice join with Luck dice (1 Instant Karma each), bonus "
            "dice when the GM awards them"
        )


def _held(character: Character, name: str) -> int:
    rows = ensure_resources(character=character)
    return next((r.amount for r in rows if r.name == name), 0)


def _can_protect(character: Character, asked: int) -> None:
    """Protection is paid after the roll, for the dice it actually shields: the character must
    hold enough Instant Karma to cover what is asked."""
    held = _held(character, "instant_karma")
    if held < asked:
        raise conflict(
            _("%(character)s has only %(held)s Instant Karma to protect %(asked)s dice")
            % {"character": character.name, "held": held, "asked": asked}
        )


def _opponent(ctx: RollContext, request: dict[str, Any]) -> Character | None:
    """The opponent of a PvP roll, when the roll names its character: a character of this
    campaign other than the roller's."""
    chosen = ctx.options.get("opponent_character")
    if chosen is None:
        return None
    if request.get("opponent") is None:
        raise invalid(_("only a PvP roll (with an opponent) has one"), field="opponent_character")
    them = Character.objects.filter(pk=chosen, campaign_id=ctx.session.campaign_id).first()
    if them is None:
        raise invalid(_("no such character at this table"), field="opponent_character")
    if ctx.character is not None and them.pk == ctx.character.pk:
        raise invalid(_("a character does not roll against itself"), field="opponent_character")
    return them


def _bonus_stacks(session: GameSession, character: Character) -> list[Pool]:
    return list(
        Pool.objects.filter(
            session=session, character=character, kind=PoolKind.BONUS_DICE, remaining__gt=0
        ).order_by("sides")
    )


# The events the discordian table records, beyond the core's and the shared commands'.
EVENTS: tuple[ev.EventType, ...] = (
    ev.EventType(
        "pool",
        "bonus",
        (ev.ACTION, ev.CHARACTER, ev.int_field("count"), ev.POOLS, ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "the GM awarded a character bonus dice for its next roll (a negative `count` took back "
        "those not rolled yet)",
    ),
    ev.EventType(
        "pool",
        "discord",
        (ev.ACTION, ev.DICE, ev.CLIENT_SEED, ev.obj_field("discord"), ev.TABLE, ev.TEXT),
        ev.PUBLIC,
        "everyone",
        "the GM rolled the Discord Die; it applies to every later roll",
    ),
)


class DiscordianTable(TableSystem):
    events = EVENTS
    use_words: ClassVar[Mapping[str, ev.UseWords]] = {
        "avoid-costly": ev.UseWords("to avoid a costly success"),
        "avoid-costly-luck": ev.UseWords("to avoid a costly success"),
        "extra-success": ev.UseWords("for an extra success", "for {amount} extra successes"),
        "add-luck-die": ev.UseWords("for a luck die", "for {amount} luck dice"),
        "protect": ev.UseWords(
            "to protect dice from the Discord Die",
            nothing="{who}'s protection shielded no die from the Discord Die: nothing to pay",
        ),
    }
    resource_words: ClassVar[Mapping[str, tuple[str, str]]] = {
        "luck": ("Luck", "Luck"),
        "instant_karma": ("Instant Karma", "Instant Karma"),
    }
    id = "discordian"

    def start_round(self, uow: UnitOfWork, *, seat_id: int) -> Event:
        """The turn order's next round is this table's own (the Discord Die rolled as it
        begins, in round mode): one round, started once, whichever the GM uses."""
        return begin(uow=uow, seat_id=seat_id, unit="round", then=_new_round)

    roll_options = (
        Field(
            "luck_dice",
            "int",
            label="Luck dice (1 Instant Karma each)",
            help="The character's luck die joins the pool this many times.",
            default=0,
            min=0,
            max=MAX_LUCK_DICE,
        ),
        Field(
            "opponent_character",
            "int",
            label="Opponent (a character)",
            help="In a PvP roll: the character rolling against you; its protection costs its "
            "Instant Karma.",
            nullable=True,
            default=None,
            **ID,
        ),
    )
    demo_characters = (
        {
            "name": "Eris Quill",
            "sheet": {
                "hero_dice": ["d6", "d8"],
                "tropes": {"Trickster": 8},
                "trademarks": {"Lockpicks": 6},
                "luck": 3,
                "instant_karma": 2,
            },
        },
        {
            "name": "Bob Dobbs",
            "sheet": {
                "hero_dice": ["d6"],
                "tropes": {"Salesman": 10},
                "trademarks": {"Pipe": 4},
                "luck": 2,
                "instant_karma": 3,
                "infinite_fives": True,
            },
        },
    )

    def prepare(self, ctx: RollContext, request: dict[str, Any]) -> dict[str, Any]:
        """A character's roll is checked against its sheet and paid for: its pool from the
        sheet, its luck dice (1 Instant Karma each), the GM's bonus dice awarded to it, and
        enough Instant Karma for the protection asked (paid after the roll, for the dice it
        shields). The GM's Discord Die applies to every roll by itself. A player's roll is
        always a character's (its only one unless it names another); the GM may roll for
        nobody (an NPC's pool as the GM makes it)."""
        request = {**request, "discord": _discord(ctx.session.table_state or {}).get("value")}
        character = whose_roll(ctx) if not ctx.seat.is_gm or ctx.character else None
        opponent = _opponent(ctx, request)
        luck_dice = int(ctx.options.get("luck_dice") or 0)
        if character is not None:
            request = Sheet.of(character).check(request, "request")
        if opponent is not None:
            request["opponent"] = Sheet.of(opponent).check(request["opponent"], "request.opponent")
        if request.get("protect"):
            _can_protect(
                need_character(ctx, "protects dice from the Discord Die"), request["protect"]
            )
        against = request.get("opponent") or {}
        if against.get("protect"):
            if opponent is None:
                raise invalid(
                    _("name the opponent's character: its protection costs its Instant Karma"),
                    field="opponent_character",
                )
            if not ctx.seat.is_gm and not ctx.seat.characters.filter(pk=opponent.pk).exists():
                raise forbidden(
                    _("%(name)s's Instant Karma is for %(name)s's player or the GM to spend")
                    % {"name": opponent.name}
                )
            _can_protect(opponent, against["protect"])
        if luck_dice:
            who = need_character(ctx, "adds luck dice")
            luck_die = request["luck_die"] if character is not None else Sheet.of(who).luck_die
            request = {**request, "pool": [*request["pool"], *[luck_die] * luck_dice]}
            spend_for_roll(
                ctx,
                name="instant_karma",
                amount=luck_dice,
                use="add-luck-die",
                text=f"{who.name} spends {luck_dice} Instant Karma: "
                f"{luck_dice} {luck_die} join the pool",
            )
        if character is not None:
            request = _with_bonus_dice(ctx, character, request)
        return request

    def settle(self, ctx: RollContext, roll: Event) -> None:
        """Protection is paid for the dice it actually shielded, by each side that asked for
        it. On a hidden roll the spend is recorded even when it shielded none (for 0): what
        others see of a hidden roll never depends on its dice."""
        request = roll.data["request"]
        if request.get("protect"):
            _pay_protection(ctx, roll, need_character(ctx, "protects dice"), roll.data)
        if (request.get("opponent") or {}).get("protect"):
            them = Character.objects.get(pk=ctx.options["opponent_character"])
            _pay_protection(ctx, roll, them, roll.data["opponent"])


def _with_bonus_dice(ctx: RollContext, character: Character, request: dict[str, Any]):
    """The bonus dice the GM awarded the character join its next roll (and are used up)."""
    stacks = _bonus_stacks(ctx.session, character)
    if not stacks:
        return request
    dice = [f"d{stack.sides}" for stack in stacks for _die in range(stack.remaining)]
    for stack in stacks:
        if not take_dice(ctx.uow, pool_id=stack.pk, count=stack.remaining):
            raise conflict(
                _("%(character)s's bonus dice changed meanwhile; try again")
                % {"character": character.name}
            )
    roll_change(
        ctx,
        data={
            "action": "commit",
            "character": {"id": character.pk, "name": character.name},
            "count": len(dice),
            "pools": pools_changed([stack.pk for stack in stacks]),
            "text": f"{character.name}'s bonus dice from the GM join the roll: {', '.join(dice)}",
        },
    )
    return {**request, "pool": [*request["pool"], *dice]}


def _pay_protection(
    ctx: RollContext, roll: Event, character: Character, side: dict[str, Any]
) -> None:
    protected = int(side.get("protected") or 0)
    if protected:
        row = spend_resource(ctx.uow, character=character, name="instant_karma", amount=protected)
    elif ctx.visibility != "public":
        row = hold_resource(ctx.uow, character=character, name="instant_karma")
    else:
        return  # a public roll whose protection shielded nothing costs nothing
    roll_change(
        ctx,
        data={
            "action": "spend",
            "use": "protect",
            "roll": roll.seq,
            "character": {"id": character.pk, "name": character.name},
            "amount": protected,
            "resources": [resource_snapshot(row)],
            "text": f"{character.name} spends {protected} Instant Karma: "
            f"{protected} dice protected from the Discord Die",
        },
    )


table = DiscordianTable()


# --- the Discord Die, rounds and scenes -----------------------------------------------------


def _rolled(
    session: GameSession, state: dict[str, Any], *, seq: int, client_seed: str
) -> dict[str, Any]:
    """Roll the Discord Die from the fair stream at ``seq`` into ``state``: what the event
    carries (the dice, verifiable like a roll's, and the die's new state)."""
    stream, client_seed = fair_stream(server_seed=session.seed, client_seed=client_seed, seq=seq)
    rolled = rules.roll_discord_die(stream)
    state["discord"] = {
        "value": rolled["value"],
        "wandered": rolled["wandered"],
        "mode": _mode(session),
        "seq": seq,
        "scene": int(state.get("scene") or 0),
        "round": int(state.get("round") or 0),
    }
    return {
        "dice": rolled["dice"],
        "client_seed": client_seed,
        "discord": state["discord"],
        "said": rolled["text"],
    }


def _away(session: GameSession, discord: dict[str, Any], scene: int) -> str:
    """Why a wandered Discord Die cannot be rolled now ("" when it can)."""
    if not discord.get("wandered"):
        return ""
    if _mode(session) == "scene":
        return "the Discord Die wandered off: it is gone for the adventure"
    if discord.get("scene") == scene:
        return "the Discord Die wandered off: it is gone until the next scene"
    return ""


def roll_discord_die(
    *, seat_id: int, client_seed: str = "", uow: UnitOfWork | None = None
) -> Event:
    """The GM rolls the Discord Die: once a scene in scene mode; in round mode it is rolled as
    each round begins (``round.new``), and by this command only outside rounds, once. A die
    that wanders off stays away until the next scene (in scene mode, for the rest of the
    adventure)."""
    seat = seat_of(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        session, seq = gm_session(seat, sent=uow.sent)
        mode = _mode(session)
        state = dict(session.table_state or {})
        current = _discord(state)
        scene, round_ = int(state.get("scene") or 0), int(state.get("round") or 0)
        away = _away(session, current, scene)
        if away:
            raise conflict(away)
        if current.get("scene") == scene and (mode == "scene" or current.get("round") == round_):
            raise conflict(
                _("the Discord Die is rolled once a scene: start a new scene to roll again")
                if mode == "scene"
                else _("the Discord Die is rolled once a round: start a new round to roll again")
            )
        rolled = _rolled(session, state, seq=seq, client_seed=client_seed)
        save_table_state(session, state)
        said = rolled.pop("said")
        return seat_change(
            uow, seat, seq, data={"action": "discord", **rolled, "table": state, "text": said}
        )


def _new_round(
    uow: UnitOfWork, session: GameSession, state: dict[str, Any], *, seq: int, client_seed: str = ""
) -> Begun:
    """In round mode the GM rolls the Discord Die as the round begins (last round's no longer
    applies); a die that wandered off this scene stays away."""
    if _mode(session) != "round":
        return Begun()
    discord = _discord(state)
    away = _away(session, discord, int(state.get("scene") or 0))
    if away:
        state["discord"] = {**discord, "value": None}
        return Begun(words="the Discord Die is still away (it wandered off this scene)")
    rolled = _rolled(session, state, seq=seq, client_seed=client_seed)
    return Begun(words=rolled.pop("said"), data=rolled)


def _new_scene(uow: UnitOfWork, session: GameSession, state: dict[str, Any], *, seq: int) -> Begun:
    """A new scene: a Discord Die to roll again, and one that wandered off comes back (not
    in scene mode, where it is gone for the adventure)."""
    discord = _discord(state)
    if not discord:
        return Begun()
    if _mode(session) == "scene" and discord.get("wandered"):
        return Begun(words="the Discord Die is still gone")
    state["discord"] = {**discord, "value": None, "wandered": False}
    return Begun(words="the Discord Die comes back to the table")


# --- the GM's bonus dice ---------------------------------------------------------------------


def _holder(session: GameSession, character: Character) -> Seat:
    """Who holds a character's bonus dice: its player at this table, else the GM."""
    player = (
        Seat.objects.filter(
            session=session, role=SeatRole.PLAYER, removed_at__isnull=True, characters=character
        )
        .order_by("pk")
        .first()
    )
    return player or session.seats.get(role=SeatRole.GM)


def award_bonus_dice(
    *, seat_id: int, character: int, dice: list[str], uow: UnitOfWork | None = None
) -> Event:
    """The GM awards a character bonus dice ("for situational advantages, clever ideas, good
    role-playing"): they join that character's next roll."""
    seat = seat_of(seat_id, sent=sent_by(uow))
    if not dice:
        raise invalid(_("name at least one die"), field="dice")
    with change(uow) as uow:
        session, seq = gm_session(seat, sent=uow.sent)
        who = character_for(seat=seat, character_id=character)
        holder = _holder(session, who)
        changed = []
        for die, count in sorted(Counter(dice).items()):
            stack, _made = Pool.objects.get_or_create(
                session=session,
                seat=holder,
                character=who,
                kind=PoolKind.BONUS_DICE,
                sides=int(die[1:]),
                label="",
            )
            # (``initial`` counts every die awarded: read off ``remaining`` it would tell
            # whether a hidden roll had used the last ones.)
            Pool.objects.filter(pk=stack.pk).update(initial=F("initial") + count)
            give_dice(uow, pool_id=stack.pk, count=count)
            changed.append(stack.pk)
        words = f"GM awards {who.name} bonus dice for the next roll: {', '.join(dice)}"
        return _bonus_event(uow, seat, seq, who, len(dice), changed, words)


def take_back_bonus_dice(*, seat_id: int, character: int, uow: UnitOfWork | None = None) -> Event:
    """The GM takes back the bonus dice a character has not rolled yet."""
    seat = seat_of(seat_id, sent=sent_by(uow))
    with change(uow) as uow:
        session, seq = gm_session(seat, sent=uow.sent)
        who = character_for(seat=seat, character_id=character)
        stacks = _bonus_stacks(session, who)
        if not stacks:
            raise conflict(_("%(name)s has no bonus dice waiting") % {"name": who.name})
        count = 0
        for stack in stacks:
            if take_dice(uow, pool_id=stack.pk, count=stack.remaining):
                count += stack.remaining
        words = f"GM takes back {who.name}'s bonus dice"
        return _bonus_event(uow, seat, seq, who, -count, [stack.pk for stack in stacks], words)


def _bonus_event(
    uow: UnitOfWork, seat: Seat, seq: int, who: Character, count: int, stacks: list[int], text: str
) -> Event:
    data = {
        "action": "bonus",
        "character": {"id": who.pk, "name": who.name},
        "count": count,
        "pools": pools_changed(stacks),
        "text": text,
    }
    return seat_change(uow, seat, seq, data=data)


# --- Luck and Instant Karma -----------------------------------------------------------------


def _successful(roll: Event) -> None:
    if roll.data.get("outcome") != "success":
        raise conflict(_("+1 success is only for a successful roll"))


def _costly(roll: Event) -> None:
    if "costly" not in roll.data.get("flags", []):
        raise conflict(_("roll #%(seq)s is not a costly success") % {"seq": roll.seq})
    if Event.objects.filter(
        session_id=roll.session_id,
        kind="pool",
        data__roll=roll.seq,
        data__use__in=list(AVOID),
    ).exists():
        raise conflict(_("roll #%(seq)s's costly success is already avoided") % {"seq": roll.seq})


def _extra_successes(roll: Event, amount: int) -> dict[str, Any]:
    """The roll's headline after this spend: every success bought on it so far, and this."""
    bought = amount + sum(
        e.data.get("amount", 0)
        for e in Event.objects.filter(
            session_id=roll.session_id, kind="pool", data__roll=roll.seq, data__use="extra-success"
        )
    )
    out: dict[str, Any] = {"successes": (roll.data.get("successes") or 0) + bought}
    if roll.data.get("net") is not None:
        out["net"] = roll.data["net"] + bought
    # The roll's line says the same as its numbers (what the table added after the engine's
    # words, such as notes, stays as it was).
    stored = str(roll.data.get("text") or "")
    was = rules.DISCORDIAN.describe(roll.data)
    out["roll_text"] = rules.DISCORDIAN.describe({**roll.data, **out}) + (
        stored[len(was) :] if stored.startswith(was) else ""
    )
    return out


def _avoided(roll: Event, amount: int) -> dict[str, Any]:
    return {"costly_avoided": True}


AVOID = ("avoid-costly", "avoid-costly-luck")
USES = {
    # The roll sets the price of avoiding a costly success: Instant Karma equal to its 1s.
    "avoid-costly": ResourceUse(
        "instant_karma",
        for_roll=True,
        check=_costly,
        price=lambda roll: max(1, int(roll.data.get("ones") or 0)),
        effect=_avoided,
    ),
    "avoid-costly-luck": ResourceUse(
        "luck", for_roll=True, check=_costly, price=lambda roll: 1, effect=_avoided
    ),
    "extra-success": ResourceUse("luck", for_roll=True, check=_successful, effect=_extra_successes),
}

commands = (
    Command(
        "discord.roll",
        (CLIENT_SEED,),
        roll_discord_die,
        "roll the Discord Die: once a scene in scene mode; in round mode each round's comes with "
        "round.new, so this rolls one only before a scene's first round",
        gm_only=True,
        refusal=gettext_noop("only the GM rolls the Discord Die"),
    ),
    begin_command(
        "round",
        _new_round,
        "a new round: in round mode the GM's Discord Die is rolled as it begins",
        fields=(CLIENT_SEED,),
        records=(
            ev.DICE,
            ev.CLIENT_SEED,
            ev.obj_field("discord", help="the Discord Die rolled as the round began"),
        ),
    ),
    begin_command("scene", _new_scene, "a new scene: a wandered Discord Die comes back"),
    resource_spend_command(USES),
    resource_award_command(tuple(resource_names(table.id))),
    Command(
        "bonus.award",
        (
            CHARACTER,
            Field(
                "dice",
                "dice",
                label="Bonus dice",
                required=True,
                choices=rules.PC_DICE,
                max_items=MAX_BONUS_DICE,
            ),
        ),
        award_bonus_dice,
        "the GM awards a character bonus dice: they join its next roll",
        gm_only=True,
        refusal=gettext_noop("only the GM awards bonus dice"),
    ),
    Command(
        "bonus.take-back",
        (CHARACTER,),
        take_back_bonus_dice,
        "the GM takes back the bonus dice a character has not rolled yet",
        gm_only=True,
        refusal=gettext_noop("only the GM takes back bonus dice"),
    ),
)
