"""Every other system's resources: character points, Luck and Instant Karma, the Discord Die,
extended actions, rounds of action dice (docs/rules.md, "Each system's reading")."""

from __future__ import annotations

import pytest

from rules.engines import FairStream
from tabletop.models import Campaign, Character, CharacterResource, Event, GameSession, Seat
from tabletop.models.pools import Pool, PoolKind
from tabletop.selectors.events import Viewer
from tabletop.selectors.room import room_state
from tabletop.services.errors import ServiceError
from tabletop.services.seats import gm_seat, join_session
from tabletop.services.sessions import create_session, end_session, start_session
from tabletop.systems.roll_and_keep.models import ExtendedAction

from .commands import rolled, send

pytestmark = pytest.mark.django_db


def setup_table(gm, system, sheets):
    campaign = Campaign.objects.create(name=system, system=system, gm=gm)
    characters = [
        Character.objects.create(campaign=campaign, name=n, sheet=s) for n, s in sheets.items()
    ]
    session = start_session(session_id=create_session(campaign=campaign, title="Tonight").pk)
    players = []
    for character in characters:
        seat = join_session(
            session=session, name=f"Player of {character.name}", character_id=character.pk
        ).seat
        players.append(Seat.objects.select_related("session__campaign").get(pk=seat.pk))
    gm_at = Seat.objects.select_related("session__campaign").get(
        pk=gm_seat(session=session, user=gm).pk
    )
    return session, characters, players, gm_at


def amount(character, name):
    return CharacterResource.objects.get(character=character, name=name).amount


def code(call):
    with pytest.raises(ServiceError) as err:
        call()
    return err.value.code


# --- d6-chance: character points -----------------------------------------------------------


@pytest.fixture
def d6(gm):
    return setup_table(
        gm, "d6-chance", {"Sera": {"character_points": 2}, "Dorrik": {"character_points": 0}}
    )


def test_resources_start_from_the_sheet(d6):
    _, (sera, dorrik), _, _ = d6
    assert amount(sera, "character_points") == 2 and amount(dorrik, "character_points") == 0


def test_a_character_point_doubles_the_base_dice_and_is_spent_with_the_roll(d6):
    session, (sera, _), (ana, _), _ = d6
    roll = rolled(seat_id=ana.pk, request={"dice": 3, "character_point": True}, character=sera.pk)
    assert len([d for d in roll.data["dice"] if not d.get("exploded")]) == 6
    spend = Event.objects.get(session=session, seq=roll.seq - 1)
    assert spend.kind == "pool" and spend.data["use"] == "double-base"
    assert amount(sera, "character_points") == 1


def test_no_point_left_refuses_the_roll_and_records_nothing(d6):
    session, (_, dorrik), (_, bo), _ = d6
    before = GameSession.objects.get(pk=session.pk).last_seq
    assert (
        code(
            lambda: rolled(
                seat_id=bo.pk, request={"dice": 3, "character_point": True}, character=dorrik.pk
            )
        )
        == "conflict"
    )
    assert GameSession.objects.get(pk=session.pk).last_seq == before


def test_a_character_point_needs_a_character(d6):
    _, _, (ana, _), _ = d6
    with pytest.raises(ServiceError) as error:
        rolled(seat_id=ana.pk, request={"dice": 3, "character_point": True})
    assert error.value.field == "character"


def test_spend_a_point_to_survive_and_gm_awards(d6):
    _, (sera, dorrik), (ana, _), gm = d6
    send(ana, "resource.spend", character=sera.pk, use="survive")
    assert amount(sera, "character_points") == 1
    assert (
        code(lambda: send(ana, "resource.spend", character=dorrik.pk, use="survive")) == "forbidden"
    )
    assert (
        code(lambda: send(ana, "resource.award", character=sera.pk, name="character_points"))
        == "forbidden"
    )
    send(gm, "resource.award", character=dorrik.pk, name="character_points", amount=2)
    assert amount(dorrik, "character_points") == 2


