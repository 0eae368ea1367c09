"""The one error the service layer raises; its ``code`` is what the socket's ``error`` carries."""

from __future__ import annotations

from rules.engines import RuleError


class ServiceError(Exception):
    def __init__(self, code: str, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field

    @classmethod
    def from_rule(cls, exc: RuleError, *, prefix: str = "request") -> ServiceError:
        field = f"{prefix}.{exc.field}" if prefix else exc.field
        # "too-large" for a valid request past a size limit (dice listed, odds), else "invalid".
        return cls(exc.code, f"{field}: {exc.reason}", field=field)


def invalid(message: str, *, field: str | None = None) -> ServiceError:
    return ServiceError("invalid", f"{field}: {message}" if field else message, field=field)


def forbidden(message: str) -> ServiceError:
    return ServiceError("forbidden", message)


def not_found(message: str) -> ServiceError:
    return ServiceError("not-found", message)


def conflict(message: str) -> ServiceError:
    return ServiceError("conflict", message)


def busy() -> ServiceError:
    return ServiceError("busy", "the table is too busy right now; nothing was changed, try again")
