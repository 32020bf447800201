"""Agent-supplied JSON Schemas: nothing fetched, nothing read, bounded in size, patterns and time."""

from __future__ import annotations

import asyncio
import socket
import time

import jsonschema
import pytest

from agents_ui.sdk import validate_against, validate_against_async
from agents_ui.sdk.errors import validation_problem
from agents_ui.sdk.limits import MAX_JSON_DEPTH, MAX_SCHEMA_NODES, MAX_VALUE_NODES
from agents_ui.sdk.schema import TOO_COMPLEX

# Backtracks without end in a backtracking engine: each extra "a" nearly doubles the work.
CATASTROPHIC = "^(a|aa)+$"
HOSTILE_TEXT = "a" * 60 + "!"
# Far above what any check below needs, so a slow machine never fails them; the point is that they return.
GENEROUS = 15.0


@pytest.fixture
def listener():
    """A socket that accepts connections (the kernel queues them) without ever answering."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server


def connections(server: socket.socket) -> int:
    server.setblocking(False)
    count = 0
    while True:
        try:
            client, _ = server.accept()
        except BlockingIOError:
            return count
        client.close()
        count += 1


def test_a_valid_answer_passes_and_an_invalid_one_says_where_and_why():
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "pattern": "^[A-Z]"}, "days": {"type": "integer"}},
        "required": ["city"],
    }
    assert validate_against({"city": "Oslo", "days": 3}, schema) == []
    assert validate_against({"city": "oslo", "days": "x"}, schema) == [
        "city: 'oslo' does not match '^[A-Z]'",
        "days: 'x' is not of type 'integer'",
    ]
    assert validate_against({}, schema) == ["'city' is a required property"]


async def test_a_remote_reference_is_never_fetched(listener):
    host, port = listener.getsockname()
    for schema in (
        {"$ref": f"http://{host}:{port}/schema.json"},
        {"properties": {"a": {"$ref": f"http://{host}:{port}/a.json#/x"}}},
        # A relative reference resolved against an $id the agent chose.
        {"$id": f"http://{host}:{port}/root.json", "$ref": "other.json"},
    ):
        problems = await validate_against_async({"a": 1}, schema)
        assert len(problems) == 1 and "never fetched" in problems[0], problems
    assert connections(listener) == 0


def test_a_file_reference_is_never_read(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "string", "description": "TOP-SECRET-CONTENT"}')
    for ref in (secret.as_uri(), "file:///etc/passwd"):
        problems = validate_against(1, {"$ref": ref})
        assert problems == [
            f"The agent's schema refers to {ref!r}, outside itself; such references are never fetched, "
            "so the answer cannot be checked."
        ]
    assert "TOP-SECRET" not in " ".join(validate_against(1, {"properties": {"a": {"$ref": secret.as_uri()}}}))


def test_references_inside_the_schema_are_followed():
    schema = {
        "$defs": {"day": {"type": "integer", "minimum": 1}},
        "properties": {"days": {"$ref": "#/$defs/day"}, "more": {"$ref": "#/$defs/missing"}},
    }
    assert validate_against({"days": 0}, schema) == ["days: 0 is less than the minimum of 1"]
    assert validate_against({"more": 1}, schema) == [
        "The agent's schema refers to '#/$defs/missing', which it does not contain."
    ]
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"s": {"type": "string"}},
        "properties": {"x": {"$ref": "#/definitions/s"}},
    }
    assert validate_against({"x": 1}, draft7) == ["x: 1 is not of type 'string'"]


@pytest.mark.parametrize(
    "schema",
    [
        {"pattern": CATASTROPHIC},
        {"properties": {"a": {"pattern": CATASTROPHIC}}},
        {"propertyNames": {"pattern": CATASTROPHIC}},
        {"patternProperties": {CATASTROPHIC: {}}},
        {"patternProperties": {CATASTROPHIC: {}}, "additionalProperties": False},
        {"patternProperties": {CATASTROPHIC: {}}, "unevaluatedProperties": False},
        {"$schema": "http://json-schema.org/draft-07/schema#", "patternProperties": {CATASTROPHIC: {}}},
        {
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "patternProperties": {CATASTROPHIC: {}},
            "unevaluatedProperties": False,
        },
    ],
)
def test_a_catastrophic_pattern_returns_too_complex(schema):
    value = HOSTILE_TEXT if "pattern" in schema else {"a": HOSTILE_TEXT, HOSTILE_TEXT: 1}
    start = time.monotonic()
    assert validate_against(value, schema, time_limit=0.3) == [TOO_COMPLEX]
    assert time.monotonic() - start < GENEROUS


def multiplying_schema(levels: int = 40) -> dict:
    """Each level refers twice to the next: 2**levels checks from a schema of a few hundred bytes."""
    defs = {f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(levels)}
    return {"$defs": {**defs, f"d{levels}": {"type": "object"}}, "$ref": "#/$defs/d0"}


def test_a_schema_whose_references_multiply_the_work_returns_too_complex():
    start = time.monotonic()
    assert validate_against({}, multiplying_schema(), time_limit=0.3) == [TOO_COMPLEX]
    assert time.monotonic() - start < GENEROUS
    # A reference to itself without end.
    assert validate_against({}, {"$ref": "#"}) == [TOO_COMPLEX]
    # ... even when the root names its draft (a reference to the root must not leave the bounds).
    endless = {"$schema": "https://json-schema.org/draft/2020-12/schema", "allOf": [{"$ref": "#"}] * 2}
    assert validate_against({}, endless, time_limit=0.3) == [TOO_COMPLEX]


async def test_the_event_loop_keeps_serving_while_hostile_schemas_are_checked():
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    try:
        problems = await asyncio.gather(
            validate_against_async({}, multiplying_schema(), time_limit=1.0),
            validate_against_async(HOSTILE_TEXT, {"pattern": CATASTROPHIC}, time_limit=1.0),
        )
    finally:
        ticking.cancel()
    assert problems == [[TOO_COMPLEX], [TOO_COMPLEX]]
    assert len(gaps) > 20
    # The loop ticked on throughout; a blocked loop would show one gap as long as the whole check.
    assert max(gaps) < 0.5


@pytest.mark.parametrize(
    ("value", "schema", "problem"),
    [
        (1, {"enum": list(range(MAX_SCHEMA_NODES + 1))}, "too large to check"),
        (1, "deep", "nested more than"),
        (list(range(MAX_VALUE_NODES + 1)), {"type": "array"}, "The answer is too large to check"),
        ("x", {"pattern": "a" * 1001}, "pattern longer than 1,000 characters"),
        ("x", {"patternProperties": {"a" * 1001: {}}}, "pattern longer than 1,000 characters"),
        ("x", "not a schema", "not a JSON Schema"),
        ("x", {"pattern": "(["}, "not a valid JSON Schema"),
        ({}, {"$ref": "https://json-schema.org/draft/2020-12/schema"}, "meta-schema"),
        ({}, {"$id": "https://json-schema.org/draft/2020-12/", "$ref": "schema"}, "meta-schema"),
        ({}, {"properties": {"a": {"$schema": "http://json-schema.org/draft-04/schema#"}}}, "meta-schema"),
    ],
)
def test_schemas_and_answers_past_a_bound_are_refused_with_a_reason(value, schema, problem):
    if schema == "deep":
        schema = _deep(MAX_JSON_DEPTH + 1)
    problems = validate_against(value, schema)
    assert len(problems) == 1 and problem in problems[0], problems


def _deep(levels: int) -> dict:
    schema: dict = {}
    for _ in range(levels):
        schema = {"not": schema}
    return schema


def test_unique_items_is_checked_in_one_pass_with_json_equality():
    many = [{"id": i, "tags": [i, str(i)]} for i in range(MAX_VALUE_NODES // 6)]
    start = time.monotonic()
    assert validate_against(many, {"uniqueItems": True}) == []
    assert time.monotonic() - start < GENEROUS
    assert validate_against([{"a": 1}, {"a": 1.0}], {"uniqueItems": True}) == [
        "[{'a': 1}, {'a': 1.0}] has non-unique elements"
    ]
    assert validate_against([1, True, [0], [False]], {"uniqueItems": True}) == []


def test_jsonschema_outside_a_bounded_check_is_unchanged():
    jsonschema.validate("abc", {"pattern": "^a"})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate("xbc", {"pattern": "^a"})


def test_schema_and_model_problems_are_worded_by_one_formatter():
    assert validation_problem(["a", 0], "is wrong", separator="/") == "a/0: is wrong"
    assert validation_problem([], "is wrong") == "is wrong"
    assert validation_problem([], "is wrong", root="(root)") == "(root): is wrong"
    assert validate_against({"a": [1]}, {"properties": {"a": {"items": {"type": "string"}}}}) == [
        "a/0: 1 is not of type 'string'"
    ]
