"""Every sheet and settings field states its size in its schema (and so in the sheet form), a
sheet past it is refused naming the field, and a sheet's quick rolls are built checking the
sheet once, not once per roll."""

from __future__ import annotations

from typing import Any

import pytest

from rules.engines import RuleError, get_system
from rules.engines.registry import system_ids
from rules.engines.schema import COLLECTIONS, Field


def every_field(fields: Any, prefix: str = "") -> list[tuple[str, Field]]:
    out = []
    for spec in fields:
        out.append((prefix + spec.name, spec))
        out += every_field(spec.fields, f"{prefix}{spec.name}.")
    return out


@pytest.mark.parametrize("system_id", system_ids())
def test_every_sheet_and_settings_field_states_its_size(system_id: str) -> None:
    system = get_system(system_id)
    for kind in ("sheet", "settings"):
        declared = every_field(getattr(system, f"{kind}_fields"))
        shown = {path: spec.as_json() for path, spec in declared}
        for path, spec in declared:
            where = f"{system_id} {kind}.{path}"
            assert spec.type != "json", f"{where}: free JSON has no size"
            if spec.type == "text":
                assert shown[path]["max_length"] == spec.max_length, where
            elif spec.type in COLLECTIONS:
                assert shown[path]["max_items"] == spec.max_items <= 500, where
            elif spec.type == "int":
                assert spec.choices or (spec.min is not None and spec.max is not None), where


def test_a_sheet_past_a_fields_count_is_refused_naming_it() -> None:
    discordian = get_system("discordian")
    tropes = {f"Trope {i}": 6 for i in range(51)}
    with pytest.raises(RuleError) as refused:
        discordian.validate_sheet({"tropes": tropes})
    assert refused.value.field == "sheet.tropes"
    assert "at most 50 entries, got 51" in str(refused.value)
    # Before anything else of it is read: 50,000 tropes are refused at once.
    with pytest.raises(RuleError):
        discordian.validate_sheet({"tropes": {f"T{i}": "x" for i in range(50_000)}})



@pytest.mark.parametrize(
    ("name", "why"),
    [("Blast\x00er", "may not contain NUL characters"), ("Blast\ud800er", "lone surrogate")],
)
def test_a_name_no_database_can_keep_is_refused_like_text(name: str, why: str) -> None:
    # PostgreSQL refuses NUL in a JSON key as in a value; a lone surrogate encodes nowhere.
    d6 = get_system("d6-chance")
    with pytest.raises(RuleError) as refused:
        d6.validate_sheet({"skills": {name: "4D"}})
    assert refused.value.field == "sheet.skills"
    assert why in str(refused.value)
    with pytest.raises(RuleError) as counted:
        get_system("discordian").validate_sheet({"tropes": {name: 6}})
    assert counted.value.field == "sheet.tropes"


SHEETS = {
    "discordian": {"tropes": {f"Trope {i}": 6 for i in range(40)}},
    "zoria": {"level": 3, "skills": {f"Skill {i}": 1 for i in range(40)}},
    "action-dice": {"skills": {f"Skill {i}": "+4d6" for i in range(40)}},
    "d6-chance": {"skills": {f"Skill {i}": "3D+1" for i in range(40)}},
    "roll-and-keep": {"attributes": {f"Trait {i}": 2 for i in range(40)}},
}


@pytest.mark.parametrize("system_id", sorted(SHEETS))
def test_quick_rolls_check_the_sheet_once(system_id: str, monkeypatch) -> None:
    system = get_system(system_id)
    checks = {"sheet": 0, "settings": 0}
    for kind in checks:
        original = getattr(system, f"validate_{kind}")

        def counted(value: Any, kind: str = kind, original: Any = original) -> Any:
            checks[kind] += 1
            return original(value)

        monkeypatch.setattr(system, f"validate_{kind}", counted)
    rolls = system.quick_rolls(SHEETS[system_id], {})
    assert len(rolls) >= 40
    assert checks == {"sheet": 1, "settings": 1}
