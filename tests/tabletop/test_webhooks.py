"""Outgoing webhooks against local HTTP servers: after commit, signed, retried with backoff,
never blocking the roll, never held up by another hook, cut at their wall-clock limit, never
redirected, resumed after a restart, failures shown to the GM in words they can act on."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from tabletop.models import Campaign, DeliveryStatus, Webhook, WebhookDelivery
from tabletop.services import webhooks
from tabletop.services.errors import ServiceError
from tabletop.services.seats import join_session
from tabletop.services.sessions import create_session, end_session, start_session
from tabletop.services.webhooks import SIGNATURE_HEADER, add_webhook
from tabletop.webhooks import address
from tabletop.webhooks import sender as sending
from tabletop.webhooks.sender import sender

from .commands import rolled
from .receivers import Dribbler, Receiver

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _sending():
    """This process sends, as a serving one does (a test run's senders start stopped; the
    package's conftest stops them again)."""
    sender.start()


@pytest.fixture
def fast_retries(settings):
    settings.TABLETOP = {
        **settings.TABLETOP,
        "WEBHOOK_RETRY_SECONDS": [0.05, 0.1],
        "WEBHOOK_PRIVATE_ADDRESSES": True,  # the receiver listens on loopback
    }
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
    public = rolled(seat_id=ana.pk, request={"notation": "2d6+1"}, client_seed="x")
    rolled(seat_id=ana.pk, request={"notation": "d20"}, visibility="gm", client_seed="secret")
    end_session(session_id=session.pk)
    assert sender.wait_idle(15)
    hook = Webhook.objects.get(campaign=campaign)
    bodies = [json.loads(p["body"]) for p in receiver.posts]
    assert [b["event"]["kind"] for b in bodies] == ["session.start", "roll", "session.end"], list(
        WebhookDelivery.objects.values_list("event__kind", "status", "attempts", "last_error")
    )
    roll = bodies[1]
    assert (
        roll["event"]["seq"] == public.seq
        and roll["event"]["data"]["total"] == public.data["total"]
    )
    line = f"[Tonight] #{public.seq} Ana: {public.data['text']}"
    assert roll["text"] == line and roll["content"] == "\\" + line.replace("]", "\\]", 1)
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
    first = rolled(seat_id=ana.pk, request={"notation": "d20"})
    second = rolled(seat_id=ana.pk, request={"notation": "d20"})
    # Both rolls are stored while the receiver still holds the first POST.
    assert second.seq == first.seq + 1 and len(receiver.posts) == 1
    receiver.hold.set()
    assert sender.wait_idle(15)
    assert len(receiver.posts) == 3


def test_failures_are_retried_with_backoff_under_one_delivery_id_then_reported(
    campaign, fast_retries, client
):
    flaky = Receiver(answers=[500])  # session.start fails once, then goes through
    try:
        session, ana = table(campaign, flaky.url)
        assert sender.wait_idle(15)
        start = WebhookDelivery.objects.get(event__kind="session.start")
        assert start.status == DeliveryStatus.DELIVERED and start.attempts == 2
        # Both attempts carry the delivery's id, in a header and in the signed body.
        ids = {p["headers"]["X-Tabletop-Delivery"] for p in flaky.posts}
        assert ids == {str(start.pk)}
        assert {json.loads(p["body"])["delivery"] for p in flaky.posts} == {start.pk}
        flaky.answers = [503, 503, 503]  # one try and two retries: all refused
        rolled(seat_id=ana.pk, request={"notation": "d20"})
        assert sender.wait_idle(15)
    finally:
        flaky.close()
    failed = WebhookDelivery.objects.get(event__kind="roll")
    assert failed.status == DeliveryStatus.FAILED and failed.attempts == 3
    assert failed.last_error == "the receiver answered 503" and failed.response_status == 503
    client.force_login(campaign.gm)
    page = client.get(f"/gm/{session.pk}/").content.decode()
    assert "1 failed" in page and "the receiver answered 503" in page


def test_an_unreachable_receiver_is_reported_in_words_a_gm_can_act_on(campaign, fast_retries):
    refusing = Receiver()
    refusing.close()  # nothing listens there any more: the connection is refused
    _session, _ = table(campaign, refusing.url)
    assert sender.wait_idle(15)
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED and delivery.attempts == 3
    assert delivery.last_error == "could not reach the address"


def test_a_redirect_is_a_failed_delivery_never_followed(campaign, settings, monkeypatch):
    # A production deployment whose "public" receiver answers 302 to a loopback one: the
    # receiver on loopback counts as public here, so only the redirect itself is judged.
    settings.DEBUG = False
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": False}
    monkeypatch.setattr(address, "is_public", lambda ip: True)
    inside = Receiver()
    outside = Receiver(answers=[(302, {"Location": inside.url})] * 3)
    try:
        table(campaign, outside.url)
        assert sender.wait_idle(15)
    finally:
        inside.close()
        outside.close()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED and delivery.attempts == 1
    assert delivery.response_status == 302
    assert delivery.last_error.startswith("the receiver answered 302, a redirect")
    assert len(outside.posts) == 1 and inside.posts == []


def test_a_receiver_dribbling_its_answer_is_cut_at_the_wall_clock_limit(campaign, settings):
    settings.TABLETOP = {
        **settings.TABLETOP,
        "WEBHOOK_PRIVATE_ADDRESSES": True,
        "WEBHOOK_SECONDS": 1,
        "WEBHOOK_RETRY_SECONDS": [],  # one attempt
    }
    slow = Dribbler(every=0.2)  # a byte every 0.2 s: each read is quick, the answer takes 16 s
    try:
        table(campaign, slow.url)
        assert sender.wait_idle(15)
        assert slow.cut.wait(5)  # the sender hung up on it ...
        assert not slow.finished.is_set()  # ... long before it had answered
    finally:
        slow.close()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.last_error == "the receiver did not answer within 1 s"


def test_a_slow_hook_does_not_hold_up_another_campaigns_hook(campaign, fast_retries, settings):
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_SECONDS": 20}
    other = Campaign.objects.create(name="Deep Roads", system="generic", gm=campaign.gm)
    slow, quick = Receiver(), Receiver()
    slow.hold.clear()  # answers nothing until released
    try:
        table(campaign, slow.url)
        assert slow.arrived.wait(10)  # its POST is in, and held
        table(other, quick.url)
        assert wait_for(lambda: quick.posts, 10)  # delivered while the slow one still waits
        assert slow.posts == []
        slow.hold.set()
        assert sender.wait_idle(15)
    finally:
        slow.close()
        quick.close()
    assert len(slow.posts) == 1 and len(quick.posts) == 1


def test_what_a_process_never_handed_on_is_sent_from_the_store(
    campaign, receiver, fast_retries, monkeypatch
):
    # As a process killed right after its rolls committed leaves them: nobody was told.
    _session, ana = table(campaign, receiver.url)
    assert sender.wait_idle(15)
    sender.stop()
    monkeypatch.setattr(sending.Sender, "session_changed", lambda self, session_id: None)
    rolls = [rolled(seat_id=ana.pk, request={"notation": "d6"}) for _ in range(3)]
    # ... and one it was posting when it died: pending, its hook's lease still held.
    hook = Webhook.objects.get()
    sending.fill(hook)
    Webhook.objects.filter(pk=hook.pk).update(
        lease_owner="gone:1:dead", lease_until=timezone.now() - timedelta(seconds=1)
    )
    monkeypatch.undo()
    restarted = sending.Sender()
    monkeypatch.setattr(sending, "sender", restarted)
    restarted.start()
    try:
        assert restarted.wait_idle(15)
    finally:
        restarted.stop()
    seqs = [json.loads(p["body"])["event"]["seq"] for p in receiver.posts]
    assert seqs[1:] == [r.seq for r in rolls]
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}


