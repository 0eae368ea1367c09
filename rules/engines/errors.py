"""The one error every engine raises for input it cannot take."""

from __future__ import annotations

# What the table answers with (its socket's ``error`` code): a request it cannot take at all,
# or one it could take but that is past a size limit (too many dice listed, odds too large).
INVALID = "invalid"
TOO_LARGE = "too-large"


class RuleError(Exception):
    """A request, sheet or setting that breaks a rule or a limit.

    ``field`` is a dotted path into the request (``"pool.2"``, ``"opponent.tn"``), so the
    command line, the socket and the admin can all say which field is wrong and why. ``code``
    is ``"invalid"``, or ``"too-large"`` for a valid request past a size limit.
    """

    code: str = INVALID

    def __init__(self, field: str, reason: str, *, code: str | None = None) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
        if code is not None:
            self.code = code

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "reason": self.reason}


class OddsTooLarge(RuleError):
    """A valid request whose exact odds are past the documented size cap (or the caller's
    budget)."""

    code = TOO_LARGE
