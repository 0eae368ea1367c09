from django.contrib import admin
from django.urls import include, path
from django.views.i18n import set_language

from .views import (
    campaign,
    dashboard,
    export,
    gm_features,
    home,
    next_session,
    presence,
    room,
    saved,
    sheets,
    stats,
    verify,
    watch,
)

urlpatterns = [
    path("", home.home, name="home"),
    path("join", home.join_by_code, name="join-by-code"),
    path("c/<code:code>/", campaign.campaign_room, name="campaign"),
    path("play/<code:code>/", room.room, name="room"),
    path("play/<code:code>/join", room.join, name="join"),
    path("play/<code:code>/seat", room.switch_seat, name="switch-seat"),
    path("play/<code:code>/odds", room.odds, name="odds"),
    path("play/<code:code>/saved", saved.saved_rolls, name="saved-rolls"),
    path("play/<code:code>/here", presence.seats_here, name="seats-here"),
    path("play/<code:code>/sheet/<int:character_id>", sheets.character_sheet, name="sheet"),
    path("play/<code:code>/settings", sheets.campaign_settings, name="settings"),
    path("play/<code:code>/saved/<int:roll_id>", saved.saved_roll, name="saved-roll"),
    path("play/<code:code>/record", verify.record, name="record"),
    path("play/<code:code>/verify", verify.verify_page, name="verify"),
    path("play/<code:code>/export.<str:fmt>", export.seat_export, name="export"),
    path("play/<code:code>/stats", stats.seat_stats, name="stats"),
    path("watch/<code:code>/", watch.watch_page, name="watch"),
    path("watch/<code:code>/overlay", watch.overlay, name="overlay"),
    path("watch/<code:code>/export.<str:fmt>", export.watch_export, name="watch-export"),
    path("watch/<code:code>/stats", stats.watch_stats, name="watch-stats"),
    path("gm/<int:session_id>/", dashboard.dashboard, name="dashboard"),
    path("gm/<int:session_id>/next", next_session.plan_next, name="next-session"),
    path("gm/<int:session_id>/stats", stats.gm_stats, name="gm-stats"),
    path("gm/<int:session_id>/watch", watch.create_link, name="watch-create"),
    path("gm/<int:session_id>/watch/<int:link_id>/revoke", watch.revoke_link, name="watch-revoke"),
    path("gm/<int:session_id>/webhooks", gm_features.webhook_add, name="webhook-add"),
    path(
        "gm/<int:session_id>/webhooks/<int:hook_id>/remove",
        gm_features.webhook_remove,
        name="webhook-remove",
    ),
    path(
        "gm/<int:session_id>/webhooks/<int:hook_id>/secret",
        gm_features.webhook_secret,
        name="webhook-secret",
    ),
    # The language switch in every page (sets the language cookie, back to the same page).
    path("i18n/setlang", set_language, name="set_language"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
]

# An unknown address answers a program in JSON (tabletop/views/answers.py).
handler404 = "tabletop.views.answers.no_such_address"
