"""Two spends of the last die at the same moment: exactly one succeeds, on SQLite and on
PostgreSQL, with real concurrent connections."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from tabletop.models import Campaign, Character, CharacterResource
from tabletop.models.pools import Pool, PoolKind
from tabletop.services.errors import ServiceError
from tabletop.services.seats import join_session
from tabletop.services.sessions import create_session, start_session
from tabletop.systems import zoria
from tabletop.systems.base import use_resource
from tabletop.systems.d6_chance import USES as D6_USES

from .commands import granted

pytestmark = pytest.mark.django_db(transaction=True)


def race(n: int, action) -> list[str]:
    """Run ``action`` in ``n`` threads released at once; each returns 'ok' or the error code."""
    barrier = threading.Barrier(n)
    results: list[str] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        try:
            barrier.wait()
            action(i)
            outcome = "ok"
        except ServiceError as exc:
            outcome = exc.code
        finally:
            connections.close_all()
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def zoria_seat(gm, level=7):
    campaign = Campaign.objects.create(name="Z", system="zoria", gm=gm)
    hero = Character.objects.create(campaign=campaign, name="Kael", sheet={"level": level})
    session = start_session(session_id=create_session(campaign=campaign, title="t").pk)
    seat = join_session(session=session, name="Ana", character_id=hero.pk).seat
    return seat


def survive(**kw):
    return use_resource(uses=D6_USES, **kw)


@pytest.mark.parametrize("spenders", [2, 6])
def test_last_die_spent_by_several_at_once_exactly_one_wins(gm, spenders):
    seat = zoria_seat(gm)
    Pool.objects.filter(seat=seat, kind=PoolKind.SESSION_DICE).update(remaining=1)
    granted(seat, *(f"clue {i}" for i in range(spenders)))
    results = race(
        spenders, lambda i: zoria.spend_dice(seat_id=seat.pk, effect="insight", note=f"clue {i}")
    )
    assert sorted(results) == ["conflict"] * (spenders - 1) + ["ok"]
    assert Pool.objects.get(seat=seat, kind=PoolKind.SESSION_DICE).remaining == 0
    pool_events = seat.session.events.filter(kind="pool", data__action="spend")
    assert pool_events.count() == 1


def test_many_spends_of_a_full_pool_never_go_below_zero(gm):
    seat = zoria_seat(gm)  # 4d6
    granted(seat, *(f"clue {i}" for i in range(8)))
    results = race(
        8, lambda i: zoria.spend_dice(seat_id=seat.pk, effect="insight", note=f"clue {i}")
    )
    assert results.count("ok") == 4 and results.count("conflict") == 4
    assert Pool.objects.get(seat=seat, kind=PoolKind.SESSION_DICE).remaining == 0


def test_last_character_point_spent_twice_at_once(gm):
    campaign = Campaign.objects.create(name="D6", system="d6-chance", gm=gm)
    hero = Character.objects.create(campaign=campaign, name="Sera", sheet={"character_points": 1})
    session = start_session(session_id=create_session(campaign=campaign, title="t").pk)
    seat = join_session(session=session, name="Ana", character_id=hero.pk).seat
    results = race(2, lambda i: survive(seat_id=seat.pk, character=hero.pk, use="survive"))
    assert sorted(results) == ["conflict", "ok"]
    assert CharacterResource.objects.get(character=hero, name="character_points").amount == 0


def test_seq_stays_gapless_under_concurrent_writers(gm):
    seat = zoria_seat(gm, level=41)  # 11d16
    granted(seat, *(f"clue {i}" for i in range(6)))
    results = race(
        6, lambda i: zoria.spend_dice(seat_id=seat.pk, effect="insight", note=f"clue {i}")
    )
    assert results.count("ok") == 6
    seqs = list(seat.session.events.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))


def test_runs_on_the_configured_database():
    # The same tests run on SQLite by default and on PostgreSQL in CI (DATABASE_URL).
    assert connection.vendor in {"sqlite", "postgresql"}


@pytest.mark.postgres
def test_postgres_is_really_in_use():
    assert connection.vendor == "postgresql"
