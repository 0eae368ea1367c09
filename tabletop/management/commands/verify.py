"""``python manage.py verify <code>``: recompute every die of an ended session."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from rules.engines.verify import verify_events

from ...models import Event, GameSession, SessionStatus
from ...services.stats import session_stats, stats_text


class Command(BaseCommand):
    help = (
        "Recompute every die of an ended session from its revealed seed; "
        "name the events that do not match."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("code", help="the session's invite code")
        parser.add_argument(
            "--stats",
            action="store_true",
            help="then the dice statistics of every die, hidden ones too (manage.py dicestats)",
        )

    def handle(self, *args: Any, code: str, stats: bool = False, **options: Any) -> None:
        session = GameSession.objects.filter(invite_code=code).first()
        if session is None:
            raise CommandError(f"no session has the code {code!r}")
        if session.status != SessionStatus.ENDED or session.server_seed is None:
            raise CommandError(
                "the session has not ended: its seed is still secret, nothing to verify yet"
            )
        events = (
            Event.objects.filter(session=session).order_by("seq").values_list("seq", "kind", "data")
        )
        report = verify_events(
            commitment=session.commitment,
            server_seed=session.seed,
            events=events.iterator(),
        )
        self.stdout.write(f"session {session.title!r} ({code}), commitment {session.commitment}")
        self.stdout.write(
            f"seed {'matches' if report.commitment_ok else 'DOES NOT MATCH'} the commitment"
        )
        for check in report.failures:
            self.stdout.write(f"MISMATCH event #{check.seq} ({check.kind}): {check.problem}")
        verified = sum(1 for c in report.checks if c.ok)
        self.stdout.write(
            f"{verified} of {len(report.checks)} events with dice verified, {report.dice} dice"
        )
        if not report.ok:
            raise CommandError(
                f"verification failed: {len(report.failures)} event(s) do not match"
                + ("" if report.commitment_ok else "; the seed does not match the commitment")
            )
        self.stdout.write(self.style.SUCCESS("every die verified"))
        if stats:
            # The session has ended: every die counts, hidden ones too.
            self.stdout.write(stats_text(session_stats(session=session, viewer=None)), ending="")
