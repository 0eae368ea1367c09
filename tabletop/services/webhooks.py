"""Outgoing webhooks: each public roll, reveal, session start and end is POSTed, after commit, to
the URLs the campaign's GM set, as JSON that chat services' incoming webhooks accept (``content``
for Discord, ``text`` for Slack and Mattermost) plus the event itself, signed with an HMAC-SHA256
of the body.

A roll never waits for a webhook: the event is handed to a bounded in-process queue and a
background thread sends it, retrying with backoff. Each delivery's state is stored, so a restart
resumes what was pending and the GM sees what failed."""

from __future__ import annotations

import hashlib
import heapq
import hmac
import ipaddress
import json
import logging
import queue
import socket
import threading
import time
import urllib.error
import urllib.request
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models import F
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone

from ..models import Campaign, DeliveryStatus, Event, Visibility, Webhook, WebhookDelivery
from ..selectors.events import event_message, for_everyone
from ..selectors.room import session_summary
from .errors import invalid, not_found
from .export import event_line
from .sessions import assert_runs_campaign
from .watch import without_invite

log = logging.getLogger(__name__)

MAX_HOOKS = 5  # per campaign
QUEUE_SIZE = 1000  # events waiting to be sent, per process
TIMEOUT_SECONDS = 5.0  # one POST
SIGNATURE_HEADER = "X-Tabletop-Signature"
SENT_KINDS = {"roll", "roll.reveal", "session.start", "session.end"}
HOOKS_SECONDS = 5.0  # how long a process trusts its list of a session's hooks


def private_addresses_allowed() -> bool:
    """Whether hooks may reach loopback and private networks: in development (DEBUG) or when
    ``TABLETOP["WEBHOOK_PRIVATE_ADDRESSES"]`` says so. Otherwise a GM's hook cannot be pointed at
    the server's own services (its Redis, its admin, a metadata endpoint)."""
    conf = getattr(settings, "TABLETOP", {})
    return bool(conf.get("WEBHOOK_PRIVATE_ADDRESSES", settings.DEBUG))


def unreachable_reason(url: str) -> str | None:
    """Why a hook's address may not be posted to, or None."""
    if private_addresses_allowed():
        return None
    host = urlsplit(url).hostname or ""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return None  # the POST itself reports what is wrong with the name
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if not address.is_global:
            return f"refused: {host} is on a private or local network"
    return None


def retry_delays() -> list[float]:
    """Seconds to wait before each retry; a delivery fails after the last one."""
    conf = getattr(settings, "TABLETOP", {})
    return list(conf.get("WEBHOOK_RETRY_SECONDS", (2, 10, 60, 300, 1800)))


# --- the GM's settings -----------------------------------------------------------------------
def add_webhook(*, campaign: Campaign, user: Any, url: Any) -> Webhook:
    assert_runs_campaign(user=user, campaign=campaign)
    if not isinstance(url, str) or not url.strip():
        raise invalid("the address chat gave you for an incoming webhook", field="url")
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or len(url) > 500:
        raise invalid("an http:// or https:// address of at most 500 characters", field="url")
    if Webhook.objects.filter(campaign=campaign).count() >= MAX_HOOKS:
        raise invalid(f"a campaign has at most {MAX_HOOKS} webhooks: remove one first", field="url")
    reason = unreachable_reason(url)
    if reason is not None:
        raise invalid(reason, field="url")
    hook = Webhook.objects.create(campaign=campaign, url=url)
    _forget_hooks()
    return hook


def remove_webhook(*, campaign: Campaign, user: Any, hook_id: Any) -> None:
    assert_runs_campaign(user=user, campaign=campaign)
    deleted, _ = Webhook.objects.filter(pk=hook_id, campaign=campaign).delete()
    if not deleted:
        raise not_found(f"no webhook {hook_id} in this campaign")
    _forget_hooks()


