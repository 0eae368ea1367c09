"""Watch links: the GM hands out a read-only view of a session (spectators, stream overlays)
and can take it back. A spectator sees what a seat with no part in any hidden roll sees."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from rules.engines.schema import unstorable

from ..models import GameSession, WatchLink
from ..models.codes import is_code
from ..selectors.events import Viewer
from . import Visitor
from .errors import conflict, invalid, not_found
from .sessions import check_runs_campaign

# Whoever holds a watch link: no seat, not the GM. Hidden events reach them redacted exactly as
# they reach a player who is neither their roller nor the GM.
SPECTATOR = Viewer(seat_id=None, is_gm=False)
MAX_LINKS = 20  # active links per session: enough for every stream and screen a GM runs


def without_invite(summary: dict[str, Any]) -> dict[str, Any]:
    """A session summary a spectator (or a chat channel) may have: without the invite code,
    which would let its holder sit down and roll."""
    return {k: v for k, v in summary.items() if k != "code"}


def link_group(link_id: int) -> str:
    """The channel-layer group of a link's open sockets: told when the link is revoked."""
    return f"watch.{link_id}"


def create_watch_link(*, session: GameSession, user: Visitor, label: str = "") -> WatchLink:
    """A new link for spectators; ``label`` is the form's text, what the GM calls it."""
    gm = check_runs_campaign(user=user, campaign=session.campaign)
    label = label.strip()
    if unstorable(label) is not None:
        # Kept as a sheet's text is: a NUL or a lone surrogate is no text a database can hold.
        raise invalid(_("may not contain NUL characters or lone surrogates"), field="label")
    if len(label) > 80:
        raise invalid(_("at most 80 characters"), field="label")
    active = WatchLink.objects.filter(session=session, revoked_at__isnull=True).count()
    if active >= MAX_LINKS:
        raise conflict(
            _("a session has at most %(max_links)s watch links: revoke one first")
            % {"max_links": MAX_LINKS}
        )
    return WatchLink.objects.create(session=session, label=label, created_by=gm)


def revoke_watch_link(*, session: GameSession, user: Visitor, link_id: int) -> WatchLink:
    """Revoke a link: its pages stop answering and its open sockets are closed."""
    check_runs_campaign(user=user, campaign=session.campaign)
    with transaction.atomic():
        link = WatchLink.objects.select_for_update().filter(pk=link_id, session=session).first()
        if link is None:
            raise not_found(_("no watch link %(link_id)s in this session") % {"link_id": link_id})
        if link.revoked_at is None:
            link.revoked_at = timezone.now()
            link.save(update_fields=["revoked_at"])
            transaction.on_commit(lambda: _close_sockets(link.pk))
    return link


def _close_sockets(link_id: int) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(link_group(link_id), {"type": "watch.revoked"})


def watched_session(*, code: str) -> tuple[WatchLink, GameSession] | None:
    """The link and its session behind a watch code (as its address has it), or None if there
    is none or it is revoked."""
    if not is_code(code):
        return None
    link = (
        WatchLink.objects.select_related("session__campaign")
        .filter(code=code, revoked_at__isnull=True)
        .first()
    )
    return None if link is None else (link, link.session)


def link_is_live(*, link_id: int) -> bool:
    return WatchLink.objects.filter(pk=link_id, revoked_at__isnull=True).exists()


def watch_links(*, session: GameSession) -> list[WatchLink]:
    return list(WatchLink.objects.filter(session=session).order_by("-created_at"))
