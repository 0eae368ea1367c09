"""Print the invite codes of ``--count`` fresh, live rooms, each in a campaign of its own made
like the demo campaign of a system.

Run as ``python -m bench.servers.mkroom`` from the directory of the code being measured, with the
same environment as the server (``DATABASE_URL``/``TABLETOP_DATA_DIR``), after
``manage.py play --no-serve`` has made the demo campaigns. Every benchmark scenario gets its own
room, so seat counts and seqs never carry over from one scenario to the next; and every room its
own campaign, because a campaign's players keep their names and seats from session to session
(and count against the campaign's cap of players) while the benchmarks seat the same names in
every room. ``--rolls N``: the GM makes N rolls in each room first (a long session: four
notations in turn, one in five hidden from the players, one in five blind), so opening it
replays a real log."""

from __future__ import annotations

import argparse
import os


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--system", default="generic")
    parser.add_argument("--title", default="Benchmark room")
    parser.add_argument("--rolls", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabletop.settings")
    import django

    django.setup()
    from tabletop.models import Campaign, Seat
    from tabletop.services.rolls import check_roll, make_roll
    from tabletop.services.sessions import create_session, start_session

    demo = Campaign.objects.filter(system=args.system).order_by("pk").first()
    if demo is None:
        raise SystemExit(f"no {args.system} campaign: run manage.py play --no-serve first")
    for i in range(args.count):
        campaign = Campaign.objects.create(
            name=f"{args.title} {i + 1}", system=demo.system, gm=demo.gm, settings=demo.settings
        )
        session = create_session(campaign=campaign, title=f"{args.title} {i + 1}")
        session = start_session(session_id=session.pk)
        gm = Seat.objects.get(session=session, role="gm")
        for n in range(args.rolls):
            roll = check_roll(
                table=campaign.system,
                request={"notation": ("4d6kh3+2", "1d20+5", "8d10>7", "2d20kl1")[n % 4]},
                system="generic",
                visibility=("public", "public", "public", "gm", "blind")[n % 5],
            )
            make_roll(seat_id=gm.pk, roll=roll)
        print(session.invite_code, flush=True)


if __name__ == "__main__":
    main()
