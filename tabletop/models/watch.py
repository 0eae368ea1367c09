"""Watch links: a read-only view of a session for spectators and stream overlays."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from .sessions import GameSession


def new_watch_code() -> str:
    # 128 random bits, URL-safe: no link can be guessed from the invite code or another link.
    return secrets.token_urlsafe(16)


class WatchLink(models.Model):
    """A link the GM hands out: whoever holds it sees the public events, live and on replay."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="watch_links")
    code = models.CharField(max_length=40, unique=True, default=new_watch_code, editable=False)
    label = models.CharField(max_length=80, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["session", "-created_at"]

    def __str__(self) -> str:
        return self.label or f"watch link {self.pk}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
