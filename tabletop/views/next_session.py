"""The GM's "Next session" button on an ended session's dashboard."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from ..models import GameSession
from ..services.errors import ServiceError
from ..services.next_session import plan_next_session
from ..services.seats import gm_seat


@login_required
@require_POST
def plan_next(request: HttpRequest, session_id: int) -> HttpResponse:
    session = get_object_or_404(GameSession.objects.select_related("campaign"), pk=session_id)
    try:
        gm_seat(session=session, user=request.user)
        following = plan_next_session(session_id=session.pk)
    except ServiceError as exc:
        if exc.code != "forbidden":
            # Not ended yet: back to its dashboard.
            return redirect("dashboard", session_id=session.pk)
        return render(request, "tabletop/forbidden.html", {"message": exc.message}, status=403)
    return redirect("dashboard", session_id=following.pk)
