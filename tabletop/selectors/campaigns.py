"""What the home page shows a logged-in GM."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from ..models import Campaign


def campaigns_run_by(*, user: AbstractBaseUser) -> QuerySet[Campaign]:
    return Campaign.objects.filter(gm=user).prefetch_related("sessions").order_by("name")
