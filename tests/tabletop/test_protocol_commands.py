"""Commands in: every message type and JSON body is checked against its declaration at the
edge; whatever a client sends, it gets one clear answer and the table goes on."""

from __future__ import annotations

import inspect
import json
import types
import typing
from typing import Any

import pytest
from django.utils import translation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.engines import system_ids
from rules.engines.schema import Field
from tabletop.protocol.bodies import JOIN, ODDS, join_body, odds_query
from tabletop.protocol.commands import Command, Decoded, Refused
from tabletop.protocol.wire import commands, decode
from tabletop.services.errors import ServiceError
from tabletop.services.seats import join_session

SYSTEMS = tuple(system_ids())


def every_command() -> list[tuple[str, Command]]:
    """(system, command) for every message type every table takes."""
    return [(system, c) for system in SYSTEMS for c in commands(system).values()]


# --- the cases that once slipped through ---------------------------------------------------


def refused(raw: str, *, system: str = "generic", is_gm: bool = False) -> Refused:
    answer = decode(raw, system=system, is_gm=is_gm)
    assert isinstance(answer, Refused), answer
    return answer


def test_a_lone_surrogate_client_seed_is_invalid_naming_the_field():
    raw = '{"type": "roll", "ref": "r", "request": {"notation": "d6"}, "client_seed": "\\ud800"}'
    answer = refused(raw)
    assert (answer.ref, answer.code, answer.field) == ("r", "invalid", "client_seed")
    assert answer.message.startswith("Client seed: ")


@pytest.mark.parametrize(
    ("character", "why"),
    [("1e999", "finite"), ("1.5", "whole number"), ("NaN", "finite"), ("true", "whole number")],
)
def test_a_character_that_is_not_a_whole_number_is_invalid(character, why):
    raw = f'{{"type": "roll", "ref": 7, "request": {{"notation": "d6"}}, "character": {character}}}'
    answer = refused(raw)
    assert (answer.ref, answer.code, answer.field) == (7, "invalid", "character")
    assert why in answer.message


@pytest.mark.parametrize(
    ("system", "message", "field"),
    [
        ("generic", {"type": "roll", "request": {"notation": "d6"}, "opponent": 3}, "opponent"),
        ("zoria", {"type": "pool.spend", "effect": "insight", "visibility": "gm"}, "visibility"),
        ("generic", {"type": "reveal", "seq": 1, "seqs": [2]}, "seqs"),
        ("generic", {"type": "session.end", "now": True}, "now"),
    ],
)
def test_unknown_fields_are_invalid_naming_the_field(system, message, field):
    answer = refused(json.dumps({**message, "ref": "x"}), system=system, is_gm=True)
    assert (answer.ref, answer.code, answer.field) == ("x", "invalid", field)


def test_a_type_of_another_system_says_where_it_is_played():
    answer = refused('{"type": "pool.use", "ref": 1, "roll": 3}', system="generic")
    assert (answer.code, answer.field) == ("invalid", "type")
    assert "zoria" in answer.message


def test_gm_only_commands_refuse_players_before_anything_runs():
    answer = refused('{"type": "session.end", "ref": "e"}')
    assert (answer.ref, answer.code) == ("e", "forbidden")


GM_ONLY = [(system, c) for system, c in every_command() if c.gm_only]


@pytest.mark.parametrize(("system", "command"), GM_ONLY, ids=lambda v: getattr(v, "type", v))
@pytest.mark.parametrize(("language", "opening"), [("en", "only the GM "), ("de", "nur die SL ")])
def test_a_player_is_told_in_a_sentence_that_a_command_is_the_gms(
    system: str, command: Command, language: str, opening: str
) -> None:
    """Each of the GM's commands, refused to a player, reads as a sentence of the player's
    language: never a line of the protocol's tables (English, and no verb phrase: "a new
    round: ...", "the GM awards ...") put after "can"."""
    with translation.override(language):
        answer = refused(json.dumps({"type": command.type, "ref": "g"}), system=system)
    assert (answer.ref, answer.code) == ("g", "forbidden")
    assert answer.message.startswith(opening), answer.message
    assert command.doc not in answer.message
    for garbled in (" can the ", " can a ", "GM the GM", ": "):
        assert garbled not in answer.message, answer.message


