"""The ASGI entry point: Django for HTTP, the room consumer for websockets."""

import gc
import os
from typing import Any

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

# Channels routes sockets with Django's path(); Django's stubs know only views for it.
websocket_urlpatterns: list[Any] = [
    path("ws/play/<code:code>/", RoomConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/watch/<code:code>/", WatchConsumer.as_asgi()),  # type: ignore[arg-type]
]

application = ProtocolTypeRouter(
    {
        "http": SocketProbe(django_asgi_app),
        # Origin is checked in the consumer: bots holding a seat token may connect without one.
        "websocket": SocketProbe(lazy_user_stack(URLRouter(websocket_urlpatterns))),
    }
)


def _set_aside_what_loading_made() -> None:
    """A full garbage collection walks every object the process tracks and stops the event loop
    while it does: 150-290 ms at 1,000 sockets (docs/benchmarks.md), a frozen screen for every
    table of the process. What loading made (Django, the URL map, the systems) lives as long as
    the process: move it out of the collector's way (``gc.freeze``), and collect the young
    generation less often, so the older ones are looked at less often too."""
    from django.conf import settings

    if settings.TABLETOP.get("GC_FREEZE"):
        gc.collect()
        gc.freeze()
    threshold = settings.TABLETOP.get("GC_THRESHOLD")
    if threshold:
        _, older, oldest = gc.get_threshold()
        gc.set_threshold(threshold, older, oldest)


_set_aside_what_loading_made()

from .webhooks.sender import sender  # noqa: E402

# A serving process sends webhooks from the start: deliveries a stopped process left, and events
# it never handed on, are picked up from the store without waiting for a request. (A process
# that only imports the application, a test run, says TABLETOP_WEBHOOK_SENDERS_AT_START=0.)
if os.environ.get("TABLETOP_WEBHOOK_SENDERS_AT_START", "1") != "0":
    sender.start()

from .sqlite_checkpoints import start_checkpoints  # noqa: E402

# On SQLite, a thread copies the write-ahead log back, so that a roll's commit seldom has to.
start_checkpoints()
