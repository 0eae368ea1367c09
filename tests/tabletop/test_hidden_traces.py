"""What others see of a hidden roll never depends on its dice (docs/fairness.md): the events
that follow it, in number and kind, and the counts the room is told then and later, are the
same whether or not a die met the Discord Die; nor do its spends show in the table's state."""

from __future__ import annotations

import pytest

from rules.engines import FairStream
from tabletop.models import Event, GameSession
from tabletop.selectors.events import Viewer, event_message, for_viewer

from .commands import rolled, send
from .test_pools_resources import amount, setup_table

pytestmark = pytest.mark.django_db

SPECTATOR = Viewer(seat_id=None, is_gm=False)


def plain(value, seats: dict, characters: dict):
    """``value`` with seat and character ids written as names (two tables' ids differ)."""
    if isinstance(value, list):
        return [plain(v, seats, characters) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, v in value.items():
        if key == "seat" and isinstance(v, int):
            v = seats[v]
        elif key == "character" and isinstance(v, int):
            v = characters[v]
        elif key == "character" and isinstance(v, dict) and isinstance(v.get("id"), int):
            v = {**v, "id": characters[v["id"]]}
        out[key] = plain(v, seats, characters)
    return out


def trace(session, after: int, viewer: Viewer) -> list[dict]:
    """The events after ``after`` as ``viewer`` receives them: seqs counted from ``after``,
    ids as names."""
    seats = {s.pk: s.name for s in session.seats.all()}
    characters = {c.pk: c.name for c in session.campaign.characters.all()}
    out = []
    for event in Event.objects.filter(session=session, seq__gt=after).order_by("seq"):
        message = for_viewer(event_message(event), viewer)
        out.append(plain({**message, "seq": message["seq"] - after, "at": None}, seats, characters))
    return out


def hidden_protected_roll(gm, *, match: bool, opponent: bool = False):
    """A hidden roll asking to protect a die while the Discord Die is 3, whose d6 shows 3 (it
    meets the Discord Die) or not; then the GM awards Eris Instant Karma in public. What Bo (a
    player with no part in it) and a spectator see of it all."""
    sheets = {
        "Eris": {"hero_dice": ["d6"], "instant_karma": 2},
        "Bob": {"hero_dice": ["d6"], "instant_karma": 2},
    }
    session, (eris, bob), (ana, bo), gm_at = setup_table(gm, "discordian", sheets)
    GameSession.objects.filter(pk=session.pk).update(table_state={"discord": {"value": 3}})
    after = GameSession.objects.get(pk=session.pk).last_seq
    shows = 3 if match else 4  # both sides' d6 (the opponent's is the stream's second die)
    server_seed = bytes(GameSession.objects.get(pk=session.pk).server_seed)
    seed = next(
        f"s{i}"
        for i in range(20000)
        if (lambda d: d.roll(6) == shows and (not opponent or d.roll(6) == shows))(
            FairStream(server_seed, f"s{i}", after + 1)
        )
    )
    request = {"pool": ["d6"], "tn": 5, "protect": 1}
    options = {}
    if opponent:  # the GM rolls Eris against Bob, Bob protecting too
        request["opponent"] = {"pool": ["d6"], "tn": 5, "protect": 1}
        options = {"opponent_character": bob.pk}
    roller = gm_at if opponent else ana
    roll = rolled(
        seat_id=roller.pk,
        request=request,
        character=eris.pk,
        client_seed=seed,
        visibility="gm",
        options=options,
    )
    assert (roll.data["protected"] == 1) is match
    if opponent:
        assert (roll.data["opponent"]["protected"] == 1) is match
    send(gm_at, "resource.award", character=eris.pk, name="instant_karma", amount=1)
    send(gm_at, "resource.award", character=bob.pk, name="instant_karma", amount=1)
    return {
        "paid": 2 - amount(eris, "instant_karma") + 1,
        "opponent_paid": 2 - amount(bob, "instant_karma") + 1,
        "bo": trace(session, after, Viewer(seat_id=bo.pk, is_gm=False)),
        "spectator": trace(session, after, SPECTATOR),
    }


@pytest.mark.parametrize("opponent", [False, True], ids=["alone", "pvp"])
def test_others_see_the_same_of_a_hidden_protected_roll_whether_or_not_a_die_matched(gm, opponent):
    met = hidden_protected_roll(gm, match=True, opponent=opponent)
    missed = hidden_protected_roll(gm, match=False, opponent=opponent)
    assert (met["paid"], missed["paid"]) == (1, 0)  # only the shielded die is paid for
    assert (met["opponent_paid"], missed["opponent_paid"]) == ((1, 0) if opponent else (0, 0))
    for who in ("bo", "spectator"):
        assert met[who] == missed[who], who
    kinds = [(m["kind"], m["visibility"], m["data"].get("action")) for m in met["bo"]]
    assert kinds[:3] == [("roll", "gm", None), ("pool", "gm", None), ("pool", "gm", None)]


def test_a_character_point_spent_on_a_hidden_roll_stays_out_of_the_tables_public_state(gm):
    session, (sera,), (ana,), gm_at = setup_table(
        gm, "d6-chance", {"Sera": {"character_points": 2}}
    )
    send(gm_at, "round.new")
    before = GameSession.objects.get(pk=session.pk).table_state
    hidden = rolled(
        seat_id=ana.pk,
        request={"dice": 3, "character_point": True},
        character=sera.pk,
        visibility="gm",
    )
    assert hidden.data["request"]["character_point"]
    assert GameSession.objects.get(pk=session.pk).table_state == before  # everyone's hello
    # The point still lasts the round for Sera's later rolls, paid once.
    later = rolled(seat_id=ana.pk, request={"dice": 3}, character=sera.pk, visibility="gm")
    assert later.data["request"]["character_point"] and amount(sera, "character_points") == 1
    send(gm_at, "round.new")
    after = rolled(seat_id=ana.pk, request={"dice": 3}, character=sera.pk)
    assert not after.data["request"]["character_point"]


def test_bonus_dice_a_hidden_roll_used_are_not_told_by_the_next_award(gm):
    seen = []
    for hidden_roll in (True, False):
        _, (eris,), (ana,), gm_at = setup_table(gm, "discordian", {"Eris": {}})
        send(gm_at, "bonus.award", character=eris.pk, dice=["d8"])
        if hidden_roll:
            rolled(seat_id=ana.pk, request={"pool": ["d6"]}, character=eris.pk, visibility="gm")
        award = send(gm_at, "bonus.award", character=eris.pk, dice=["d8"])
        public = for_viewer(event_message(award), SPECTATOR)["data"]["pools"]
        seen.append([(p["remaining"], p["initial"]) for p in public])
    assert seen[0] == seen[1] == [(2, 2)]
