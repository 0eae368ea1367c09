"""Outgoing webhooks: the GM's chat channel hears of each public roll, session start and end."""

from __future__ import annotations

import secrets

from django.db import models

from .campaigns import Campaign
from .events import Event


def new_webhook_secret() -> str:
    return secrets.token_hex(32)


class Webhook(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField("URL", max_length=500)
    # The key of the HMAC-SHA256 signature sent with every delivery; shown to the GM.
    secret = models.CharField(max_length=64, default=new_webhook_secret, editable=False)
    active = models.BooleanField(default=True)
    # Events never queued for this hook because the sending queue was full (they are not retried).
    missed = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "created_at"]

    def __str__(self) -> str:
        return self.url


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Waiting to be sent"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class WebhookDelivery(models.Model):
    """One event posted to one webhook: the delivery state outlives the process sending it, so a
    restart resumes what was pending and the GM sees what failed."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=300, blank=True)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["webhook", "event"], name="one_delivery_per_event")
        ]
        indexes = [models.Index(fields=["status"], name="webhook_delivery_status")]

    def __str__(self) -> str:
        return f"{self.webhook} #{self.event_id}: {self.status}"