def test_a_hook_keeps_a_bounded_window_and_posts_in_order(
    campaign, receiver, fast_retries, settings
):
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PENDING": 2}
    _session, ana = table(campaign, receiver.url)
    assert sender.wait_idle(15)
    receiver.hold.clear()
    rolls = [rolled(seat_id=ana.pk, request={"notation": "d4"}) for _ in range(6)]
    assert receiver.arrived.wait(10)
    # The rest wait in the store, past the hook's cursor: never more than the window is pending.
    assert WebhookDelivery.objects.filter(status="pending").count() <= 2
    receiver.hold.set()
    assert sender.wait_idle(15)
    seqs = [json.loads(p["body"])["event"]["seq"] for p in receiver.posts]
    assert seqs[1:] == [r.seq for r in rolls]


def test_events_older_than_the_limit_are_counted_not_sent(
    campaign, receiver, fast_retries, settings
):
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_MAX_AGE_SECONDS": 0}
    _session, ana = table(campaign, receiver.url)
    rolled(seat_id=ana.pk, request={"notation": "d4"})
    assert sender.wait_idle(15)
    hook = Webhook.objects.get()
    assert receiver.posts == [] and hook.missed == 2


def test_only_the_gm_sets_webhooks_and_addresses_are_checked(campaign, django_user_model):
    stranger = django_user_model.objects.create_user("stranger", password="pw-for-tests-only")
    with pytest.raises(ServiceError) as refused:
        add_webhook(campaign=campaign, user=stranger, url="https://chat.example/hook")
    assert refused.value.code == "forbidden"
    for bad in ("", "  ", "ftp://x/y", "javascript:alert(1)", "https://" + "a" * 600):
        with pytest.raises(ServiceError) as refused:
            add_webhook(campaign=campaign, user=campaign.gm, url=bad)
        assert refused.value.field == "url"
    assert not Webhook.objects.exists()