def webhook_report(*, campaign: Campaign) -> list[dict[str, Any]]:
    """Each hook with its deliveries counted and its latest failures, for the GM's dashboard."""
    out = []
    for hook in Webhook.objects.filter(campaign=campaign).order_by("created_at"):
        deliveries = WebhookDelivery.objects.filter(webhook=hook)
        counts = {s: deliveries.filter(status=s).count() for s in DeliveryStatus.values}
        failures = list(
            deliveries.filter(status=DeliveryStatus.FAILED)
            .select_related("event")
            .order_by("-updated_at")[:5]
        )
        retrying = (
            deliveries.filter(status=DeliveryStatus.PENDING, attempts__gt=0)
            .select_related("event")
            .first()
        )
        out.append({"hook": hook, "counts": counts, "failures": failures, "retrying": retrying})
    return out


# --- what is sent ------------------------------------------------------------------------------
def payload(event: Event) -> dict[str, Any]:
    message = for_everyone(event_message(event))
    summary = without_invite(session_summary(event.session))
    text = f"[{summary['title']}] #{event.seq} {event_line(message)}"
    return {
        "content": text[:2000],  # Discord
        "text": text,  # Slack, Mattermost, Rocket.Chat, Teams' simple cards
        "username": "Dice table",
        "session": summary,
        "event": message,
    }


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def should_send(event: Event) -> bool:
    return event.kind in SENT_KINDS and event.visibility == Visibility.PUBLIC


# --- after commit: hand the event to the sender ----------------------------------------------
_hooks: dict[int, tuple[float, list[int]]] = {}
_hooks_lock = threading.Lock()


def _forget_hooks() -> None:
    with _hooks_lock:
        _hooks.clear()


def hooks_for_session(session_id: int) -> list[int]:
    now = time.monotonic()
    with _hooks_lock:
        cached = _hooks.get(session_id)
    if cached is not None and cached[0] > now:
        return cached[1]
    ids = list(
        Webhook.objects.filter(campaign__sessions=session_id, active=True).values_list(
            "id", flat=True
        )
    )
    with _hooks_lock:
        _hooks[session_id] = (now + HOOKS_SECONDS, ids)
        while len(_hooks) > 1024:
            _hooks.pop(next(iter(_hooks)))
    return ids


def event_stored(event: Event) -> None:
    """Called as an event is saved, inside its transaction: queue it for after the commit."""
    if should_send(event):
        transaction.on_commit(lambda: notify(event.pk, event.session_id))


def notify(event_id: int, session_id: int) -> None:
    try:
        hooks = hooks_for_session(session_id)
    except Exception:  # never let a webhook lookup disturb the table
        log.exception("looking up a session's webhooks failed")
        return
    for hook_id in hooks:
        sender.put(hook_id, event_id)


