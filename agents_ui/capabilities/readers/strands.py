"""AWS Strands (`@ag-ui/aws-strands`'s `addCapabilities`): a shape of its own.

`{protocol: "1", transports: {sse, protobuf, websocket}, events: {<EVENT_TYPE>: bool},
features: {interrupts, toolCallInterruptEditedArgs, resumableStreams, messagesSnapshot, stateDelta,
protobuf, multipleRunsPerStream}}` (source: integrations/aws-strands/typescript/src/endpoint.ts in
ag-ui-protocol/ag-ui). Each flag is read into the AG-UI fact it means; a flag about which events it
emits says what AG-UI's state flags say ("emits STATE_SNAPSHOT"), and reasoning events say that it
reasons (inferred). Identity, tools, sub-agents, multimodal, execution, feedback and approvals in
AG-UI's sense are not in this shape: they stay unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents_ui.capabilities.profile import (
    STRANDS,
    CapabilityProfile,
    HumanInTheLoop,
    Reasoning,
    State,
    Tools,
    Transport,
)
from agents_ui.capabilities.provenance import Kind, Provenance, any_flag
from agents_ui.capabilities.readers.document import Document, capped, kept

SOURCE = "AWS Strands capabilities"
KEYS = ("transports", "events", "features")

# Flags read into the profile; every other field is kept as an extension.
_READ = frozenset(
    {
        "transports.sse",
        "transports.protobuf",
        "transports.websocket",
        "features.interrupts",
        "features.toolCallInterruptEditedArgs",
        "features.resumableStreams",
        "features.stateDelta",
        "features.protobuf",
        "events.STATE_SNAPSHOT",
        "events.STATE_DELTA",
        "events.REASONING_START",
        "events.TOOL_CALL_START",
        "events.TOOL_CALL_CHUNK",
    }
)

NOTES: dict[str, str] = {
    "protocol": "the version of the AG-UI contract the adapter targets",
    "features.messagesSnapshot": "it sends MESSAGES_SNAPSHOT at run boundaries: read in every run anyway",
    "features.multipleRunsPerStream": "one run per request is what this product sends anyway",
}


def looks_like(raw: Mapping[str, Any]) -> bool:
    return any(isinstance(raw.get(key), Mapping) for key in KEYS)


def _means(field: str) -> str:
    return f"what AG-UI calls {field}"


def read(raw: Mapping[str, Any]) -> CapabilityProfile:
    doc = Document(raw, SOURCE)
    return CapabilityProfile(
        shape=STRANDS,
        transport=Transport(
            streaming=doc.flag("transports.sse", note="SSE: the agent streams its answers"),
            websocket=doc.flag("transports.websocket", note=_means("transport.websocket")),
            http_binary=any_flag(
                doc.flag("features.protobuf", note=_means("transport.httpBinary")),
                doc.flag("transports.protobuf", note=_means("transport.httpBinary")),
            ),
            resumable=doc.flag("features.resumableStreams", note=_means("transport.resumable")),
        ),
        human_in_the_loop=HumanInTheLoop(
            interrupts=doc.flag("features.interrupts", note=_means("humanInTheLoop.interrupts")),
            approve_with_edits=doc.flag(
                "features.toolCallInterruptEditedArgs", note=_means("humanInTheLoop.approveWithEdits")
            ),
        ),
        state=State(
            snapshots=doc.flag("events.STATE_SNAPSHOT", note="it emits STATE_SNAPSHOT: state.snapshots"),
            deltas=any_flag(
                doc.flag("features.stateDelta", note=_means("state.deltas")),
                doc.flag("events.STATE_DELTA", note="it emits STATE_DELTA: state.deltas"),
            ),
        ),
        reasoning=Reasoning(
            supported=doc.flag(
                "events.REASONING_START", kind=Kind.INFERRED, note="it emits reasoning events, so it reasons"
            )
        ),
        tools=Tools(
            supported=any_flag(
                doc.flag("events.TOOL_CALL_START", kind=Kind.INFERRED, note="it emits tool calls"),
                doc.flag("events.TOOL_CALL_CHUNK", kind=Kind.INFERRED, note="it emits tool calls"),
            )
        ),
        extensions=_extensions(raw),
        raw=raw,
    )


def _extensions(raw: Mapping[str, Any]) -> tuple[Provenance, ...]:
    def note(path: str) -> str:
        return NOTES.get(path, "")

    found: list[Provenance] = []
    for key, value in raw.items():
        if key == "events":
            # One line for the whole matrix: a flag per event type is too fine for the explain view.
            note_text = "the event types it emits: state, reasoning and tool call flags are read from it"
            found.append(Provenance(SOURCE, key, value, Kind.DECLARED, note_text))
        elif key in KEYS and isinstance(value, Mapping):
            unread = {name: flag for name, flag in value.items() if f"{key}.{name}" not in _READ}
            found += kept(SOURCE, unread, note, f"{key}.")
        else:
            found.append(Provenance(SOURCE, key, value, Kind.DECLARED, note(key)))
    return capped(SOURCE, found)