def test_a_webhook_form_without_an_address_is_answered_on_the_dashboard(
    campaign, live_session, client
):
    """The form's address is text at the edge (none sent: empty), so the GM reads why."""
    from urllib.parse import parse_qs, urlsplit

    client.force_login(campaign.gm)
    answer = client.post(f"/gm/{live_session.pk}/webhooks", {})
    assert answer.status_code == 302
    said = parse_qs(urlsplit(answer["Location"]).query)["webhook_error"]
    assert said == [
        "Url: paste the address chat gave you for an incoming webhook; this one is empty"
    ]
    assert not Webhook.objects.exists()


def test_a_campaign_has_few_hooks_each_once_and_adds_them_at_a_bounded_rate(
    campaign, settings, monkeypatch
):
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": True}
    looked_up = []
    monkeypatch.setattr(
        webhooks, "checked", lambda target, **kw: looked_up.append(target.host) or []
    )
    add_webhook(campaign=campaign, user=campaign.gm, url="https://chat.example/a")
    with pytest.raises(ServiceError) as refused:
        add_webhook(campaign=campaign, user=campaign.gm, url="https://CHAT.example/a")
    assert "already posts to that address" in refused.value.message
    for i in range(4):
        add_webhook(campaign=campaign, user=campaign.gm, url=f"https://chat.example/{i}")
    with pytest.raises(ServiceError) as refused:
        add_webhook(campaign=campaign, user=campaign.gm, url="https://chat.example/6")
    assert "at most 5 webhooks" in refused.value.message
    Webhook.objects.all().delete()
    for i in range(webhooks.ADDS_PER_MINUTE - 5):
        add_webhook(campaign=campaign, user=campaign.gm, url=f"https://chat.example/b{i}")
        Webhook.objects.all().delete()
    with pytest.raises(ServiceError) as refused:
        add_webhook(campaign=campaign, user=campaign.gm, url="https://chat.example/c")
    assert refused.value.code == "rate-limited" and len(looked_up) == webhooks.ADDS_PER_MINUTE


