"""The player's room page: the join form for outsiders, the room for seats, and its weight."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from tabletop.models import Character
from tabletop.services.seats import join_session
from tabletop.services.sessions import end_session

pytestmark = pytest.mark.django_db

# bytes, uncompressed: HTML + CSS + JS (a phone on a slow line); 160 KB since the phone's roll
# bar, its keyboard handling and the notation field's history (~9 KB) came with it, 175 KB since
# talk at the table and the turn order (chat.js, initiative.js, talk.css and the box: 14 KB),
# 180 KB since every word the modules show (the talk box's and the turn order's too) goes
# through i18n.js (~2 KB) and a translated call (~3 KB): the page weighs 178.9 KB with both;
# 181 KB since a press in the room is not moved from under the finger (the log holding still
# while pressed, the bar leaving a pressed control where it is: 1 KB, with 0.5 KB trimmed)
PAGE_BUDGET = 181_000


def room_url(session) -> str:
    return f"/play/{session.invite_code}/"


def room_data(html: str) -> dict:
    match = re.search(r'<script id="room-data" type="application/json">(.*?)</script>', html, re.S)
    assert match, "the room page embeds its data as room-data JSON"
    return json.loads(match[1])


def sit_down(client, session, name="Ana", **extra) -> None:
    response = client.post(f"/play/{session.invite_code}/join", {"name": name, **extra})
    assert response.status_code == 302 and response["Location"] == room_url(session)


def test_outsider_gets_the_join_form_and_nothing_of_the_room(client, live_session):
    response = client.get(room_url(live_session))
    html = response.content.decode()
    assert response.status_code == 200
    assert 'name="name"' in html and f"/play/{live_session.invite_code}/join" in html
    assert "room-data" not in html
    assert live_session.commitment not in html
    assert "Table log" not in html and "/ws/play/" not in html


def test_a_seated_browser_gets_the_room_with_its_data(client, live_session):
    sit_down(client, live_session)
    response = client.get(room_url(live_session))
    html = response.content.decode()
    assert response.status_code == 200
    page = room_data(html)
    assert page["session"]["code"] == live_session.invite_code
    assert page["session"]["status"] == "live"
    assert page["seat"]["name"] == "Ana" and page["role"] == "player"
    assert page["socket"] == f"/ws/play/{live_session.invite_code}/"
    assert page["odds_url"] == f"/play/{live_session.invite_code}/odds"
    assert page["system"]["id"] == "generic"
    assert any(f["name"] == "notation" for f in page["generic"]["request"])
    assert page["fairness"] == {"commitment": live_session.commitment, "server_seed": None}
    assert "Ana" in html and "Session one" in html
    assert 'type="module"' in html and "tabletop/room.js" in html
    assert 'aria-live="polite"' in html


def test_quick_rolls_come_from_the_seat_characters_sheets(client, campaign, live_session):
    kira = Character.objects.create(campaign=campaign, name="Kira", sheet={})
    sit_down(client, live_session, character=kira.pk)
    page = room_data(client.get(room_url(live_session)).content.decode())
    assert [q["character"] for q in page["quick_rolls"]] == [{"id": kira.pk, "name": "Kira"}]
    assert page["seat"]["characters"] == [{"id": kira.pk, "name": "Kira"}]


def test_the_gm_gets_the_room_with_gm_controls(client, gm, live_session):
    client.force_login(gm)
    html = client.get(room_url(live_session)).content.decode()
    assert room_data(html)["role"] == "gm"
    assert 'id="end-session"' in html


def test_players_get_no_gm_controls(client, live_session):
    sit_down(client, live_session)
    assert 'id="end-session"' not in client.get(room_url(live_session)).content.decode()


def test_after_the_end_the_seed_is_on_the_page(client, live_session):
    sit_down(client, live_session)
    ended = end_session(session_id=live_session.pk)
    html = client.get(room_url(live_session)).content.decode()
    assert room_data(html)["fairness"]["server_seed"] == ended.revealed_seed
    assert ended.revealed_seed in html


def test_a_token_link_moves_into_a_cookie_and_redirects(client, live_session):
    joined = client.post(
        f"/play/{live_session.invite_code}/join", {"name": "Ana"}, content_type="application/json"
    ).json()
    client.cookies.clear()
    response = client.get(room_url(live_session), {"token": joined["token"]})
    assert response.status_code == 302 and response["Location"] == room_url(live_session)
    assert response.cookies[f"seat_{live_session.invite_code}"].value == joined["token"]
    assert response.cookies[f"seat_{live_session.invite_code}"]["httponly"]
    page = room_data(client.get(room_url(live_session)).content.decode())
    assert page["seat"]["id"] == joined["seat"]["id"]


def test_a_wrong_token_link_sets_no_cookie(client, live_session):
    response = client.get(room_url(live_session), {"token": "not-a-seat"})
    assert response.status_code == 302 and response["Location"] == room_url(live_session)
    assert f"seat_{live_session.invite_code}" not in response.cookies
    assert "room-data" not in client.get(room_url(live_session)).content.decode()


def _static_path(url: str) -> Path:
    assert url.startswith("/static/"), f"{url}: the room loads nothing from elsewhere"
    found = finders.find(url.removeprefix("/static/"))
    assert found, f"{url} is referenced but not found"
    return Path(found)


# Static imports (import {x} from './x.js', export ... from) and dynamic ones (import('./x.js')).
IMPORT = re.compile(
    r"""(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']"""
    r"""|import\(\s*["']([^"']+)["']\s*\)"""
)


