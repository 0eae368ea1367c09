"""Field schemas: one description per request, sheet and campaign setting.

A system declares its fields once; ``validate`` checks data against them (naming the field
that is wrong and why), and the table builds its forms from ``as_json``, which states every
field's size (``max_length`` of text, ``max_items`` of the types that hold many values). Types:

- ``int``: ``min``/``max`` inclusive; bools are refused.
- ``bool``
- ``choice``: one of ``choices`` (strings or ints).
- ``text``: a string of ``min_length`` to ``max_length`` characters that encodes as UTF-8 (no
  lone surrogates) and holds no NUL.
- ``list``: a list of at most ``max_items`` values, each checked against the one field in
  ``fields``.
- ``json``: any JSON object, checked later by a schema of its own (an engine's request).
- ``die``: ``"dN"`` with N in ``choices`` when given.
- ``dice``: a list of dice (``max_items``, ``choices``).
- ``counts``: a mapping from names in ``choices`` (or any short name) to ints in ``min``..``max``
  (``max_items`` entries at most).
- ``object``: nested ``fields``.
- ``map``: a mapping from short names (in ``choices`` when given) to values each checked
  against the one field in ``fields`` (``max_items`` entries at most).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .dice import parse_die
from .errors import RuleError

_MISSING = object()
# The field types that hold many values: each has ``max_items``.
COLLECTIONS = frozenset({"list", "dice", "counts", "map"})


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    label: str = ""
    help: str = ""
    default: Any = _MISSING
    required: bool = False
    nullable: bool = False
    min: int | None = None
    max: int | None = None
    choices: Sequence[Any] | None = None
    max_length: int = 200
    min_length: int = 0
    max_items: int = 1000
    fields: Sequence[Field] = field(default_factory=tuple)

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "label": self.label or self.name,
        }
        if self.help:
            out["help"] = self.help
        if self.has_default:
            out["default"] = self.default
        for key in ("min", "max", "choices"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if key == "choices" else value
        # Every field's size is part of its declaration, and forms show it.
        if self.type == "text":
            out["max_length"] = self.max_length
        elif self.type in COLLECTIONS:
            out["max_items"] = self.max_items
        if self.required:
            out["required"] = True
        if self.nullable:
            out["nullable"] = True
        if self.type in ("object", "map", "list"):
            out["fields"] = [f.as_json() for f in self.fields]
        return out


def as_json(fields: Sequence[Field]) -> list[dict[str, Any]]:
    return [f.as_json() for f in fields]


def _path(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def whole_number(
    value: object, where: str, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """``value`` if it is a whole number (not a bool) within ``minimum``..``maximum``, else a
    RuleError naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleError(where, f"expected a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        raise RuleError(where, f"must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise RuleError(where, f"must be at most {maximum}, got {value}")
    return value


def encodes(text: str) -> bool:
    """Whether ``text`` is real text: JSON lets a lone surrogate through (``"\\ud800"``), but
    no database, file or socket can carry it as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _int(value: Any, where: str, spec: Field) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # a whole float such as 3.0 counts as 3
    return whole_number(value, where, minimum=spec.min, maximum=spec.max)


def _value(spec: Field, value: Any, where: str) -> Any:
    if value is None:
        if spec.nullable:
            return None
        raise RuleError(where, "may not be null")
    check = _CHECKS.get(spec.type)
    if check is None:
        raise AssertionError(f"unknown field type {spec.type}")
    return check(spec, value, where)


def _check_int(spec: Field, value: Any, where: str) -> int:
    number = _int(value, where, spec)
    if spec.choices is not None and number not in spec.choices:
        raise RuleError(where, f"must be one of {list(spec.choices)}, got {number}")
    return number


def _check_bool(spec: Field, value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise RuleError(where, f"expected true or false, got {value!r}")
    return value


def _check_choice(spec: Field, value: Any, where: str) -> Any:
    if value not in (spec.choices or ()):
        raise RuleError(where, f"must be one of {list(spec.choices or ())}, got {value!r}")
    return value


def unstorable(text: str) -> str | None:
    """Why ``text`` cannot be kept, or None: PostgreSQL refuses NUL in text and in JSON (key or
    value), and a lone surrogate encodes nowhere. Every text the table keeps is held to it."""
    if "\x00" in text:
        return "may not contain NUL characters"
    if not encodes(text):
        return "is not valid text (it holds a lone surrogate)"
    return None


def _check_text(spec: Field, value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise RuleError(where, f"expected text, got {value!r}")
    problem = unstorable(value)
    if problem is not None:
        raise RuleError(where, problem)
    if len(value) > spec.max_length:
        raise RuleError(where, f"at most {spec.max_length} characters, got {len(value)}")
    if len(value.strip()) < spec.min_length:
        raise RuleError(where, f"needs at least {spec.min_length} characters besides spaces")
    return value


def _check_list(spec: Field, value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise RuleError(where, f"expected a list, got {value!r}")
    if len(value) > spec.max_items:
        raise RuleError(where, f"at most {spec.max_items} items, got {len(value)}")
    return [_value(spec.fields[0], item, f"{where}.{i}") for i, item in enumerate(value)]


def _check_json(spec: Field, value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RuleError(where, f"expected an object, got {value!r}")
    return value


def _die(spec: Field, value: Any, where: str) -> str:
    choices = spec.choices
    sides = parse_die(
        value, field=where, allowed=None if choices is None else lambda n: f"d{n}" in choices
    )
    return f"d{sides}"


def _check_dice(spec: Field, value: Any, where: str) -> list[str]:
    if not isinstance(value, list):
        raise RuleError(where, f"expected a list of dice like ['d6', 'd8'], got {value!r}")
    if len(value) > spec.max_items:
        raise RuleError(where, f"at most {spec.max_items} dice, got {len(value)}")
    return [_die(spec, item, f"{where}.{i}") for i, item in enumerate(value)]


def _name(spec: Field, key: Any, where: str) -> str:
    """A key of a ``counts`` or ``map``: short text that ``text`` would take (no NUL, no lone
    surrogate), among ``choices`` when given."""
    if not isinstance(key, str) or not key or len(key) > 60:
        raise RuleError(where, f"names must be short text, got {key!r}")
    problem = unstorable(key)
    if problem is not None:
        # The field is the mapping's own path: one ending in this name could not be sent
        # or kept either (the name shows escaped, in quotes).
        raise RuleError(where, f"the name {key!r} {problem}")
    if spec.choices is not None and key not in spec.choices:
        raise RuleError(f"{where}.{key}", f"unknown name; expected one of {list(spec.choices)}")
    return key


def _check_counts(spec: Field, value: Any, where: str) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise RuleError(where, f"expected a mapping of names to numbers, got {value!r}")
    if len(value) > spec.max_items:
        raise RuleError(where, f"at most {spec.max_items} entries, got {len(value)}")
    return {_name(spec, key, where): _int(n, f"{where}.{key}", spec) for key, n in value.items()}


def _check_object(spec: Field, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise RuleError(where, f"expected an object, got {value!r}")
    return validate(spec.fields, value, prefix=where)


def _check_map(spec: Field, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise RuleError(where, f"expected a mapping of names to values, got {value!r}")
    if len(value) > spec.max_items:
        raise RuleError(where, f"at most {spec.max_items} entries, got {len(value)}")
    return {
        _name(spec, key, where): _value(spec.fields[0], item, f"{where}.{key}")
        for key, item in value.items()
    }


# Each field type's check (the types the module docstring lists).
_CHECKS: dict[str, Callable[[Field, Any, str], Any]] = {
    "int": _check_int,
    "bool": _check_bool,
    "choice": _check_choice,
    "text": _check_text,
    "list": _check_list,
    "json": _check_json,
    "die": _die,
    "dice": _check_dice,
    "counts": _check_counts,
    "object": _check_object,
    "map": _check_map,
}


def validate(
    fields: Sequence[Field], data: Any, *, prefix: str = "", allow_unknown: bool = False
) -> dict[str, Any]:
    """Check ``data`` against ``fields``; return it normalised with defaults filled in."""
    if not isinstance(data, Mapping):
        raise RuleError(prefix or "request", f"expected a JSON object, got {type(data).__name__}")
    known = {f.name for f in fields}
    if not allow_unknown:
        for key in data:
            if key not in known:
                where = _path(prefix, str(key)) if str(key).strip() else (prefix or "request")
                expected = f"expected one of {sorted(known)}" if known else "it takes none"
                raise RuleError(where, f"unknown field {key!r}; {expected}")
    out: dict[str, Any] = {}
    for spec in fields:
        where = _path(prefix, spec.name)
        if spec.name in data:
            out[spec.name] = _value(spec, data[spec.name], where)
        elif spec.required:
            raise RuleError(where, "is required")
        elif spec.has_default:
            out[spec.name] = spec.default
    return out
