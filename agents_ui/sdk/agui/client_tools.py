"""Client-provided tools: generic UI tools a client offers an AG-UI agent in ``RunAgentInput.tools``.

An agent calls one of them when it needs the person: ask a question, fill in a form, confirm, choose.
The client shows the call, and the person's answer goes back as a tool message (``toolCallId`` =
the call, content = the answer as JSON) in the next run. Calls come from the agent, so their
arguments are checked against the tool's schema, and a form's schema is bounded in size and depth
before anything is drawn from it.

Answers are checked with the SDK's bounded validator (:mod:`agents_ui.sdk.schema`): a schema is the
agent's, and must not make the client fetch anything or spin.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from ag_ui.core import Tool

from ..schema import validate_against

__all__ = [
    "ASK_USER",
    "CHOOSE",
    "CLIENT_TOOLS",
    "CONFIRM",
    "CONFIRM_CHANGES",
    "DISMISSED",
    "REQUEST_FORM",
    "FormField",
    "client_tool",
    "form_fields",
    "other_answer",
    "read_answer",
    "schema_problem",
]

ASK_USER, REQUEST_FORM, CONFIRM, CHOOSE = "ask_user", "request_form", "confirm", "choose"
# Microsoft Agent Framework's own frontend tool: it asks the person to confirm a call it made
# (``function_name``, ``function_call_id``, ``function_arguments``, ``steps``). The client answers
# ``{"accepted": bool, "steps": [...]}``; when an approval interrupt names the same call, the
# framework takes the answer only as that interrupt's resume.
CONFIRM_CHANGES = "confirm_changes"
DISMISSED = "The user dismissed this request without answering."

# Bounds on what an agent may ask: a form's schema, its fields, an answer.
MAX_SCHEMA_BYTES = 16 * 1024
MAX_SCHEMA_DEPTH = 8
MAX_FORM_FIELDS = 40
MAX_FORM_NESTING = 3
MAX_OPTIONS = 20
MAX_ANSWER_BYTES = 64 * 1024

_TEXT = {"type": "string", "maxLength": 4000}
_LABEL = {"type": "string", "maxLength": 200}

CLIENT_TOOLS: tuple[Tool, ...] = (
    Tool(
        name=ASK_USER,
        description=(
            "Ask the user a question and wait for their answer, written in their own words. Use it "
            "when you need information only the user has. Optionally suggest a few short answers "
            'they can pick instead of typing. The result is {"answer": "<what the user wrote>"}.'
        ),
        parameters={
            "type": "object",
            "properties": {
                "question": {**_TEXT, "description": "The question, as the user should read it."},
                "placeholder": {**_LABEL, "description": "A hint shown in the empty answer box."},
                "suggestions": {
                    "type": "array",
                    "items": _LABEL,
                    "maxItems": 8,
                    "description": "Short answers the user can pick with one click.",
                },
            },
            "required": ["question"],
            "additionalProperties": False,
        },
    ),
    Tool(
        name=REQUEST_FORM,
        description=(
            "Show the user a form and wait for them to fill it in. Describe the form as a JSON "
            "Schema of an object: each property is a field (type string, number, integer or "
            "boolean, or an enum of choices; an object property is a group of fields), with a "
            "title and description the user reads, and list the required ones in `required`. The "
            "result is the object the user submitted, valid against your schema."
        ),
        parameters={
            "type": "object",
            "properties": {
                "title": {**_LABEL, "description": "What the form is for, as its heading."},
                "description": {**_TEXT, "description": "Why you ask, shown under the heading."},
                "schema": {
                    "type": "object",
                    "description": 'A JSON Schema with "type": "object" and its "properties".',
                },
                "submit_label": {**_LABEL, "description": "The submit button's text."},
            },
            "required": ["title", "schema"],
            "additionalProperties": False,
        },
    ),
    Tool(
        name=CONFIRM,
        description=(
            "Ask the user to confirm or decline something before you go on, with a summary of what "
            'they agree to. The result is {"confirmed": true} or {"confirmed": false}.'
        ),
        parameters={
            "type": "object",
            "properties": {
                "summary": {**_TEXT, "description": "What the user confirms, in one or two sentences."},
                "details": {**_TEXT, "description": "More about it, shown below the summary."},
                "confirm_label": {**_LABEL, "description": 'The yes button\'s text (default "Yes").'},
                "cancel_label": {**_LABEL, "description": 'The no button\'s text (default "No").'},
            },
            "required": ["summary"],
            "additionalProperties": False,
        },
    ),
    Tool(
        name=CHOOSE,
        description=(
            "Ask the user to pick exactly one of a few options. Give each option a value (what you "
            'get back) and a label (what the user reads). The result is {"choice": "<value>"}.'
        ),
        parameters={
            "type": "object",
            "properties": {
                "question": {**_TEXT, "description": "What the user chooses."},
                "options": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_OPTIONS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "value": _LABEL,
                            "label": _LABEL,
                            "description": {"type": "string", "maxLength": 1000},
                        },
                        "required": ["value"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": ["question", "options"],
            "additionalProperties": False,
        },
    ),
)
_BY_NAME = {tool.name: tool for tool in CLIENT_TOOLS}
_CONFIRM_CHANGES_ARGS = {
    "type": "object",
    "properties": {
        "function_name": _LABEL,
        "function_call_id": _LABEL,
        "function_arguments": {"type": "object"},
        "steps": {
            "type": "array",
            "maxItems": MAX_OPTIONS,
            "items": {
                "type": "object",
                "properties": {"description": {"type": "string", "maxLength": 1000}, "status": _LABEL},
            },
        },
    },
}


def _depth(value: Any, limit: int) -> int:
    """How deep a JSON value nests, counted up to just past ``limit``."""
    if limit < 0 or not isinstance(value, dict | list):
        return 0
    children = value.values() if isinstance(value, dict) else value
    return 1 + max((_depth(child, limit - 1) for child in children), default=0)


def bounded_schema(schema: Any) -> str:
    """Why a schema an agent sent is out of bounds or not a schema ("" when it is usable)."""
    if not isinstance(schema, dict):
        return "the schema is not a JSON object"
    try:
        text = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return "the schema is not JSON"
    if len(text) > MAX_SCHEMA_BYTES:
        return "the schema is too large"
    if _depth(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH:
        return "the schema nests too deeply"
    return _checked_schema(text)


@functools.lru_cache(maxsize=128)
def _checked_schema(text: str) -> str:
    """The metaschema's verdict on a schema's text: the same schema comes back with every request of
    the agent's that shows it (a page of them, the inbox), and checking it is the costly part."""
    schema = json.loads(text)
    try:
        jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(
            schema
        )
    except jsonschema.SchemaError as exc:
        return f"the schema is not valid: {exc.message}"
    return ""