def test_a_command_of_the_gms_cannot_be_declared_without_its_refusal() -> None:
    with pytest.raises(ValueError, match="probe"):
        Command("probe", (), lambda **_: None, "probe", gm_only=True)


def test_a_good_message_decodes_to_typed_values_with_defaults():
    answer = decode(
        '{"type": "roll", "ref": "r1", "request": {"notation": "d6"}, "character": 4.0}',
        system="generic",
        is_gm=False,
    )
    assert isinstance(answer, Decoded) and answer.ref == "r1"
    assert answer.values == {
        "request": {"notation": "d6"},
        "visibility": "public",
        "character": 4,
        "client_seed": "",
        "label": "",
        "turn_order": False,
    }


# --- JSON bodies -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"name": "An\\udc00a"}', "name"),
        ('{"name": "Ana", "character": 1e999}', "character"),
        ('{"name": "Ana", "character": 1.5}', "character"),
        ('{"name": "Ana", "team": "red"}', "team"),
        ('{"name": "   "}', "name"),
        ("{}", "name"),
    ],
)
def test_bad_join_bodies_are_invalid_naming_the_field(body, field):
    from tabletop.protocol.commands import parse_json

    with pytest.raises(ServiceError) as error:
        join_body(parse_json(body), form=False)
    assert (error.value.code, error.value.field) == ("invalid", field)


def test_a_form_join_reads_its_character_as_a_number():
    checked = join_body({"name": "Ana", "character": "12", "csrfmiddlewaretoken": "t"}, form=True)
    assert (checked.name, checked.character) == ("Ana", 12)
    assert join_body({"name": "Ana", "character": ""}, form=True).character is None


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"request": '{"notation": "\\ud800"}'}, "request.notation"),
        ({"request": "[1]"}, "request"),
        ({"request": "{"}, "request"),
        ({"system": "chess"}, "system"),
        ({"request": "{}", "page": "2"}, "page"),
    ],
)
def test_bad_odds_queries_are_invalid_naming_the_field(query, field):
    with pytest.raises(ServiceError) as error:
        odds_query(query)
    assert (error.value.code, error.value.field) == ("invalid", field)


# --- fuzz: anything a client can send gets one answer naming what is wrong -------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
LONE = st.sampled_from(["\ud800", "a\udfff", "\udbff\u0041"])
INFINITE = "__INFINITE__"  # replaced by 1e999 in the raw text, which Python's json cannot write


def wrong_value(spec: Field) -> st.SearchStrategy[Any]:
    """Values ``spec`` must refuse."""
    not_int = st.sampled_from([1.5, -0.25, "3", True, [], {}, INFINITE])
    out_of_range = st.sampled_from(
        [
            v
            for v in (
                None if spec.min is None else spec.min - 1,
                None if spec.max is None else spec.max + 1,
            )
            if v is not None
        ]
        or [1.5]
    )
    if spec.type == "int":
        return not_int | out_of_range | (st.just(None) if not spec.nullable else not_int)
    if spec.type == "text":
        return st.sampled_from([3, True, [], {}]) | LONE | st.just("x" * (spec.max_length + 1))
    if spec.type == "choice":
        return st.sampled_from(["no-such-choice", 12, [], None if not spec.nullable else True])
    if spec.type == "bool":
        return st.sampled_from([1, "yes", [], None if not spec.nullable else 0])
    if spec.type in ("json", "object", "map", "counts"):
        return st.sampled_from([[], "x", 3, None if not spec.nullable else 1.5])
    if spec.type in ("list", "dice"):
        return st.sampled_from([{}, "x", 3])
    return st.just(LONE)


