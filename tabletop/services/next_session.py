"""After a session ends, the next one of the same campaign: planned, with a new invite."""

from __future__ import annotations

import re

from django.db import transaction
from django.utils.translation import gettext as _

from ..models import GameSession, SessionStatus
from .errors import conflict
from .notices import announce_next_session
from .sessions import create_session

WORDS = (
    *("one", "two", "three", "four", "five", "six"),
    *("seven", "eight", "nine", "ten", "eleven", "twelve"),
)


def next_title(title: str) -> str:
    """The next session's title: Session 3 -> Session 4, Session one -> Session two, else
    "<title> (next)"."""
    number = re.search(r"(\d+)\s*$", title)
    if number:
        return f"{title[: number.start(1)]}{int(number[1]) + 1}"
    word = re.search(r"(\w+)\s*$", title)
    if word and word[1].lower() in WORDS[:-1]:
        following = WORDS[WORDS.index(word[1].lower()) + 1]
        if word[1][0].isupper():
            following = following.capitalize()
        return f"{title[: word.start(1)]}{following}"
    return f"{title} (next)"


def plan_next_session(*, session_id: int) -> GameSession:
    """The campaign's next session after this ended one: made once (a second click, or a
    second GM tab, gets the same one)."""
    with transaction.atomic():
        ended = (
            GameSession.objects.select_for_update().select_related("campaign").get(pk=session_id)
        )
        if ended.status != SessionStatus.ENDED:
            raise conflict(_("the next session comes after this one ends"))
        waiting = (
            GameSession.objects.filter(
                campaign_id=ended.campaign_id,
                status=SessionStatus.PLANNED,
                created_at__gte=ended.ended_at or ended.created_at,
            )
            .order_by("created_at")
            .first()
        )
        if waiting is not None:
            return waiting
        planned = create_session(campaign=ended.campaign, title=next_title(ended.title))
        announce_next_session(planned)
        return planned
