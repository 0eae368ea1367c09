"""The admin works for a GM: lists, forms, per-field errors, actions, the read-only event log."""

from __future__ import annotations

import pytest

from tabletop.models import Campaign, Character, Event, GameSession, SessionStatus
from tabletop.services.seats import join_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_gm(client, gm):
    gm.is_superuser = True
    gm.save()
    client.force_login(gm)
    return client


@pytest.mark.parametrize(
    "url",
    [
        "/admin/",
        "/admin/tabletop/campaign/",
        "/admin/tabletop/campaign/add/",
        "/admin/tabletop/character/",
        "/admin/tabletop/gamesession/",
        "/admin/tabletop/event/",
    ],
)
def test_admin_pages_render(admin_client_gm, live_session, url):
    assert admin_client_gm.get(url).status_code == 200


def test_change_pages_render(admin_client_gm, campaign, live_session):
    character = Character.objects.create(campaign=campaign, name="Ana")
    for url in (
        f"/admin/tabletop/campaign/{campaign.pk}/change/",
        f"/admin/tabletop/character/{character.pk}/change/",
        f"/admin/tabletop/gamesession/{live_session.pk}/change/",
    ):
        response = admin_client_gm.get(url)
        assert response.status_code == 200, url
    page = admin_client_gm.get(
        f"/admin/tabletop/gamesession/{live_session.pk}/change/"
    ).content.decode()
    assert f'href="/play/{live_session.invite_code}/"' in page
    assert f'href="/gm/{live_session.pk}/"' in page
    assert live_session.commitment in page
    # The campaign's page lists its sessions with the same invite link.
    listed = admin_client_gm.get(f"/admin/tabletop/campaign/{campaign.pk}/change/")
    assert f'href="/play/{live_session.invite_code}/"' in listed.content.decode()
    assert bytes(live_session.server_seed).hex() not in page


def test_event_log_is_read_only(admin_client_gm, live_session):
    event = Event.objects.get(session=live_session)
    page = admin_client_gm.get(f"/admin/tabletop/event/{event.pk}/change/")
    assert page.status_code == 200
    assert b"session.start" in page.content
    response = admin_client_gm.post(f"/admin/tabletop/event/{event.pk}/change/", {"kind": "forged"})
    assert response.status_code == 403
    assert admin_client_gm.get("/admin/tabletop/event/add/").status_code == 403
    assert (
        admin_client_gm.post(
            f"/admin/tabletop/event/{event.pk}/delete/", {"post": "yes"}
        ).status_code
        == 403
    )
    assert Event.objects.get(pk=event.pk).kind == "session.start"


