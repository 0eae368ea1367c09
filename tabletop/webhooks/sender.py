"""Sending webhooks: durable, one hook at a time, hooks never waiting on each other.

What a hook must receive is read from the store: each hook keeps a cursor per session (the last
``seq`` it has read), and every public event after it is still to be sent. A turn of a hook
turns the events past its cursor into delivery rows (a bounded window of them, and the cursor
moved, in one transaction), then posts the due ones in order. A roll writes nothing for its
webhooks: after it commits, the process is only told that the session changed, and a sweep of
the store every few seconds finds whatever that missed (another process's events, a process
killed before it sent). So a process killed at any moment loses nothing: its events are past the
cursor or in a pending delivery, and its hooks' leases run out for another turn to take them.

A delivery keeps its id from first attempt to last: the receiver gets it with every attempt
(``X-Tabletop-Delivery``, and in the signed body) to drop repeats by, because a process killed
mid-POST posts it again.

Threads: a small pool of senders (``WEBHOOK_SENDERS``) takes hooks with work in turn, each hook
served by one sender at a time (a lease in the store keeps other processes off it too); a turn
posts a few deliveries and gives the sender back, and every POST is bounded by a wall-clock limit
(``WEBHOOK_SECONDS``): a slow receiver costs one sender that long and waits for its retry, while
the other hooks go on. Memory is bounded by the hooks: each is queued at most once."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import socket
import threading
import time
from collections import deque
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models import Exists, F, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone

from ..models import (
    DeliveryStatus,
    Event,
    GameSession,
    Visibility,
    Webhook,
    WebhookCursor,
    WebhookDelivery,
)
from . import chat
from .post import Outcome, post

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Tabletop-Signature"
DELIVERY_HEADER = "X-Tabletop-Delivery"
SENT_KINDS = frozenset({"roll", "roll.reveal", "session.start", "session.end"})
TURN_DELIVERIES = 20  # a turn posts at most this many, then the sender takes the next hook
TURN_SECONDS = 1.0  # ... or stops after this long (plus the POST under way)
SWEEP_SECONDS = 2.0  # how often each process looks in the store for hooks with work
# The sessions told of are looked up at most this often: at a busy server one statement covers
# the rolls of many tables (a lookup per event cost a millisecond of the process's CPU a roll).
LOOKUP_SECONDS = 0.2
SESSIONS_WAITING = 10_000  # sessions told of and not yet looked at; past it, one sweep instead
RETRY_AFTER_CAP = 600.0  # the longest a receiver's Retry-After is honoured for


def _conf(key: str, default: Any) -> Any:
    return getattr(settings, "TABLETOP", {}).get(key, default)


def delivery_seconds() -> float:
    return float(_conf("WEBHOOK_SECONDS", 10.0))


def retry_delays() -> list[float]:
    """Seconds to wait before each retry; a delivery fails after the last one."""
    return [float(d) for d in _conf("WEBHOOK_RETRY_SECONDS", (2, 10, 60, 300, 1800))]


def window() -> int:
    return int(_conf("WEBHOOK_PENDING", 100))


def max_age() -> timedelta:
    return timedelta(seconds=float(_conf("WEBHOOK_MAX_AGE_SECONDS", 3600)))


def private_addresses_allowed() -> bool:
    """Whether hooks may post to loopback and private networks (development only: settings.py
    never lets a production deployment allow it)."""
    return bool(_conf("WEBHOOK_PRIVATE_ADDRESSES", False))


def lease() -> timedelta:
    # Longer than a turn can take: TURN_SECONDS, then one POST, and the store's own time.
    return timedelta(seconds=TURN_SECONDS + 2 * delivery_seconds() + 5)


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


# A message at the table goes out only where the GM ticked it: each says so as it is stored.
SENT_MESSAGES = Q(kind="chat", data__webhooks=True)


def should_send(event: Event) -> bool:
    sent = event.kind in SENT_KINDS or (
        event.kind == "chat" and bool((event.data or {}).get("webhooks"))
    )
    return sent and event.visibility == Visibility.PUBLIC


# --- the store: leases, cursors, deliveries --------------------------------------------------
def _free(owner: str, now: Any) -> Q:
    return Q(lease_until__isnull=True) | Q(lease_until__lt=now) | Q(lease_owner=owner)


def claim(hook_id: int, owner: str) -> bool:
    now = timezone.now()
    return bool(
        Webhook.objects.filter(_free(owner, now), pk=hook_id, active=True).update(
            lease_owner=owner, lease_until=now + lease()
        )
    )


def release(hook_id: int, owner: str) -> None:
    Webhook.objects.filter(pk=hook_id, lease_owner=owner).update(lease_owner="", lease_until=None)


def start_cursors(hook: Webhook) -> None:
    """A new hook hears what happens from now on: it starts at each session's present."""
    sessions = GameSession.objects.filter(campaign_id=hook.campaign_id)
    WebhookCursor.objects.bulk_create(
        [
            WebhookCursor(webhook=hook, session_id=pk, last_seq=seq)
            for pk, seq in sessions.values_list("pk", "last_seq")
        ],
        ignore_conflicts=True,
    )


