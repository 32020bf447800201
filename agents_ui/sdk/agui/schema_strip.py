"""AG-UI 1.1's processing model for one event (docs/PROTOCOLS.md 1.7, spec ``basic/processing``).

What the schema does not describe is stripped with a warning naming its JSON pointer, never fatal:
an undescribed property, an unrecognised member of a union (a future outcome, a future content part,
an unknown patch operation) and an unknown member of a closed string set, wherever they sit in an
optional position or in a list. A malformed value of a described field is fatal: a wrong type, a
single-valued literal that does not match, a non-object where the union holds objects, and a null
where the field is optional (optional fields are omitted, never null).

The schema is ``ag_ui.core``'s own models, read once as JSON Schema.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel

__all__ = ["DROP", "Malformed", "strip_event"]

# Objects the specification leaves open on purpose: a JSON Patch operation may carry members RFC 6902
# ignores (a remove with its old value), so they are not unrecognised material.
_OPEN_MODELS = frozenset(
    {"AddOperation", "RemoveOperation", "ReplaceOperation", "MoveOperation", "CopyOperation", "TestOperation"}
)


class _Drop:
    __slots__ = ()

    def __repr__(self) -> str:
        return "DROP"


DROP = _Drop()


class Malformed(Exception):
    """A described field holds a value it cannot hold: the event is refused."""

    def __init__(self, pointer: str, problem: str) -> None:
        self.pointer = pointer or "/"
        self.problem = problem
        super().__init__(f"{self.pointer}: {problem}")


@cache
def _schema(model: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any]]:
    schema = model.model_json_schema(by_alias=True, mode="validation")
    return schema, schema.get("$defs", {})


def strip_event(model: type[BaseModel], obj: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """``obj`` (a decoded event of ``model``'s type) without what 1.1 does not describe.

    Raises :class:`Malformed` for a value a described field cannot hold. Everything else, a wrong
    type included, is left to the model's validation, which refuses it.
    """
    schema, defs = _schema(model)
    result = _walk(obj, schema, defs, "", warnings, names=_python_names(model))
    return result if isinstance(result, dict) else obj


@cache
def _python_names(model: type[BaseModel]) -> frozenset[str]:
    # ag_ui's models read snake_case too (populate_by_name): a producer writing it is understood.
    return frozenset(model.model_fields)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    return "number"


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _walk(
    value: Any, schema: dict[str, Any], defs: dict[str, Any], path: str, warnings: list[str],
    names: frozenset[str] = frozenset(),
) -> Any:  # fmt: skip
    schema = _resolve(schema, defs)
    members = schema.get("anyOf") or schema.get("oneOf")
    if members is not None:
        return _union(value, schema, [_resolve(m, defs) for m in members], defs, path, warnings)
    if "const" in schema:
        if value != schema["const"]:
            raise Malformed(path, f'expected "{schema["const"]}", received {_json_type(value)} {value!r:.60}')
        return value
    if "enum" in schema:
        return value if value in schema["enum"] else DROP
    if "properties" in schema:
        return _object(value, schema, defs, path, warnings, names)
    if schema.get("type") == "array" and isinstance(value, list):
        items = schema.get("items")
        if not items:
            return value
        kept = []
        for index, item in enumerate(value):
            walked = _walk(item, items, defs, f"{path}/{index}", warnings)
            if walked is DROP:
                warnings.append(f"stripped {path}/{index}: an element AG-UI 1.1 does not describe")
            else:
                kept.append(walked)
        return kept
    return value


def _object(
    value: Any, schema: dict[str, Any], defs: dict[str, Any], path: str, warnings: list[str],
    names: frozenset[str],
) -> Any:  # fmt: skip
    if not isinstance(value, dict):
        return value  # the model's validation refuses it, with its own words
    properties: dict[str, Any] = schema["properties"]
    required = set(schema.get("required", ()))
    open_object = schema.get("title") in _OPEN_MODELS
    out: dict[str, Any] = {}
    for key, item in value.items():
        sub = properties.get(key)
        if sub is None:
            if open_object or key in names:
                out[key] = item
            else:
                warnings.append(f"stripped {path}/{key}: a property AG-UI 1.1 does not describe")
            continue
        walked = _walk(item, sub, defs, f"{path}/{key}", warnings)
        if walked is DROP:
            if key in required:
                raise Malformed(f"{path}/{key}", f"{item!r:.60} is not a value AG-UI 1.1 allows here")
            warnings.append(f"stripped {path}/{key}: {item!r:.60} is not a member AG-UI 1.1 describes")
            continue
        out[key] = walked
    return out


def _union(
    value: Any, schema: dict[str, Any], members: list[dict[str, Any]], defs: dict[str, Any], path: str,
    warnings: list[str],
) -> Any:  # fmt: skip
    nullable = any(m.get("type") == "null" for m in members)
    others = [m for m in members if m.get("type") != "null"]
    if value is None:
        if nullable and others:
            raise Malformed(path, "null is not allowed: an optional field is omitted, never null")
        return value
    if not others:
        return value
    if len(others) == 1:
        return _walk(value, others[0], defs, path, warnings)
    objects = [m for m in others if "properties" in m]
    if objects and len(objects) == len(others):
        if not isinstance(value, dict):
            raise Malformed(path, f"expected object, received {_json_type(value)}")
        member = _discriminated(value, objects)
        if member is None:
            return DROP
        return _walk(value, member, defs, path, warnings)
    # A mixed union (text or a list of parts, say): the member of the value's JSON type.
    kind = _json_type(value)
    for member in others:
        if member.get("type") == kind or (kind == "object" and "properties" in member):
            return _walk(value, member, defs, path, warnings)
    return value


def _discriminated(value: dict[str, Any], members: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The member whose constant properties the value matches (its ``type``, an outcome's kind)."""
    fallback = None
    for member in members:
        constants = {k: s["const"] for k, s in member["properties"].items() if "const" in s}
        if not constants:
            fallback = fallback or member
            continue
        if all(value.get(k) == v for k, v in constants.items() if k in value) and any(
            k in value for k in constants
        ):
            return member
    return fallback
