"""``python manage.py dicestats <code|campaign id>``: the dice statistics of a session or a
campaign, every die counted (hidden ones too, once their session has ended)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...models import Campaign, GameSession
from ...selectors.events import Viewer
from ...services.stats import campaign_stats_for_gm, session_stats, stats_text


class Command(BaseCommand):
    help = (
        "Dice statistics with a verdict (face counts, mean, chi-square test) per seat and die "
        "for a session (its invite code) or a campaign (its id)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("target", help="a session's invite code, or a campaign's id")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, target: str, json: bool = False, **options: Any) -> None:
        session = GameSession.objects.select_related("campaign").filter(invite_code=target).first()
        if session is not None:
            # The GM's view: every die once the session has ended; before, what the GM sees.
            report = session_stats(session=session, viewer=Viewer(seat_id=None, is_gm=True))
        elif target.isdigit() and (campaign := Campaign.objects.filter(pk=int(target)).first()):
            report = campaign_stats_for_gm(campaign=campaign)
        else:
            raise CommandError(
                f"no session has the code {target!r} and no campaign the id {target!r}"
            )
        self.stdout.write(_dumps(report) if json else stats_text(report), ending="")


def _dumps(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=1) + "\n"