@st.composite
def bad_message(draw: st.DrawFn) -> tuple[str, bool, str, str]:
    """(system, as GM, ref, raw text) of a message its table must refuse."""
    system, command = draw(st.sampled_from(every_command()))
    ref = f"m{draw(st.integers(0, 10**6))}"
    body: dict[str, Any] = {"type": command.type, "ref": ref}
    for spec in command.fields:  # a plausible message first
        if spec.required:
            body[spec.name] = {"int": 1, "json": {}, "text": "x"}.get(
                spec.type, (spec.choices or ["x"])[0]
            )
    how = draw(st.sampled_from(["unknown", "wrong", "missing", "junk-in-depth"]))
    wrong = [f for f in command.fields if f.type != "json"] or list(command.fields)
    required = [f for f in command.fields if f.required]
    if how == "wrong" and wrong:
        spec = draw(st.sampled_from(wrong))
        body[spec.name] = draw(wrong_value(spec))
    elif how == "missing" and required:
        del body[draw(st.sampled_from(required)).name]
    elif how == "junk-in-depth" and any(f.type == "json" for f in command.fields):
        name = next(f.name for f in command.fields if f.type == "json")
        body[name] = {"a": [draw(LONE)]}
    else:
        names = {f.name for f in command.fields} | {"type", "ref"}
        extra = draw(st.text(min_size=1, max_size=12).filter(lambda n: n not in names))
        body[extra] = draw(JSON_VALUES)
    raw = json.dumps(body).replace(f'"{INFINITE}"', "1e999")
    return system, True, ref, raw  # (as the GM, so the fields of GM-only types are reached)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bad_message())
def test_every_bad_message_is_refused_with_its_ref_before_anything_runs(case):
    system, as_gm, ref, raw = case
    answer = decode(raw, system=system, is_gm=as_gm)
    assert isinstance(answer, Refused), (raw, answer)
    assert answer.ref == ref and answer.code == "invalid" and answer.field, answer
    assert answer.message and "request." not in answer.message.split(":")[0]
    json.dumps(answer.as_message(), ensure_ascii=False).encode()  # it can be sent


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SYSTEMS), st.one_of(st.text(max_size=40), JSON_VALUES.map(json.dumps)))
def test_any_text_at_all_gets_an_answer_and_never_an_exception(system, raw):
    answer = decode(raw, system=system, is_gm=True)
    assert isinstance(answer, (Decoded, Refused))


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["name", "character", "x", "\ud800"]), JSON_VALUES, max_size=3)
)
def test_any_join_body_is_checked_or_refused_naming_a_field(body):
    try:
        checked = join_body(body, form=False)
    except ServiceError as exc:
        assert exc.code == "invalid" and exc.field
    else:
        assert isinstance(checked.name, str) and 1 <= len(checked.name.strip()) <= 40
        assert checked.character is None or isinstance(checked.character, int)


def test_the_declarations_are_complete():
    """Every declared field has a type the checks know, and every body and command a doc."""
    known = {
        "int",
        "bool",
        "choice",
        "text",
        "die",
        "dice",
        "counts",
        "object",
        "map",
        "json",
        "list",
    }
    for _system, command in every_command():
        assert command.doc and all(f.type in known for f in command.fields), command.type
    for body in (JOIN, ODDS):
        assert body.doc and all(f.type in known for f in body.fields)


