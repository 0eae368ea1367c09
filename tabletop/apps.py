from django.apps import AppConfig


class TabletopConfig(AppConfig):
    name = "tabletop"
    verbose_name = "Dice table"

    def ready(self) -> None:
        from .systems import registry  # models are ready only now

        registry.load()