def schema_problem(value: Any, schema: dict[str, Any]) -> str:
    """Why ``value`` does not fit ``schema`` ("" when it does), in words a person can act on.
    Checked by the SDK's bounded validator: blocking, at most its time limit."""
    problem = bounded_schema(schema)
    if problem:
        return problem
    return "; ".join(validate_against(value, schema))


# --- Form fields drawn from a JSON Schema --------------------------------------------------------


@dataclass(frozen=True)
class FormField:
    """One input of a form: where its value goes in the answer, and how it is drawn."""

    path: tuple[str, ...]
    label: str
    kind: str  # "text" | "textarea" | "number" | "integer" | "boolean" | "enum" | "group"
    required: bool = False
    description: str = ""
    options: tuple[tuple[str, str], ...] = ()  # (JSON of the value, label), for enums
    default: str = ""
    depth: int = 0
    long: bool = False

    @property
    def name(self) -> str:
        return "field:" + json.dumps(list(self.path))


def _field_label(name: str, spec: dict[str, Any]) -> str:
    title = spec.get("title")
    return str(title)[:200] if isinstance(title, str) and title else name.replace("_", " ").capitalize()


def form_fields(schema: Any) -> list[FormField] | None:
    """The fields of a form described by a JSON Schema object, or None when it cannot be drawn
    (out of bounds, not an object, too many fields)."""
    if bounded_schema(schema) or schema.get("type", "object") != "object":
        return None
    found: list[FormField] = []
    if not _add_fields(found, schema, (), 0) or not found:
        return None
    return found


def _add_fields(found: list[FormField], schema: dict[str, Any], path: tuple[str, ...], depth: int) -> bool:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return False
    required = set(schema.get("required") or [])
    for name, spec in properties.items():
        if not isinstance(spec, dict):
            return False
        if len(found) >= MAX_FORM_FIELDS:
            return False
        where = (*path, str(name)[:200])
        common = {
            "path": where,
            "label": _field_label(str(name), spec),
            "required": name in required,
            "description": str(spec.get("description") or "")[:1000],
            "depth": depth,
        }
        kind = spec.get("type")
        if isinstance(spec.get("enum"), list) and spec["enum"]:
            options = tuple((json.dumps(v), str(v)[:200]) for v in spec["enum"][:MAX_OPTIONS])
            default = json.dumps(spec["default"]) if "default" in spec else ""
            found.append(FormField(kind="enum", options=options, default=default, **common))
        elif kind == "object" and depth + 1 < MAX_FORM_NESTING:
            found.append(FormField(kind="group", **common))
            if not _add_fields(found, spec, where, depth + 1):
                return False
        elif kind in ("string", "number", "integer", "boolean"):
            default = spec.get("default")
            text = "" if default is None or isinstance(default, dict | list) else str(default)
            if kind == "boolean":
                text = "true" if default is True else ""
            long = kind == "string" and (spec.get("maxLength") or 0) > 200
            kind = "text" if kind == "string" else kind
            found.append(FormField(kind=kind, default=text, long=long, **common))
        else:
            return False  # arrays, unions: the form cannot be drawn, the call is answered as JSON
    return True


