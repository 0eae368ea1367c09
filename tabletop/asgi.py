"""The ASGI entry point: Django for HTTP, the room consumer for websockets."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tabletop.settings")
django_asgi_app = get_asgi_application()

from .access_log import install as keep_tokens_out_of_the_access_log  # noqa: E402

keep_tokens_out_of_the_access_log()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

from .arrivals import lazy_user_stack  # noqa: E402
from .consumers import RoomConsumer  # noqa: E402
from .transport import SocketProbe  # noqa: E402
from .watch_consumer import WatchConsumer  # noqa: E402

websocket_urlpatterns = [
    path("ws/play/<str:code>/", RoomConsumer.as_asgi()),
    path("ws/watch/<str:code>/", WatchConsumer.as_asgi()),
]

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Origin is checked in the consumer: bots holding a seat token may connect without one.
        "websocket": SocketProbe(lazy_user_stack(URLRouter(websocket_urlpatterns))),
    }
)
