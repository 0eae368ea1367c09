"""The JSON bodies of the table's HTTP endpoints, declared like the socket's commands and
checked at the edge (the view) before any service runs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from rules.engines import system_ids
from rules.engines.schema import Field

from ..services.errors import invalid
from .commands import ID, check_fields, parse_json


@dataclass(frozen=True)
class Body:
    """An endpoint's body (or query), field by field, with one line for docs/protocol.md."""

    endpoint: str
    fields: tuple[Field, ...]
    doc: str


JOIN = Body(
    "POST /play/<code>/join",
    (
        Field("name", "text", label="Name", required=True, min_length=1, max_length=40),
        Field("character", "int", label="Character", nullable=True, help="a character id", **ID),
    ),
    "sit down at the table (form or JSON)",
)

ODDS = Body(
    "GET /play/<code>/odds",
    (
        Field("system", "choice", label="System", choices=tuple(sorted(system_ids()))),
        Field("request", "text", label="Request", max_length=8192, help="the request, as JSON"),
        Field("token", "text", label="Token", max_length=200, help="a bot's seat token"),
        Field(
            "check",
            "choice",
            label="Check",
            choices=("1",),
            help='1: a refused request answers 200 with "ok": false (checking as one types)',
        ),
    ),
    "exact odds of a request before it is rolled (query parameters)",
)

_ROLL_FIELDS = (
    Field("label", "text", label="Name", required=True, min_length=1, max_length=60),
    Field(
        "system",
        "text",
        label="System",
        default="",
        nullable=True,
        max_length=40,
        help="the table's system or generic; empty for the table's",
    ),
    Field("request", "json", label="Request", required=True, help="the roll's request"),
)

SAVED_ROLL = Body(
    "POST /play/<code>/saved",
    (
        Field(
            "character",
            "int",
            label="Character",
            nullable=True,
            help="null: the seat's own (a player with no character)",
            **ID,
        ),
        *_ROLL_FIELDS,
    ),
    "keep a named roll for a character the seat acts for, or for a seat without one (JSON)",
)

SAVED_ROLL_CHANGE = Body(
    "POST /play/<code>/saved/<id>",
    (
        _ROLL_FIELDS[0],
        Field("system", "text", label="System", nullable=True, default=None, max_length=40),
        Field(
            "request",
            "json",
            label="Request",
            nullable=True,
            default=None,
            help="what it rolls now; leave out to keep it",
        ),
    ),
    "rename a saved roll, or change what it rolls (JSON; DELETE forgets it)",
)

# A sheet's or the settings' whole body, as JSON: each field has its own limit in the system's
# schema, and this bounds what is read before they are checked.
SHEET_BYTES = 64 * 1024
# Any other body the room's endpoints read (a name to sit down with, a saved roll): far past
# what their fields may hold, and refused from its length before it is read.
BODY_BYTES = 16 * 1024

SHEET = Body(
    "POST /play/<code>/sheet/<character id>",
    (
        Field(
            "sheet",
            "json",
            label="Sheet",
            required=True,
            help="checked against the system; the body at most 64 KiB",
        ),
    ),
    "a character's sheet, by its player or the GM (JSON)",
)

SETTINGS = Body(
    "POST /play/<code>/settings",
    (
        Field(
            "settings",
            "json",
            label="Settings",
            required=True,
            help="checked against the system; the body at most 64 KiB",
        ),
    ),
    "the campaign's settings, by the GM (JSON)",
)

BODIES: tuple[Body, ...] = (JOIN, ODDS, SAVED_ROLL, SAVED_ROLL_CHANGE, SHEET, SETTINGS)


def json_body(body: Body, data: Any) -> dict[str, Any]:
    """A JSON endpoint's body checked against its declaration, defaults filled in."""
    if not isinstance(data, Mapping):
        raise invalid(_("expected a JSON object"))
    return check_fields(body.fields, data)


@dataclass(frozen=True)
class SavedRollBody:
    """A saved roll as a body gives it, checked: ``system`` None or empty for the table's own;
    ``request`` None (a change's) keeps what it rolls."""

    label: str
    system: str | None
    request: Mapping[str, Any] | None
    character: int | None = None


def saved_roll_body(data: Any, *, change: bool = False) -> SavedRollBody:
    """A saved roll's body (a new one, or with ``change`` a change to one), checked."""
    values = json_body(SAVED_ROLL_CHANGE if change else SAVED_ROLL, data)
    return SavedRollBody(
        label=values["label"],
        system=values["system"],
        request=values["request"],
        character=values.get("character"),
    )


def sheet_body(data: Any) -> Mapping[str, Any]:
    """A sheet's body, checked: the sheet, an object (the system's schema checks its fields)."""
    sheet: Mapping[str, Any] = json_body(SHEET, data)["sheet"]
    return sheet


def settings_body(data: Any) -> Mapping[str, Any]:
    """The settings' body, checked: an object (the system's schema checks its fields)."""
    settings: Mapping[str, Any] = json_body(SETTINGS, data)["settings"]
    return settings


@dataclass(frozen=True)
class JoinBody:
    name: str
    character: int | None


def join_body(data: Mapping[str, Any], *, form: bool) -> JoinBody:
    """A join, JSON or form, checked. A form's values are text: an empty character is none,
    and a number is read as one; its CSRF token is the form's own business."""
    body = dict(data)
    if form:
        body.pop("csrfmiddlewaretoken", None)
        character = body.get("character")
        if character in ("", None):
            body.pop("character", None)
        elif (
            isinstance(character, str)
            and character.strip().isascii()
            and character.strip().isdigit()
        ):
            body["character"] = int(character)
    values = check_fields(JOIN.fields, body)
    return JoinBody(name=values["name"], character=values.get("character"))


@dataclass(frozen=True)
class OddsQuery:
    system: str | None
    request: dict[str, Any]
    check: bool = False  # a refusal of the request answers 200 with "ok": false


def odds_query(params: Mapping[str, Any]) -> OddsQuery:
    """The odds endpoint's query parameters, checked; ``request`` parsed as a JSON object."""
    # (an empty system is the table's own)
    values = check_fields(
        ODDS.fields, {k: v for k, v in params.items() if v != "" or k != "system"}
    )
    try:
        request = parse_json(values.get("request") or "{}")
    except ValueError:
        raise invalid(_("not JSON"), field="request") from None
    if not isinstance(request, dict):
        raise invalid(_("expected a JSON object"), field="request")
    request = check_fields((Field("request", "json"),), {"request": request})["request"]
    return OddsQuery(
        system=values.get("system") or None, request=request, check=values.get("check") == "1"
    )
