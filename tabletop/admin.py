"""The Django admin, for GMs who never read the code: campaigns, characters, sessions."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Count, Q, QuerySet
from django.forms import ModelChoiceField
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from .models import (
    Campaign,
    Character,
    CharacterResource,
    Event,
    GameSession,
    Player,
    Seat,
    SessionStatus,
    Visibility,
)
from .models.pools import Pool
from .protocol.commands import junk
from .selectors.campaign_link import campaign_link
from .services.errors import ServiceError
from .services.sessions import end_session, start_session


def own_campaigns(request: HttpRequest) -> QuerySet:
    """The campaigns this admin user may see and change: all for a superuser, else their own."""
    if request.user.is_superuser:
        return Campaign.objects.all()
    return Campaign.objects.filter(gm_id=request.user.pk)


def known_users(request: HttpRequest) -> QuerySet:
    """The users this admin user may pick or see named: all for a superuser; for a GM, themself
    and the players of their own campaigns (a seat or a character in them)."""
    users = get_user_model().objects.all()
    if request.user.is_superuser:
        return users
    mine = own_campaigns(request)
    return users.filter(
        Q(pk=request.user.pk)
        | Q(characters__campaign__in=mine)
        | Q(seats__session__campaign__in=mine)
    ).distinct()


@admin.display(description=gettext_lazy("invite link"))
def invite_link(_admin: object, obj: GameSession) -> str:
    """A session's invite link (its inline in the campaign, and its own page)."""
    if not obj.pk:
        return _("made when saved")
    path = reverse("room", args=[obj.invite_code])
    return format_html('<a href="{0}">{0}</a>', path)


class StorableJSONField(forms.JSONField):
    """The admin's JSON (sheets, settings): refused, naming the place, where it holds what no
    database can keep (a lone surrogate, typed as ``"\\ud800"``, or ``1e999``), as the room's
    endpoints refuse it; and shown back with such text escaped, never as characters no page
    can be encoded with (the form failed with a 500 where a sheet held one)."""

    def to_python(self, value: Any) -> Any:
        parsed = super().to_python(value)
        found = junk(parsed)
        if found is not None:
            where, why = found
            raise ValidationError(f"{where}: {why}" if where else why, code="invalid")
        return parsed

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        return json.dumps(value, ensure_ascii=True, cls=self.encoder)


class OwnCampaignsMixin:
    """A GM who is staff but not superuser sees and changes only the campaigns they run: lists,
    change pages, the choices a form offers (a campaign, a session, a user) and the list
    filters, which name only what the list itself may show. Superusers see everything.

    No admin page may filter on a session's secret seed: a filter is an oracle that reads it
    back one guess at a time, before the session ends."""

    campaign_path = "campaign__gm"
    formfield_overrides: ClassVar[Mapping[type[models.Field], Mapping[str, Any]]] = {
        models.JSONField: {"form_class": StorableJSONField}
    }

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        limited = _choices_for(db_field.related_model, request)
        if limited is not None:
            kwargs["queryset"] = limited
        return super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if "server_seed" in lookup:
            return False
        return super().lookup_allowed(lookup, value, request)  # type: ignore[misc]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request)  # type: ignore[misc]
        if request.user.is_superuser:
            return qs
        return qs.filter(**{self.campaign_path: request.user})


def _choices_for(model: Any, request: HttpRequest) -> QuerySet | None:
    if request.user.is_superuser:
        return None
    if model is Campaign:
        return own_campaigns(request)
    if model is GameSession:
        return GameSession.objects.filter(campaign__in=own_campaigns(request))
    if model is Character:
        return Character.objects.filter(campaign__in=own_campaigns(request))
    if model is get_user_model():
        return known_users(request)
    return None


class OwnRelatedFilter(admin.RelatedOnlyFieldListFilter):
    """A list filter offering only what the list itself holds for this admin user."""


# Inlines are stacked: every field keeps its own label (a tabular inline labels only its columns,
# which screen readers do not tie to the inputs).
class CharacterInline(OwnCampaignsMixin, admin.StackedInline):
    model = Character
    extra = 0
    fields = ("name", "owner", "sheet")
    show_change_link = True


class SessionInline(admin.StackedInline):
    model = GameSession
    extra = 0
    fields = ("title", "status", "invite", "started_at", "ended_at")
    readonly_fields = ("status", "invite", "started_at", "ended_at")
    show_change_link = True

    invite = invite_link


class PlayerInline(admin.StackedInline):
    """The campaign's players, as they sat down once: read-only here (the GM removes a seat
    from the table, which removes the player campaign-wide)."""

    model = Player
    extra = 0
    fields = ("name", "user", "characters", "created_at", "removed_at")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Campaign)
