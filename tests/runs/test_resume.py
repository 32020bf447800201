"""The resume payload follows the interrupt's responseSchema (agents_ui/runs/resume.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents_ui.runs.resume import resume_payload, resume_shape

INTEROP = Path(__file__).resolve().parents[1] / "fixtures" / "interop"

STRING_DECISION = {"type": "string", "enum": ["approved", "rejected"]}
AGENT_FRAMEWORK = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "accepted": {"type": "boolean", "description": "Legacy alias for approved."},
        "order_id": {"type": "string", "description": "Optional edited value."},
        "amount": {"type": "number"},
        "editedArgs": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order_id", "amount"],
            "additionalProperties": False,
        },
    },
    "anyOf": [{"required": ["approved"]}, {"required": ["accepted"]}],
    "additionalProperties": False,
}


def field_name(shape, key: str) -> str:
    return next(f.name for f in shape.fields if f.path == (key,))


@pytest.mark.parametrize("schema", [None, {}, "not a schema", {"type": "object"}])
async def test_without_a_schema_the_protocol_answer_goes(schema):
    if schema == {"type": "object"}:  # an object with no place for a decision
        assert (await resume_payload(schema, "approve"))[0] is None
        return
    assert await resume_payload(schema, "approve") == ({"approved": True}, "")
    assert await resume_payload(schema, "reject") == ({"approved": False}, "")
    assert await resume_payload(schema, "edit", edited={"a": 1}) == (
        {"approved": True, "editedArgs": {"a": 1}},
        "",
    )


async def test_a_string_schema_gets_its_own_words():
    assert await resume_payload(STRING_DECISION, "approve") == ("approved", "")
    assert await resume_payload(STRING_DECISION, "reject") == ("rejected", "")
    assert not resume_shape(STRING_DECISION).edits
    payload, problem = await resume_payload(STRING_DECISION, "edit", edited={"a": 1})
    assert payload is None and "not edited arguments" in problem


@pytest.mark.parametrize(
    ("schema", "yes", "no"),
    [
        ({"type": "string", "enum": ["Yes", "No"]}, "Yes", "No"),
        ({"type": "string", "enum": ["deny", "allow"]}, "allow", "deny"),
        ({"type": "string"}, "approved", "rejected"),
        ({"type": "boolean"}, True, False),
        ({"enum": [True, False]}, True, False),
    ],
)
async def test_scalar_schemas(schema, yes, no):
    assert await resume_payload(schema, "approve") == (yes, "")
    assert await resume_payload(schema, "reject") == (no, "")


async def test_a_string_enum_without_a_yes_and_a_no_is_not_answered_by_a_decision():
    payload, problem = await resume_payload({"type": "string", "enum": ["red", "blue"]}, "approve")
    assert payload is None and "no yes or no" in problem


async def test_an_object_whose_decision_is_a_string():
    schema = {
        "type": "object",
        "properties": {"approved": {"type": "string", "enum": ["approved", "rejected"]}},
        "required": ["approved"],
    }
    assert await resume_payload(schema, "approve") == ({"approved": "approved"}, "")
    assert await resume_payload(schema, "reject") == ({"approved": "rejected"}, "")


async def test_an_object_with_another_decision_property():
    schema = {
        "type": "object",
        "properties": {"decision": {"enum": ["approve", "reject"]}},
        "required": ["decision"],
        "additionalProperties": False,
    }
    assert await resume_payload(schema, "reject") == ({"decision": "reject"}, "")
    confirmed = {"type": "object", "properties": {"confirmed": {"type": "boolean"}}}
    assert await resume_payload(confirmed, "approve") == ({"confirmed": True}, "")


async def test_agent_frameworks_schema_takes_the_protocol_answer_and_its_edits():
    """Its optional per-argument edits and its legacy alias are not asked: no form."""
    assert resume_shape(AGENT_FRAMEWORK).fields == []
    assert await resume_payload(AGENT_FRAMEWORK, "approve") == ({"approved": True}, "")
    edited = {"order_id": "A-1001", "amount": 20}
    assert await resume_payload(AGENT_FRAMEWORK, "edit", edited=edited) == (
        {"approved": True, "editedArgs": edited},
        "",
    )
    payload, problem = await resume_payload(AGENT_FRAMEWORK, "edit", edited={"amount": 20})
    assert payload is None and "order_id" in problem  # checked against the schema before it goes


async def test_what_the_schema_requires_besides_yes_or_no_is_a_form():
    schema = {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean"},
            "reason": {"type": "string", "minLength": 3},
            "priority": {"type": "integer", "minimum": 1},
            "note": {"type": "string"},
        },
        "required": ["approved", "reason", "priority"],
    }
    shape = resume_shape(schema)
    assert [f.path for f in shape.fields] == [("reason",), ("priority",)]
    form = {field_name(shape, "reason"): "Wrong order", field_name(shape, "priority"): "2"}
    assert await resume_payload(schema, "reject", form=form) == (
        {"approved": False, "reason": "Wrong order", "priority": 2},
        "",
    )
    payload, problem = await resume_payload(schema, "reject", form={field_name(shape, "priority"): "2"})
    assert payload is None and "reason" in problem
    payload, problem = await resume_payload(
        schema, "approve", form={**form, field_name(shape, "priority"): "0"}
    )
    assert payload is None and "priority" in problem


async def test_the_real_frameworks_schemas_take_the_protocol_answer():
    """Every responseSchema the captured frameworks sent: the answer they were always sent."""
    seen = 0
    for capture in sorted(INTEROP.glob("*.sse")):
        for line in capture.read_text().splitlines():
            if '"responseSchema"' not in line:
                continue
            event = json.loads(line[5:])
            for interrupt in (event.get("outcome") or {}).get("interrupts") or []:
                seen += 1
                schema = interrupt.get("responseSchema")
                assert await resume_payload(schema, "approve") == ({"approved": True}, "")
                assert await resume_payload(schema, "reject") == ({"approved": False}, "")
    assert seen
