"""The home page: join a table by its code; a GM's campaigns and sessions."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from ..models import Campaign, GameSession
from ..models.codes import is_code
from ..selectors.campaigns import campaigns_run_by


def home(request: HttpRequest) -> HttpResponse:
    campaigns = campaigns_run_by(user=request.user) if request.user.is_authenticated else []
    return render(request, "tabletop/home.html", {"campaigns": campaigns})


@require_POST
def join_by_code(request: HttpRequest) -> HttpResponse:
    code = _code_from(request.POST.get("code", ""))
    if code and not is_code(code):
        # Not looked up: no code holds such characters (and the database refuses some).
        return _code_refused(
            request,
            _("A code holds only letters, digits, “-” and “_”; check what you pasted."),
            status=400,
        )
    if code and Campaign.objects.filter(link_code=code).exists():
        return redirect("campaign", code=code)  # a campaign link's code
    if not code or not GameSession.objects.filter(invite_code=code).exists():
        return _code_refused(request, _("No table has that code."), code=code, status=404)
    return redirect("room", code=code)


def _code_refused(request: HttpRequest, error: str, *, code: str = "", status: int) -> HttpResponse:
    campaigns = campaigns_run_by(user=request.user) if request.user.is_authenticated else []
    return render(
        request,
        "tabletop/home.html",
        {"campaigns": campaigns, "code_error": error, "code": code},
        status=status,
    )


def _code_from(text: str) -> str:
    # Players paste whole invite or campaign links as often as bare codes.
    text = text.strip().rstrip("/")
    for prefix in ("/play/", "/c/"):
        if prefix in text:
            text = text.split(prefix, 1)[1].split("/", 1)[0]
            break
    return text[:32]