def collect(strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    """``n`` examples of ``strategy``, the same on every run."""
    found: list[Any] = []

    @settings(
        max_examples=n, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(strategy)
    def draw(example: Any) -> None:
        found.append(example)

    draw()
    return found[:n]


@pytest.mark.django_db
def test_json_endpoints_answer_bad_bodies_with_a_4xx_naming_the_field(client, live_session):
    code = live_session.invite_code
    bad = st.dictionaries(
        st.sampled_from(["name", "character", "seat", "\ud800"]), JSON_VALUES, max_size=3
    )
    bodies = [
        *collect(bad.map(json.dumps), 60),
        '{"name": "Ana", "character": 1e999}',
        '{"name": "\\udc00"}',
        "[]",
        "{",
        '"x"',
    ]
    for body in bodies:
        response = client.post(f"/play/{code}/join", body, content_type="application/json")
        assert response.status_code < 500, body
        if response.status_code != 200:
            error = response.json()["error"]
            assert error["code"] in {"invalid", "forbidden", "conflict", "rate-limited"}, body
        client.cookies.clear()
    token = join_session(session=live_session, name="Odds").token
    for query in ['{"notation": "\\ud800"}', "[", "1e999", '{"notation": 1e999}', "NaN"]:
        response = client.get(f"/play/{code}/odds", {"request": query, "token": token})
        assert response.status_code == 400, query
        assert response.json()["error"]["code"] == "invalid"


def test_no_table_takes_one_field_or_one_type_twice():
    """A system's roll options and commands never shadow the core's: a name taken twice would
    hand one of them the other's value."""
    for system in SYSTEMS:
        for command in commands(system).values():
            names = [f.name for f in command.fields]
            assert len(names) == len(set(names)), (system, command.type, names)
        from tabletop.protocol.core import CORE
        from tabletop.systems import registry

        own = {c.type for c in registry.commands_for(system)}
        assert not own & {c.type for c in CORE}, (system, own)


# --- handlers take what their declarations say ------------------------------------------------


def members(annotation: Any) -> set[Any]:
    """The types a value of ``annotation`` may have (a union's members, or itself)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set(typing.get_args(annotation))
    return {annotation}


def disagreements(command: Command) -> list[str]:
    """Where a command's handler does not take what it is handed (its declaration's checked
    values, or its precheck's answer when it has one), nor its precheck the checked values."""
    if command.precheck is None:
        return takes(command.handler, command.values_type, given=("uow", "seat_id"))
    answered = typing.get_type_hints(command.precheck)["return"]  # a TypedDict
    checked = takes(command.precheck, command.values_type, given=("table",))
    return [f"precheck: {d}" for d in checked] + takes(
        command.handler, answered, given=("uow", "seat_id")
    )


def takes(handler: Any, values: Any, *, given: tuple[str, ...]) -> list[str]:
    """Where ``handler`` does not take ``values`` (a TypedDict): each key a keyword argument
    whose type takes every value the key may hold, with a default where the key may be
    absent, and no other argument it must be given besides ``given``."""
    parameters = inspect.signature(handler).parameters
    hints = typing.get_type_hints(getattr(handler, "func", handler))  # (a partial: its function)
    rest = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    out = []
    for name, value in typing.get_type_hints(values).items():
        given_always = name in values.__required_keys__
        parameter = parameters.get(name)
        if parameter is None:
            if not rest:
                out.append(f"{name}: not an argument of the handler")
            continue
        if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
            out.append(f"{name}: not keyword-only")
        taken = members(hints.get(name, Any))
        if Any not in taken and not members(value) <= taken:
            out.append(f"{name}: the handler takes {hints.get(name)}, the check gives {value}")
        if not given_always and parameter.default is inspect.Parameter.empty:
            out.append(f"{name}: may be absent, and the handler has no default")
    for name, parameter in parameters.items():
        declared = name in values.__annotations__ or name in given
        must = parameter.default is inspect.Parameter.empty and parameter.kind in (
            inspect.Parameter.KEYWORD_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        )
        if must and not declared:
            out.append(f"{name}: the handler needs it and the declaration has no such field")
    return out


@pytest.mark.parametrize(
    ("system", "command"), every_command(), ids=lambda v: getattr(v, "type", v)
)
def test_every_handler_takes_its_declared_values(system: str, command: Command) -> None:
    assert disagreements(command) == []


def test_a_handler_that_disagrees_with_its_declaration_is_found() -> None:
    def handler(*, uow: Any, seat_id: int, seq: str, extra: int) -> None: ...

    command = Command(
        "probe",
        (Field("seq", "int", required=True), Field("count", "int", nullable=True)),
        handler,
        "probe",
    )
    assert disagreements(command) == [
        "seq: the handler takes <class 'str'>, the check gives <class 'int'>",
        "count: not an argument of the handler",
        "extra: the handler needs it and the declaration has no such field",
    ]