class CampaignAdmin(OwnCampaignsMixin, admin.ModelAdmin):
    campaign_path = "gm"
    list_display = ("name", "system", "gm", "character_count", "session_count", "created_at")
    list_filter = ("system", ("gm", OwnRelatedFilter))
    search_fields = ("name", "gm__username")
    inlines = [CharacterInline, SessionInline, PlayerInline]
    fields = ("name", "system", "gm", "campaign_link", "settings", "settings_help")
    readonly_fields = ("campaign_link", "settings_help")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_characters=Count("characters", distinct=True),
                n_sessions=Count("sessions", distinct=True),
            )
        )

    @admin.display(description=gettext_lazy("campaign link"))
    def campaign_link(self, obj: Campaign) -> str:
        if not obj.pk:
            return _("made when saved")
        # Every session of the campaign, one after the other; players' seats carry over.
        return format_html('<a href="{0}">{0}</a>', campaign_link(obj))

    @admin.display(description=gettext_lazy("characters"), ordering="n_characters")
    def character_count(self, obj: Campaign) -> int:
        return obj.n_characters  # type: ignore[attr-defined]  # annotated by get_queryset

    @admin.display(description=gettext_lazy("sessions"), ordering="n_sessions")
    def session_count(self, obj: Campaign) -> int:
        return obj.n_sessions  # type: ignore[attr-defined]  # annotated by get_queryset

    @admin.display(description=gettext_lazy("what the settings and sheets hold"))
    def settings_help(self, obj: Campaign) -> str:
        if not obj.pk:
            return _("Pick a game system and save; the fields it takes are listed here.")
        schema = obj.game_system.schema()
        return format_html(
            "<p>{}</p><pre>{}</pre><p>{}</p><pre>{}</pre>",
            _("Settings fields:"),
            _fields_text(schema["settings"]),
            _("Character sheet fields:"),
            _fields_text(schema["sheet"]),
        )

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        return {"gm": request.user.pk}

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "gm" and not request.user.is_superuser:
            # A GM runs their own campaigns; only a superuser hands one to someone else.
            kwargs["queryset"] = get_user_model().objects.filter(pk__in=[request.user.pk])
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


def _fields_text(fields: list[dict[str, Any]], indent: str = "") -> str:
    lines = []
    for f in fields:
        bits = [f["type"]]
        if "choices" in f:
            bits.append(_("one of %(choices)s") % {"choices": ", ".join(map(str, f["choices"]))})
        if "min" in f or "max" in f:
            bits.append(f"{f.get('min', '')}..{f.get('max', '')}")
        if "default" in f:
            bits.append(_("default %(value)s") % {"value": json.dumps(f["default"])})
        lines.append(
            f"{indent}{f['name']}: {'; '.join(bits)}"
            + (f"  ({f['help']})" if f.get("help") else "")
        )
        if f.get("fields"):
            lines.append(_fields_text(f["fields"], indent + "  "))
    return "\n".join(lines) or "(none)"


class ResourceInline(admin.StackedInline):
    model = CharacterResource
    extra = 0
    fields = ("name", "amount")


@admin.register(Character)
class CharacterAdmin(OwnCampaignsMixin, admin.ModelAdmin):
    list_display = ("name", "campaign", "owner", "created_at")
    list_filter = ("campaign__system", ("campaign", OwnRelatedFilter))
    search_fields = ("name", "campaign__name", "owner__username")
    autocomplete_fields = ("campaign",)
    inlines = [ResourceInline]


class SeatInline(OwnCampaignsMixin, admin.StackedInline):
    model = Seat
    campaign_path = "session__campaign__gm"
    extra = 0
    fields = ("name", "role", "user", "characters", "created_at")
    readonly_fields = ("created_at",)
    filter_horizontal = ()

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        formset = super().get_formset(request, obj, **kwargs)
        # A seat plays the session's own campaign's characters, none other.
        field = formset.form.base_fields.get("characters")
        if isinstance(field, ModelChoiceField):
            field.queryset = (
                Character.objects.filter(campaign_id=obj.campaign_id)
                if obj is not None
                else Character.objects.none()
            )
        return formset


class PoolInline(admin.TabularInline):
    """Pools change only at the table (dashboard and room), where every change is an event."""

    model = Pool
    extra = 0
    fields = ("seat", "character", "kind", "sides", "remaining", "initial")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(GameSession)
