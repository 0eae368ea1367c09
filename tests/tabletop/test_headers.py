"""Every page holds the browser to what it is: scripts from the site only, no inline script
or style attribute, the room's socket on the site's own host, framed by nobody (but the
overlay), no device access; and the templates keep to that policy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import override_settings

from tabletop.headers import content_security_policy, template_style_hashes
from tabletop.services.seats import join_session
from tabletop.services.watch import create_watch_link

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def policy(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return dict(part.strip().split(" ", 1) for part in header.split(";"))


@pytest.fixture
def pages(client, live_session, gm):
    seat = join_session(session=live_session, name="Ana")
    link = create_watch_link(session=live_session, user=gm)
    code = live_session.invite_code
    return {
        "home": "/",
        "login": "/accounts/login/",
        "join form": f"/play/{code}/",
        "room": f"/play/{code}/?token={seat.token}",
        "record": f"/play/{code}/record?token={seat.token}",
        "printable log": f"/play/{code}/export.html?token={seat.token}",
        "verify": f"/play/{code}/verify",
        "watch": f"/watch/{link.code}/",
        "overlay": f"/watch/{link.code}/overlay",
        "not found": "/no/such/page",
        "gm dashboard": f"/gm/{live_session.pk}/",
        "admin": "/admin/",
    }


def test_every_page_sends_the_policy_and_its_companions(client, pages, gm):
    client.force_login(gm)
    for name, url in pages.items():
        response = client.get(url, follow=True)
        csp = policy(response)
        assert csp["script-src"] == "'self' 'report-sample'", name
        assert "unsafe-inline" not in response["Content-Security-Policy"], name
        assert "unsafe-eval" not in response["Content-Security-Policy"], name
        assert csp["object-src"] == "'none'" and csp["base-uri"] == "'none'", name
        assert csp["form-action"] == "'self'", name
        assert csp["connect-src"] == "'self' ws://testserver", name
        assert response["X-Content-Type-Options"] == "nosniff", name
        assert response["Referrer-Policy"] == "same-origin", name
        assert response["Cross-Origin-Opener-Policy"] == "same-origin", name
        assert "camera=()" in response["Permissions-Policy"], name
        if name == "overlay":
            assert csp["frame-ancestors"] == "*" and "X-Frame-Options" not in response
        else:
            assert csp["frame-ancestors"] == "'none'", name
            assert response["X-Frame-Options"] == "DENY", name


@override_settings(ALLOWED_HOSTS=["table.example", "localhost"])
def test_the_socket_source_follows_the_sites_scheme_and_host(rf, client):
    secure = rf.get("/", secure=True, HTTP_HOST="table.example")
    assert "connect-src 'self' wss://table.example;" in content_security_policy(secure)
    plain = rf.get("/", HTTP_HOST="localhost:8000")
    assert "connect-src 'self' ws://localhost:8000;" in content_security_policy(plain)
    # A host the site does not serve gets its 400, with the policy, not a crash.
    refused = client.get("/", HTTP_HOST="evil.example")
    assert refused.status_code == 400 and policy(refused)["connect-src"] == "'self'"


def test_who_may_frame_the_overlay_is_the_operators_to_say(client, pages):
    with override_settings(TABLETOP={**_tabletop(), "OVERLAY_FRAME_ANCESTORS": "'none'"}):
        response = client.get(pages["overlay"])
        assert policy(response)["frame-ancestors"] == "'none'"
        assert response["X-Frame-Options"] == "DENY"
    origins = "https://streamelements.com https://*.streamlabs.com"
    with override_settings(TABLETOP={**_tabletop(), "OVERLAY_FRAME_ANCESTORS": origins}):
        response = client.get(pages["overlay"])
        assert policy(response)["frame-ancestors"] == origins
        assert "X-Frame-Options" not in response


def _tabletop() -> dict:
    from django.conf import settings

    return dict(settings.TABLETOP)


def test_the_printable_logs_own_style_is_allowed_by_its_hash(client, pages):
    response = client.get(pages["printable log"])
    (block,) = re.findall(r"<style>(.*?)</style>", b"".join(response).decode(), re.S)
    import base64
    import hashlib

    digest = base64.b64encode(hashlib.sha256(block.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy(response)["style-src"].split()
    assert policy(response)["style-src"].split()[:2] == ["'self'", "'report-sample'"]
    assert len(template_style_hashes()) >= 2  # the printable log's and the admin's


def test_templates_and_modules_keep_to_the_policy():
    """No inline script, inline event handler, style attribute or javascript: URL in any
    template; no module builds a style attribute, an inline handler or code from text."""
    for template in (ROOT / "templates").rglob("*.html"):
        text = template.read_text()
        for script in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in script, (template, script)
        assert not re.search(r"\son[a-z]+\s*=", text), template
        assert not re.search(r"\sstyle\s*=", text), template
        assert "javascript:" not in text, template
    for module in (ROOT / "static").rglob("*.js"):
        text = module.read_text()
        for pattern in (
            r"setAttribute\(\s*[\"'](style|on\w+)",
            r"\beval\(",
            r"new Function\(",
            r"\.innerHTML\s*=",
            r"insertAdjacentHTML",
            r"document\.write",
        ):
            assert not re.search(pattern, text), (module, pattern)
