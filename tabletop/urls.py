from django.contrib import admin
from django.urls import include, path

from .views import dashboard, home, room, verify

urlpatterns = [
    path("", home.home, name="home"),
    path("join", home.join_by_code, name="join-by-code"),
    path("play/<str:code>/", room.room, name="room"),
    path("play/<str:code>/join", room.join, name="join"),
    path("play/<str:code>/odds", room.odds, name="odds"),
    path("play/<str:code>/record", verify.record, name="record"),
    path("play/<str:code>/verify", verify.verify_page, name="verify"),
    path("gm/<int:session_id>/", dashboard.dashboard, name="dashboard"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
]
