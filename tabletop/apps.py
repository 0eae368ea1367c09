from django.apps import AppConfig


class TabletopConfig(AppConfig):
    name = "tabletop"
    verbose_name = "Dice table"

    def ready(self) -> None:
        # Models are ready only now: the systems' homes and the webhooks' signal come in here.
        from .services import webhooks  # noqa: F401  (connects its post_save receiver)
        from .systems import registry

        registry.load()