class GameSessionAdmin(OwnCampaignsMixin, admin.ModelAdmin):
    list_display = (
        "title",
        "campaign",
        "status",
        "seat_count",
        "last_seq",
        "started_at",
        "ended_at",
        "invite",
    )
    list_filter = ("status", "campaign__system", ("campaign", OwnRelatedFilter))
    search_fields = ("title", "invite_code", "campaign__name")
    autocomplete_fields = ("campaign",)
    readonly_fields = (
        "status",
        "invite",
        "gm_dashboard",
        "event_log",
        "commitment",
        "revealed_seed",
        "last_seq",
        "started_at",
        "ended_at",
        "created_at",
    )
    fields = ("campaign", "title", *readonly_fields)
    inlines = [SeatInline, PoolInline]
    actions = ["start_sessions", "end_sessions"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # Once a session has started, its events belong to its campaign: the campaign is fixed.
        fixed = obj is not None and obj.status != SessionStatus.PLANNED
        return ("campaign", *self.readonly_fields) if fixed else self.readonly_fields

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).annotate(n_seats=Count("seats"))

    @admin.display(description=gettext_lazy("seats"), ordering="n_seats")
    def seat_count(self, obj: GameSession) -> int:
        return obj.n_seats  # type: ignore[attr-defined]  # annotated by get_queryset

    invite = invite_link

    @admin.display(description=gettext_lazy("GM dashboard"))
    def gm_dashboard(self, obj: GameSession) -> str:
        if not obj.pk:
            return "-"
        return format_html('<a href="{0}">{0}</a>', reverse("dashboard", args=[obj.pk]))

    @admin.display(description=gettext_lazy("event log"))
    def event_log(self, obj: GameSession) -> str:
        if not obj.pk:
            return "-"
        url = reverse("admin:tabletop_event_changelist") + f"?session__id__exact={obj.pk}"
        return format_html('<a href="{}">{} events</a>', url, obj.last_seq)

    @admin.display(description=gettext_lazy("server seed (revealed at the end)"))
    def revealed_seed(self, obj: GameSession) -> str:
        return obj.revealed_seed or _("secret until the session ends")

    @admin.action(description=gettext_lazy("Start the selected sessions"))
    def start_sessions(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._run(request, queryset, start_session, _("%(count)d session(s) started."))

    @admin.action(description=gettext_lazy("End the selected sessions (reveals their seeds)"))
    def end_sessions(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._run(request, queryset, end_session, _("%(count)d session(s) ended."))

    def _run(self, request: HttpRequest, queryset: QuerySet, service: Any, done_text: str) -> None:
        done = 0
        for session in queryset:
            try:
                service(session_id=session.pk)
                done += 1
            except ServiceError as exc:
                self.message_user(request, f"{session}: {exc.message}", messages.WARNING)
        if done:
            self.message_user(request, done_text % {"count": done}, messages.SUCCESS)


@admin.register(Event)
class EventAdmin(OwnCampaignsMixin, admin.ModelAdmin):
    """The session's record, read-only: events are never edited or removed."""

    list_display = ("seq", "session", "kind", "who", "visibility", "created_at", "summary")
    list_filter = ("kind", "visibility", ("session", OwnRelatedFilter))
    search_fields = ("session__title", "session__invite_code", "actor_name", "kind")
    list_select_related = ("session",)
    ordering = ("session", "seq")
    fields = ("session", "seq", "kind", "who", "visibility", "created_at", "pretty_data")
    readonly_fields = fields

    campaign_path = "session__campaign__gm"

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        # Filtering on what an event holds would read hidden rolls back, one guess at a time;
        # filtering on who made it would name the sender of a whisper the GM may not read.
        if lookup.startswith(("data", "actor", "owner")):
            return False
        return super().lookup_allowed(lookup, value, request)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Event], search_term: str
    ) -> tuple[QuerySet[Event], bool]:
        found, duplicates = super().get_search_results(request, queryset, search_term)
        if search_term:
            # A search by name would say who sent the whispers the GM may not read.
            found = found.exclude(Q(visibility=Visibility.WHISPER) & ~Q(data__gm_reads=True))
        return found, duplicates

    @staticmethod
    def _unread_whisper(obj: Event) -> bool:
        # A whisper between players is theirs unless the campaign let the GM read it then.
        return obj.visibility == Visibility.WHISPER and not (obj.data or {}).get("gm_reads")

    @classmethod
    def _shown(cls, obj: Event) -> dict[str, Any]:
        # The GM sees what the GM's socket sees: a roll for the roller alone stays theirs.
        if obj.visibility == Visibility.SELF or cls._unread_whisper(obj):
            return {"hidden": True}
        return obj.data if isinstance(obj.data, dict) else {}

    @admin.display(description=Event._meta.get_field("actor_name").verbose_name)
    def who(self, obj: Event) -> str:
        # As the GM's socket has it: a whisper the GM may not read names no sender.
        return "" if self._unread_whisper(obj) else obj.actor_name

    @admin.display(description=gettext_lazy("what happened"))
    def summary(self, obj: Event) -> str:
        return self._shown(obj).get("text") or obj.kind

    @admin.display(description=gettext_lazy("data"))
    def pretty_data(self, obj: Event) -> str:
        return format_html("<pre>{}</pre>", json.dumps(self._shown(obj), indent=2, sort_keys=True))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
