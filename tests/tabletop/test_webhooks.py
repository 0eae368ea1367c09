"""Outgoing webhooks against a local HTTP server: after commit, signed, retried with backoff,
never blocking the roll, resumed after a restart, failures shown to the GM."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone

from tabletop.models import DeliveryStatus, Webhook, WebhookDelivery
from tabletop.services import webhooks
from tabletop.services.errors import ServiceError
from tabletop.services.rolls import make_roll
from tabletop.services.seats import join_session
from tabletop.services.sessions import create_session, end_session, start_session
from tabletop.services.webhooks import SIGNATURE_HEADER, add_webhook, sender

pytestmark = pytest.mark.django_db(transaction=True)


class Receiver:
    """A chat service's incoming webhook on a free loopback port: answers from ``answers`` in
    turn (then 200), and records every POST."""

    def __init__(self, answers=()):
        self.answers = list(answers)
        self.posts: list[dict] = []
        self.hold = threading.Event()
        self.hold.set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.hold.wait(30)
                outer.posts.append({"headers": dict(self.headers), "body": body})
                code = outer.answers.pop(0) if outer.answers else 200
                self.send_response(code)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.hold.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fast_retries(settings):
    settings.TABLETOP = {
        **settings.TABLETOP,
        "WEBHOOK_RETRY_SECONDS": [0.05, 0.1],
        "WEBHOOK_PRIVATE_ADDRESSES": True,  # the receiver listens on loopback
    }
    webhooks._forget_hooks()
    yield
    assert sender.wait_idle(15)


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def table(campaign, url):
    add_webhook(campaign=campaign, user=campaign.gm, url=url)
    session = start_session(session_id=create_session(campaign=campaign, title="Tonight").pk)
    return session, join_session(session=session, name="Ana").seat


def test_public_rolls_and_the_session_start_and_end_are_posted_signed(
    campaign, receiver, fast_retries
):
    session, ana = table(campaign, receiver.url)
    public = make_roll(seat_id=ana.pk, request={"notation": "2d6+1"}, client_seed="x")
    make_roll(seat_id=ana.pk, request={"notation": "d20"}, visibility="gm", client_seed="secret")
    end_session(session_id=session.pk)
    assert sender.wait_idle(15)
    hook = Webhook.objects.get(campaign=campaign)
    bodies = [json.loads(p["body"]) for p in receiver.posts]
    assert [b["event"]["kind"] for b in bodies] == ["session.start", "roll", "session.end"]
    roll = bodies[1]
    assert (
        roll["event"]["seq"] == public.seq
        and roll["event"]["data"]["total"] == public.data["total"]
    )
    assert roll["content"] == roll["text"] and f"#{public.seq} Ana: " in roll["text"]
    assert roll["session"]["title"] == "Tonight"
    for post in receiver.posts:
        expected = (
            "sha256=" + hmac.new(hook.secret.encode(), post["body"], hashlib.sha256).hexdigest()
        )
        assert post["headers"][SIGNATURE_HEADER] == expected
        assert post["headers"]["Content-Type"] == "application/json"
    sent = b"".join(p["body"] for p in receiver.posts)
    assert b"secret" not in sent and session.invite_code.encode() not in sent
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}


def test_a_slow_receiver_never_holds_up_a_roll(campaign, receiver, fast_retries):
    _session, ana = table(campaign, receiver.url)
    assert sender.wait_idle(15)  # session.start delivered
    receiver.hold.clear()  # the receiver now hangs until released
    first = make_roll(seat_id=ana.pk, request={"notation": "d20"})
    second = make_roll(seat_id=ana.pk, request={"notation": "d20"})
    # Both rolls are stored while the receiver still holds the first POST.
    assert second.seq == first.seq + 1 and len(receiver.posts) == 1
    receiver.hold.set()
    assert sender.wait_idle(15)
    assert len(receiver.posts) == 3


def test_failures_are_retried_with_backoff_then_reported(campaign, fast_retries, client):
    flaky = Receiver(answers=[500])  # session.start fails once, then goes through
    try:
        session, ana = table(campaign, flaky.url)
        assert sender.wait_idle(15)
        start = WebhookDelivery.objects.get(event__kind="session.start")
        assert start.status == DeliveryStatus.DELIVERED and start.attempts == 2
        flaky.answers = [503, 503, 503]  # one try and two retries: all refused
        make_roll(seat_id=ana.pk, request={"notation": "d20"})
        assert sender.wait_idle(15)
    finally:
        flaky.close()
    failed = WebhookDelivery.objects.get(event__kind="roll")
    assert failed.status == DeliveryStatus.FAILED and failed.attempts == 3
    assert failed.last_error == "HTTP 503 Service Unavailable" and failed.response_status == 503
    client.force_login(campaign.gm)
    page = client.get(f"/gm/{session.pk}/").content.decode()
    assert "1 failed" in page and "HTTP 503 Service Unavailable" in page


def test_an_unreachable_receiver_is_reported_and_a_refusal_is_not_retried(campaign, fast_retries):
    refusing = Receiver(answers=[404])
    refusing.close()  # nothing listens there any more
    _session, _ = table(campaign, refusing.url)
    assert sender.wait_idle(15)
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED and delivery.attempts == 3
    assert delivery.last_error.startswith("could not reach it")


def test_a_restart_resumes_pending_deliveries(campaign, receiver, fast_retries):
    _session, ana = table(campaign, receiver.url)
    assert sender.wait_idle(15)
    roll = make_roll(seat_id=ana.pk, request={"notation": "d20"})
    assert sender.wait_idle(15)
    # As a process killed mid-delivery leaves it: pending, untouched for a while.
    delivery = WebhookDelivery.objects.get(event=roll)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.PENDING, updated_at=timezone.now() - timedelta(minutes=5)
    )
    restarted = webhooks.Sender()
    restarted.resume()
    restarted.step()
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED
    assert [json.loads(p["body"])["event"]["seq"] for p in receiver.posts].count(roll.seq) == 2


def test_a_full_queue_drops_and_counts_instead_of_blocking(
    campaign, receiver, fast_retries, monkeypatch
):
    _session, ana = table(campaign, receiver.url)
    assert sender.wait_idle(15)
    stalled = webhooks.Sender()
    stalled.queue.maxsize = 1
    monkeypatch.setattr(stalled, "start", lambda: None)  # nobody takes from this queue
    monkeypatch.setattr(webhooks, "sender", stalled)
    hook = Webhook.objects.get()
    for _ in range(3):
        make_roll(seat_id=ana.pk, request={"notation": "d4"})
    hook.refresh_from_db()
    assert hook.missed == 2


def test_only_the_gm_sets_webhooks_and_addresses_are_checked(campaign, django_user_model):
    stranger = django_user_model.objects.create_user("stranger", password="pw-for-tests-only")
    with pytest.raises(ServiceError) as refused:
        add_webhook(campaign=campaign, user=stranger, url="https://chat.example/hook")
    assert refused.value.code == "forbidden"
    for bad in ("", "ftp://x/y", "javascript:alert(1)", "https://" + "a" * 600, 12):
        with pytest.raises(ServiceError) as refused:
            add_webhook(campaign=campaign, user=campaign.gm, url=bad)
        assert refused.value.field == "url"
    assert not Webhook.objects.exists()


def test_hooks_cannot_reach_the_servers_own_network(campaign, receiver, settings):
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": False}
    for url in (receiver.url, "http://10.1.2.3/hook", "http://[::1]:6379/", "http://localhost/x"):
        with pytest.raises(ServiceError) as refused:
            add_webhook(campaign=campaign, user=campaign.gm, url=url)
        assert refused.value.field == "url" and "private or local network" in refused.value.message
    # A hook made while allowed, then refused at delivery: failed at once, nothing sent.
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": True}
    webhooks._forget_hooks()
    add_webhook(campaign=campaign, user=campaign.gm, url=receiver.url)
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": False}
    start_session(session_id=create_session(campaign=campaign, title="Tonight").pk)
    assert sender.wait_idle(15)
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED and delivery.attempts == 1
    assert delivery.last_error.startswith("refused: 127.0.0.1")
    assert receiver.posts == []
