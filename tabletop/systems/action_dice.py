"""The Action Dice System at the table: rounds in which every character,
the NPCs the GM runs included, gets its action dice (and its restricted or specialized dice,
spent only on rolls that name their class of actions or skill); rolls take their action dice
from them; defense actions against named opponents, general defense, group attacks."""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.utils.translation import gettext as _

from rules.engines import GameSystem
from rules.engines import action_dice as rules
from rules.engines.schema import Field

from ..models import Character, Event, GameSession, Seat, SeatRole
from ..models.pools import Pool, PoolKind
from ..protocol import events as ev
from ..services.errors import conflict, invalid
from ..services.events import UnitOfWork
from ..services.pools import pools_changed, take_dice
from .base import (
    Begun,
    begin,
    begin_command,
    need_character,
    roll_change,
    save_table_state,
    whose_roll,
)
from .registry import RollContext, TableSystem

MAX_RESTRICTED = 20


def _restricted(character: Character) -> dict[str, int]:
    """Restricted or specialized action dice on the sheet: class of actions or skill -> dice."""
    found = (character.sheet or {}).get("restricted_dice") or {}
    if not isinstance(found, dict):
        return {}
    return {
        str(label)[:60]: count
        for label, count in found.items()
        if isinstance(count, int) and not isinstance(count, bool) and 0 < count <= MAX_RESTRICTED
    }


def _deal(seat: Seat, characters: list[Character], *, fresh: bool = True) -> list[int]:
    """Each character gets its action dice for the round (and its restricted dice), held on
    ``seat``: its player's, or the GM's for the NPCs. Not ``fresh`` (a player sitting down
    mid-round): dice the character already has this round stay as they are, only their holder
    changes."""
    changed = []
    for character in characters:
        stacks = {"": rules.new_round(character.sheet or {}), **_restricted(character)}
        for label, dice in stacks.items():
            key: dict[str, Any] = {
                "session_id": seat.session_id,
                "character": character,
                "label": label,
            }
            held = Pool.objects.filter(kind=PoolKind.ROUND_DICE, sides=6, **key)
            if not fresh and held.update(seat=seat):
                changed += list(held.values_list("pk", flat=True))
                continue
            pool, _ = Pool.objects.update_or_create(
                kind=PoolKind.ROUND_DICE,
                sides=6,
                **key,
                defaults={"seat": seat, "remaining": dice, "initial": dice},
            )
            changed.append(pool.pk)
    return changed


def _new_round(uow: UnitOfWork, session: GameSession, state: dict[str, Any], *, seq: int) -> Begun:
    """Every seated character's dice reset, and the NPCs' (every other character of the
    campaign, run by the GM); defenses start over."""
    state["defense"] = {}
    changed, seated = [], set()
    for player in session.seats.filter(role=SeatRole.PLAYER).prefetch_related("characters"):
        characters = list(player.characters.all())
        seated |= {c.pk for c in characters}
        changed += _deal(player, characters)
    npcs = list(Character.objects.filter(campaign_id=session.campaign_id).exclude(pk__in=seated))
    if npcs:
        changed += _deal(session.seats.get(role=SeatRole.GM), npcs)
    return Begun(dealt=changed, words="action dice reset")


def _text(value: Any, field: str) -> str:
    text = " ".join(str(value or "").split())
    if not text:
        raise invalid(_("name it"), field=field)
    return text


# The events the action-dice table records, beyond the core's and its round's.
EVENTS: tuple[ev.EventType, ...] = (
    ev.EventType(
        "pool",
        "commit",
        (ev.ACTION, ev.CHARACTER, ev.COUNT, ev.POOLS, ev.TEXT),
        ev.ANY,
        ev.POOL_RULE,
        "action dice committed to a roll",
    ),
    ev.EventType(
        "pool",
        "group-attack",
        (ev.ACTION, ev.ROLL_SEQ, ev.TEXT),
        ev.ANY,
        ev.POOL_RULE,
        "a group attack's result",
        open_ended=True,
    ),
    ev.EventType(
        "pool",
        "defense",
        (ev.ACTION, ev.ROLL_SEQ, ev.CHARACTER, ev.obj_field("defense"), ev.TABLE, ev.TEXT),
        ev.ANY,
        ev.POOL_RULE,
        "a roll recorded as a character's defense for the round",
    ),
)