def _read(hook: Any) -> Coalesce:
    """A session's cursor for ``hook`` (0 for a session made after the hook)."""
    cursor = WebhookCursor.objects.filter(webhook=hook, session=OuterRef("pk")).values("last_seq")
    return Coalesce(Subquery(cursor[:1]), Value(0))


def _due(now: Any) -> Q:
    return Q(status=DeliveryStatus.PENDING) & (
        Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    )


def hooks_with_work(owner: str) -> list[int]:
    """Active hooks no other process is serving that have deliveries due, or events past their
    cursor in some session."""
    now = timezone.now()
    behind = (
        GameSession.objects.filter(campaign=OuterRef("campaign"))
        .annotate(read=_read(OuterRef(OuterRef("pk"))))
        .filter(last_seq__gt=F("read"))
    )
    due = WebhookDelivery.objects.filter(_due(now), webhook=OuterRef("pk"))
    hooks = Webhook.objects.filter(_free(owner, now), active=True).filter(
        Q(paused_until__isnull=True) | Q(paused_until__lte=now)
    )
    return list(hooks.filter(Exists(behind) | Exists(due)).values_list("pk", flat=True)[:1000])


def fill(hook: Webhook) -> bool:
    """Turn the events past the hook's cursors into pending deliveries, up to its window; the
    cursors move in the same transaction. Whether it moved a cursor and events are left past
    one (another fill would make progress)."""
    room = (
        window()
        - WebhookDelivery.objects.filter(webhook=hook, status=DeliveryStatus.PENDING).count()
    )
    if room <= 0:
        return False  # the window is full: what is past the cursor waits, costing nothing
    behind = list(
        GameSession.objects.filter(campaign_id=hook.campaign_id)
        .annotate(read=_read(hook.pk))
        .filter(last_seq__gt=F("read"))
        .order_by("pk")
        .values_list("pk", "last_seq", "read")[:20]
    )
    oldest = timezone.now() - max_age()
    for session_id, last_seq, read in behind:
        if room <= 0:
            return True
        events = list(
            Event.objects.filter(
                session_id=session_id,
                seq__gt=read,
                seq__lte=last_seq,
                visibility=Visibility.PUBLIC,
            )
            .filter(Q(kind__in=SENT_KINDS) | SENT_MESSAGES)
            .order_by("seq")
            .values_list("pk", "seq", "created_at")[:room]
        )
        upto = events[-1][1] if len(events) == room else last_seq
        fresh = [pk for pk, _seq, at in events if at >= oldest]
        late = len(events) - len(fresh)
        now = timezone.now()
        with transaction.atomic():
            WebhookDelivery.objects.bulk_create(
                [WebhookDelivery(webhook=hook, event_id=pk, next_attempt_at=now) for pk in fresh],
                ignore_conflicts=True,
            )
            cursor, made = WebhookCursor.objects.get_or_create(
                webhook=hook, session_id=session_id, defaults={"last_seq": upto}
            )
            if not made:
                WebhookCursor.objects.filter(pk=cursor.pk, last_seq__lt=upto).update(last_seq=upto)
            if late:  # events older than any is posted at (the hook was away that long)
                Webhook.objects.filter(pk=hook.pk).update(missed=F("missed") + late)
        room -= len(fresh)
        if upto < last_seq:
            return True
    return len(behind) == 20


