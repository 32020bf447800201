"""The client's own UI tools: their definitions, the calls they accept, and the answers they send."""

from __future__ import annotations

import json
import time

import jsonschema
import pytest

from agents_ui.sdk.agui.client_tools import (
    CLIENT_TOOLS,
    MAX_FORM_FIELDS,
    client_tool,
    form_fields,
    other_answer,
    read_answer,
    schema_problem,
)
from agents_ui.sdk.schema import TOO_COMPLEX
from tests.support.client_tool_agent import CALLS, FORM_SCHEMA


def test_each_tool_has_a_name_a_description_and_a_valid_schema_of_an_object():
    assert [tool.name for tool in CLIENT_TOOLS] == ["ask_user", "request_form", "confirm", "choose"]
    for tool in CLIENT_TOOLS:
        assert len(tool.description) > 80 and "result" in tool.description
        jsonschema.Draft202012Validator.check_schema(tool.parameters)
        assert tool.parameters["type"] == "object" and tool.parameters["required"]
        assert tool.model_dump(by_alias=True)["parameters"] == tool.parameters


@pytest.mark.parametrize("key", ["ask", "form", "confirm", "choose"])
def test_a_call_that_fits_its_tool_is_a_card(key):
    name, args = CALLS[key]
    assert client_tool(name, args).name == name


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("ask_user", {}),  # no question
        ("ask_user", {"question": "x", "html": "<b>"}),  # a property the tool does not have
        ("confirm", {"summary": 3}),
        ("choose", {"question": "Which?", "options": []}),
        (
            "request_form",
            {"title": "T", "schema": {"type": "object", "properties": {"a": {"type": "array"}}}},
        ),
        ("request_form", {"title": "T", "schema": {"type": "string"}}),
        ("generate_task_steps", {"steps": []}),
    ],
)
def test_a_call_that_does_not_fit_is_answered_as_any_other(name, args):
    assert client_tool(name, args) is None


def test_a_form_is_drawn_from_its_schema():
    fields = form_fields(FORM_SCHEMA)
    assert [(f.path, f.kind, f.required) for f in fields] == [
        (("name",), "text", True),
        (("guests",), "integer", True),
        (("diet",), "enum", False),
        (("terrace",), "boolean", False),
    ]
    assert fields[0].label == "Name on the booking"
    assert [label for _, label in fields[2].options] == ["none", "vegetarian", "vegan"]


def test_a_nested_object_is_a_group_and_nesting_is_bounded():
    nested = {
        "type": "object",
        "properties": {"where": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    assert [(f.path, f.kind) for f in form_fields(nested)] == [
        (("where",), "group"),
        (("where", "city"), "text"),
    ]
    deep: dict = {"type": "string"}
    for _ in range(4):
        deep = {"type": "object", "properties": {"x": deep}}
    assert form_fields(deep) is None


def test_a_form_schema_is_bounded_in_size_and_fields():
    many = {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(MAX_FORM_FIELDS + 1)}}
    assert form_fields(many) is None
    huge = {"type": "object", "properties": {"a": {"type": "string", "description": "x" * 20_000}}}
    assert form_fields(huge) is None
    assert "large" in schema_problem({}, huge)


def test_a_form_answer_is_read_typed_and_checked_against_its_schema():
    call = client_tool(*CALLS["form"])
    fields = {f.path[0]: f.name for f in call.fields}
    answer, problem = read_answer(
        call,
        {fields["name"]: "Ada", fields["guests"]: "4", fields["diet"]: '"vegan"', fields["terrace"]: "true"},
    )
    assert problem == ""
    assert answer == {"name": "Ada", "guests": 4, "diet": "vegan", "terrace": True}
    _, problem = read_answer(call, {fields["name"]: "Ada", fields["guests"]: "40"})
    assert "guests" in problem and "40" in problem
    _, problem = read_answer(call, {fields["name"]: "Ada", fields["guests"]: "four"})
    assert "Guests: not a whole number" in problem
    _, problem = read_answer(call, {fields["guests"]: "2"})
    assert "name" in problem


def test_a_schema_pattern_is_checked_in_bounded_time_and_a_remote_reference_is_never_fetched():
    started = time.monotonic()
    problem = schema_problem("a" * 40 + "!", {"type": "string", "pattern": "^(a+)+$"})
    assert time.monotonic() - started < 3 and ("does not match" in problem or problem == TOO_COMPLEX)
    assert "does not match" in schema_problem("b", {"type": "string", "pattern": "^a$"})
    assert "outside itself" in schema_problem({}, {"$ref": "https://example.test/schema.json"})


def test_the_simple_tools_answer_in_their_documented_shape():
    assert read_answer(client_tool(*CALLS["ask"]), {"answer": " Porto "}) == ({"answer": "Porto"}, "")
    assert read_answer(client_tool(*CALLS["ask"]), {"suggestion": "Paris", "answer": ""}) == (
        {"answer": "Paris"},
        "",
    )
    assert read_answer(client_tool(*CALLS["ask"]), {"answer": ""})[1]
    assert read_answer(client_tool(*CALLS["confirm"]), {"confirmed": "false"}) == ({"confirmed": False}, "")
    assert read_answer(client_tool(*CALLS["confirm"]), {})[1] == "Choose yes or no."
    assert read_answer(client_tool(*CALLS["choose"]), {"choice": "hall"}) == ({"choice": "hall"}, "")
    assert read_answer(client_tool(*CALLS["choose"]), {"choice": "roof"})[1] == "Choose one of the options."


def test_an_answer_to_an_unknown_call_is_checked_json_or_text_as_written():
    assert other_answer('{"confirmed": true, "steps": []}', True) == ('{"confirmed": true, "steps": []}', "")
    assert other_answer("{not json", True)[1].startswith("The answer is not valid JSON")
    assert other_answer("  Looks good.  ", False) == ("Looks good.", "")
    assert other_answer("", False)[1]
    assert other_answer("x" * 70_000, False)[1] == "The answer is too long."
    assert other_answer("[" * 40 + "]" * 40, True)[1] == "The answer nests too deeply."
    assert json.loads(other_answer('"ü"', True)[0]) == "ü"
