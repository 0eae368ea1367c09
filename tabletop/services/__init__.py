"""Every change to the table goes through here: validate and lock, change state, record the
event in the same transaction, broadcast after commit. Views, consumers, admin actions and
management commands call these functions and nothing else that writes."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

# Who a page or a socket says is logged in: a user, an anonymous visitor, or nobody said (a
# bot's socket, a management command).
Visitor = User | AnonymousUser | None
