"""The demo table ``manage.py play`` sets up: a GM, and per game system a campaign with
characters and a live session. Idempotent: a second run reuses what the first made."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from rules.engines import get_system, system_ids

from ..models import Campaign, Character, GameSession, SessionStatus
from ..systems.registry import table_system
from .pools import ensure_resources
from .sessions import create_session, start_session

DEMO_GM = "gm"
DEMO_PREFIX = "Demo: "

# Characters a demo campaign starts with when its system's table brings none (ordinary
# notation); sheets are completed by the system's own defaults.
PLAIN_CHARACTERS: tuple[dict[str, Any], ...] = ({"name": "Wren"}, {"name": "Ossian"})


@dataclass(frozen=True)
class DemoTable:
    system: str
    campaign: Campaign
    session: GameSession


def ensure_demo_gm(*, secret_file: Path, username: str = DEMO_GM) -> tuple[Any, str | None]:
    """The demo GM and the password to print. The password is made once and kept in
    ``secret_file`` (readable by its owner only), so running ``play`` again never locks the GM
    out; a password the GM has since set is left alone (then None is returned)."""
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(
        username=username, defaults={"is_staff": True, "is_superuser": True}
    )
    kept = secret_file.read_text().strip() if secret_file.exists() else ""
    if not created and kept and user.check_password(kept):
        return user, kept
    if not created and user.has_usable_password() and kept:
        return user, None  # changed by the GM since: theirs now
    password = kept or secrets.token_urlsafe(12)
    if not kept:
        secret_file.parent.mkdir(parents=True, exist_ok=True)
        secret_file.touch(mode=0o600)
        secret_file.write_text(password + "\n")
    user.set_password(password)
    user.is_staff = True
    user.is_superuser = True
    user.save()
    return user, password


def ensure_demo_tables(*, gm: User) -> list[DemoTable]:
    tables = []
    for system_id in system_ids():
        tables.append(_ensure_demo_table(gm=gm, system_id=system_id))
    return tables


def _ensure_demo_table(*, gm: User, system_id: str) -> DemoTable:
    system = get_system(system_id)
    with transaction.atomic():
        campaign, created = Campaign.objects.get_or_create(
            gm=gm,
            system=system_id,
            name=f"{DEMO_PREFIX}{system.title}",
            defaults={"settings": system.validate_settings({})},
        )
        if created:
            for spec in table_system(system_id).demo_characters or PLAIN_CHARACTERS:
                character = Character.objects.create(
                    campaign=campaign,
                    name=spec["name"],
                    sheet=system.validate_sheet(spec.get("sheet", {})),
                )
                ensure_resources(character=character)
    session = campaign.sessions.filter(status=SessionStatus.LIVE).order_by("-started_at").first()
    if session is None:
        session = campaign.sessions.filter(status=SessionStatus.PLANNED).first() or create_session(
            campaign=campaign, title=f"{system.title} one-shot"
        )
        session = start_session(session_id=session.pk)
    return DemoTable(system=system_id, campaign=campaign, session=session)