# --- discordian: Luck, Instant Karma, the Discord Die --------------------------------------


@pytest.fixture
def disco(gm):
    return setup_table(
        gm,
        "discordian",
        {
            "Eris": {"hero_dice": ["d6"], "luck": 2, "instant_karma": 2, "luck_die": "d8"},
        },
    )


def test_the_gm_rolls_the_discord_die_from_the_stream_and_it_applies_to_every_roll(disco):
    session, (eris,), (ana,), gm = disco
    assert code(lambda: send(ana, "discord.roll")) == "forbidden"
    event = send(gm, "discord.roll", client_seed="gm")
    stream = FairStream(bytes(session.server_seed), "gm", event.seq)
    assert event.data["dice"][0]["value"] == stream.roll(20)
    value = event.data["discord"]["value"]
    roll = rolled(
        seat_id=ana.pk, request={"pool": ["d6"], "tn": 5, "discord": None}, character=eris.pk
    )
    assert roll.data["request"]["discord"] == value
    assert GameSession.objects.get(pk=session.pk).table_state["discord"]["value"] == value


def seed_showing(session, seq, sides, value):
    """A client seed whose first die of ``sides`` at ``seq`` shows ``value``."""
    server_seed = bytes(GameSession.objects.get(pk=session.pk).server_seed)
    return next(
        f"s{i}" for i in range(5000) if FairStream(server_seed, f"s{i}", seq).roll(sides) == value
    )


def discord_is(session, value):
    GameSession.objects.filter(pk=session.pk).update(table_state={"discord": {"value": value}})


def test_protection_costs_instant_karma_only_for_the_dice_it_shields(disco):
    session, (eris,), (ana,), _ = disco  # 2 Instant Karma
    roll = rolled(
        seat_id=ana.pk, request={"pool": ["d6"], "tn": 5, "protect": 2}, character=eris.pk
    )
    assert roll.data["protected"] == 0  # no Discord Die: nothing to shield, nothing paid
    assert amount(eris, "instant_karma") == 2
    discord_is(session, 3)
    seq = GameSession.objects.get(pk=session.pk).last_seq + 1
    roll = rolled(
        seat_id=ana.pk,
        request={"pool": ["d6"], "tn": 5, "protect": 2},
        character=eris.pk,
        client_seed=seed_showing(session, seq, 6, 3),
    )
    shielded = roll.data["protected"]
    assert shielded >= 1 and amount(eris, "instant_karma") == 2 - shielded
    spend = Event.objects.get(session=session, seq=roll.seq + 1)
    assert spend.data["use"] == "protect" and spend.data["amount"] == shielded
    # Asking to protect more dice than the character has Instant Karma for is refused.
    assert (
        code(
            lambda: rolled(
                seat_id=ana.pk, request={"pool": ["d6"], "tn": 5, "protect": 3}, character=eris.pk
            )
        )
        == "conflict"
    )


def test_adding_the_luck_die_costs_one_instant_karma(disco):
    _, (eris,), (ana,), _ = disco
    roll = rolled(
        seat_id=ana.pk,
        request={"pool": ["d6"], "tn": 5},
        character=eris.pk,
        options={"luck_dice": 1},
    )
    assert roll.data["request"]["pool"] == ["d6", "d8"]
    assert amount(eris, "instant_karma") == 1


