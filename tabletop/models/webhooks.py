"""Outgoing webhooks: the GM's chat channel hears of each public roll, session start and end."""

from __future__ import annotations

import secrets

from django.db import models

from .campaigns import Campaign
from .events import Event
from .sessions import GameSession


def new_webhook_secret() -> str:
    return secrets.token_hex(32)


class Webhook(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField("URL", max_length=500)
    # The key of the HMAC-SHA256 signature sent with every delivery; shown to the GM.
    secret = models.CharField(max_length=64, default=new_webhook_secret, editable=False)
    active = models.BooleanField(default=True)
    # Events not sent to this hook: still waiting, past the oldest an event may be posted at.
    missed = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # Which process is sending this hook's deliveries, until when: one at a time, so a hook's
    # posts never overlap; a process that dies leaves a lease that runs out by itself.
    lease_owner = models.CharField(max_length=80, blank=True, editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    # The receiver failed and asked for time: nothing is posted to it before then.
    paused_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["campaign", "created_at"]

    def __str__(self) -> str:
        return self.url


class WebhookCursor(models.Model):
    """How far a hook has read a session's events: every public event of the session after
    ``last_seq`` is still to be handed to the hook. What a hook must receive is read from the
    store, never from a process's memory, so a process killed at any moment loses nothing."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="cursors")
    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="+")
    last_seq = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["webhook", "session"], name="one_cursor_per_session")
        ]

    def __str__(self) -> str:
        return f"{self.webhook} @ {self.session_id}#{self.last_seq}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Waiting to be sent"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class WebhookDelivery(models.Model):
    """One event posted to one webhook: the delivery state outlives the process sending it, so a
    restart resumes what was pending and the GM sees what failed. Its id is the delivery id the
    receiver gets with every attempt, to drop repeats by."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=300, blank=True)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    # When a pending delivery is next tried.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["webhook", "event"], name="one_delivery_per_event")
        ]
        indexes = [
            models.Index(fields=["status"], name="webhook_delivery_status"),
            models.Index(
                fields=["webhook", "status", "next_attempt_at"], name="webhook_delivery_due"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.webhook} #{self.event_id}: {self.status}"
