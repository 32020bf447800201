"""The AG-UI conformance corpus: its fixtures, one replay through the product's SDK, the checks.

The fixture format is upstream's (ag-ui-protocol/ag-ui ``spec/1.1/conformance/README.md``): name,
area, description, specPage, kill, client, input, stream, expect. ``expect`` keys: outcome,
errorContains, runError, eventTypes, eventTypesAbsent, eventPaths, eventAbsentPaths, warnings,
noWarnings, messageCount, messages, state, request, requestAbsentPaths; and two of this product's
(docs/conformance.md): ``runOutcome`` (how the transcript ends: success, interrupt, cancelled, error,
or null for none) and ``pendingToolCallIds``. ``origin`` says whether a fixture is upstream's or
written here from the spec text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ag_ui import core as ag

from agents_ui.sdk.agui.client import AgUiAgent
from agents_ui.sdk.agui.rules import upgrade_legacy_content
from agents_ui.sdk.errors import AgentError
from agents_ui.sdk.folding import TranscriptBuilder
from agents_ui.sdk.transcript import Transcript

STREAMS = Path(__file__).resolve().parent / "streams"
MANIFEST = STREAMS / "MANIFEST.txt"
EXPECT_KEYS = frozenset(
    {
        "outcome", "errorContains", "runError", "eventTypes", "eventTypesAbsent", "eventPaths",
        "eventAbsentPaths", "warnings", "noWarnings", "messageCount", "messages", "state", "request",
        "requestAbsentPaths", "runOutcome", "pendingToolCallIds",
    }
)  # fmt: skip
TOP_KEYS = frozenset(
    {"name", "area", "description", "specPage", "kill", "client", "input", "stream", "expect", "origin"}
)
_MISSING = object()


def load() -> dict[str, dict[str, Any]]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(STREAMS.glob("*.json"))}


def manifest() -> list[str]:
    return [line for line in MANIFEST.read_text().splitlines() if line and not line.startswith("#")]


@dataclass
class Replay:
    events: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    transcript: Transcript | None = None
    request: Any = None


def run_input(fixture: dict[str, Any]) -> ag.RunAgentInput:
    started = next((e for e in fixture["stream"] if e.get("type") == "RUN_STARTED"), {})
    given = fixture.get("input") or {}
    return ag.RunAgentInput.model_validate(
        {
            "threadId": started.get("threadId", f"t-{fixture['name']}"),
            "runId": started.get("runId", f"r-{fixture['name']}"),
            # A legacy {"type": "binary"} part cannot enter ag_ui's model: it is upgraded first.
            "messages": upgrade_legacy_content(given.get("messages", [])),
            "tools": given.get("tools", []),
            "context": [],
            "state": None,
            "forwardedProps": None,
        }
    )


async def replay(fixture: dict[str, Any], base_url: str) -> Replay:
    """The fixture's stream, served over HTTP, into the product's SDK and its fold."""
    found = Replay()
    agent = AgUiAgent(
        f"{base_url}/{fixture['name']}",
        max_protocol_version=(fixture.get("client") or {}).get("maxProtocolVersion"),
        event_idle_timeout=10,
        run_time_limit=30,
    )
    builder = TranscriptBuilder()
    try:
        async for event, data in agent.run_frames(run_input(fixture), warnings=found.warnings):
            found.events.append(json.loads(data))
            builder.apply(event)
    except AgentError as exc:
        found.error = str(exc)
    found.transcript = builder.transcript
    # What the fold could not apply (a patch, say) is warned about with the run too.
    found.warnings += builder.transcript.errors
    return found


# --- what the client holds, as AG-UI messages -------------------------------------------------------


def held_messages(t: Transcript) -> list[dict[str, Any]]:
    """The transcript as the list of AG-UI messages a client holds after the stream, in order."""
    rows: list[tuple[int, int, dict[str, Any]]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for m in t.messages:
        wire: dict[str, Any] = {"id": m.id, "role": m.role}
        if m.role == "activity":
            record = t.activities.get(m.id)
            wire["activityType"] = record.activity_type if record else None
            wire["content"] = record.content if record else (m.parts[0] if m.parts else None)
        elif m.role == "reasoning":
            continue  # listed from t.reasoning below
        elif m.content is not None:
            wire["content"] = [_plain(p) for p in m.content]
        elif m.text or m.role != "assistant":
            wire["content"] = m.text
        for key, value in (
            ("subagentRunId", m.subagent_run_id), ("encryptedValue", m.encrypted_value),
            ("metadata", m.metadata), ("toolCallId", m.tool_call_id),
        ):  # fmt: skip
            if value is not None:
                wire[key] = value
        by_id[m.id] = wire
        rows.append((m.position, 1, wire))
    for activity in t.activities.values():
        if activity.message_id not in by_id:
            wire = {"id": activity.message_id, "role": "activity", "activityType": activity.activity_type}
            wire["content"] = activity.content
            by_id[activity.message_id] = wire
            rows.append((activity.position, 1, wire))
    for entry in t.reasoning:
        wire = {"id": entry.id, "role": "reasoning", "content": entry.text}
        if entry.encrypted_value is not None:
            wire["encryptedValue"] = entry.encrypted_value
        rows.append((entry.position, 0, wire))
    for call in t.tool_calls.values():
        parent_id = call.parent_message_id or call.id
        parent = by_id.get(parent_id)
        if parent is None:
            parent = by_id[parent_id] = {"id": parent_id, "role": "assistant"}
            rows.append((call.position, 1, parent))
        wire_call: dict[str, Any] = {
            "id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.args_text},
        }  # fmt: skip
        if call.metadata is not None:
            wire_call["metadata"] = call.metadata
        parent.setdefault("toolCalls", []).append(wire_call)
    rows.sort(key=lambda row: (row[0], row[1]))
    return [row[2] for row in rows]


def _plain(part: Any) -> Any:
    dump = getattr(part, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if dump else part


# --- the checks ---------------------------------------------------------------------------------------


def subset(expected: Any, actual: Any, where: str = "") -> list[str]:
    """Upstream's subset match: arrays the same length, objects compared on the named keys only."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where or '/'}: expected an object, got {actual!r:.80}"]
        problems = []
        for key, value in expected.items():
            if key not in actual:
                problems.append(f"{where}/{key}: missing")
            else:
                problems += subset(value, actual[key], f"{where}/{key}")
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where or '/'}: expected {len(expected)} item(s), got {actual!r:.200}"]
        problems = []
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            problems += subset(e, a, f"{where}/{index}")
        return problems
    return [] if expected == actual else [f"{where or '/'}: expected {expected!r}, got {actual!r:.80}"]


