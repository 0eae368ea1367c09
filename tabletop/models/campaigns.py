"""Campaigns and their characters: the things that outlive a single game session."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from rules.engines import GameSystem, RuleError, get_system, system_ids

from .codes import new_invite_code


def system_choices() -> list[tuple[str, str]]:
    return [(system_id, get_system(system_id).title) for system_id in system_ids()]


def _rule_error(exc: RuleError, field: str) -> ValidationError:
    return ValidationError({field: f"{exc.field}: {exc.reason}"})


class Campaign(models.Model):
    name = models.CharField(max_length=120, verbose_name=_("name"))
    system = models.CharField(
        _("game system"),
        max_length=40,
        choices=system_choices,
        help_text=_("Which rules engine rolls."),
    )
    gm = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("GM"),
        on_delete=models.PROTECT,
        related_name="campaigns_run",
    )
    settings = models.JSONField(
        default=dict,
        blank=True,
        help_text=_("Per-system options, checked against the system's rules."),
        verbose_name=_("settings"),
    )
    # Talk at the table, every system's alike (tabletop/selectors/campaigns.py talk_settings):
    # kept apart from ``settings``, which are the rules' own and checked against them.
    talk = models.JSONField(
        default=dict,
        blank=True,
        help_text=_(
            "Talk at the table: whether the GM reads players' whispers to each other "
            "(gm_reads_whispers) and whether public messages go to the webhooks (to_webhooks)."
        ),
        verbose_name=_("talk"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created"))
    # The campaign link (/c/<code>/): always opens the campaign's current session.
    link_code = models.CharField(
        max_length=32,
        unique=True,
        default=new_invite_code,
        editable=False,
        verbose_name=_("campaign link code"),
    )

    class Meta:
        verbose_name = _("campaign")
        verbose_name_plural = _("campaigns")
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
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="characters", verbose_name=_("campaign")
    )
    name = models.CharField(max_length=80, verbose_name=_("name"))
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="characters",
        help_text=_("The player's account, if they have one; joining by link works without."),
        verbose_name=_("owner"),
    )
    sheet = models.JSONField(
        default=dict,
        blank=True,
        help_text=_("Level, attributes, skills, ... as the system defines."),
        verbose_name=_("sheet"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created"))

    class Meta:
        verbose_name = _("character")
        verbose_name_plural = _("characters")
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

    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="resources", verbose_name=_("character")
    )
    name = models.CharField(max_length=40, verbose_name=_("name"))
    amount = models.IntegerField(default=0, verbose_name=_("amount"))

    class Meta:
        verbose_name = _("character resource")
        verbose_name_plural = _("character resources")
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

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="players", verbose_name=_("campaign")
    )
    name = models.CharField(_("display name"), max_length=40)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="campaign_players",
        verbose_name=_("user"),
    )
    characters = models.ManyToManyField(
        Character, blank=True, related_name="players", verbose_name=_("characters")
    )
    # sha256 of the player's secret token (the token of their first seat); None once removed.
    token_hash = models.CharField(max_length=64, unique=True, null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created"))
    # Set when the GM removes any of the player's seats: removal holds for the whole campaign.
    removed_at = models.DateTimeField(
        null=True, blank=True, editable=False, verbose_name=_("removed")
    )

    class Meta:
        verbose_name = _("player")
        verbose_name_plural = _("players")
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
