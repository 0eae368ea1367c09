"""The GM's outgoing webhooks: each public roll, reveal, session start and end is POSTed, after
commit, to the addresses the campaign's GM set (``tabletop/webhooks/``: the address guard, what
is sent, the durable sender).

An address is read in its one canonical spelling and must point at the public internet (when
added, and again at every POST: a name may change what it points to); development may allow
loopback and private networks (``TABLETOP["WEBHOOK_PRIVATE_ADDRESSES"]``, never in production)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from ..limits import Buckets
from ..models import Campaign, DeliveryStatus, Webhook, WebhookDelivery
from ..models.webhooks import new_webhook_secret
from ..webhooks.address import AddressRefused, NameNotFound, checked, parse
from ..webhooks.sender import SIGNATURE_HEADER, private_addresses_allowed, start_cursors
from . import Visitor
from .errors import ServiceError, invalid, not_found
from .sessions import check_runs_campaign

__all__ = [
    "SIGNATURE_HEADER",
    "add_webhook",
    "remove_webhook",
    "renew_webhook_secret",
    "webhook_report",
]

MAX_HOOKS = 5  # per campaign
LOOKUP_SECONDS = 5.0  # how long adding a hook waits for its name to resolve
# Adding a hook by name looks the name up: a campaign's GM may do it this many times a minute.
ADDS_PER_MINUTE = 10
_adds = Buckets(ADDS_PER_MINUTE / 60, ADDS_PER_MINUTE)


def add_webhook(*, campaign: Campaign, user: Visitor, url: str) -> Webhook:
    """A new hook for the campaign; ``url`` is the form's text, as chat gave it."""
    check_runs_campaign(user=user, campaign=campaign)
    if not url.strip():
        raise invalid(
            _("paste the address chat gave you for an incoming webhook; this one is empty"),
            field="url",
        )
    try:
        target = parse(url.strip())
    except AddressRefused as exc:
        raise invalid(exc.reason, field="url") from None
    hooks = Webhook.objects.filter(campaign=campaign)
    if hooks.count() >= MAX_HOOKS:
        raise invalid(
            _("a campaign has at most %(max_hooks)s webhooks: remove one first")
            % {"max_hooks": MAX_HOOKS},
            field="url",
        )
    if hooks.filter(url=target.url).exists():
        raise invalid(_("this campaign already posts to that address"), field="url")
    if target.ip is None and not _adds(campaign.pk).take():
        raise ServiceError(
            "rate-limited",
            _(
                "a campaign's webhooks can be added %(count)d times a minute: wait a "
                "minute and try again"
            )
            % {"count": ADDS_PER_MINUTE},
            field="url",
        )
    try:
        checked(target, timeout=LOOKUP_SECONDS, private_ok=private_addresses_allowed())
    except AddressRefused as exc:
        raise invalid(exc.reason, field="url") from None
    except NameNotFound:
        raise invalid(_("no such name was found: check the address"), field="url") from None
    with transaction.atomic():
        hook = Webhook.objects.create(campaign=campaign, url=target.url)
        start_cursors(hook)
    return hook


def remove_webhook(*, campaign: Campaign, user: Visitor, hook_id: int) -> None:
    check_runs_campaign(user=user, campaign=campaign)
    deleted = Webhook.objects.filter(pk=hook_id, campaign=campaign).delete()[0]
    if not deleted:
        raise not_found(_("no webhook %(hook_id)s in this campaign") % {"hook_id": hook_id})


def renew_webhook_secret(*, campaign: Campaign, user: Visitor, hook_id: int) -> Webhook:
    """A new signing secret for a hook (the old one leaked, or the receiver changed hands):
    posts from now on are signed with it, retries of earlier ones too."""
    check_runs_campaign(user=user, campaign=campaign)
    hook = Webhook.objects.filter(pk=hook_id, campaign=campaign).first()
    if hook is None:
        raise not_found(_("no webhook %(hook_id)s in this campaign") % {"hook_id": hook_id})
    hook.secret = new_webhook_secret()
    hook.save(update_fields=["secret"])
    return hook


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
            .order_by("event_id")
            .first()
        )
        out.append({"hook": hook, "counts": counts, "failures": failures, "retrying": retrying})
    return out