class ActionDiceTable(TableSystem):
    events = EVENTS
    id = "action-dice"

    def start_round(self, uow: UnitOfWork, *, seat_id: int) -> Event:
        """The turn order's next round is this table's own (every character's action dice
        dealt anew, defenses over): one round, started once, whichever the GM uses."""
        return begin(uow=uow, seat_id=seat_id, unit="round", then=_new_round)

    roll_options = (
        Field(
            "defense",
            "choice",
            label="Defense",
            help="action: against one named opponent; general: half against everyone",
            nullable=True,
            default=None,
            choices=("action", "general"),
        ),
        Field("opponent", "text", label="Opponent", nullable=True, default=None, max_length=80),
        Field(
            "group_extra",
            "int",
            label="Group attack: extra action dice",
            default=0,
            min=0,
            max=20,
        ),
        Field(
            "restricted",
            "text",
            label="Restricted dice for",
            help="the class of actions or skill this roll is, to spend its restricted dice",
            nullable=True,
            default=None,
            max_length=60,
        ),
    )
    public_options = ("defense", "group_extra")
    demo_characters = (
        {
            "name": "Nadia Kestrel",
            "sheet": {
                "action_dice": 3,
                "skills": {"Driving": "+2d6"},
                "combat_skills": {"Fencing": "+5d6"},
            },
        },
        {"name": "Henchman", "sheet": {"action_dice": 1, "combat_skills": {"Brawling": "+2d6"}}},
    )

    def kept_resources(self, engine: GameSystem) -> list[str]:
        """The round's action dice are pools the table deals each round, not an amount kept on
        the character."""
        return []

    def prepare(self, ctx: RollContext, request: dict[str, Any]) -> dict[str, Any]:
        """Every roll is some character's (the seat's only one unless it names another). While a
        round runs, its rolled action dice (and extra dice on a group attack) come out of that
        character's dice for the round: its restricted dice for the named class or skill first,
        then its general ones."""
        character = whose_roll(ctx)
        if ctx.options.get("defense") == "action":
            ctx.options["opponent"] = _text(ctx.options.get("opponent"), "opponent")
        if not (ctx.session.table_state or {}).get("round"):
            return request
        count = request.get("action_dice", 0) + (ctx.options.get("group_extra") or 0)
        if count == 0:
            return request
        stacks = Pool.objects.filter(
            session=ctx.session, character=character, kind=PoolKind.ROUND_DICE
        )
        named = ctx.options.get("restricted")
        label = _text(named, "restricted") if named is not None else None
        order = [s for s in stacks.filter(Q(label="") | Q(label=label or "")) if s.remaining]
        order.sort(key=lambda s: s.label == "")  # the restricted stack first
        name = character.name
        if not stacks.exists():
            raise conflict(_("%(name)s has no action dice this round") % {"name": name})
        if sum(s.remaining for s in order) < count:
            left = sum(s.remaining for s in order)
            raise conflict(
                _("%(name)s has only %(left)s action dice left this round for this roll")
                % {"name": name, "left": left}
            )
        need, taken = count, []
        for stack in order:
            n = min(need, stack.remaining)
            if n and take_dice(ctx.uow, pool_id=stack.pk, count=n):
                need -= n
                taken.append(stack.pk)
        if need:
            raise conflict(
                _("%(name)s's action dice changed meanwhile; try again") % {"name": name}
            )
        roll_change(
            ctx,
            data={
                "action": "commit",
                "character": {"id": character.pk, "name": name},
                "count": count,
                "pools": pools_changed(taken),
                "text": f"{name} commits {count} action dice",
            },
        )
        return request

    def settle(self, ctx: RollContext, roll: Event) -> None:
        if ctx.options.get("defense"):
            _defense(ctx, roll)
        extra = ctx.options.get("group_extra") or 0
        if extra:
            attack = rules.group_attack(roll.data.get("total") or 0, extra)
            roll_change(
                ctx,
                data={
                    "action": "group-attack",
                    "roll": roll.seq,
                    **attack,
                    "text": f"group attack from roll #{roll.seq}: {attack['per_member']} against "
                    f"every member, x{attack['target_multiplier']} targets",
                },
            )

    def seat_joined(self, uow: UnitOfWork, seat: Seat) -> None:
        if (seat.session.table_state or {}).get("round"):
            # Sitting down mid-round: this round's action dice, as if present when it began.
            _deal(seat, list(seat.characters.all()), fresh=False)


def _defense(ctx: RollContext, roll: Event) -> None:
    """A defense action adds its total against the one opponent it names (a second one names
    another and adds to the first); a general defense adds half against everyone. Against
    each opponent the better of the two counts."""
    character = need_character(ctx, "defends")
    total = roll.data.get("total") or 0
    state = dict(ctx.session.table_state or {})
    defense = dict(state.get("defense") or {})
    mine = dict(defense.get(str(character.pk)) or {})
    actions = dict(mine.get("actions") or {})
    if ctx.options["defense"] == "action":
        opponent = ctx.options["opponent"]
        actions[opponent] = max(total, actions.get(opponent, total))
        words = f"defense action against {opponent}: {total}"
    else:
        mine["general"] = max(total, mine.get("general") or total)
        words = f"general defense: {total} (+{mine['general'] // 2} against everyone)"
    everyone = rules.round_defense(general_defense_total=mine.get("general"))
    mine.update(
        name=character.name,
        actions=actions,
        against_everyone_else=everyone["against_everyone_else"],
        against_opponent={
            who: rules.round_defense(
                defense_action_total=value, general_defense_total=mine.get("general")
            )["against_opponent"]
            for who, value in actions.items()
        },
    )
    defense[str(character.pk)] = mine
    state["defense"] = defense
    save_table_state(ctx.session, state)
    roll_change(
        ctx,
        data={
            "action": "defense",
            "roll": roll.seq,
            "character": {"id": character.pk, "name": character.name},
            "defense": mine,
            "table": state,
            "text": f"{character.name}'s {words} this round",
        },
    )


table = ActionDiceTable()

commands = (
    begin_command(
        "round",
        _new_round,
        "a new round: every character's action dice reset, NPCs' too; defenses over",
    ),
)
