"""The GM dashboard's take-away and sharing tools: watch links, webhooks, statistics, export."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from ..models import Campaign, GameSession
from ..services.errors import ServiceError
from ..services.watch import watch_links
from ..services.webhooks import (
    SIGNATURE_HEADER,
    add_webhook,
    remove_webhook,
    renew_webhook_secret,
    webhook_report,
)


def context(request: HttpRequest, session: GameSession) -> dict[str, Any]:
    """What the dashboard's features partial draws (the GM is already checked)."""
    links = [
        {
            "link": link,
            "watch": request.build_absolute_uri(reverse("watch", args=[link.code])),
            "overlay": request.build_absolute_uri(reverse("overlay", args=[link.code])),
        }
        for link in watch_links(session=session)
    ]
    return {
        "watch_links": links,
        "watch_error": request.GET.get("watch_error", ""),
        "webhooks": webhook_report(campaign=session.campaign),
        "webhook_error": request.GET.get("webhook_error", ""),
        "signature_header": SIGNATURE_HEADER,
        "export_base": reverse("export", args=[session.invite_code, "json"]).removesuffix(".json"),
        "stats_url": reverse("gm-stats", args=[session.pk]),
        "campaign_stats_url": reverse("gm-stats", args=[session.pk]) + "?scope=campaign",
    }


def _session(session_id: int) -> GameSession:
    return get_object_or_404(GameSession.objects.select_related("campaign"), pk=session_id)


def _back(session_id: int, anchor: str, key: str, error: ServiceError | None) -> HttpResponse:
    suffix = "" if error is None else "?" + urlencode({key: error.message})
    return redirect(reverse("dashboard", args=[session_id]) + f"{suffix}#{anchor}")


def _refused(request: HttpRequest, exc: ServiceError) -> HttpResponse:
    return render(request, "tabletop/forbidden.html", {"message": exc.message}, status=403)


def _hook_change(
    request: HttpRequest, session_id: int, change: Callable[[Campaign], object]
) -> HttpResponse:
    """A change to the campaign's webhooks, then back to the dashboard's webhook card."""
    session = _session(session_id)
    try:
        change(session.campaign)
    except ServiceError as exc:
        if exc.code == "forbidden":
            return _refused(request, exc)
        return _back(session_id, "webhooks", "webhook_error", exc)
    return _back(session_id, "webhooks", "webhook_error", None)


@login_required
@require_POST
def webhook_add(request: HttpRequest, session_id: int) -> HttpResponse:
    url = request.POST.get("url", "")  # (a form's values are text)
    return _hook_change(
        request, session_id, lambda c: add_webhook(campaign=c, user=request.user, url=url)
    )


@login_required
@require_POST
def webhook_remove(request: HttpRequest, session_id: int, hook_id: int) -> HttpResponse:
    return _hook_change(
        request,
        session_id,
        lambda c: remove_webhook(campaign=c, user=request.user, hook_id=hook_id),
    )


@login_required
@require_POST
def webhook_secret(request: HttpRequest, session_id: int, hook_id: int) -> HttpResponse:
    return _hook_change(
        request,
        session_id,
        lambda c: renew_webhook_secret(campaign=c, user=request.user, hook_id=hook_id),
    )
