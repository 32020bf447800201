"""The answer a resume gives an AG-UI interrupt, built from the ``responseSchema`` the agent sent.

An interrupt may say how it wants to be answered (docs/PROTOCOLS.md 1.3). Without a schema, or
with one whose ``approved`` property takes a boolean, the answer is the protocol's own
``{"approved": bool}`` (with ``editedArgs`` where the person edited the arguments). Otherwise the
decision is written the way the schema asks: a boolean, a string of its enum ("approved" or
"rejected", "yes" or "no"...), an object whose decision property takes one of those; what else the
schema requires is asked in a form. The payload is checked against the schema before it is sent.

No Django here: the decide view calls :func:`resume_payload` with what the person posted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agents_ui.sdk import validate_against_async
from agents_ui.sdk.agui.client_tools import FormField, bounded_schema, form_fields, read_form

__all__ = [
    "ResumeShape",
    "answer_prefix",
    "decided_payload",
    "form_answers",
    "resume_payload",
    "resume_shape",
]

Choice = Literal["approve", "reject", "edit"]
# The recorded decision (ApprovalRecord.Decision's values) -> the choice it writes.
CHOICES: dict[str, Choice] = {"approved": "approve", "rejected": "reject", "approved_with_edits": "edit"}

# Words an agent's enum may use for yes and for no, best first; compared without case.
YES_WORDS = (
    "approved",
    "approve",
    "accepted",
    "accept",
    "confirmed",
    "confirm",
    "yes",
    "allow",
    "allowed",
    "ok",
)
NO_WORDS = ("rejected", "reject", "denied", "deny", "declined", "decline", "no", "cancelled", "cancel")
# Properties of an object schema that carry the decision, best first.
DECISION_KEYS = ("approved", "approve", "confirmed", "accepted", "decision", "status", "answer", "choice")
EDITS_KEY = "editedArgs"


@dataclass(frozen=True)
class ResumeShape:
    """How an interrupt wants its decision written.

    ``kind``: "default" (the protocol's ``{"approved": bool}``), "boolean", "string" or "object".
    ``yes`` / ``no``: the decision's value (for an object, the value of ``key``). ``fields``: what else
    the object requires, asked in a form. ``problem``: why the schema cannot be answered by
    a decision ("" when it can).
    """

    kind: str
    yes: Any = True
    no: Any = False
    key: str = ""
    edits: bool = False  # the answer can carry the person's edited arguments
    fields: list[FormField] = field(default_factory=list)
    schema: dict[str, Any] | None = None
    problem: str = ""


DEFAULT = ResumeShape("default", edits=True)


def _types(spec: dict[str, Any]) -> set[str]:
    kind = spec.get("type")
    if isinstance(kind, str):
        return {kind}
    return {k for k in kind if isinstance(k, str)} if isinstance(kind, list) else set()


def _word(values: list[Any], words: tuple[str, ...]) -> Any:
    by_word = {v.lower(): v for v in values if isinstance(v, str)}
    return next((by_word[w] for w in words if w in by_word), None)


def _decision(spec: Any) -> tuple[Any, Any] | None:
    """(yes, no) as ``spec`` takes them, None when it takes no decision."""
    if not isinstance(spec, dict):
        return None
    choices = spec.get("enum") if isinstance(spec.get("enum"), list) else None
    if "const" in spec:
        choices = [spec["const"]]
    types = _types(spec)
    if choices is not None:
        if True in choices and False in choices:
            return True, False
        yes, no = _word(choices, YES_WORDS), _word(choices, NO_WORDS)
        return (yes, no) if yes is not None and no is not None else None
    if "boolean" in types or not types:
        return True, False
    if "string" in types:
        return "approved", "rejected"
    return None


def resume_shape(schema: Any) -> ResumeShape:
    """How ``schema`` (an interrupt's ``responseSchema``) wants a decision written."""
    if not isinstance(schema, dict) or not schema:
        return DEFAULT
    problem = bounded_schema(schema)
    if problem:
        return ResumeShape(
            "default", edits=True, problem=f"The agent's answer format cannot be used: {problem}."
        )
    properties = schema.get("properties")
    types = _types(schema)
    if isinstance(properties, dict) or types == {"object"}:
        properties = properties if isinstance(properties, dict) else {}
        key = next((k for k in DECISION_KEYS if k in properties and _decision(properties[k])), "")
        if not key:
            return ResumeShape(
                "object", schema=schema, problem="The agent's answer format has no place for a decision."
            )
        yes, no = _decision(properties[key])  # type: ignore[misc]
        edits = EDITS_KEY in properties
        # Asked in a form: what the schema requires besides the decision. Optional properties are
        # left out (Agent Framework lists each argument as an optional edit, and an alias of the
        # decision: a form would send them as answers nobody gave).
        required = [k for k in schema.get("required") or [] if isinstance(k, str)]
        rest = {k: properties[k] for k in required if k in properties and k not in (key, EDITS_KEY)}
        fields: list[FormField] = []
        if rest:
            drawn = form_fields({"type": "object", "properties": rest, "required": list(rest)})
            if drawn is None:
                return ResumeShape(
                    "object", schema=schema, problem="The agent asks for more than a form here can hold."
                )
            fields = drawn
        if key == "approved" and (yes, no) == (True, False) and not fields:
            return ResumeShape("default", edits=True, schema=schema)
        return ResumeShape("object", yes=yes, no=no, key=key, edits=edits, fields=fields, schema=schema)
    found = _decision(schema)
    if found is None:
        return ResumeShape("string", schema=schema, problem="The agent's answer format takes no yes or no.")
    kind = "boolean" if found == (True, False) else "string"
    return ResumeShape(kind, yes=found[0], no=found[1], schema=schema)


def _build(shape: ResumeShape, choice: Choice, edited: Any, form: Mapping[str, str]) -> tuple[Any, str]:
    yes = choice != "reject"
    if choice == "edit" and not shape.edits:
        return None, "The agent takes a yes or a no here, not edited arguments."
    if shape.kind == "default":
        payload: dict[str, Any] = {"approved": yes}
        if choice == "edit":
            payload["editedArgs"] = edited
        return payload, ""
    if shape.kind in ("boolean", "string"):
        return (shape.yes if yes else shape.no), ""
    answers, problem = read_form(shape.fields, form) if shape.fields else ({}, "")
    if problem:
        return None, problem
    payload = {shape.key: shape.yes if yes else shape.no, **answers}
    if choice == "edit":
        payload[EDITS_KEY] = edited
    return payload, ""


async def resume_payload(
    schema: Any, choice: Choice, *, edited: Any = None, form: Mapping[str, str] | None = None
) -> tuple[Any, str]:
    """The payload answering an interrupt with ``choice``, and why it cannot be sent ("" when it can).

    ``edited``: the person's arguments (``choice == "edit"``); ``form``: the answers to the shape's
    fields, by field name. The payload is checked against the agent's schema (the SDK's bounded
    validator) before it goes.
    """
    shape = resume_shape(schema)
    if shape.problem:
        return None, shape.problem
    payload, problem = _build(shape, choice, edited, form or {})
    if problem:
        return None, problem
    if shape.schema is not None:
        problems = await validate_against_async(payload, shape.schema)
        if problems:
            return None, "The answer does not fit what the agent asks: " + "; ".join(problems)
    return payload, ""


def answer_prefix(interrupt_id: str) -> str:
    """What goes before the names of an interrupt's form fields (a form decides several at once)."""
    return f"answer-{interrupt_id}-"


def form_answers(data: Mapping[str, str], interrupt_id: str) -> dict[str, str]:
    """The posted answers to one interrupt's form fields, by field name."""
    prefix = answer_prefix(interrupt_id)
    return {name[len(prefix) :]: data[name] for name in data if name.startswith(prefix)}


async def decided_payload(
    interrupt: Any, decision: str, edited: Any, posted: Mapping[str, str]
) -> tuple[Any, str]:
    """The payload for a recorded ``decision`` (ApprovalRecord.Decision's value) on an AG-UI
    ``interrupt``, with the person's edited arguments and the answers posted to its form."""
    return await resume_payload(
        interrupt.response_schema, CHOICES[decision], edited=edited, form=form_answers(posted, interrupt.id)
    )