def test_extra_success_only_on_a_successful_roll_of_ones_own(disco):
    _, (eris,), (ana,), _ = disco
    for i in range(200):
        roll = rolled(
            seat_id=ana.pk, request={"pool": ["d6"], "tn": 4}, character=eris.pk, client_seed=str(i)
        )
        if roll.data["outcome"] == "failure":
            break
    assert (
        code(
            lambda: send(
                ana, "resource.spend", character=eris.pk, use="extra-success", roll=roll.seq
            )
        )
        == "conflict"
    )
    for i in range(200):
        roll = rolled(
            seat_id=ana.pk,
            request={"pool": ["d6"], "tn": 4},
            character=eris.pk,
            client_seed=f"s{i}",
        )
        if roll.data["outcome"] == "success":
            break
    spent = send(ana, "resource.spend", character=eris.pk, use="extra-success", roll=roll.seq)
    assert amount(eris, "luck") == 1
    # The roll's line says what its numbers now say.
    net = roll.data["net"] + 1
    assert spent.data["net"] == net and f"= net {net}:" in spent.data["roll_text"]
    assert f"= net {roll.data['net']}:" in roll.data["text"]


def test_avoiding_a_costly_success_costs_the_1s_once(gm):
    _, (eris,), (ana,), _ = setup_table(
        gm, "discordian", {"Eris": {"luck": 5, "instant_karma": 20, "hero_dice": ["d6"] * 4}}
    )
    for i in range(500):
        roll = rolled(
            seat_id=ana.pk,
            request={"pool": ["d6"] * 4, "tn": 4, "challenge": 2},
            character=eris.pk,
            client_seed=f"c{i}",
        )
        if "costly" in roll.data["flags"]:
            break
    ones = roll.data["ones"]
    assert ones >= 2
    # The roll sets the price, whatever amount the message names.
    event = send(
        ana, "resource.spend", character=eris.pk, use="avoid-costly", amount=1, roll=roll.seq
    )
    assert event.data["amount"] == ones and amount(eris, "instant_karma") == 20 - ones

    def again(use):
        return send(ana, "resource.spend", character=eris.pk, use=use, roll=roll.seq)

    assert code(lambda: again("avoid-costly")) == "conflict"
    assert code(lambda: again("avoid-costly-luck")) == "conflict"
    assert amount(eris, "luck") == 5


# --- roll-and-keep: extended actions -------------------------------------------------------


def test_extended_actions_accumulate_to_completion(gm):
    session, (mirela,), (ana,), gm_at = setup_table(gm, "roll-and-keep", {"Mirela": {}})
    assert code(lambda: send(ana, "extended.open", label="Ritual", target=3)) == "forbidden"
    send(gm_at, "extended.open", label="Ritual", target=3)
    action = ExtendedAction.objects.get(session=session)
    total = 0
    for i in range(30):
        roll = rolled(
            seat_id=ana.pk,
            request={"roll": 6, "keep": 3, "difficulty": 5},
            character=mirela.pk,
            client_seed=str(i),
            options={"extended": action.pk},
        )
        total += max(0, roll.data["successes"])
        action.refresh_from_db()
        if not action.is_open:
            break
    assert action.progress == total >= 3 and not action.is_open
    assert (
        code(
            lambda: rolled(
                seat_id=ana.pk,
                request={"roll": 6, "keep": 3, "difficulty": 5},
                options={"extended": action.pk},
            )
        )
        == "conflict"
    )


def test_the_gm_closes_an_extended_action(gm):
    session, _, _, gm_at = setup_table(gm, "roll-and-keep", {"Mirela": {}})
    send(gm_at, "extended.open", label="Climb", target=10)
    action = ExtendedAction.objects.get(session=session)
    send(gm_at, "extended.close", extended=action.pk)
    assert code(lambda: send(gm_at, "extended.close", extended=action.pk)) == "conflict"


# --- action-dice: rounds --------------------------------------------------------------------


def test_rounds_reset_action_dice_which_rolls_spend(gm):
    session, (nadia,), (ana,), gm_at = setup_table(gm, "action-dice", {"Nadia": {"action_dice": 3}})
    send(gm_at, "round.new")
    stack = Pool.objects.get(character=nadia, kind=PoolKind.ROUND_DICE)
    assert stack.remaining == 3
    rolled(seat_id=ana.pk, request={"action_dice": 2, "skill_dice": 3}, character=nadia.pk)
    stack.refresh_from_db()
    assert stack.remaining == 1
    assert (
        code(
            lambda: rolled(
                seat_id=ana.pk, request={"action_dice": 2, "skill_dice": 1}, character=nadia.pk
            )
        )
        == "conflict"
    )
    send(gm_at, "round.new")
    stack.refresh_from_db()
    assert stack.remaining == 3
    assert GameSession.objects.get(pk=session.pk).table_state["round"] == 2


