"""Campaigns and their characters: the things that outlive a single game session."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from rules.engines import GameSystem, RuleError, get_system, system_ids

from .codes import new_invite_code


def system_choices() -> list[tuple[str, str]]:
    return [(system_id, get_system(system_id).title) for system_id in system_ids()]


def _rule_error(exc: RuleError, field: str) -> ValidationError:
    return ValidationError({field: f"{exc.field}: {exc.reason}"})


class Campaign(models.Model):
    name = models.CharField(max_length=120)
    system = models.CharField(
        "game system", max_length=40, choices=system_choices, help_text="Which rules engine rolls."
    )
    gm = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name="GM",
        on_delete=models.PROTECT,
        related_name="campaigns_run",
    )
    settings = models.JSONField(
        default=dict,
        blank=True,
        help_text="Per-system options, checked against the system's rules.",
    )
    # Talk at the table, every system's alike (tabletop/selectors/campaigns.py talk_settings):
    # kept apart from ``settings``, which are the rules' own and checked against them.
    talk = models.JSONField(
        default=dict,
        blank=True,
        help_text="Talk at the table: whether the GM reads players' whispers to each other "
        "(gm_reads_whispers) and whether public messages go to the webhooks (to_webhooks).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The campaign link (/c/<code>/): always opens the campaign's current session.
    link_code = models.CharField(
        max_length=32, unique=True, default=new_invite_code, editable=False
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def game_system(self) -> GameSystem:
        return get_system(self.system)

    def clean(self) -> None:
        if self.system not in system_ids():
            return  # the field's own choices validation reports it
        try:
            self.settings = self.game_system.validate_settings(self.settings)
        except RuleError as exc:
            raise _rule_error(exc, "settings") from None


class Character(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="characters")
    name = models.CharField(max_length=80)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="characters",
        help_text="The player's account, if they have one; joining by link works without.",
    )
    sheet = models.JSONField(
        default=dict, blank=True, help_text="Level, attributes, skills, ... as the system defines."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "name"], name="character_name_unique_in_campaign"
            )
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if not self.campaign_id:
            return
        try:
            self.sheet = self.campaign.game_system.validate_sheet(self.sheet)
        except RuleError as exc:
            raise _rule_error(exc, "sheet") from None


class CharacterResource(models.Model):
    """A persistent per-character resource a system keeps (its engine names them).

    Kept as rows rather than in the sheet so spends are one conditional UPDATE each.
    """

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="resources")
    name = models.CharField(max_length=40)
    amount = models.IntegerField(default=0)

    class Meta:
        ordering = ["character", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["character", "name"], name="resource_unique_per_character"
            ),
            models.CheckConstraint(
                condition=models.Q(amount__gte=0), name="resource_never_negative"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.character}: {self.name} {self.amount}"


class Player(models.Model):
    """A player of the campaign: one sit-down that carries from session to session. Their
    token (a browser's cookie, a bot's token) opens a seat at each of the campaign's sessions,
    with the same name and characters, until the GM removes them."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="players")
    name = models.CharField("display name", max_length=40)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="campaign_players",
    )
    characters = models.ManyToManyField(Character, blank=True, related_name="players")
    # sha256 of the player's secret token (the token of their first seat); None once removed.
    token_hash = models.CharField(max_length=64, unique=True, null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when the GM removes any of the player's seats: removal holds for the whole campaign.
    removed_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["campaign", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "user"],
                condition=models.Q(user__isnull=False),
                name="one_player_per_user_per_campaign",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.campaign})"