def test_bad_settings_get_a_field_error_not_a_crash(admin_client_gm, gm):
    response = admin_client_gm.post(
        "/admin/tabletop/campaign/add/",
        {
            "name": "Broken",
            "system": "generic",
            "gm": gm.pk,
            "settings": '{"no_such_setting": 1}',
            "characters-TOTAL_FORMS": "0",
            "characters-INITIAL_FORMS": "0",
            "sessions-TOTAL_FORMS": "0",
            "sessions-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "settings" in errors and "no_such_setting" in errors["settings"][0]
    assert not Campaign.objects.filter(name="Broken").exists()


def test_malformed_json_sheet_gets_a_field_error(admin_client_gm, campaign):
    response = admin_client_gm.post(
        "/admin/tabletop/character/add/",
        {
            "campaign": campaign.pk,
            "name": "Bad sheet",
            "sheet": "{not json",
            "resources-TOTAL_FORMS": "0",
            "resources-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    assert "sheet" in response.context["adminform"].form.errors
    assert not Character.objects.filter(name="Bad sheet").exists()


@pytest.mark.parametrize(
    ("sheet", "where"),
    [('{"x": "\\ud800"}', "x: "), ('"\\ud800"', ""), ('{"skills": {"\\udfff": 1}}', "skills")],
)
def test_a_sheet_holding_text_no_database_keeps_gets_a_field_error(
    admin_client_gm, campaign, sheet, where
):
    # The form showed the sheet back with the lone surrogate in it, and the page could not be
    # encoded: a 500 after the form had said what was wrong.
    response = admin_client_gm.post(
        "/admin/tabletop/character/add/",
        {
            "campaign": campaign.pk,
            "name": "Surrogate",
            "sheet": sheet,
            "resources-TOTAL_FORMS": "0",
            "resources-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    error = response.context["adminform"].form.errors["sheet"][0]
    assert error.startswith(where) and "not valid text" in error
    assert "\\ud800" in response.content.decode() or "\\udfff" in response.content.decode()
    assert not Character.objects.filter(name="Surrogate").exists()


def test_start_and_end_actions(admin_client_gm, campaign):
    planned = GameSession.objects.create(campaign=campaign, title="Planned")
    url = "/admin/tabletop/gamesession/"
    admin_client_gm.post(url, {"action": "start_sessions", "_selected_action": [planned.pk]})
    planned.refresh_from_db()
    assert planned.status == SessionStatus.LIVE and len(planned.commitment) == 64
    admin_client_gm.post(url, {"action": "end_sessions", "_selected_action": [planned.pk]})
    planned.refresh_from_db()
    assert planned.status == SessionStatus.ENDED
    # Ending again is refused with a message, not an error page.
    response = admin_client_gm.post(
        url, {"action": "end_sessions", "_selected_action": [planned.pk]}, follow=True
    )
    assert response.status_code == 200
    assert b"only a live session can end" in response.content


def test_staff_gm_sees_only_their_own_campaigns(client, django_user_model, gm, campaign):
    from django.contrib.auth.models import Permission

    other = django_user_model.objects.create_user(
        "othergm", password="pw-for-tests-only", is_staff=True
    )
    other.user_permissions.set(Permission.objects.filter(content_type__app_label="tabletop"))
    Campaign.objects.create(name="Their own", system="generic", gm=other)
    client.force_login(other)
    page = client.get("/admin/tabletop/campaign/").content.decode()
    assert "Their own" in page and "Night Market" not in page


def test_no_admin_filter_reads_the_secret_seed(admin_client_gm, live_session):
    first = bytes(live_session.server_seed).hex()[:2]
    for url in (
        f"/admin/tabletop/gamesession/?server_seed__regex=^{first}",
        "/admin/tabletop/gamesession/?server_seed__gt=x",
        "/admin/tabletop/event/?session__server_seed__isnull=False",
        "/admin/tabletop/event/?data__text__contains=1",
    ):
        assert admin_client_gm.get(url).status_code == 400, url


def test_rolls_for_the_roller_alone_stay_hidden_in_the_event_log(admin_client_gm, live_session):
    from tabletop.services.seats import join_session

    from .commands import rolled

    ana = join_session(session=live_session, name="Ana").seat
    secret = rolled(seat_id=ana.pk, request={"notation": "3d6+100"}, visibility="self")
    listing = admin_client_gm.get("/admin/tabletop/event/").content.decode()
    pk = Event.objects.get(seq=secret.seq, session=live_session).pk
    detail = admin_client_gm.get(f"/admin/tabletop/event/{pk}/change/")
    assert secret.data["text"] not in listing
    assert (
        secret.data["text"] not in detail.content.decode() and "hidden" in detail.content.decode()
    )


def test_a_seat_is_offered_only_its_campaigns_characters(admin_client_gm, campaign, live_session):
    ours = Character.objects.create(campaign=campaign, name="Ana")
    other = Campaign.objects.create(name="Elsewhere", system="generic", gm=campaign.gm)
    theirs = Character.objects.create(campaign=other, name="Stranger")
    join_session(session=live_session, name="Bea")
    page = admin_client_gm.get(f"/admin/tabletop/gamesession/{live_session.pk}/change/")
    field = page.context["inline_admin_formsets"][0].formset.forms[0].fields["characters"]
    assert list(field.queryset) == [ours]
    assert theirs not in field.queryset


def test_a_started_sessions_campaign_is_fixed(admin_client_gm, campaign, live_session):
    url = f"/admin/tabletop/gamesession/{live_session.pk}/change/"
    page = admin_client_gm.get(url)
    assert "campaign" not in page.context["adminform"].form.fields
    planned = GameSession.objects.create(campaign=campaign, title="Next")
    assert planned.status == SessionStatus.PLANNED
    page = admin_client_gm.get(f"/admin/tabletop/gamesession/{planned.pk}/change/")
    assert "campaign" in page.context["adminform"].form.fields
