"""Seats at a session's table: joining by invite link (no account), the GM's seat, tokens.

A player sits down once per campaign: joining makes a ``Player`` of the campaign with the seat,
and the player's token (or login) opens a seat of their own, with the same name and characters,
at each of the campaign's later sessions ("carried"). The GM's removal holds campaign-wide."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from ..models import Character, Event, GameSession, Player, Seat, SeatRole, SessionStatus
from ..models.sessions import carried_token_hash, hash_token
from ..selectors.room import seat_summary
from ..systems.registry import table_system
from . import Visitor
from .errors import conflict, forbidden, invalid
from .events import UnitOfWork, change, lock_session
from .names import check_player_name, clean_name
from .pools import ensure_resources
from .store import Locked, take_seq

# Players at one table (the GM's seat aside): far past any real table, well within one process.
MAX_PLAYERS = 500


@dataclass(frozen=True)
class Joined:
    seat: Seat
    token: str | None  # None when an existing seat was kept: its token is not ours to show again
    created: bool


def _clean_name(name: str) -> str:
    if "\x00" in name:
        raise invalid(_("may not contain NUL characters"), field="name")
    return clean_name(name)


def join_session(
    *,
    session: GameSession,
    name: str,
    character_id: int | None = None,
    user: Visitor = None,
    uow: UnitOfWork | None = None,
) -> Joined:
    """Sit a player down. A logged-in user keeps one seat per session; anyone else gets a new
    seat and a secret token (shown once, stored only as a hash)."""
    if session.status == SessionStatus.ENDED:
        raise conflict(_("this session has ended"))
    name = _clean_name(name)
    character = _character_for(session=session, character_id=character_id, user=user)
    if user is not None and user.is_authenticated:
        existing = Seat.objects.filter(session=session, user=user).first()
        if existing is not None and existing.removed_at is not None:
            raise forbidden(_("the GM removed you from this table"))
        if existing is not None:
            return Joined(seat=existing, token=None, created=False)
        if session.campaign.gm_id == user.pk:
            return Joined(seat=gm_seat(session=session, user=user), token=None, created=False)
        player = Player.objects.filter(campaign_id=session.campaign_id, user=user).first()
        if player is not None and player.removed_at is not None:
            raise forbidden(_("the GM removed you from this campaign's table"))
        if player is not None:
            carried = carry_seat(session=session, player=player)
            if carried is not None:
                return Joined(seat=carried, token=None, created=False)
    token = secrets.token_urlsafe(32)
    signed_in = user if user is not None and user.is_authenticated else None
    with change(uow) as uow:
        # First: the counts and the name below are checked with the table locked, so two people
        # sitting down at once cannot both take the last seat or one name.
        taken = _locked_open(session, uow)
        if Seat.objects.filter(session=session, role=SeatRole.PLAYER).count() >= MAX_PLAYERS:
            raise conflict(
                _("this table is full (%(max_players)s players)") % {"max_players": MAX_PLAYERS}
            )
        # The campaign's players each get a seat at every session: they are the table's bound.
        players = Player.objects.filter(campaign_id=session.campaign_id, removed_at__isnull=True)
        if players.count() >= MAX_PLAYERS:
            raise conflict(
                _("this campaign's table is full (%(max_players)s players)")
                % {"max_players": MAX_PLAYERS}
            )
        at_table = Seat.objects.filter(session=session, removed_at__isnull=True)
        # The campaign's players keep their names for the sessions they have not opened yet.
        check_player_name(
            name,
            taken=[
                *at_table.values_list("name", flat=True),
                *players.values_list("name", flat=True),
            ],
        )
        player = Player.objects.create(
            campaign_id=session.campaign_id, name=name, user=signed_in, token_hash=hash_token(token)
        )
        seat = Seat.objects.create(
            session=session,
            name=name,
            role=SeatRole.PLAYER,
            user=signed_in,
            token_hash=hash_token(token),
            player=player,
        )
        if character is not None:
            seat.characters.add(character)
            player.characters.add(character)
        uow.record(
            session_id=session.pk,
            kind="seat.join",
            actor=seat,
            seq=taken.seq,
            data={"seat": seat_summary(seat)},
        )
        _seat_ready(uow, seat)
    return Joined(seat=seat, token=token, created=True)


def _locked_open(session: GameSession, uow: UnitOfWork) -> Locked:
    """The seq of a seat's sit-down, taken with the session locked, as its end takes it: the
    session read before the change may have ended since, and no one sits down at an ended
    table. ``session`` is brought up to what the lock found (a live table deals the seat in)."""
    taken = take_seq(session_id=session.pk, sent=uow.sent)
    if taken.status == SessionStatus.ENDED:
        raise conflict(_("this session has ended"))
    session.status, session.table_state = taken.status, taken.table_state
    return taken


def _seat_ready(uow: UnitOfWork, seat: Seat) -> None:
    """Resources for the seat's characters; at a live table, whatever the system gives a seat
    that sits down (a pool, this round's dice) as if present from the start."""
    for character in seat.characters.all():
        ensure_resources(character=character)
    if seat.session.status == SessionStatus.LIVE:
        table_system(seat.session.campaign.system).seat_joined(uow, seat)


def _character_for(
    *, session: GameSession, character_id: int | None, user: Visitor
) -> Character | None:
    if character_id is None:
        return None
    character = Character.objects.filter(pk=character_id, campaign_id=session.campaign_id).first()
    if character is None:
        raise invalid(_("no such character in this campaign"), field="character")
    if character.owner_id is not None and (user is None or character.owner_id != user.pk):
        raise forbidden(
            _("%(character)s belongs to another player") % {"character": character.name}
        )
    if Seat.objects.filter(session=session, characters=character).exists():
        raise conflict(
            _("%(character)s already has a seat at this table") % {"character": character.name}
        )
    if character.players.filter(removed_at__isnull=True).exists():
        raise conflict(
            _("%(character)s is already played in this campaign") % {"character": character.name}
        )
    return character


# Longer tokens open nothing (every token the table makes is far shorter): not even hashed.
MAX_TOKEN = 200


def seat_for_token(*, session: GameSession, token: str | None) -> Seat | None:
    """The seat a token opens: the seat it was made for, or the seat its player has (or now
    gets) at this later session of the campaign."""
    if not token or len(token) > MAX_TOKEN:
        return None
    token_hash = hash_token(token)
    seat = Seat.objects.filter(
        session=session,
        token_hash__in=[token_hash, carried_token_hash(token_hash, session.pk)],
        # The GM's removal holds for the campaign: not even an ended session's seat, kept as
        # it was, opens for a player removed since.
        player__removed_at__isnull=True,
    ).select_related("player").first()  # (the write services ask the player again)
    if seat is not None:
        return seat
    player = Player.objects.filter(
        campaign_id=session.campaign_id, token_hash=token_hash, removed_at__isnull=True
    ).first()
    return carry_seat(session=session, player=player) if player is not None else None


def carry_seat(*, session: GameSession, player: Player) -> Seat | None:
    """The player's seat at this session of their campaign, made the first time they open it,
    with their name and characters. None at an ended session (no one sits down there) and for
    a player the GM removed."""
    existing = Seat.objects.filter(session=session, player=player).first()
    if existing is not None:
        return existing if existing.removed_at is None else None
    if player.removed_at is not None:
        return None
    try:
        # A unit of its own, in a savepoint: a seat made at the same moment elsewhere is
        # caught below without undoing the caller's work.
        with change(None) as uow:
            # Under the session's lock, as its end takes it: no seat appears at an ended table.
            status = (
                GameSession.objects.select_for_update()
                .values_list("status", flat=True)
                .get(pk=session.pk)
            )
            if status == SessionStatus.ENDED:
                return None
            seat = Seat.objects.create(
                session=session,
                name=player.name,
                role=SeatRole.PLAYER,
                user=player.user,
                token_hash=(
                    carried_token_hash(player.token_hash, session.pk) if player.token_hash else None
                ),
                player=player,
            )
            # A character someone else took at this table in the meantime stays theirs.
            taken = Seat.objects.filter(session=session).values_list("characters", flat=True)
            seat.characters.add(*player.characters.exclude(pk__in=[t for t in taken if t]))
            uow.record(
                session_id=session.pk,
                kind="seat.join",
                actor=seat,
                data={"seat": seat_summary(seat)},
            )
            _seat_ready(uow, seat)
    except IntegrityError:  # the same player's other socket or page made it at the same moment
        return Seat.objects.filter(session=session, player=player, removed_at__isnull=True).first()
    return seat


def _still_seated(seat: Seat) -> bool:
    return seat.removed_at is None and (seat.player is None or seat.player.removed_at is None)


def check_still_seated(*, seat: Seat) -> None:
    """Refuses a seat the GM removed, or whose player the GM removed at any of the campaign's
    sessions: the removal holds for the whole campaign, so a seat at an ended session, kept as
    it was, changes no character or saved roll for them either."""
    if not _still_seated(seat):
        raise forbidden(_("the GM removed you from this campaign's table"))


def seat_gm(*, session: GameSession) -> Seat:
    """The GM's seat at this table, there from the start: the session's own events (start, end,
    pools dealt) are the GM's doing. Made for the campaign's GM when first needed."""
    seat = Seat.objects.filter(session=session, role=SeatRole.GM).first()
    if seat is not None:
        return seat
    try:
        with transaction.atomic():
            return Seat.objects.create(
                session=session, name="GM", role=SeatRole.GM, user=session.campaign.gm
            )
    except IntegrityError:  # made at the same moment elsewhere
        return Seat.objects.get(session=session, role=SeatRole.GM)


def gm_seat(*, session: GameSession, user: Visitor) -> Seat:
    """The GM's seat, made on first use. Only the campaign's GM (or a superuser) gets it."""
    if not (user is not None and user.is_authenticated):
        raise forbidden(_("log in as the GM"))
    if session.campaign.gm_id != user.pk and not user.is_superuser:
        raise forbidden(_("only this campaign's GM runs this table"))
    return seat_gm(session=session)


def seat_user(*, session: GameSession, user: Visitor, uow: UnitOfWork | None = None) -> Seat | None:
    """A logged-in visitor's seat: the GM's, or the one they sat down in, or their character's.
    A character's owner sitting down at a session that has ended meanwhile is refused."""
    if user is None or not user.is_authenticated:
        return None
    if session.campaign.gm_id == user.pk or user.is_superuser:
        return gm_seat(session=session, user=user)
    seat = Seat.objects.filter(session=session, user=user).select_related("player").first()
    if seat is not None:
        # A seat the GM took away stays away: no fresh seat for the same login either; nor an
        # ended session's seat of a player removed since.
        return seat if _still_seated(seat) else None
    player = Player.objects.filter(campaign_id=session.campaign_id, user=user).first()
    if player is not None:
        # Sat down at an earlier session: the same seat here, unless the GM removed them.
        return carry_seat(session=session, player=player)
    owned = list(Character.objects.filter(campaign_id=session.campaign_id, owner=user))
    if not owned or session.status == SessionStatus.ENDED:
        return None
    name = _clean_name(user.get_username())
    with change(uow) as uow:
        taken = _locked_open(session, uow)
        player = Player.objects.create(campaign_id=session.campaign_id, name=name, user=user)
        player.characters.add(*owned)
        seat = Seat.objects.create(session=session, name=name, user=user, player=player)
        seat.characters.add(*owned)
        uow.record(
            session_id=session.pk,
            kind="seat.join",
            actor=seat,
            seq=taken.seq,
            data={"seat": seat_summary(seat)},
        )
        _seat_ready(uow, seat)
    return seat


# What a player is told of a removal: the socket's command declares it, the service says it.
ONLY_GM_REMOVES = gettext_noop("only the GM removes seats")


def remove_seat(*, by_seat_id: int, seat_id: int, uow: UnitOfWork | None = None) -> Event:
    """The GM takes a seat away from the table: its token no longer opens the room, and every
    screen drops it from the seats. The player's seats at the campaign's other live or planned
    sessions leave those tables too, each told in its own session's log."""
    with change(uow) as uow:
        gm = Seat.objects.select_related("session").get(pk=by_seat_id)
        if not gm.is_gm:
            raise forbidden(_(ONLY_GM_REMOVES))
        # Under the session's lock, as its end takes it: an ended table's seats stay as they were.
        taken = take_seq(session_id=gm.session_id, sent=uow.sent)
        if taken.status == SessionStatus.ENDED:
            raise conflict(_("this session has ended"))
        seat = (
            Seat.objects.select_for_update()
            .filter(pk=seat_id, session_id=gm.session_id, removed_at__isnull=True)
            .first()
        )
        if seat is None:
            raise invalid(_("no such seat at this table"), field="seat")
        if seat.is_gm:
            raise invalid(_("the GM's own seat stays"), field="seat")
        seat.removed_at = at = timezone.now()
        seat.token_hash = None
        seat.sockets = 0
        seat.save(update_fields=["removed_at", "token_hash", "sockets"])
        left = uow.record(
            session_id=gm.session_id,
            kind="seat.leave",
            actor=gm,
            seq=taken.seq,
            data={"seat": seat.pk, "name": seat.name, "removed": True},
        )
        if seat.player_id is not None:
            # Removal holds for the campaign: the player's token and login open none of its
            # sessions, not even one still to come where their seat was already carried.
            Player.objects.filter(pk=seat.player_id).update(removed_at=at, token_hash=None)
            carried = (
                Seat.objects.filter(player_id=seat.player_id, removed_at__isnull=True)
                .exclude(session__status=SessionStatus.ENDED)
                .select_related("session__campaign")
                .order_by("session_id")
            )
            for elsewhere in carried:
                _remove_carried(seat=elsewhere, at=at)
        return left


def _remove_carried(*, seat: Seat, at: datetime) -> None:
    """A removed player's seat at another session of the campaign, live or still to come,
    leaves that table too, told in that session's own log (its open sockets are closed on it).
    A unit of its own, a savepoint of the removal's transaction: its event is that session's,
    published to that session's room once the removal commits, not among the events of the
    room where the removal was made."""
    with change(None) as uow:
        # That session's lock, as its end takes it: a table that ended meanwhile stays as it was
        # (and the player's seat there opens nothing: ``seat_for_token``, ``seat_user``).
        if lock_session(session_id=seat.session_id).status == SessionStatus.ENDED:
            return
        Seat.objects.filter(pk=seat.pk).update(removed_at=at, token_hash=None, sockets=0)
        uow.record(
            session_id=seat.session_id,
            kind="seat.leave",
            actor=seat_gm(session=seat.session),
            data={"seat": seat.pk, "name": seat.name, "removed": True},
        )
