"""A person's action on a surface: the inputs read from a form post, and the `userAction` sent back;
and what a v1.0 renderer owes the agent besides (`replies`: refused function calls, components it
could not draw as sent)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import pointer
from .catalog import (
    ACTIVITY_TYPE,
    MAX_CHILDREN,
    MAX_CONTEXT_BYTES,
    MAX_ID,
    MAX_OPERATIONS,
    MAX_OPTIONS,
    MAX_TEXT,
    VERSION_1,
)
from .render import Node, SurfaceTree, render
from .surfaces import Surface, read_activity, thread_surfaces
from .values import Values, matches, stringify

# --- A person's action -----------------------------------------------------------------------------


@dataclass
class Submission:
    """What a press of a surface's button gives: the action for the agent, or why not."""

    values: dict[str, Any]  # absolute path -> what the person entered
    user_action: dict[str, Any] | None = None
    data_model: Any = None  # the surface's data model, when it asked for it (sendDataModel)
    problems: list[str] = field(default_factory=list)


def read_inputs(tree: SurfaceTree, posted: Mapping[str, list[str]]) -> dict[str, Any]:
    """The person's values for the inputs the surface binds, read from a form post (`name` is
    `a2ui:<path>`); fields the surface does not bind are ignored."""
    values: dict[str, Any] = {}
    options = _options_by_path(tree.root)
    for path, kind in tree.inputs.items():
        key = f"a2ui:{path}"
        given = [v[:MAX_TEXT] for v in posted.get(key, [])][:MAX_OPTIONS]
        if key not in posted and kind not in ("CheckBox", "ChoicePicker"):
            continue  # a browser posts every enabled field: absent, the value stays the agent's
        if kind == "CheckBox":
            values[path] = bool(given) and given[-1] == "on"
        elif kind == "ChoicePicker":
            allowed = options.get(path, set())
            values[path] = [v for v in dict.fromkeys(given) if v in allowed]
        elif kind == "Slider" or (kind == "TextField" and options.get(path) == {"number"}):
            number = _number_or_none(given[-1] if given else "")
            values[path] = number if number is not None else (given[-1] if given else "")
        elif given:
            values[path] = given[-1]
        else:
            values[path] = ""
    return values


def _number_or_none(text: str) -> float | int | None:
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    return int(number) if number.is_integer() else number


def _options_by_path(node: Node | None) -> dict[str, set[str]]:
    """Each ChoicePicker's path -> its option values; a number TextField's path -> {"number"}."""
    found: dict[str, set[str]] = {}
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        name = current.props.get("name")
        if current.kind == "ChoicePicker" and name:
            found.setdefault(name, set()).update(o["value"] for o in current.props["options"])
        elif current.kind == "TextField" and name and current.props.get("variant") == "number":
            found[name] = {"number"}
        stack.extend(current.children)
        for key in ("trigger", "content"):
            if isinstance(current.props.get(key), Node):
                stack.append(current.props[key])
        stack.extend(tab["node"] for tab in current.props.get("tabs", ()))
    return found


def submit(surface: Surface, action_key: str, posted: Mapping[str, list[str]], timestamp: str) -> Submission:
    """The `userAction` a button press sends (A2UI's client-to-server `action`), its context
    resolved against the data model as the person filled it in; refused when a check fails."""
    first = render(surface)
    values = read_inputs(first, posted)
    tree = render(surface, values)
    submission = Submission(values)
    spot = tree.actions.get(action_key)
    if spot is None:
        submission.problems.append("This button does not send anything to the agent.")
        return submission
    component_id, scope, event = spot
    resolver = Values(_data_with(surface, values), tree.notes, surface.version, surface.catalog_id)
    for checked_id, check_scope, checks in tree.checks:
        for check in checks:
            if not isinstance(check, Mapping):
                continue
            if "pattern" in check:
                text = stringify(values.get(check["path"])) if check["path"] else ""
                if text and not matches(check["pattern"], text, tree.notes):
                    submission.problems.append(
                        f"{_label_of(surface, checked_id)}: the value is not in the expected form."
                    )
                continue
            if resolver.value(check.get("condition"), check_scope) is not True:
                message = check.get("message")
                submission.problems.append(
                    message[:300] if isinstance(message, str) else f"{checked_id}: a check failed."
                )
    if submission.problems:
        return submission
    raw_context = event.get("context") if isinstance(event.get("context"), Mapping) else {}
    context = {str(k)[:MAX_ID]: resolver.value(v, scope) for k, v in list(raw_context.items())[:MAX_CHILDREN]}
    if len(json.dumps(context, default=str)) > MAX_CONTEXT_BYTES:
        submission.problems.append("What this button would send is too large.")
        return submission
    submission.user_action = {
        "name": event["name"],
        "surfaceId": surface.id,
        "sourceComponentId": component_id,
        "timestamp": timestamp,
        "context": context,
    }
    if surface.version == VERSION_1 and event.get("userMessage") is not None:
        # v1.0: the button's words for what the person did, resolved like the context.
        submission.user_action["userMessage"] = resolver.text(event.get("userMessage"), scope)[:300]
    if surface.send_data_model:
        submission.data_model = resolver.data
    return submission


def _data_with(surface: Surface, values: Mapping[str, Any]) -> Any:
    data = json.loads(json.dumps(surface.data))
    for path, value in values.items():
        parts = pointer.tokens(path)
        if parts:
            if not isinstance(data, dict | list):
                data = {}
            pointer.upsert(data, parts, value)
    return data


def _label_of(surface: Surface, component_id: str) -> str:
    label = surface.components.get(component_id, {}).get("label")
    return label[:80] if isinstance(label, str) else component_id


def replies(contents: Iterable[Any], prior: Mapping[str, Surface] | None = None) -> list[dict[str, Any]]:
    """The v1.0 renderer-to-agent messages a run's A2UI activities call for, oldest first: an
    INVALID_FUNCTION_CALL answer to each callRendererFunction, and an error for each component the
    page could not draw as sent (from a catalogue it does not render, or against its catalogue's
    composition rules). The thread's next run takes them to the agent (docs/PROTOCOLS.md)."""
    found: list[dict[str, Any]] = []
    state = dict(prior or {})
    for content in contents:
        activity = read_activity(content, state)
        found.extend(activity.responses)
        for surface_id in activity.deleted:
            state.pop(surface_id, None)
        for surface in activity.surfaces:
            state[surface.id] = surface
            if surface.version == VERSION_1 and surface.supported:
                found.extend(render(surface).errors)
    return found[:MAX_OPERATIONS]


def _contents(transcript: Any) -> list[Any]:
    records = [r for r in transcript.activities.values() if r.activity_type == ACTIVITY_TYPE]
    return [r.content for r in sorted(records, key=lambda r: r.position)]


def thread_replies(transcripts: list[Any]) -> list[dict[str, Any]]:
    """`replies` owed for the newest of a thread's runs (transcripts oldest first): what the next
    run takes back. Each run's replies go once, with the run that follows it."""
    if not transcripts:
        return []
    prior: dict[str, Surface] = {}
    for transcript in transcripts[:-1]:
        prior = thread_surfaces(_contents(transcript), prior)
    return replies(_contents(transcripts[-1]), prior)
