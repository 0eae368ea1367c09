"""The systems' state moved out of the core's models keeps its data: a database at the schema
before (an open roll with dice committed to its botch and an insight subject, a seat's lucky
break, an extended action) migrated forward reads the same through the systems' own models."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tabletop.models.pools import OpenRoll
from tabletop.systems.roll_and_keep.models import ExtendedAction
from tabletop.systems.zoria.models import SeatPoolState

BEFORE = [("tabletop", "0011_verbose_names")]
AFTER = [("tabletop", "0012_open_roll_marks_and_subject")]


def _migrate(to: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(to)
    return executor


@pytest.mark.django_db(transaction=True)
def test_the_systems_state_keeps_its_data_through_the_move(django_user_model):
    old = _migrate(BEFORE).loader.project_state(BEFORE).apps
    user = django_user_model.objects.create(username="migrating-gm")
    campaign = old.get_model("tabletop", "Campaign").objects.create(
        name="Before", system="zoria", gm_id=user.pk
    )
    session = old.get_model("tabletop", "GameSession").objects.create(
        campaign=campaign, title="Then", invite_code="MIGRATE1"
    )
    seat = old.get_model("tabletop", "Seat").objects.create(session=session, name="Ana")
    rolls = old.get_model("tabletop", "OpenRoll").objects
    rolls.create(
        session=session, seq=3, seat=seat, total=9, botch_dice=2, insight_subject="the door"
    )
    rolls.create(session=session, seq=4, seat=seat, total=12)
    old.get_model("tabletop", "SeatPoolState").objects.create(
        seat=seat, touched=False, lucky_break=True, starting_dice=4
    )
    old.get_model("tabletop", "ExtendedAction").objects.create(
        session=session, label="Ritual", target=9, progress=4, opened_seq=2
    )
    try:
        _migrate(AFTER)
        committed, plain = OpenRoll.objects.filter(session_id=session.pk).order_by("seq")
        assert (committed.marks, committed.subject) == ({"botch_dice": 2}, "the door")
        assert (plain.marks, plain.subject) == ({"botch_dice": 0}, "")
        kept = SeatPoolState.objects.get(seat_id=seat.pk)
        assert (kept.lucky_break, kept.starting_dice) == (True, 4)
        ritual = ExtendedAction.objects.get(session_id=session.pk)
        assert (ritual.label, ritual.progress, ritual.target) == ("Ritual", 4, 9)
        # And back: the count returns to its own column.
        back = _migrate(BEFORE).loader.project_state(BEFORE).apps
        again = back.get_model("tabletop", "OpenRoll").objects.get(session_id=session.pk, seq=3)
        assert (again.botch_dice, again.insight_subject) == (2, "the door")
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
