"""One lasting link per campaign: the link opens the current session, a player sits down once
and is seated at every later session (browser cookie, bot token or login), the GM's removal
holds campaign-wide, old invites lead on, and each session keeps its own fair dice."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from tabletop.models import Campaign, Character, Event, GameSession, Player, SavedRoll, Seat
from tabletop.selectors.campaign_link import current_session, onward
from tabletop.services import seats
from tabletop.services.access import resolve_access
from tabletop.services.errors import ServiceError
from tabletop.services.next_session import plan_next_session
from tabletop.services.saved import change_roll, delete_roll, save_roll
from tabletop.services.seats import (
    carry_seat,
    gm_seat,
    join_session,
    remove_seat,
    seat_for_token,
    seat_user,
)
from tabletop.services.sessions import create_session, end_session, start_session
from tabletop.services.sheets import update_sheet

from .commands import rolled

pytestmark = pytest.mark.django_db


def the_next(session: GameSession) -> GameSession:
    """End ``session``, plan the next one (the GM's button) and start it."""
    end_session(session_id=session.pk)
    return start_session(session_id=plan_next_session(session_id=session.pk).pk)


# --- services --------------------------------------------------------------------------------


def test_a_token_opens_the_players_seat_at_the_next_session(live_session):
    hero = Character.objects.create(campaign=live_session.campaign, name="Vex")
    joined = join_session(session=live_session, name="Ana", character_id=hero.pk)
    second = the_next(live_session)
    seat = seat_for_token(session=second, token=joined.token)
    assert seat is not None and seat.session_id == second.pk and seat.pk != joined.seat.pk
    assert (seat.name, seat.player_id) == ("Ana", joined.seat.player_id)
    assert [c.name for c in seat.characters.all()] == ["Vex"]
    # Once made, the same seat: no second seat, no second "sat down" line.
    assert seat_for_token(session=second, token=joined.token) == seat
    assert Seat.objects.filter(session=second, player=seat.player).count() == 1
    joins = Event.objects.filter(session=second, kind="seat.join")
    assert [e.data["seat"]["name"] for e in joins] == ["Ana"]
    # And again a week later, still one sit-down.
    third = the_next(second)
    assert seat_for_token(session=third, token=joined.token).name == "Ana"
    assert Player.objects.count() == 1


def test_a_token_of_another_campaign_opens_nothing(live_session, gm):
    other = Campaign.objects.create(name="Elsewhere", system="generic", gm=gm)
    elsewhere = start_session(session_id=create_session(campaign=other, title="Other").pk)
    token = join_session(session=elsewhere, name="Bo").token
    assert seat_for_token(session=live_session, token=token) is None
    assert not Seat.objects.filter(session=live_session, name="Bo").exists()


def test_no_new_seat_at_an_ended_session(live_session):
    later = start_session(session_id=create_session(campaign=live_session.campaign, title="B").pk)
    token = join_session(session=later, name="Ana").token
    end_session(session_id=live_session.pk)
    assert seat_for_token(session=live_session, token=token) is None


def test_the_gms_removal_holds_for_the_campaign(live_session, gm):
    token = join_session(session=live_session, name="Ana").token
    second = the_next(live_session)
    carried = seat_for_token(session=second, token=token)
    remove_seat(by_seat_id=gm_seat(session=second, user=gm).pk, seat_id=carried.pk)
    assert seat_for_token(session=second, token=token) is None
    third = the_next(second)
    assert seat_for_token(session=third, token=token) is None
    assert not Seat.objects.filter(session=third, name="Ana").exists()
    # A new invite: sitting down again makes a new player, with a new token.
    again = join_session(session=third, name="Ana")
    assert again.created and again.seat.player_id != carried.player_id


def test_removal_also_closes_a_seat_already_carried_into_a_planned_session(live_session, gm):
    token = join_session(session=live_session, name="Ana").token
    planned = create_session(campaign=live_session.campaign, title="Next week")
    ahead = seat_for_token(session=planned, token=token)
    assert ahead is not None
    here = seat_for_token(session=live_session, token=token)
    remove_seat(by_seat_id=gm_seat(session=live_session, user=gm).pk, seat_id=here.pk)
    assert seat_for_token(session=planned, token=token) is None
    ahead.refresh_from_db()
    assert ahead.removed_at is not None and ahead.token_hash is None


def test_removal_is_told_in_the_log_of_each_session_it_takes_a_seat_from(live_session, gm):
    campaign = live_session.campaign
    token = join_session(session=live_session, name="Ana").token
    planned = create_session(campaign=campaign, title="Next week")
    side = start_session(session_id=create_session(campaign=campaign, title="Side table").pk)
    ahead = seat_for_token(session=planned, token=token)
    aside = seat_for_token(session=side, token=token)
    here = seat_for_token(session=live_session, token=token)
    remove_seat(by_seat_id=gm_seat(session=live_session, user=gm).pk, seat_id=here.pk)
    for session, seat in ((live_session, here), (planned, ahead), (side, aside)):
        leave = Event.objects.filter(session=session).order_by("seq").last()
        assert (leave.kind, leave.data["seat"], leave.data["removed"]) == (
            "seat.leave",
            seat.pk,
            True,
        )
        assert leave.actor.is_gm and leave.actor.session_id == session.pk
        seat.refresh_from_db()
        assert seat.removed_at is not None and seat.token_hash is None


def test_a_login_carries_over_and_its_removal_holds(live_session, gm, django_user_model):
    ana = django_user_model.objects.create_user("ana", password="pw-for-tests-only")
    first = join_session(session=live_session, name="Ana", user=ana).seat
    second = the_next(live_session)
    seat = seat_user(session=second, user=ana)
    assert seat is not None and seat.name == "Ana" and seat.user == ana
    assert join_session(session=second, name="Other name", user=ana).seat == seat
    remove_seat(by_seat_id=gm_seat(session=second, user=gm).pk, seat_id=seat.pk)
    third = the_next(second)
    assert seat_user(session=third, user=ana) is None
    with pytest.raises(ServiceError) as refused:
        join_session(session=third, name="Ana", user=ana)
    assert refused.value.code == "forbidden"
    assert first.player_id == seat.player_id


def removed_after_the_end(session: GameSession, gm, token: str) -> GameSession:
    """End ``session``; at the next one the GM removes the player ``token`` opens."""
    second = the_next(session)
    carried = seat_for_token(session=second, token=token)
    remove_seat(by_seat_id=gm_seat(session=second, user=gm).pk, seat_id=carried.pk)
    return second


def test_a_player_removed_later_opens_no_seat_at_an_ended_session(
    live_session, gm, django_user_model
):
    ana = join_session(session=live_session, name="Ana").token
    bo = join_session(session=live_session, name="Bo").token
    cy_login = django_user_model.objects.create_user("cy", password="pw-for-tests-only")
    cy = join_session(session=live_session, name="Cy", user=cy_login).seat
    second = removed_after_the_end(live_session, gm, ana)
    carried_cy = seat_user(session=second, user=cy_login)
    remove_seat(by_seat_id=gm_seat(session=second, user=gm).pk, seat_id=carried_cy.pk)
    code = live_session.invite_code
    for token, cookie in ((ana, None), (None, ana)):
        assert resolve_access(code=code, token=token, cookie_token=cookie, user=None) is None
    assert seat_for_token(session=live_session, token=ana) is None
    assert resolve_access(code=code, token=None, cookie_token=None, user=cy_login) is None
    # The ended session itself is as it was: the seats are still on its record.
    assert Seat.objects.filter(pk=cy.pk, removed_at__isnull=True).exists()
    # A player not removed still opens the ended session's record.
    still = resolve_access(code=code, token=bo, cookie_token=None, user=None)
    assert still is not None and still.seat.name == "Bo"


def test_a_player_removed_later_changes_no_character_or_saved_roll_through_an_ended_seat(gm):
    campaign = Campaign.objects.create(name="Chance", system="d6-chance", gm=gm)
    first = start_session(session_id=create_session(campaign=campaign, title="One").pk)
    kael = Character.objects.create(campaign=campaign, name="Kael")
    joined = join_session(session=first, name="Ana", character_id=kael.pk)
    kept = save_roll(
        seat=joined.seat, character_id=kael.pk, label="Dodge", system=None, request={"dice": 3}
    )
    sheet_before = Character.objects.get(pk=kael.pk).sheet
    removed_after_the_end(first, gm, joined.token)
    old_seat = Seat.objects.get(pk=joined.seat.pk)
    attempts = [
        lambda: update_sheet(
            seat=old_seat, character_id=kael.pk, sheet={"attributes": {"Dexterity": "9D"}}
        ),
        lambda: save_roll(
            seat=old_seat, character_id=kael.pk, label="Run", system=None, request={"dice": 2}
        ),
        lambda: change_roll(seat=old_seat, roll_id=kept.pk, label="Renamed"),
        lambda: delete_roll(seat=old_seat, roll_id=kept.pk),
    ]
    for attempt in attempts:
        with pytest.raises(ServiceError) as refused:
            attempt()
        assert refused.value.code == "forbidden" and "removed" in refused.value.message
    assert Character.objects.get(pk=kael.pk).sheet == sheet_before
    assert [(r.pk, r.label) for r in SavedRoll.objects.all()] == [(kept.pk, "Dodge")]


def test_a_character_owner_is_seated_at_every_session(live_session, django_user_model):
    owner = django_user_model.objects.create_user("cy", password="pw-for-tests-only")
    Character.objects.create(campaign=live_session.campaign, name="Mira", owner=owner)
    assert seat_user(session=live_session, user=owner).name == "cy"
    second = the_next(live_session)
    seat = seat_user(session=second, user=owner)
    assert [c.name for c in seat.characters.all()] == ["Mira"]
    assert Player.objects.get().seats.count() == 2


def test_a_players_name_and_character_stay_theirs_between_sessions(live_session):
    hero = Character.objects.create(campaign=live_session.campaign, name="Vex")
    join_session(session=live_session, name="Ana", character_id=hero.pk)
    second = the_next(live_session)
    # Ana has not opened the new session yet: her name and character wait for her.
    with pytest.raises(ServiceError) as name_taken:
        join_session(session=second, name="ana", character_id=None)
    assert name_taken.value.field == "name"
    with pytest.raises(ServiceError) as character_taken:
        join_session(session=second, name="Bo", character_id=hero.pk)
    assert character_taken.value.code == "conflict"


def test_a_seat_carried_twice_at_once_is_one_seat(live_session):
    token = join_session(session=live_session, name="Ana").token
    second = the_next(live_session)
    player = Player.objects.get()
    first = carry_seat(session=second, player=player)
    assert carry_seat(session=second, player=player) == first
    assert seat_for_token(session=second, token=token) == first


def test_the_current_session_live_then_planned_then_last_ended(campaign):
    assert current_session(campaign_id=campaign.pk) is None
    one = start_session(session_id=create_session(campaign=campaign, title="One").pk)
    planned = create_session(campaign=campaign, title="Two")
    assert current_session(campaign_id=campaign.pk) == one
    end_session(session_id=one.pk)
    assert current_session(campaign_id=campaign.pk) == planned
    assert onward(GameSession.objects.get(pk=one.pk))["next"]["code"] == planned.invite_code
    start_session(session_id=planned.pk)
    end_session(session_id=planned.pk)
    assert current_session(campaign_id=campaign.pk) == planned
    assert onward(GameSession.objects.get(pk=planned.pk)) == {
        "link": f"/c/{campaign.link_code}/",
        "next": None,
    }
    assert onward(GameSession.objects.get(pk=one.pk))["next"] is None


def test_each_session_keeps_its_own_dice_log_and_verification(live_session):
    token = join_session(session=live_session, name="Ana").token
    ana = seat_for_token(session=live_session, token=token)
    rolled(seat_id=ana.pk, request={"notation": "3d6"}, client_seed="one")
    second = the_next(live_session)
    first_log = list(Event.objects.filter(session=live_session).values_list("seq", "kind"))
    again = seat_for_token(session=second, token=token)
    rolled(seat_id=again.pk, request={"notation": "3d6"}, client_seed="two")
    end_session(session_id=second.pk)
    live_session.refresh_from_db()
    second.refresh_from_db()
    assert live_session.commitment != second.commitment
    assert bytes(live_session.server_seed) != bytes(second.server_seed)
    # The first session's log did not change while its player sat down at the second.
    assert list(Event.objects.filter(session=live_session).values_list("seq", "kind")) == (
        first_log
    )
    for session in (live_session, second):
        out = io.StringIO()
        call_command("verify", session.invite_code, stdout=out)
        assert "every die verified" in out.getvalue()


def kinds(session: GameSession) -> list[str]:
    return list(
        Event.objects.filter(session=session).order_by("seq").values_list("kind", flat=True)
    )


def test_no_one_sits_down_at_a_session_that_ended_after_it_was_read(live_session):
    read = GameSession.objects.select_related("campaign").get(pk=live_session.pk)
    end_session(session_id=live_session.pk)
    with pytest.raises(ServiceError) as refused:
        join_session(session=read, name="Late")
    assert refused.value.code == "conflict" and "ended" in refused.value.message
    assert kinds(live_session)[-1] == "session.end"
    assert not Seat.objects.filter(session=live_session, name="Late").exists()
    assert not Player.objects.filter(name="Late").exists()


def test_a_character_owner_gets_no_seat_at_a_session_that_ended_after_it_was_read(
    live_session, django_user_model
):
    owner = django_user_model.objects.create_user("cy", password="pw-for-tests-only")
    Character.objects.create(campaign=live_session.campaign, name="Mira", owner=owner)
    read = GameSession.objects.select_related("campaign").get(pk=live_session.pk)
    end_session(session_id=live_session.pk)
    with pytest.raises(ServiceError) as refused:
        seat_user(session=read, user=owner)
    assert refused.value.code == "conflict"
    assert kinds(live_session)[-1] == "session.end"
    assert not Seat.objects.filter(session=live_session, user=owner).exists()


def test_a_removal_under_way_as_the_session_ends_comes_before_the_end_in_the_log(
    live_session, gm, monkeypatch
):
    ana = join_session(session=live_session, name="Ana").seat
    the_gm = gm_seat(session=live_session, user=gm)
    real_now = seats.timezone.now

    class EndedMeanwhile:
        """The GM ends the session while the removal is under way (as it stamps the seat)."""

        @staticmethod
        def now():
            end_session(session_id=live_session.pk)
            return real_now()

    monkeypatch.setattr(seats, "timezone", EndedMeanwhile)
    remove_seat(by_seat_id=the_gm.pk, seat_id=ana.pk)
    log = kinds(live_session)
    assert log[-1] == "session.end"
    assert log.count("session.end") == 1


# --- pages and JSON --------------------------------------------------------------------------


def test_the_campaign_link_opens_the_current_session(client, campaign):
    link = f"/c/{campaign.link_code}/"
    waiting = client.get(link)
    assert waiting.status_code == 200 and b"The first session starts soon" in waiting.content
    one = start_session(session_id=create_session(campaign=campaign, title="One").pk)
    response = client.get(link)
    assert response.status_code == 302 and response["Location"] == f"/play/{one.invite_code}/"
    assert response["Cache-Control"] == "no-store"
    assert client.get("/c/no-such-code/").status_code == 404
    assert client.post(link).status_code == 405


def test_the_campaign_link_answers_json_clients(client, campaign):
    link = f"/c/{campaign.link_code}/"
    assert client.get(link, HTTP_ACCEPT="application/json").json()["session"] is None
    one = start_session(session_id=create_session(campaign=campaign, title="One").pk)
    body = client.get(link, HTTP_ACCEPT="application/json").json()
    assert body["campaign"] == "Night Market" and body["link"] == link
    assert body["session"]["code"] == one.invite_code and body["session"]["status"] == "live"
    assert body["room"] == f"/play/{one.invite_code}/"
    assert body["socket"] == f"/ws/play/{one.invite_code}/"


def test_a_browser_sits_down_once_per_campaign(client, live_session):
    code = live_session.invite_code
    response = client.post(f"/play/{code}/join", {"name": "Ana"})
    assert response.status_code == 302
    link_cookie = f"player_{live_session.campaign.link_code}"
    assert client.cookies[link_cookie].value == client.cookies[f"seat_{code}"].value
    second = the_next(live_session)
    response = client.get(f"/c/{live_session.campaign.link_code}/")
    assert response["Location"] == f"/play/{second.invite_code}/"
    room = client.get(response["Location"])
    assert room.status_code == 200 and b'id="room-data"' in room.content
    assert b"You: <strong>Ana</strong>" in room.content
    # The room's socket and pages read this session's own cookie: it is set now.
    assert client.cookies[f"seat_{second.invite_code}"].value == client.cookies[link_cookie].value
    assert Seat.objects.filter(session=second, name="Ana").count() == 1
    # Joining again from this browser keeps the seat.
    client.post(f"/play/{second.invite_code}/join", {"name": "Someone else"})
    assert Seat.objects.filter(session=second).exclude(role="gm").count() == 1


def test_an_old_invite_leads_on(client, live_session):
    code = live_session.invite_code
    seated = Client()
    seated.post(f"/play/{code}/join", {"name": "Ana"})
    end_session(session_id=live_session.pk)
    link = f"/c/{live_session.campaign.link_code}/"
    # Nothing planned yet: the ended session's page says the next one starts soon.
    page = client.get(f"/play/{code}/")
    assert page.status_code == 200 and b"The next session starts soon" in page.content
    assert link.encode() in page.content
    room = seated.get(f"/play/{code}/")
    assert b'id="onward"' in room.content and b"The next session starts soon" in room.content
    data = json.loads(
        room.content.split(b'id="room-data" type="application/json">')[1].split(b"<")[0]
    )
    assert data["onward"] == {"link": link, "next": None}
    planned = plan_next_session(session_id=live_session.pk)
    # Someone without a seat there goes on to the campaign's current session.
    response = client.get(f"/play/{code}/")
    assert response.status_code == 302 and response["Location"] == link
    # A player keeps the ended room (its log, verification, export) and is pointed on.
    room = seated.get(f"/play/{code}/")
    assert room.status_code == 200
    assert f"The next session, “{planned.title}”, is planned".encode() in room.content


def test_a_bots_token_keeps_working_for_the_next_sessions(client, live_session):
    code = live_session.invite_code
    joined = client.post(
        f"/play/{code}/join", {"name": "Dicebot"}, content_type="application/json"
    ).json()
    token = joined["token"]
    second = the_next(live_session)
    where = client.get(
        f"/c/{live_session.campaign.link_code}/", HTTP_ACCEPT="application/json"
    ).json()
    assert where["socket"] == f"/ws/play/{second.invite_code}/"
    bot = Client()  # no cookies: the token alone
    stats = bot.get(f"/play/{second.invite_code}/stats", {"token": token})
    assert stats.status_code == 200, stats.content
    assert Seat.objects.get(session=second, name="Dicebot").player_id is not None


def test_the_join_form_leaves_out_the_campaigns_players_characters(client, live_session):
    hero = Character.objects.create(campaign=live_session.campaign, name="Vex")
    Character.objects.create(campaign=live_session.campaign, name="Zed")
    join_session(session=live_session, name="Ana", character_id=hero.pk)
    second = the_next(live_session)
    form = client.get(f"/play/{second.invite_code}/")
    assert b">Zed<" in form.content and b">Vex<" not in form.content


def test_home_takes_a_campaign_link(client, campaign):
    response = client.post("/join", {"code": f"http://example.org/c/{campaign.link_code}/"})
    assert response.status_code == 302 and response["Location"] == f"/c/{campaign.link_code}/"


def test_the_dashboard_and_the_admin_show_the_campaign_link(client, gm, live_session):
    client.force_login(gm)
    link = f"/c/{live_session.campaign.link_code}/"
    dashboard = client.get(f"/gm/{live_session.pk}/")
    assert f'id="campaign-link" readonly value="http://testserver{link}"'.encode() in (
        dashboard.content
    )
    gm.is_superuser = True
    gm.save()
    join_session(session=live_session, name="Ana")
    admin = client.get(f"/admin/tabletop/campaign/{live_session.campaign.pk}/change/")
    assert admin.status_code == 200 and f'href="{link}"'.encode() in admin.content
    assert b"Ana" in admin.content  # the campaign's players, read-only


def test_each_campaign_gets_its_own_unguessable_link(gm):
    codes = {
        Campaign.objects.create(name=f"C{i}", system="generic", gm=gm).link_code for i in range(20)
    }
    assert len(codes) == 20 and all(len(code) == 12 for code in codes)


def test_the_campaigns_players_bound_its_tables(live_session, monkeypatch):
    from tabletop.services import seats

    for name in ("Ana", "Bo", "Cy"):
        join_session(session=live_session, name=name)
    second = the_next(live_session)
    monkeypatch.setattr(seats, "MAX_PLAYERS", 3)
    # Nobody of the three has opened the second session yet: their seats there are still theirs.
    with pytest.raises(ServiceError) as full:
        join_session(session=second, name="Dee")
    assert full.value.code == "conflict" and "campaign's table is full" in full.value.message