def next_due(hook_id: int) -> int | None:
    due = WebhookDelivery.objects.filter(_due(timezone.now()), webhook_id=hook_id)
    return due.order_by("event_id").values_list("pk", flat=True).first()


def attempt(delivery_id: int) -> Outcome | None:
    """Post one pending delivery and store how it went: delivered, failed, or pending until its
    next attempt (the whole hook waits with it). None when it is no longer pending."""
    delivery = (
        WebhookDelivery.objects.select_related("webhook", "event__session__campaign")
        .filter(pk=delivery_id, status=DeliveryStatus.PENDING)
        .first()
    )
    if delivery is None:
        return None
    hook, event = delivery.webhook, delivery.event
    now = timezone.now()
    if event.created_at < now - max_age():
        outcome = Outcome(None, "not sent: the receiver could not take it in time", retry=False)
    else:
        body = chat.body(event, delivery=delivery.pk)
        outcome = post(
            hook.url,
            body=body,
            headers={
                "Content-Type": "application/json",
                "User-Agent": "dice-table-webhooks/2",
                SIGNATURE_HEADER: sign(hook.secret, body),
                "X-Tabletop-Event": event.kind,
                DELIVERY_HEADER: str(delivery.pk),
            },
            seconds=delivery_seconds(),
            private_ok=private_addresses_allowed(),
        )
    attempts = delivery.attempts + 1
    delays = retry_delays()
    next_at = None
    if outcome.delivered:
        state = DeliveryStatus.DELIVERED
    elif not outcome.retry or attempts > len(delays):
        state = DeliveryStatus.FAILED
    else:
        state = DeliveryStatus.PENDING
        wait = delays[attempts - 1]
        if outcome.retry_after is not None:
            wait = max(wait, min(outcome.retry_after, RETRY_AFTER_CAP))
        next_at = timezone.now() + timedelta(seconds=wait)
    with transaction.atomic():
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=state,
            attempts=attempts,
            last_error=outcome.error[:300],
            response_status=outcome.status,
            next_attempt_at=next_at,
            updated_at=timezone.now(),
        )
        if next_at is not None:
            # The receiver is failing: its other deliveries wait too, so they go in order and
            # a receiver that is down is asked once per retry, not once per event.
            Webhook.objects.filter(pk=hook.pk).update(paused_until=next_at)
    return outcome


def store_has_work() -> bool:
    """Whether any active hook has a pending delivery or events past a cursor (tests, shutdown)."""
    pending = WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, webhook__active=True)
    behind = (
        GameSession.objects.filter(campaign=OuterRef("campaign"))
        .annotate(read=_read(OuterRef(OuterRef("pk"))))
        .filter(last_seq__gt=F("read"))
    )
    return pending.exists() or Webhook.objects.filter(Exists(behind), active=True).exists()