def test_defense_for_the_round_the_better_one_counts(gm):
    session, (nadia,), (ana,), gm_at = setup_table(gm, "action-dice", {"Nadia": {"action_dice": 4}})
    send(gm_at, "round.new")
    general = rolled(
        seat_id=ana.pk,
        request={"action_dice": 1, "skill_dice": 2},
        character=nadia.pk,
        options={"defense": "general"},
    )
    state = GameSession.objects.get(pk=session.pk).table_state["defense"][str(nadia.pk)]
    assert state["against_everyone_else"] == general.data["total"] // 2
    action = rolled(
        seat_id=ana.pk,
        request={"action_dice": 1, "skill_dice": 2},
        character=nadia.pk,
        options={"defense": "action", "opponent": "Orc"},
    )
    state = GameSession.objects.get(pk=session.pk).table_state["defense"][str(nadia.pk)]
    assert state["against_opponent"] == {
        "Orc": max(action.data["total"], general.data["total"] // 2)
    }


def test_a_player_sitting_down_mid_round_gets_this_rounds_dice(gm):
    session, _, _, gm_at = setup_table(gm, "action-dice", {"Nadia": {"action_dice": 3}})
    send(gm_at, "round.new")
    late = Character.objects.create(
        campaign=session.campaign, name="Late", sheet={"action_dice": 2}
    )
    session.refresh_from_db()
    seat = join_session(session=session, name="Latecomer", character_id=late.pk).seat
    stack = Pool.objects.get(seat=seat, character=late, kind=PoolKind.ROUND_DICE)
    assert stack.remaining == 2
    seat = Seat.objects.select_related("session__campaign").get(pk=seat.pk)
    rolled(seat_id=seat.pk, request={"action_dice": 2, "skill_dice": 1}, character=late.pk)


@pytest.mark.parametrize(
    ("system", "sheets", "request_", "options"),
    [
        ("roll-and-keep", {"Mirela": {}}, {"roll": 5, "keep": 3, "difficulty": 5}, {"extended": 1}),
        ("action-dice", {"Nadia": {}}, {"action_dice": 1, "skill_dice": 1}, {"defense": "general"}),
        ("action-dice", {"Nadia": {}}, {"action_dice": 1, "skill_dice": 1}, {"group_extra": 1}),
    ],
)
def test_hidden_rolls_cannot_move_public_table_state(gm, system, sheets, request_, options):
    _, (hero,), (ana,), _ = setup_table(gm, system, sheets)
    with pytest.raises(ServiceError) as err:
        rolled(
            seat_id=ana.pk, request=request_, character=hero.pk, visibility="blind", options=options
        )
    assert err.value.field == next(iter(options))


def test_a_spend_on_a_hidden_roll_is_as_hidden_as_the_roll(disco, gm):
    _, (eris,), (ana,), _ = disco
    roll = rolled(
        seat_id=ana.pk, request={"pool": ["d6"], "tn": 4}, character=eris.pk, visibility="blind"
    )  # even the roller does not see it
    with pytest.raises(ServiceError) as err:
        send(ana, "resource.spend", character=eris.pk, use="extra-success", roll=roll.seq)
    assert err.value.code == "not-found"
    mine = rolled(
        seat_id=ana.pk,
        request={"pool": ["d6"], "tn": 4},
        character=eris.pk,
        visibility="gm",
        client_seed="x",
    )
    if mine.data["outcome"] == "success":
        event = send(ana, "resource.spend", character=eris.pk, use="extra-success", roll=mine.seq)
        assert event.visibility == "gm"
    with pytest.raises(ServiceError) as err:
        send(ana, "resource.spend", character=eris.pk, use=["extra-success"], roll=mine.seq)
    assert err.value.field == "use"


@pytest.mark.parametrize("visibility", ["gm", "blind", "self"])
def test_what_a_hidden_roll_spends_is_as_hidden_as_the_roll_and_its_counts_wait_for_it(
    disco, visibility
):
    session, (eris,), (ana,), _ = disco
    discord_is(session, 3)
    seq = GameSession.objects.get(pk=session.pk).last_seq + 2  # the luck die's spend, the roll
    roll = rolled(
        seat_id=ana.pk,
        request={"pool": ["d6"], "tn": 5, "protect": 1},
        character=eris.pk,
        options={"luck_dice": 1},
        visibility=visibility,
        client_seed=seed_showing(session, seq, 6, 3),
    )
    assert roll.seq == seq and roll.data["protected"] == 1
    around = Event.objects.filter(session=session, kind="pool").exclude(seq=roll.seq)
    spends = [e for e in around.order_by("seq") if e.data.get("action") == "spend"]
    counts = [e for e in around.order_by("seq") if e.data.get("action") == "counts"]
    assert [e.data["use"] for e in spends] == ["add-luck-die", "protect"]
    assert spends[0].seq < roll.seq < spends[1].seq  # protection is paid for what it shielded
    assert {e.visibility for e in spends} == {visibility}
    # Nothing public: the moves are noted as hidden as the roll, waiting for it.
    assert [e.visibility for e in counts] == [visibility, visibility]
    assert [e.data["of"] for e in counts] == [e.seq for e in spends]
    assert [e.data["roll"] for e in counts] == [roll.seq, roll.seq]
    moved = [m for e in counts for m in e.data["withheld"]]
    assert moved == [
        {"count": ["resources", eris.pk, "instant_karma"], "moved": -1},
        {"count": ["resources", eris.pk, "instant_karma"], "moved": -1},
    ]


def test_a_hidden_roll_spending_a_character_point_shows_nothing_until_the_end(d6):
    session, (sera, _), (ana, _), _ = d6
    roll = rolled(
        seat_id=ana.pk,
        request={"dice": 3, "character_point": True},
        character=sera.pk,
        visibility="self",
    )
    spend = Event.objects.get(session=session, seq=roll.seq - 1)
    note = Event.objects.get(session=session, seq=roll.seq + 1)  # noted once the roll has its seq
    assert spend.visibility == "self" and spend.data["use"] == "double-base"
    assert note.visibility == "self" and note.data["of"] == spend.seq
    assert note.data["roll"] == roll.seq
    assert not Event.objects.filter(session=session, visibility="public", kind="pool").exists()
    end_session(session_id=session.pk)
    ended = Event.objects.get(session=session, kind="session.end")
    assert ended.data["resources"] == [
        {"character": sera.pk, "name": "character_points", "amount": 1}
    ]


def _karma(session, viewer, character):
    state = room_state(session=GameSession.objects.get(pk=session.pk), viewer=viewer)
    rows = {(r["character"], r["name"]): r["amount"] for r in state["resources"]}
    return rows[(character.pk, "instant_karma")]


def test_the_price_of_avoiding_a_costly_hidden_roll_waits_for_its_reveal(gm):
    # Another seat must not read "exactly N ones" off the Instant Karma spent on a blind roll.
    session, (eris,), (ana,), gm_seat_ = setup_table(
        gm, "discordian", {"Eris": {"luck": 5, "instant_karma": 20, "hero_dice": ["d6"] * 4}}
    )
    for i in range(500):
        roll = rolled(
            seat_id=ana.pk,
            request={"pool": ["d6"] * 4, "tn": 4, "challenge": 2},
            character=eris.pk,
            client_seed=f"c{i}",
            visibility="gm",
        )
        if "costly" in roll.data["flags"]:
            break
    ones = roll.data["ones"]
    spend = send(ana, "resource.spend", character=eris.pk, use="avoid-costly", roll=roll.seq)
    assert spend.visibility == "gm" and amount(eris, "instant_karma") == 20 - ones
    room = Viewer(seat_id=None, is_gm=False)
    roller = Viewer(seat_id=ana.pk, is_gm=False)
    table_gm = Viewer(seat_id=gm_seat_.pk, is_gm=True)
    after = Event.objects.filter(session=session, seq__gt=roll.seq)
    assert not after.filter(visibility="public").exists()  # nothing public says "costly"
    assert _karma(session, room, eris) == 20
    assert _karma(session, roller, eris) == _karma(session, table_gm, eris) == 20 - ones
    # The GM awards 1 in public: the room sees 20 + 1, the roller and the GM their own count.
    award = send(gm_seat_, "resource.award", character=eris.pk, name="instant_karma", amount=1)
    assert award.visibility == "public" and award.data["resources"][0]["amount"] == 21
    told = Event.objects.filter(session=session, seq__gt=award.seq, data__action="counts")
    assert {(e.visibility, e.owner_id or e.actor_id) for e in told} == {
        ("self", ana.pk),
        ("self", gm_seat_.pk),
    }
    assert {e.data["resources"][0]["amount"] for e in told} == {21 - ones}
    assert _karma(session, room, eris) == 21
    # Revealed: the reveal carries the count, and everyone's agrees with the store.
    reveal = send(gm_seat_, "reveal", seq=roll.seq)
    assert reveal.data["resources"] == [
        {"character": eris.pk, "name": "instant_karma", "amount": 21 - ones}
    ]
    for viewer in (room, roller, table_gm):
        assert _karma(session, viewer, eris) == amount(eris, "instant_karma") == 21 - ones


def _remaining(session, viewer, pool):
    state = room_state(session=GameSession.objects.get(pk=session.pk), viewer=viewer)
    return {p["id"]: p["remaining"] for p in state["pools"]}[pool.pk]


def test_action_dice_a_hidden_roll_commits_stay_its_own_until_a_new_round(gm):
    session, (nadia,), (ana,), gm_at = setup_table(gm, "action-dice", {"Nadia": {"action_dice": 3}})
    send(gm_at, "round.new")
    stack = Pool.objects.get(character=nadia, kind=PoolKind.ROUND_DICE)
    rolled(
        seat_id=ana.pk,
        request={"action_dice": 2, "skill_dice": 3},
        character=nadia.pk,
        visibility="gm",
    )
    room = Viewer(seat_id=None, is_gm=False)
    roller = Viewer(seat_id=ana.pk, is_gm=False)
    table_gm = Viewer(seat_id=gm_at.pk, is_gm=True)
    assert _remaining(session, room, stack) == 3
    assert _remaining(session, roller, stack) == _remaining(session, table_gm, stack) == 1
    # A new round deals the dice anew: the same for everyone, nothing withheld any more.
    dealt = send(gm_at, "round.new")
    assert [p["remaining"] for p in dealt.data["pools"]] == [3]
    for viewer in (room, roller, table_gm):
        assert _remaining(session, viewer, stack) == 3
    rolled(
        seat_id=ana.pk,
        request={"action_dice": 1, "skill_dice": 1},
        character=nadia.pk,
        visibility="self",
    )
    assert (_remaining(session, room, stack), _remaining(session, roller, stack)) == (3, 2)
    assert _remaining(session, table_gm, stack) == 3  # a self roll is the roller's alone
    end_session(session_id=session.pk)
    ended = Event.objects.get(session=session, kind="session.end")
    assert [p["id"] for p in ended.data["pools"]] == [stack.pk]
    for viewer in (room, roller, table_gm):
        assert _remaining(session, viewer, stack) == Pool.objects.get(pk=stack.pk).remaining
