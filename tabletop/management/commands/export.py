"""``python manage.py export <code> [--format json|md|html] [--as gm|spectator|all|<seat id>]``:
a session's record as a file to take away (stdout, or ``--output``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...models import GameSession, Seat, SessionStatus
from ...services.export import (
    EVERYTHING,
    FORMATS,
    WRITERS,
    chunks,
    session_record,
    viewer_for_seat,
)
from ...services.seats import seat_gm
from ...services.watch import SPECTATOR


class Command(BaseCommand):
    help = (
        "Export a session's log as JSON (verifiable offline, see docs/fairness.md), Markdown or "
        "printable HTML, as one viewer sees it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("code", help="the session's invite code")
        parser.add_argument("--format", choices=sorted(FORMATS), default="json")
        parser.add_argument(
            "--as",
            dest="viewer",
            default="gm",
            help="whose view: gm (default), spectator (public events only), all (every event, "
            "once the session has ended) or a seat id",
        )
        parser.add_argument("--output", "-o", help="write to this file instead of stdout")

    def handle(
        self, *args: Any, code: str, format: str, viewer: str, output: str | None, **options: Any
    ) -> None:
        session = GameSession.objects.select_related("campaign").filter(invite_code=code).first()
        if session is None:
            raise CommandError(f"no session has the code {code!r}")
        if viewer == "gm":
            seat = seat_gm(session=session)
            record = session_record(
                session=session, viewer=viewer_for_seat(seat), viewer_label="GM"
            )
        elif viewer == "spectator":
            record = session_record(session=session, viewer=SPECTATOR, viewer_label="spectator")
        elif viewer == "all":
            if session.status != SessionStatus.ENDED:
                raise CommandError(
                    "--as all: the session has not ended; hidden rolls stay hidden until then"
                )
            record = session_record(session=session, viewer=EVERYTHING, viewer_label="everything")
        elif viewer.isdigit() and (
            chosen := Seat.objects.filter(pk=int(viewer), session=session).first()
        ):
            record = session_record(
                session=session, viewer=viewer_for_seat(chosen), viewer_label=chosen.name
            )
        else:
            raise CommandError(
                f"--as: gm, spectator, all or the id of a seat of this session, not {viewer!r}"
            )
        # A page of events at a time: a long session is never whole in memory.
        writer = WRITERS[format](record)
        parts = chunks(record, writer)
        if output:
            with open(output, "w", encoding="utf-8") as handle:
                for part in parts:
                    handle.write(part)
            self.stdout.write(f"{writer.events} events written to {output}")
        else:
            for part in parts:
                self.stdout.write(part, ending="")