def _number(raw: str, *, whole: bool) -> int | float | None:
    """A number typed in a form: an int where it is written as one, None when it is not a number."""
    try:
        return int(raw)
    except ValueError:
        pass
    if whole:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def read_form(fields: list[FormField], data: Mapping[str, str]) -> tuple[dict[str, Any], str]:
    """The object a submitted form describes, and why a field could not be read ("" when all could)."""
    values: dict[str, Any] = {}
    for item in fields:
        if item.kind == "group":
            continue
        raw = (data.get(item.name) or "").strip()
        if item.kind == "boolean":
            value: Any = raw == "true"
        elif not raw:
            continue  # left empty: the schema says whether that is allowed
        elif item.kind == "enum":
            try:
                value = json.loads(raw)
            except ValueError:
                return {}, f"{item.label}: not one of the choices"
        elif item.kind in ("number", "integer"):
            value = _number(raw, whole=item.kind == "integer")
            if value is None:
                return {}, f"{item.label}: not a {'whole ' if item.kind == 'integer' else ''}number"
        else:
            value = raw
        target = values
        for key in item.path[:-1]:
            target = target.setdefault(key, {})
        target[item.path[-1]] = value
    return values, ""


# --- The calls ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientToolCall:
    """A call of one of the client's tools, its arguments checked against the tool's schema."""

    name: str
    args: dict[str, Any]
    fields: list[FormField] = field(default_factory=list)

    @property
    def confirms(self) -> str:
        """The call a ``confirm_changes`` asks about ("" for the other tools)."""
        return str(self.args.get("function_call_id") or "") if self.name == CONFIRM_CHANGES else ""

    def arguments_json(self) -> str:
        """The arguments of the call a ``confirm_changes`` asks about, as the card shows them."""
        value = self.args.get("function_arguments") or {}
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True) if value else ""

    def steps(self) -> list[str]:
        return [str(step.get("description") or "") for step in self.args.get("steps") or []]

    def option_labels(self) -> list[dict[str, str]]:
        return [
            {
                "value": str(option["value"]),
                "label": str(option.get("label") or option["value"]),
                "description": str(option.get("description") or ""),
            }
            for option in self.args.get("options") or []
        ]


def client_tool(name: str, args: Any) -> ClientToolCall | None:
    """The call as one of the client's tools, or None when it is not one (or its arguments do not
    fit: then it is answered as any other call)."""
    if name == CONFIRM_CHANGES:
        if not isinstance(args, dict) or schema_problem(args, _CONFIRM_CHANGES_ARGS):
            return None
        return ClientToolCall(name, args)
    tool = _BY_NAME.get(name)
    if tool is None or not isinstance(args, dict) or schema_problem(args, tool.parameters):
        return None
    if name == REQUEST_FORM:
        fields = form_fields(args["schema"])
        if fields is None:
            return None
        return ClientToolCall(name, args, fields)
    return ClientToolCall(name, args)


def read_answer(call: ClientToolCall, data: Mapping[str, str]) -> tuple[Any, str]:
    """The answer a submitted form gives (a JSON value), and why it cannot be sent ("" when it can)."""
    if call.name == ASK_USER:
        answer = (data.get("suggestion") or data.get("answer") or "").strip()
        if not answer:
            return None, "Write an answer, or dismiss the question."
        return {"answer": answer}, ""
    if call.name == CONFIRM:
        choice = data.get("confirmed")
        if choice not in ("true", "false"):
            return None, "Choose yes or no."
        return {"confirmed": choice == "true"}, ""
    if call.name == CONFIRM_CHANGES:
        choice = data.get("confirmed")
        if choice not in ("true", "false"):
            return None, "Choose yes or no."
        # The steps go back with their status, as Agent Framework reads a confirmation.
        status = "enabled" if choice == "true" else "disabled"
        steps = [{**step, "status": status} for step in call.args.get("steps") or []]
        return {"accepted": choice == "true", "steps": steps}, ""
    if call.name == CHOOSE:
        values = [option["value"] for option in call.option_labels()]
        choice = data.get("choice")
        if choice not in values:
            return None, "Choose one of the options."
        return {"choice": choice}, ""
    values, problem = read_form(call.fields, data)
    if not problem:
        problem = schema_problem(values, call.args["schema"])
    return (None, f"The form does not fit: {problem}") if problem else (values, "")


def other_answer(text: str, as_json: bool) -> tuple[str, str]:
    """A person's answer to a tool call the client does not know: the tool message content, and
    why it cannot be sent ("" when it can). JSON must parse and stay bounded; text goes as written."""
    text = text.strip()
    if not text:
        return "", "Write an answer, or dismiss the call."
    if len(text.encode()) > MAX_ANSWER_BYTES:
        return "", "The answer is too long."
    if not as_json:
        return text, ""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return "", f"The answer is not valid JSON: {exc}"
    if _depth(value, MAX_SCHEMA_DEPTH * 2) > MAX_SCHEMA_DEPTH * 2:
        return "", "The answer nests too deeply."
    return json.dumps(value, ensure_ascii=False), ""