def _with_imports(url: str, seen: dict[str, int]) -> None:
    if url in seen:
        return
    path = _static_path(url)
    text = path.read_text()
    seen[url] = path.stat().st_size
    if path.suffix == ".js":
        for match in IMPORT.finditer(text):
            target = match[1] or match[2]
            assert target.startswith("./"), f"{url} imports {target}: only local modules"
            _with_imports(url.rsplit("/", 1)[0] + "/" + target.removeprefix("./"), seen)
    if path.suffix == ".css":
        external = re.search(r"url\(\s*['\"]?(https?:)?//", text)
        assert not external, f"{url} loads something from elsewhere"
        assert "@import" not in text


def test_page_weight_stays_under_budget(client, live_session):
    sit_down(client, live_session)
    html = client.get(room_url(live_session)).content.decode()
    refs = re.findall(r'<(?:script|link)\b[^>]*?(?:src|href)="([^"]+)"', html)
    assert not [r for r in refs if re.match(r"(https?:)?//", r)], "no external requests"
    seen: dict[str, int] = {}
    for ref in refs:
        if not ref.startswith("data:"):  # inline, already counted with the HTML
            _with_imports(ref, seen)
    assert "/static/tabletop/room.js" in seen and "/static/tabletop/table.css" in seen
    assert len(seen) > 3, "room.js pulls in its modules"
    total = len(html.encode()) + sum(seen.values())
    assert total < PAGE_BUDGET, f"the room page weighs {total} bytes: {seen}"


def test_the_page_draws_the_first_names_and_the_socket_brings_the_rest(client, live_session):
    for i in range(45):
        join_session(session=live_session, name=f"Player {i:02}")
    sit_down(client, live_session)  # with the GM's seat, 47 at the table
    html = client.get(room_url(live_session)).content.decode()
    listed = re.search(r'<ul id="seats" class="seats">(.*?)</ul>', html, re.S)[1]
    names = re.findall(r"<li(?: class=\"me\")?>([^<]+)", listed)
    assert len(names) == 40 and names[1:3] == ["Player 00", "Player 01"]
    assert '<li class="more">+7 more</li>' in listed
    assert '<span id="seat-count">47</span>' in html
    # A full table weighs no more than a small one: the list stops at 40 names.
    for i in range(45, 200):
        join_session(session=live_session, name=f"Player {i:03}")
    assert len(client.get(room_url(live_session)).content) - len(html.encode()) < 20


def test_the_room_page_asks_at_once_for_the_modules_room_js_imports_deeper(client, live_session):
    sit_down(client, live_session)
    html = client.get(room_url(live_session)).content.decode()
    preloaded = set(re.findall(r'<link rel="modulepreload" href="([^"]+)">', html))
    wanted: set[str] = set()
    todo = ["/static/tabletop/room.js"]
    while todo:
        url = todo.pop()
        if url in wanted:
            continue
        wanted.add(url)
        text = _static_path(url).read_text()
        # Static imports only: a system's module is loaded by name (and preloaded as its own).
        for target in re.findall(r'^import\s[^;]*?from\s+"(\./[^"]+)"', text, re.M):
            todo.append(url.rsplit("/", 1)[0] + "/" + target.removeprefix("./"))
    # room.js and its own imports are asked for as soon as the page and room.js arrive.
    room = _static_path("/static/tabletop/room.js").read_text()
    direct = re.findall(r'^import\s[^;]*?from\s+"\./([^"]+)"', room, re.M)
    wanted -= {"/static/tabletop/room.js", *(f"/static/tabletop/{name}" for name in direct)}
    assert len(wanted) >= 2
    assert wanted <= preloaded, f"not preloaded: {sorted(wanted - preloaded)}"
    assert "/static/tabletop/systems/generic.js" in preloaded