# --- the process's senders --------------------------------------------------------------------
class Sender:
    """A pool of sender threads taking hooks with work in turn, and a sweeper that finds them
    (from the sessions this process was told of, and from the store every ``SWEEP_SECONDS``)."""

    def __init__(self) -> None:
        self.owner = f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"
        lock = threading.RLock()
        self.cond = threading.Condition(lock)  # the senders wait on it for hooks with work
        self.told = threading.Condition(lock)  # the sweeper waits on it for sessions told of
        self.ready: deque[int] = deque()  # hooks with work, each at most once
        self.queued: set[int] = set()
        self.running: set[int] = set()
        self.again: set[int] = set()  # told of work while their turn was running
        self.sessions: set[int] = set()  # sessions told of, for the sweeper to look up
        self.sweep_now = True
        # Whether the store held an active hook at the last sweep (or one was saved here
        # since). Most tables have none: then an event's commit tells the sweeper nothing and no
        # lookup runs (a wake-up and a statement every 0.2 s were 0.2 ms of CPU a roll at 200
        # tables). A hook saved by another process is found by its next sweep, and with it the
        # events past its cursor: none is missed, the first is sent up to SWEEP_SECONDS later.
        self.any_hooks = True
        self.threads: list[threading.Thread] = []
        self.generation = 0  # threads of an older generation stop (``stop``)
        # Whether this process sends: set by ``start`` (a serving process, at its start), unset
        # by ``stop``. A process that only stores events (a command, a test run) leaves their
        # sending to the serving processes' sweeps and starts no threads of its own.
        self.serving = False

    # -- told of work
    def session_changed(self, session_id: int) -> None:
        """After a sent event commits: a lookup for the sweeper, nothing on the caller's thread."""
        if not self.any_hooks:
            return
        self._revive()
        with self.cond:
            if len(self.sessions) >= SESSIONS_WAITING:
                self.sessions.clear()
                self.sweep_now = True
            if not self.sessions:  # else the sweeper knows it has sessions to look up
                self.told.notify()
            self.sessions.add(session_id)

    def hooks_changed(self) -> None:
        """A hook was saved here: look for hooks again at once."""
        self._revive()
        with self.cond:
            self.any_hooks = True
            self.sweep_now = True
            self.told.notify()

    def wake(self, hook_ids: list[int]) -> None:
        self._revive()
        with self.cond:
            for hook_id in hook_ids:
                self._enqueue(hook_id)
            self.cond.notify_all()

    def _enqueue(self, hook_id: int) -> None:
        if hook_id in self.running:
            self.again.add(hook_id)
        elif hook_id not in self.queued:
            self.queued.add(hook_id)
            self.ready.append(hook_id)

    # -- threads
    def _revive(self) -> None:
        """A sending process's threads, made anew where one is gone."""
        if self.serving:
            self.start()

    def start(self) -> None:
        with self.cond:
            self.serving = True
            if self.threads and all(t.is_alive() for t in self.threads):
                return
            self.threads = [t for t in self.threads if t.is_alive()]
            names = {t.name for t in self.threads}
            wanted = ["webhooks-sweep"] + [
                f"webhooks-{i}" for i in range(int(_conf("WEBHOOK_SENDERS", 4)))
            ]
            for name in wanted:
                if name in names:
                    continue
                run = self._sweep if name == "webhooks-sweep" else self._send
                thread = threading.Thread(
                    target=run, args=(self.generation,), name=name, daemon=True
                )
                self.threads.append(thread)
                thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop this process's threads (each after the turn it is in); ``start`` makes new ones.
        For tests and shutdown: what is left is in the store for the next start."""
        with self.cond:
            self.serving = False
            self.generation += 1
            threads, self.threads = self.threads, []
            self.ready.clear()
            self.queued.clear()
            self.sessions.clear()
            self.cond.notify_all()
            self.told.notify_all()
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _sweep(self, generation: int) -> None:
        next_sweep = next_lookup = 0.0
        while True:
            with self.told:
                if generation != self.generation:
                    return
                due = min(next_sweep, next_lookup) if self.sessions else next_sweep
                wait = due - time.monotonic()
                if not self.sweep_now and wait > 0:
                    self.told.wait(wait)
                    continue  # look again at what it was woken for
                sessions, self.sessions = self.sessions, set()
                sweep = self.sweep_now or time.monotonic() >= next_sweep
                self.sweep_now = False
            try:
                if sweep:
                    next_sweep = time.monotonic() + SWEEP_SECONDS
                if sessions and self.any_hooks:
                    next_lookup = time.monotonic() + LOOKUP_SECONDS
                hooks = self.hooks_to_wake(sweep=sweep, sessions=sessions)
                if hooks:
                    self.wake(hooks)
            except Exception:
                log.exception("looking for webhooks with work failed")
                time.sleep(1)
            finally:
                close_old_connections()

    def hooks_to_wake(self, *, sweep: bool, sessions: set[int]) -> list[int]:
        """One turn of the sweeper: on a sweep, the hooks with work in the store; and the hooks
        of the sessions told of. A store with no active hook (most tables) costs a sweep one
        short statement: the search for work behind cursors is compiled and run only when a
        hook is there to have any (it cost 10 ms of the process's CPU every sweep)."""
        hooks: list[int] = []
        if sweep:
            any_hooks = Webhook.objects.filter(active=True).exists()
            if any_hooks:
                hooks += hooks_with_work(self.owner)
            with self.cond:
                if not self.sweep_now:  # (else a hook saved meanwhile: look again)
                    self.any_hooks = any_hooks
        if sessions and self.any_hooks:
            hooks += Webhook.objects.filter(
                active=True, campaign__sessions__in=sessions
            ).values_list("pk", flat=True)
        return sorted(set(hooks))

    def _send(self, generation: int) -> None:
        while True:
            with self.cond:
                while not self.ready and generation == self.generation:
                    self.cond.wait()
                if generation != self.generation:
                    return
                hook_id = self.ready.popleft()
                self.queued.discard(hook_id)
                self.running.add(hook_id)
            more = False
            try:
                more = self.turn(hook_id)
            except Exception:
                log.exception("a webhook's turn failed")
            finally:
                close_old_connections()
                with self.cond:
                    self.running.discard(hook_id)
                    if more or hook_id in self.again:
                        self.again.discard(hook_id)
                        self._enqueue(hook_id)
                        self.cond.notify_all()

    def turn(self, hook_id: int) -> bool:
        """Serve one hook for a while: whether it has more to send now."""
        if not claim(hook_id, self.owner):
            return False  # another process is serving it
        try:
            hook = Webhook.objects.filter(pk=hook_id, active=True).first()
            if hook is None or (hook.paused_until and hook.paused_until > timezone.now()):
                return False
            more = fill(hook)
            began = time.monotonic()
            for _ in range(TURN_DELIVERIES):
                delivery_id = next_due(hook_id)
                if delivery_id is None:
                    return more
                outcome = attempt(delivery_id)
                if outcome is not None and not outcome.delivered and outcome.retry:
                    return False  # paused until its retry; the sweep brings it back
                if time.monotonic() - began > TURN_SECONDS:
                    return True
            return True
        finally:
            release(hook_id, self.owner)

    def wait_idle(self, timeout: float) -> bool:
        """For tests and shutdown: send (in this process too) until no hook has anything left
        to send."""
        self.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.cond:
                busy = bool(self.ready or self.running or self.sessions)
            if not busy:
                try:
                    if not store_has_work():
                        return True
                finally:
                    close_old_connections()
                self.start()
                with self.told:
                    # The sweeper waits on ``told``: wake it to sweep now, not at its next turn.
                    self.sweep_now = True
                    self.told.notify_all()
            time.sleep(0.02)
        return False


sender = Sender()


@receiver(post_save, sender=Webhook)
def _hook_saved(instance: Webhook, **kwargs: Any) -> None:
    if instance.active:
        transaction.on_commit(sender.hooks_changed)


@receiver(post_save, sender=Event)
def _event_stored(instance: Event, created: bool, **kwargs: Any) -> None:
    # Connected when the app is ready (tabletop/apps.py), so models never import the senders.
    # Only a wake-up: what to send is read from the store, which holds the event once committed.
    if created and should_send(instance):
        session_id = instance.session_id
        transaction.on_commit(lambda: sender.session_changed(session_id))
