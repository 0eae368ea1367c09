"""The one error every engine raises for input it cannot take."""


class RuleError(Exception):
    """A request, sheet or setting that breaks a rule or a limit.

    ``field`` is a dotted path into the request (``"pool.2"``, ``"opponent.tn"``), so the
    command line, the socket and the admin can all say which field is wrong and why.
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "reason": self.reason}


class OddsTooLarge(RuleError):
    """A valid request whose exact odds are past the documented size cap."""
