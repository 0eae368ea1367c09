"""Make a room's session long, for the hostile bench's replay, export and sheet cases.

``python -m bench.servers.longsession <invite code> --events N --bytes B`` appends ``N`` public
rolls of about ``B`` bytes each (written in bulk, no dice drawn) and prints a watch link's code.
``--tropes T`` instead adds a character to the room's campaign whose sheet holds ``T`` tropes,
stored as a sheet made before sheets had limits would be, and prints its id. Run like
``bench.servers.mkroom``: from the served code's directory, with the server's environment."""

from __future__ import annotations

import argparse
import os


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("code")
    parser.add_argument("--events", type=int, default=0)
    parser.add_argument("--bytes", type=int, default=3400)
    parser.add_argument("--tropes", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabletop.settings")
    import django

    django.setup()
    from django.db import transaction

    from tabletop.models import Character, Event, GameSession, Seat
    from tabletop.services.watch import create_watch_link

    session = GameSession.objects.select_related("campaign").get(invite_code=args.code)
    if args.tropes:
        sheet = {"tropes": {f"Trope {i}": 6 for i in range(args.tropes)}}
        character = Character.objects.create(campaign=session.campaign, name="Many", sheet=sheet)
        print(character.pk, flush=True)
        return
    seat = Seat.objects.create(session=session, name="Chronicler")
    pad = "x" * max(0, args.bytes - 300)
    with transaction.atomic():
        start = GameSession.objects.select_for_update().get(pk=session.pk).last_seq
        batch: list[Event] = []
        for i in range(1, args.events + 1):
            batch.append(
                Event(
                    session=session,
                    seq=start + i,
                    kind="roll",
                    actor=seat,
                    actor_name=seat.name,
                    visibility="public",
                    data={"text": f"Chronicler: 3d6 (3, 4, 5) = {i}", "total": i, "note": pad},
                )
            )
            if len(batch) == 2000:
                Event.objects.bulk_create(batch)
                batch.clear()
        Event.objects.bulk_create(batch)
        GameSession.objects.filter(pk=session.pk).update(last_seq=start + args.events)
    link = create_watch_link(session=session, user=session.campaign.gm, label="bench")
    print(link.code, flush=True)


if __name__ == "__main__":
    main()