class Sender:
    """One background thread per process: new events from a bounded queue, retries from a heap
    of (when, delivery id), stored deliveries resumed on start."""

    def __init__(self) -> None:
        self.queue: queue.Queue[tuple[int, int]] = queue.Queue(maxsize=QUEUE_SIZE)
        self.retries: list[tuple[float, int]] = []
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()
        self.outstanding = 0  # queued or being sent (retries aside)

    def put(self, hook_id: int, event_id: int) -> None:
        self.start()
        with self.lock:
            self.outstanding += 1
        try:
            self.queue.put_nowait((hook_id, event_id))
        except queue.Full:
            with self.lock:
                self.outstanding -= 1
            # Never block the roll: count what was not sent, for the GM to see.
            log.warning("webhook queue full: event %s not sent to hook %s", event_id, hook_id)
            Webhook.objects.filter(pk=hook_id).update(missed=F("missed") + 1)

    def start(self) -> None:
        with self.lock:
            if self.thread is not None and self.thread.is_alive():
                return
            self.thread = threading.Thread(target=self.run, name="webhooks", daemon=True)
            self.thread.start()

    def run(self) -> None:
        try:
            self.resume()
        except Exception:
            log.exception("resuming pending webhook deliveries failed")
        while True:
            try:
                self.step()
            except Exception:
                log.exception("a webhook delivery step failed")
            finally:
                close_old_connections()

    def resume(self) -> None:
        """Deliveries a stopped process left pending (not touched for a minute) are sent again."""
        stale = timezone.now() - timedelta(minutes=1)
        pending = WebhookDelivery.objects.filter(
            status=DeliveryStatus.PENDING, updated_at__lt=stale
        ).values_list("id", "updated_at")
        for delivery_id, touched in pending:
            # Claim it, so two processes resuming at once do not both send it.
            if WebhookDelivery.objects.filter(pk=delivery_id, updated_at=touched).update(
                updated_at=timezone.now()
            ):
                heapq.heappush(self.retries, (time.monotonic(), delivery_id))
        close_old_connections()

    def step(self) -> None:
        now = time.monotonic()
        if self.retries and self.retries[0][0] <= now:
            with self.lock:
                _, delivery_id = heapq.heappop(self.retries)
                self.outstanding += 1
            try:
                self.attempt(delivery_id)
            finally:
                with self.lock:
                    self.outstanding -= 1
            return
        wait = min(1.0, self.retries[0][0] - now) if self.retries else 1.0
        try:
            hook_id, event_id = self.queue.get(timeout=max(0.01, wait))
        except queue.Empty:
            return
        try:
            delivery, _ = WebhookDelivery.objects.get_or_create(
                webhook_id=hook_id, event_id=event_id
            )
            if delivery.status == DeliveryStatus.PENDING:
                self.attempt(delivery.pk)
        finally:
            with self.lock:
                self.outstanding -= 1

    def attempt(self, delivery_id: int) -> None:
        delivery = (
            WebhookDelivery.objects.select_related("webhook", "event__session__campaign")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None or delivery.status != DeliveryStatus.PENDING:
            return
        hook = delivery.webhook
        body = json.dumps(payload(delivery.event), separators=(",", ":")).encode()
        request = urllib.request.Request(
            hook.url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": "dice-table-webhooks/1",
                SIGNATURE_HEADER: sign(hook.secret, body),
                "X-Tabletop-Event": delivery.event.kind,
                "X-Tabletop-Delivery": str(delivery.pk),
            },
        )
        status: int | None = None
        error = unreachable_reason(hook.url) or ""
        try:
            if error:
                raise PermissionError(error)
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
                status = answer.status
        except urllib.error.HTTPError as exc:
            status, error = exc.code, f"HTTP {exc.code} {exc.reason}"
        except PermissionError:
            pass  # (the reason is set above; a private address is not retried)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            error = f"could not reach it: {reason}"
        attempts = delivery.attempts + 1
        delays = retry_delays()
        if status is not None and 200 <= status < 300:
            state, error = DeliveryStatus.DELIVERED, ""
        elif (
            attempts > len(delays)
            or error.startswith("refused:")
            or (status is not None and 400 <= status < 500 and status != 429)
        ):
            # Out of retries, a private address, or the receiver refuses this request as it is.
            state = DeliveryStatus.FAILED
        else:
            state = DeliveryStatus.PENDING
            heapq.heappush(self.retries, (time.monotonic() + delays[attempts - 1], delivery.pk))
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=state,
            attempts=attempts,
            last_error=error[:300],
            response_status=status,
            updated_at=timezone.now(),
        )

    def wait_idle(self, timeout: float) -> bool:
        """For tests and shutdown: wait until nothing is queued or due to retry."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if not self.outstanding and not self.retries:
                    return True
            time.sleep(0.01)
        return False


sender = Sender()


@receiver(post_save, sender=Event)
def _event_stored(sender: type[Event], instance: Event, created: bool, **kwargs: Any) -> None:
    # Outgoing webhooks hear of public events after their commit; connected when the app is
    # ready (tabletop/apps.py), so models never import the service layer.
    if created and instance.kind in {"roll", "roll.reveal", "session.start", "session.end"}:
        event_stored(instance)
