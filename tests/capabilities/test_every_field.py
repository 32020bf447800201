"""Every field of AG-UI's AgentCapabilities (the seed's ten categories and `custom`) changes what the
workspace decides and shows, and the explain view names it with the value it held.

The fields are walked from ag_ui.core's own types, so a field the protocol adds fails here until the
product reads it.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from ag_ui.core import AgentCapabilities, SubagentInfo, Tool
from django.template.loader import render_to_string
from pydantic import BaseModel

from agents_ui.capabilities.provenance import show
from agents_ui.decisions import CONTROL_NAMES, Plan, decide

SOURCE = "AG-UI capabilities"
BASE = {"identity": {"name": "Base agent"}}

# A value for each field that is not a flag or a number: what a real agent would send.
SAMPLES: dict[str, Any] = {
    "identity.name": "Field agent",
    "identity.type": "langgraph",
    "identity.description": "Answers questions.",
    "identity.version": "2.1.0",
    "identity.provider": "Research team",
    "identity.documentationUrl": "https://docs.example/agent",
    "identity.metadata": {"region": "eu-west", "tier": "gold"},
    "tools.items": [
        Tool(name="search", description="Search the web.", parameters={"type": "object"}).model_dump(
            by_alias=True, exclude_none=True
        )
    ],
    "output.supportedMimeTypes": ["text/markdown", "application/json"],
    "multiAgent.subagents": [
        SubagentInfo(name="writer", description="Drafts text.").model_dump(by_alias=True, exclude_none=True)
    ],
    "execution.maxIterations": 7,
    "execution.maxExecutionTime": 45_000,
    "custom": {"region": "eu-west", "rateLimit": {"maxRequestsPerMinute": 5}},
}


def _model(annotation: Any) -> type[BaseModel] | None:
    """The model inside an Optional annotation, if it is one."""
    args = (
        typing.get_args(annotation)
        if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union
        else (annotation,)
    )
    for arg in args:
        if isinstance(arg, type) and issubclass(arg, BaseModel) and arg not in (Tool, SubagentInfo):
            return arg
    return None


def _flag(annotation: Any) -> bool:
    return bool in typing.get_args(annotation) or annotation is bool


def leaves(model: type[BaseModel] = AgentCapabilities, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(wire path, annotation) of every leaf field of the model, in the protocol's own names."""
    for name, info in model.model_fields.items():
        path = f"{prefix}{info.alias or name}"
        inner = _model(info.annotation)
        if inner is not None:
            yield from leaves(inner, f"{path}.")
        else:
            yield path, info.annotation


def declaring(path: str, value: Any) -> dict[str, Any]:
    """The base declaration with one field set (its categories present either way)."""
    declaration: dict[str, Any] = {**BASE, "identity": dict(BASE["identity"])}
    *parents, last = path.split(".")
    node = declaration
    for part in parents:
        node = node.setdefault(part, {})
    if value is not _ABSENT:
        node[last] = value
    return declaration


_ABSENT = object()
LEAVES = list(leaves())
CASES = [
    (path, value)
    for path, annotation in LEAVES
    for value in ((True, False) if _flag(annotation) else (SAMPLES[path],) if path in SAMPLES else (None,))
]


def effect(declaration: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """What the workspace does with a declaration: each control's decision and details, as they
    stand and where the admin allows every control (an explicit false holds against that)."""
    everything = dict.fromkeys(CONTROL_NAMES, "allow")
    return tuple(
        {control.name: (control.decision, control.details) for control in plan}
        for plan in (decide(capabilities=declaration), decide(capabilities=declaration, overrides=everything))
    )


def chains(plan: Plan) -> dict[str, list[str]]:
    return {control.name: [reason.text for reason in control.reasons] for control in plan}


# Fields that only widen what may happen: "true" leaves each specific field it covers unknown, so
# their effect is in the explain view (every control it covers names it); "false" switches off
# the specific fields it covers (checked with the rest).
UMBRELLAS = {"humanInTheLoop.supported", "multiAgent.supported", "tools.supported"}


def explain_html(plan: Plan) -> str:
    controls = [plan[name] for name in CONTROL_NAMES]
    return render_to_string("agents_ui/workspace.html#explain-controls", {"controls": controls, "plan": plan})


def test_the_walk_covers_the_ten_categories_and_custom():
    top = {path.split(".")[0] for path, _ in LEAVES}
    assert top == {
        "identity", "transport", "tools", "output", "state", "multiAgent", "reasoning", "multimodal",
        "execution", "humanInTheLoop", "custom",
    }  # fmt: skip
    assert len(LEAVES) >= 45
    assert not [path for path, value in CASES if value is None], "a field without a sample value"


@pytest.mark.parametrize(("path", "value"), CASES, ids=[f"{p}={show(v)}" for p, v in CASES])
def test_each_field_changes_the_plan_and_the_explain_view_names_it_with_its_value(path, value):
    AgentCapabilities.model_validate(declaring(path, value))  # a declaration the protocol accepts
    with_field = decide(capabilities=declaring(path, value))
    if path in UMBRELLAS and value is True:
        assert chains(with_field) != chains(decide(capabilities=declaring(path, _ABSENT)))
    else:
        changed = effect(declaring(path, value)) != effect(declaring(path, _ABSENT))
        assert changed, f"{path} = {show(value)} changes nothing the workspace shows"
    named = [
        (control.name, link)
        for control in with_field
        for reason in control.reasons
        for link in reason.provenance
        if link.source == SOURCE and link.path == path and link.raw == value
    ]
    assert named, f"no decision's chain names {path} = {show(value)}"
    html = explain_html(with_field)
    assert f"<code>{path}</code>" in html and show(value).replace('"', "&quot;") in html


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "ftp://docs.example/agent", "/docs", "data:text/html,x"]
)
def test_a_documentation_url_that_is_not_http_is_not_linked_and_the_explain_view_says_why(url):
    plan = decide(capabilities={"identity": {"name": "A", "documentationUrl": url}})
    assert plan["identity"].details.documentation_url is None
    chain = [link for reason in plan["identity"].reasons for link in reason.provenance]
    assert [link for link in chain if link.path == "identity.documentationUrl" and link.raw == url]
