"""The demo table ``manage.py play`` sets up: a GM, and per game system a campaign with
characters and a live session. Idempotent: a second run reuses what the first made."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from rules.engines import get_system, system_ids

from ..models import Campaign, Character, GameSession, SessionStatus
from .pools import ensure_resources
from .sessions import create_session, start_session

DEMO_GM = "gm"
DEMO_PREFIX = "Demo: "

# Characters each demo campaign starts with; sheets are completed by the system's own defaults.
DEMO_CHARACTERS: dict[str, list[dict[str, Any]]] = {
    "generic": [{"name": "Wren"}, {"name": "Ossian"}],
    "zoria": [
        {
            "name": "Kael the Bold",
            "sheet": {
                "level": 7,
                "class": "Fighter",
                "abilities": {"Strength": 3, "Reason": 1},
                "skills": {"Swords": 6},
            },
        },
        {
            "name": "Ysolde",
            "sheet": {
                "level": 12,
                "class": "Mage",
                "abilities": {"Reason": 4, "Knowledge": 3},
                "skills": {"Arcana": 9},
                "class_bonus_dice": ["d8"],
            },
        },
        {"name": "Pip", "sheet": {"level": 3, "class": "Thief", "skills": {"Stealth": 7}}},
    ],
    "roll-and-keep": [
        {
            "name": "Mirela",
            "sheet": {
                "attributes": {
                    "Strength": 3,
                    "Finesse": 4,
                    "Endurance": 3,
                    "Intelligence": 5,
                    "Cunning": 4,
                    "Acuity": 3,
                    "Charisma": 2,
                },
                "specialities": {"Lore": 2, "Swordplay": 1},
                "mana": {"blue": 3, "black": 2},
            },
        },
        {
            "name": "Tobiah",
            "sheet": {
                "attributes": {
                    "Strength": 5,
                    "Finesse": 3,
                    "Endurance": 4,
                    "Intelligence": 2,
                    "Cunning": 3,
                    "Acuity": 3,
                    "Charisma": 3,
                },
                "specialities": {"Brawling": 2},
                "mana": {"red": 4},
            },
        },
    ],
    "d6-chance": [
        {
            "name": "Captain Sera Vance",
            "sheet": {
                "attributes": {"Dexterity": "3D+1", "Perception": "3D"},
                "skills": {"Blaster": "5D+1", "Piloting": "4D+2"},
                "character_points": 5,
            },
        },
        {
            "name": "Dorrik",
            "sheet": {
                "attributes": {"Strength": "4D", "Knowledge": "2D+2"},
                "skills": {"Brawling": "5D"},
                "character_points": 3,
            },
        },
    ],
    "discordian": [
        {
            "name": "Eris Quill",
            "sheet": {
                "hero_dice": ["d6", "d8"],
                "tropes": {"Trickster": 8},
                "trademarks": {"Lockpicks": 6},
                "luck": 3,
                "instant_karma": 2,
            },
        },
        {
            "name": "Bob Dobbs",
            "sheet": {
                "hero_dice": ["d6"],
                "tropes": {"Salesman": 10},
                "trademarks": {"Pipe": 4},
                "luck": 2,
                "instant_karma": 3,
            },
        },
    ],
    "action-dice": [
        {
            "name": "Nadia Kestrel",
            "sheet": {
                "action_dice": 3,
                "skills": {"Driving": "+2d6"},
                "combat_skills": {"Fencing": "+5d6"},
            },
        },
        {"name": "Henchman", "sheet": {"action_dice": 1, "combat_skills": {"Brawling": "+2d6"}}},
    ],
}


@dataclass(frozen=True)
class DemoTable:
    system: str
    campaign: Campaign
    session: GameSession


def reset_demo_gm(*, username: str = DEMO_GM) -> tuple[Any, str]:
    """The demo GM with a freshly generated password (printed by ``play``, stored only hashed)."""
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(
        username=username, defaults={"is_staff": True, "is_superuser": True}
    )
    password = secrets.token_urlsafe(12)
    user.set_password(password)
    user.is_staff = True
    user.is_superuser = True
    user.save()
    return user, password


def ensure_demo_tables(*, gm: Any) -> list[DemoTable]:
    tables = []
    for system_id in system_ids():
        tables.append(_ensure_demo_table(gm=gm, system_id=system_id))
    return tables


def _ensure_demo_table(*, gm: Any, system_id: str) -> DemoTable:
    system = get_system(system_id)
    with transaction.atomic():
        campaign, created = Campaign.objects.get_or_create(
            gm=gm,
            system=system_id,
            name=f"{DEMO_PREFIX}{system.title}",
            defaults={"settings": system.validate_settings({})},
        )
        if created:
            for spec in DEMO_CHARACTERS.get(system_id, []):
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
