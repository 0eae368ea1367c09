"""A campaign's sessions as its link sees them: which one is current, and where an ended one
goes on."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from ..models import Campaign, GameSession, SessionStatus


def campaign_link(campaign: Campaign) -> str:
    """The campaign link's path: it always opens the campaign's current session."""
    return reverse("campaign", args=[campaign.link_code])


def current_session(*, campaign_id: int) -> GameSession | None:
    """The live session, else the next planned one, else the last one that ended."""
    sessions = GameSession.objects.select_related("campaign").filter(campaign_id=campaign_id)
    return (
        sessions.filter(status=SessionStatus.LIVE).order_by("-started_at", "-pk").first()
        or sessions.filter(status=SessionStatus.PLANNED).order_by("created_at", "pk").first()
        or sessions.filter(status=SessionStatus.ENDED).order_by("-ended_at", "-pk").first()
    )


def following_session(session: GameSession) -> GameSession | None:
    """After an ended session, the campaign's session that players go on to, if there is one
    yet (live or planned)."""
    current = current_session(campaign_id=session.campaign_id)
    if current is None or current.pk == session.pk or current.status == SessionStatus.ENDED:
        return None
    return current


def onward(session: GameSession) -> dict[str, Any] | None:
    """What an ended session's room points on to: the campaign link, and the next session if
    one is planned or live ("next": null: the next session starts soon)."""
    if session.status != SessionStatus.ENDED:
        return None
    following = following_session(session)
    return {
        "link": campaign_link(session.campaign),
        "next": None if following is None else next_summary(following),
    }


def next_summary(session: GameSession) -> dict[str, Any]:
    return {"title": session.title, "status": session.status, "code": session.invite_code}
