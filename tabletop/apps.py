from django.apps import AppConfig


class TabletopConfig(AppConfig):
    name = "tabletop"
    verbose_name = "Dice table"

    def ready(self) -> None:
        # Models are ready only now: the systems' homes and the webhooks' signal come in here.
        from django.urls import register_converter

        from . import db_pool  # noqa: F401  (connects its connection_created receiver)
        from .request_connections import close_connections_with_requests
        from .systems import registry
        from .url_codes import CodeConverter
        from .webhooks import sender  # noqa: F401  (connects its post_save receiver)

        close_connections_with_requests()
        # Before any route is made (the URL map here, the sockets' in asgi.py).
        register_converter(CodeConverter, "code")

        registry.load()
