"""In the admin a staff GM sees and changes only their own campaigns; superusers see all."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from tabletop.models import Campaign, Character, GameSession
from tabletop.services.seats import join_session
from tabletop.services.sessions import create_session, start_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def tables(django_user_model):
    def gm(name: str):
        user = django_user_model.objects.create_user(name, password="pw-for-tests", is_staff=True)
        user.user_permissions.set(Permission.objects.filter(content_type__app_label="tabletop"))
        return user

    mine, theirs = gm("alice-gm"), gm("bob-gm")
    player = django_user_model.objects.create_user("bobs-player-carol", password="pw-for-tests")
    own = Campaign.objects.create(name="Alice's Keep", system="generic", gm=mine)
    other = Campaign.objects.create(name="Bob's Secret Saga", system="generic", gm=theirs)
    Character.objects.create(campaign=other, name="Zed the Hidden", owner=player)
    secret = start_session(session_id=create_session(campaign=other, title="Bob's Night").pk)
    join_session(session=secret, name="Carol", user=player)
    start_session(session_id=create_session(campaign=own, title="Alice's Night").pk)
    return {"mine": mine, "theirs": theirs, "own": own, "other": other, "secret": secret}


LISTS = (
    "/admin/tabletop/campaign/",
    "/admin/tabletop/character/",
    "/admin/tabletop/gamesession/",
    "/admin/tabletop/event/",
    "/admin/tabletop/campaign/add/",
    "/admin/tabletop/character/add/",
    "/admin/tabletop/gamesession/add/",
)


def test_a_staff_gms_pages_and_filters_name_nothing_of_other_gms(client, tables):
    client.force_login(tables["mine"])
    for url in LISTS:
        page = client.get(url).content.decode()
        # (whole names: a random token on the page may hold a short word by chance)
        for word in ("Bob&#x27;s", "bob-gm", "bobs-player-carol", "Zed the Hidden", "Secret Saga"):
            assert word not in page, (url, word)
    assert "Alice" in client.get("/admin/tabletop/gamesession/").content.decode()
    change = f"/admin/tabletop/gamesession/{tables['secret'].pk}/change/"
    assert client.get(change).status_code in {302, 404}


def test_a_staff_gm_cannot_make_things_in_another_gms_campaign(client, tables):
    client.force_login(tables["mine"])
    before = GameSession.objects.count(), Character.objects.count(), Campaign.objects.count()
    client.post(
        "/admin/tabletop/gamesession/add/",
        {"campaign": tables["other"].pk, "title": "Planted", **inline_management()},
    )
    client.post(
        "/admin/tabletop/character/add/",
        {"campaign": tables["other"].pk, "name": "Spy", "sheet": "{}", **resource_management()},
    )
    client.post(
        "/admin/tabletop/campaign/add/",
        {"name": "Gift", "system": "generic", "gm": tables["theirs"].pk, "settings": "{}"},
    )
    after = GameSession.objects.count(), Character.objects.count(), Campaign.objects.count()
    assert after == before
    assert not GameSession.objects.filter(title="Planted").exists()


def test_a_superuser_sees_every_campaign(client, tables):
    tables["mine"].is_superuser = True
    tables["mine"].save()
    client.force_login(tables["mine"])
    page = client.get("/admin/tabletop/gamesession/").content.decode()
    assert "Bob&#x27;s Night" in page or "Bob's Night" in page


def inline_management() -> dict[str, str]:
    form = {}
    for prefix in ("seats", "pools"):
        form |= {f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0"}
    return form


def resource_management() -> dict[str, str]:
    return {"resources-TOTAL_FORMS": "0", "resources-INITIAL_FORMS": "0"}