def _path(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return _MISSING
    return value


def check(fixture: dict[str, Any], found: Replay, request: Any) -> list[str]:
    """Every expectation of the fixture that the replay does not meet (empty: it passes)."""
    expect = fixture["expect"]
    problems: list[str] = []
    outcome = "failed" if found.error is not None else "completed"
    if expect.get("outcome", "completed") != outcome:
        problems.append(f"outcome: expected {expect.get('outcome')}, got {outcome} ({found.error})")
    if "errorContains" in expect and expect["errorContains"] not in (found.error or ""):
        problems.append(f"errorContains: {expect['errorContains']!r} not in {found.error!r}")
    types = [e.get("type") for e in found.events]
    if "runError" in expect:
        errors = [e for e in found.events if e.get("type") == "RUN_ERROR"]
        wanted = expect["runError"]
        if not errors or (
            isinstance(wanted, str) and not any(wanted in (e.get("message") or "") for e in errors)
        ):
            problems.append(f"runError: expected {wanted!r}, delivered {types}")
    if "eventTypes" in expect and types != expect["eventTypes"]:
        problems.append(f"eventTypes: expected {expect['eventTypes']}, got {types}")
    for absent in expect.get("eventTypesAbsent", ()):
        if absent in types:
            problems.append(f"eventTypesAbsent: {absent} was delivered")
    for dotted, value in (expect.get("eventPaths") or {}).items():
        got = _path(found.events, dotted)
        if got is _MISSING or got != value:
            problems.append(
                f"eventPaths {dotted}: expected {value!r}, got {'(absent)' if got is _MISSING else got!r}"
            )
    for dotted in expect.get("eventAbsentPaths", ()):
        if _path(found.events, dotted) is not _MISSING:
            problems.append(f"eventAbsentPaths {dotted}: present")
    for wanted in expect.get("warnings", ()):
        if not any(wanted in w for w in found.warnings):
            problems.append(f"warnings: none contains {wanted!r} ({found.warnings})")
    if expect.get("noWarnings") and found.warnings:
        problems.append(f"noWarnings: {found.warnings}")
    transcript = found.transcript or Transcript()
    messages = held_messages(transcript)
    if "messageCount" in expect and len(messages) != expect["messageCount"]:
        problems.append(f"messageCount: expected {expect['messageCount']}, got {len(messages)}: {messages}")
    if "messages" in expect:
        problems += [f"messages{p}" for p in subset(expect["messages"], messages)]
    if "state" in expect:
        problems += [f"state{p}" for p in subset(expect["state"], transcript.state)]
    if "request" in expect:
        problems += [f"request{p}" for p in subset(expect["request"], request)]
    for dotted in expect.get("requestAbsentPaths", ()):
        if _path(request, dotted) is not _MISSING:
            problems.append(f"requestAbsentPaths {dotted}: present")
    if "runOutcome" in expect:
        kind = transcript.outcome.kind if transcript.outcome else None
        if kind != expect["runOutcome"]:
            problems.append(f"runOutcome: expected {expect['runOutcome']}, got {kind}")
    if "pendingToolCallIds" in expect:
        pending = transcript.outcome.pending_tool_call_ids if transcript.outcome else None
        if pending != expect["pendingToolCallIds"]:
            problems.append(f"pendingToolCallIds: expected {expect['pendingToolCallIds']}, got {pending}")
    return problems
