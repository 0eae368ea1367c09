"""The GM dashboard page: who may open it, what it embeds (never the secret seed), its weight."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders

from tabletop.models import Campaign, Character
from tabletop.protocol.commands import check_fields
from tabletop.services.errors import ServiceError
from tabletop.services.seats import gm_seat, join_session
from tabletop.services.sessions import create_session, end_session, start_session
from tabletop.systems.base import award_resource
from tabletop.systems.registry import command

pytestmark = pytest.mark.django_db

# bytes, uncompressed: HTML + CSS + every JS module it loads (the room's); 155 KB since the
# modules' words go through i18n.js with talk at the table and the turn order on the page (153 KB)
PAGE_BUDGET = 155_000


def dashboard_url(session) -> str:
    return f"/gm/{session.pk}/"


def dashboard_data(html: str) -> dict:
    match = re.search(
        r'<script id="dashboard-data" type="application/json">(.*?)</script>', html, re.S
    )
    assert match, "the dashboard embeds its data as dashboard-data JSON"
    return json.loads(match[1])


def test_anonymous_visitors_are_sent_to_log_in(client, live_session):
    response = client.get(dashboard_url(live_session))
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={dashboard_url(live_session)}"


def test_another_user_gets_403_and_nothing_of_the_session(client, live_session):
    other = get_user_model().objects.create_user("someone-else", password="pw-for-tests-only")
    client.force_login(other)
    response = client.get(dashboard_url(live_session))
    html = response.content.decode()
    assert response.status_code == 403
    assert "dashboard-data" not in html
    assert live_session.commitment not in html and live_session.invite_code not in html


def test_a_missing_session_is_404(client, gm):
    client.force_login(gm)
    assert client.get("/gm/999999/").status_code == 404


def test_the_gm_gets_the_dashboard_with_the_commitment_and_never_the_seed(client, gm, live_session):
    client.force_login(gm)
    response = client.get(dashboard_url(live_session))
    html = response.content.decode()
    assert response.status_code == 200
    page = dashboard_data(html)
    assert page["fairness"] == {"commitment": live_session.commitment, "server_seed": None}
    assert (
        page["session"]["status"] == "live" and page["session"]["code"] == live_session.invite_code
    )
    assert page["seat"]["role"] == "gm" and page["role"] == "gm"
    assert page["socket"] == f"/ws/play/{live_session.invite_code}/"
    assert page["invite"] == f"http://testserver/play/{live_session.invite_code}/"
    assert page["system"]["id"] == "generic"
    live_session.refresh_from_db()
    assert bytes(live_session.server_seed).hex() not in html
    assert "tabletop/dashboard.js" in html and 'type="module"' in html
    # Controls the page draws for every system; none of the system-specific ones at a generic table.
    for control in ('id="end-session"', 'id="copy-invite"', 'id="hidden-rolls"', 'id="log"'):
        assert control in html
    sections = ('id="open-rolls"', 'id="discord-roll"', 'id="extended-form"', 'id="new-round"')
    for section in (*sections, 'id="new-scene"'):
        assert section not in html


def test_after_the_end_the_seed_is_shown(client, gm, live_session):
    end_session(session_id=live_session.pk)
    client.force_login(gm)
    html = client.get(dashboard_url(live_session)).content.decode()
    live_session.refresh_from_db()
    seed = bytes(live_session.server_seed).hex()
    assert dashboard_data(html)["fairness"]["server_seed"] == seed
    assert seed in html


def test_a_planned_session_offers_start(client, gm, campaign):
    session = create_session(campaign=campaign, title="Next week")
    client.force_login(gm)
    html = client.get(dashboard_url(session)).content.decode()
    page = dashboard_data(html)
    assert page["session"]["status"] == "planned" and page["fairness"]["commitment"] is None
    assert re.search(r'<button id="start-session"[^>]*>', html)
    assert "hidden" not in re.search(r'<button id="start-session"[^>]*>', html)[0]


@pytest.mark.parametrize(
    ("system", "present", "resources"),
    [
        ("zoria", ['id="open-rolls"', 'id="undo-award"'], []),
        (
            "discordian",
            ['id="discord-roll"', 'id="new-round"', 'id="new-scene"'],
            ["luck", "instant_karma"],
        ),
        ("roll-and-keep", ['id="extended-form"'], []),
        ("action-dice", ['id="new-round"'], []),
        ("d6-chance", ['id="new-round"'], ["character_points"]),
    ],
)
def test_only_the_sections_of_the_tables_system(client, gm, system, present, resources):
    campaign = Campaign.objects.create(name=system, system=system, gm=gm)
    Character.objects.create(
        campaign=campaign, name="Kael", sheet={"level": 7} if system == "zoria" else {}
    )
    session = start_session(session_id=create_session(campaign=campaign, title="t").pk)
    client.force_login(gm)
    html = client.get(dashboard_url(session)).content.decode()
    sections = ('id="open-rolls"', 'id="discord-roll"', 'id="extended-form"', 'id="new-round"')
    for section in (*sections, 'id="new-scene"'):
        assert (section in html) == (section in present), section
    page = dashboard_data(html)
    assert [r["name"] for r in page["system"]["resources"]] == resources
    assert [c["name"] for c in page["characters"]] == ["Kael"]


def test_the_page_stays_light(client, gm, live_session):
    client.force_login(gm)
    html = client.get(dashboard_url(live_session)).content.decode()
    total = len(html.encode())
    seen: set[str] = set()
    todo = ["tabletop/dashboard.js", "tabletop/table.css"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = finders.find(name)
        assert path, name
        text = Path(path).read_text(encoding="utf-8")
        total += len(text.encode())
        todo += [f"tabletop/{m}" for m in re.findall(r'from "\./([\w-]+\.js)"', text)]
    assert {"tabletop/socket.js", "tabletop/log.js", "tabletop/gm-views.js"} <= seen
    assert total < PAGE_BUDGET, f"{total} bytes"


def test_the_minus_button_takes_a_resource_back_never_below_zero(gm):
    """The dashboard's minus button next to Luck, Instant Karma and character points:
    ``resource.award`` with a negative amount."""
    campaign = Campaign.objects.create(name="Workshop", system="discordian", gm=gm)
    eris = Character.objects.create(campaign=campaign, name="Eris", sheet={"luck": 1})
    session = start_session(session_id=create_session(campaign=campaign, title="t").pk)
    seat = gm_seat(session=session, user=gm)
    event = award_resource(seat_id=seat.pk, character=eris.pk, name="luck", amount=-1)
    assert event.data["resources"] == [{"character": eris.pk, "name": "luck", "amount": 0}]
    assert event.data["text"] == "GM takes back 1 Luck from Eris"
    with pytest.raises(ServiceError) as refused:
        award_resource(seat_id=seat.pk, character=eris.pk, name="luck", amount=-1)
    assert refused.value.code == "conflict"
    fields = command("discordian", "resource.award").fields
    for amount in (0, 1001, -1001, True, "1"):
        with pytest.raises(ServiceError) as refused:
            values = check_fields(fields, {"character": eris.pk, "name": "luck", "amount": amount})
            award_resource(seat_id=seat.pk, **values)
        assert refused.value.field == "amount"
    # A player is told what only the GM does in a whole sentence ("only the GM awards" was cut
    # short, in German too).
    player = join_session(session=session, name="Ana").seat
    with pytest.raises(ServiceError) as refused:
        award_resource(seat_id=player.pk, character=eris.pk, name="luck", amount=1)
    assert refused.value.message == "only the GM awards or takes back a character's resources"
