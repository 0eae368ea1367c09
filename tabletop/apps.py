from django.apps import AppConfig


class TabletopConfig(AppConfig):
    name = "tabletop"
    verbose_name = "Dice table"

    def ready(self) -> None:
        # Models are ready only now: the systems' homes and the webhooks' signal come in here.
        from . import (
            db_pool,  # noqa: F401  (connects its connection_created receiver)
            url_codes,  # noqa: F401  (the <code:...> of the routes, here and in asgi.py)
        )
        from .request_connections import close_connections_with_requests
        from .systems import registry
        from .webhooks import sender  # noqa: F401  (connects its post_save receiver)

        close_connections_with_requests()

        registry.load()
