"""Game sessions: planning, starting (the fair-dice commitment), ending (the reveal)."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.utils import timezone
from django.utils.translation import gettext as _

from rules.engines.fair import commitment, new_server_seed

from ..models import Campaign, GameSession, Seat, SessionStatus, status_word
from ..systems.registry import table_system
from . import Visitor
from .errors import conflict, forbidden, invalid
from .events import UnitOfWork, change
from .notices import announce_next_session
from .pools import expire_pools
from .seats import seat_gm
from .withheld import withheld_counts


def check_runs_campaign(*, user: Visitor, campaign: Campaign) -> User:
    """The campaign's GM (or a superuser), logged in; anyone else is refused."""
    if user is None or isinstance(user, AnonymousUser) or not user.is_authenticated:
        raise forbidden(_("log in as this campaign's GM"))
    if campaign.gm_id != user.pk and not user.is_superuser:
        raise forbidden(_("only this campaign's GM may do that"))
    return user


def create_session(*, campaign: Campaign, title: str) -> GameSession:
    title = title.strip()
    if not title:
        raise invalid(_("a session needs a title"), field="title")
    return GameSession.objects.create(campaign=campaign, title=title[:120])


def start_session(
    *, session_id: int, by: Seat | None = None, uow: UnitOfWork | None = None
) -> GameSession:
    """Make the session live: draw its secret seed and publish only the commitment."""
    with change(uow) as uow:
        session = (
            GameSession.objects.select_for_update().select_related("campaign").get(pk=session_id)
        )
        if session.status == SessionStatus.LIVE:
            raise conflict(_("the session is already live"))
        if session.status == SessionStatus.ENDED:
            raise conflict(_("an ended session cannot start again"))
        by = by or seat_gm(session=session)
        seed = new_server_seed()
        session.server_seed = seed
        session.commitment = commitment(seed)
        session.status = SessionStatus.LIVE
        session.started_at = timezone.now()
        session.save(update_fields=["server_seed", "commitment", "status", "started_at"])
        uow.record(
            session_id=session.pk,
            kind="session.start",
            actor=by,
            data={
                "commitment": session.commitment,
                "title": session.title,
                "started_at": session.started_at.isoformat(),
            },
        )
        table_system(session.campaign.system).session_started(uow, session)
        announce_next_session(session)
    return session


def end_session(
    *, session_id: int, by: Seat | None = None, uow: UnitOfWork | None = None
) -> GameSession:
    """End the session: every pool expires; the seed is revealed so every roll can be verified."""
    with change(uow) as uow:
        session = (
            GameSession.objects.select_for_update().select_related("campaign").get(pk=session_id)
        )
        if session.status != SessionStatus.LIVE:
            raise conflict(
                _("only a live session can end; this one is %(status)s")
                % {"status": status_word(session.status)}
            )
        by = by or seat_gm(session=session)
        session.status = SessionStatus.ENDED
        session.ended_at = timezone.now()
        session.save(update_fields=["status", "ended_at"])
        # Counts withheld for hidden rolls are the room's now (pending_withheld: none once ended).
        withheld = withheld_counts(session_id=session.pk)
        table_system(session.campaign.system).session_ended(uow, session, by)
        expire_pools(uow, session=session, by=by)
        uow.record(
            session_id=session.pk,
            kind="session.end",
            actor=by,
            data={
                "server_seed": session.seed.hex(),
                "commitment": session.commitment,
                "ended_at": session.ended_at.isoformat(),
                **withheld(),
            },
        )
    return session
