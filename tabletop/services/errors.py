"""The one error the service layer raises; its ``code`` is what the socket's ``error`` carries."""

from __future__ import annotations

from django.utils.translation import gettext as _

from rules.engines import RuleError


class ServiceError(Exception):
    # Work done before the refusal (dice drawn for a roll too large to keep), in bytes: it
    # still counts against the seat's and the room's work budgets.
    cost: int = 0

    def __init__(self, code: str, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field

    @classmethod
    def from_rule(cls, exc: RuleError, *, prefix: str = "request") -> ServiceError:
        field = f"{prefix}.{exc.field}" if prefix else exc.field
        # "too-large" for a valid request past a size limit (dice listed, odds), else "invalid".
        error = invalid(exc.reason, field=field)
        error.code = exc.code
        return error


def human_field(field: str) -> str:
    """A field's path as a person reads it: ``request.pool.2`` -> ``Pool (item 3)``,
    ``client_seed`` -> ``Client seed``. The path itself travels in the error's ``field``."""
    parts = [p for p in field.split(".") if p]
    items: list[int] = []
    while parts and parts[-1].isascii() and parts[-1].isdigit():
        items.insert(0, int(parts.pop()) + 1)
    name = (parts[-1] if parts else "message").replace("_", " ").replace("-", " ")
    name = name[:1].upper() + name[1:]
    return name + "".join(_(" (item %(number)d)") % {"number": n} for n in items)


def invalid(message: str, *, field: str | None = None) -> ServiceError:
    """Bad input: ``message`` says why in plain words, led by the field's own name."""
    text = f"{human_field(field)}: {message}" if field else message
    return ServiceError("invalid", text, field=field)


def forbidden(message: str) -> ServiceError:
    return ServiceError("forbidden", message)


def not_found(message: str) -> ServiceError:
    return ServiceError("not-found", message)


def conflict(message: str) -> ServiceError:
    return ServiceError("conflict", message)


def busy() -> ServiceError:
    return ServiceError(
        "busy", _("the table is too busy right now; nothing was changed, try again")
    )