def test_hooks_cannot_reach_the_servers_own_network(campaign, receiver, settings):
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": False}
    for url in (receiver.url, "http://10.1.2.3/hook", "http://[::1]:6379/", "http://localhost/x"):
        with pytest.raises(ServiceError) as refused:
            add_webhook(campaign=campaign, user=campaign.gm, url=url)
        assert refused.value.field == "url"
    # A hook made while allowed, then refused at delivery: failed at once, nothing sent.
    settings.TABLETOP = {
        **settings.TABLETOP,
        "WEBHOOK_PRIVATE_ADDRESSES": True,
        "WEBHOOK_RETRY_SECONDS": [0.05],
    }
    add_webhook(campaign=campaign, user=campaign.gm, url=receiver.url)
    settings.TABLETOP = {**settings.TABLETOP, "WEBHOOK_PRIVATE_ADDRESSES": False}
    start_session(session_id=create_session(campaign=campaign, title="Tonight").pk)
    assert sender.wait_idle(15)
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED and delivery.attempts == 1
    assert delivery.last_error == "the address is not a public internet address"
    assert receiver.posts == []


def wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_the_gm_gives_a_hook_a_new_secret_and_later_posts_are_signed_with_it(
    campaign, receiver, fast_retries, client, django_user_model
):
    session, ana = table(campaign, receiver.url)
    assert sender.wait_idle(15)
    hook = Webhook.objects.get()
    old = hook.secret
    stranger = django_user_model.objects.create_user("stranger", password="pw-for-tests-only")
    client.force_login(stranger)
    assert client.post(f"/gm/{session.pk}/webhooks/{hook.pk}/secret").status_code == 403
    client.force_login(campaign.gm)
    page = client.get(f"/gm/{session.pk}/").content.decode()
    assert f"/webhooks/{hook.pk}/secret" in page and old in page
    assert client.post(f"/gm/{session.pk}/webhooks/{hook.pk}/secret").status_code == 302
    hook.refresh_from_db()
    assert hook.secret != old and len(hook.secret) == 64
    rolled(seat_id=ana.pk, request={"notation": "d20"})
    assert sender.wait_idle(15)
    last = receiver.posts[-1]
    expected = "sha256=" + hmac.new(hook.secret.encode(), last["body"], hashlib.sha256).hexdigest()
    assert last["headers"][SIGNATURE_HEADER] == expected


def test_public_messages_are_posted_only_while_the_gm_ticks_it_and_whispers_never(
    campaign, receiver, fast_retries
):
    from tabletop.services.chat import set_talk
    from tabletop.services.seats import gm_seat

    from .commands import send

    session, ana = table(campaign, receiver.url)
    bo = join_session(session=session, name="Bo").seat
    gm = gm_seat(session=session, user=campaign.gm)
    send(ana, "chat", text="not for the channel")
    set_talk(seat_id=gm.pk, to_webhooks=True)
    loud = send(ana, "chat", text="@everyone we win [[1d2*0+7]]")
    send(ana, "chat", text="/w Bo a secret for Bo")
    set_talk(seat_id=gm.pk, to_webhooks=False)
    send(bo, "chat", text="quiet again")
    assert sender.wait_idle(15)
    bodies = [json.loads(p["body"]) for p in receiver.posts]
    chats = [b for b in bodies if b["event"]["kind"] == "chat"]
    assert [b["event"]["seq"] for b in chats] == [loud.seq]
    assert chats[0]["text"] == f"[Tonight] #{loud.seq} Ana: @\u200beveryone we win [7]"
    assert chats[0]["allowed_mentions"] == {"parse": []}
    sent = b"".join(p["body"] for p in receiver.posts)
    assert b"secret for Bo" not in sent and b"not for the channel" not in sent
    assert b"quiet again" not in sent


def test_removing_a_webhook_the_campaign_lacks_is_refused_in_words(campaign):
    # The count of deleted rows once took the name of gettext's ``_`` here: the refusal raised
    # a TypeError (a 500) instead of saying what was wrong.
    with pytest.raises(ServiceError) as refused:
        webhooks.remove_webhook(campaign=campaign, user=campaign.gm, hook_id=999_999)
    assert refused.value.code == "not-found"
    assert "no webhook 999999" in refused.value.message
