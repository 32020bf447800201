"""The standard shape: AG-UI `AgentCapabilities` (docs/seeds/agui-capabilities.ko.txt).

Every field of the ten categories and `custom` is read; a field the agent left out is "not
declared" (unknown), never false. What is not part of the type (an extra key in a category, a
category of its own) is kept as an extension and shown, not acted on. CrewAI's declaration is this
shape plus categories of its own (readers/crewai.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents_ui.capabilities.profile import (
    AGUI,
    CapabilityProfile,
    Execution,
    Files,
    HumanInTheLoop,
    Identity,
    Limits,
    Modalities,
    MultiAgent,
    Multimodal,
    Output,
    Reasoning,
    Shape,
    State,
    Thread,
    Tools,
    Transport,
    follows,
)
from agents_ui.capabilities.provenance import UNSAID, Fact, Kind, Provenance
from agents_ui.capabilities.readers import a2ui
from agents_ui.capabilities.readers.document import Document, capped, kept
from agents_ui.capabilities.values import SubagentInfo, ToolInfo

SOURCE = "AG-UI capabilities"

# Category -> its fields, in wire names (multimodal's are its two directions).
CATEGORIES: dict[str, frozenset[str]] = {
    "identity": frozenset(
        {"name", "type", "description", "version", "provider", "documentationUrl", "metadata"}
    ),
    "transport": frozenset({"streaming", "websocket", "httpBinary", "pushNotifications", "resumable"}),
    "tools": frozenset({"supported", "items", "parallelCalls", "clientProvided"}),
    "output": frozenset({"structuredOutput", "supportedMimeTypes"}),
    "state": frozenset({"snapshots", "deltas", "memory", "persistentState"}),
    # `subAgents` is the 0.x spelling, still accepted (docs/PROTOCOLS.md 1.2).
    "multiAgent": frozenset({"supported", "delegation", "handoffs", "subagents", "subAgents"}),
    "reasoning": frozenset({"supported", "streaming", "encrypted"}),
    "multimodal": frozenset({"input", "output"}),
    "execution": frozenset({"codeExecution", "sandboxed", "maxIterations", "maxExecutionTime"}),
    # `mechanism` is CrewAI's ("frontend-tool-calls"); read wherever it is sent.
    "humanInTheLoop": frozenset(
        {"supported", "approvals", "interventions", "feedback", "interrupts", "approveWithEdits", "mechanism"}
    ),
    "custom": frozenset(),  # free-form
}
INPUT_MODALITIES = ("image", "audio", "video", "pdf", "file")
OUTPUT_MODALITIES = ("image", "audio")

NOT_STANDARD = "not part of AgentCapabilities: kept and shown, no control acts on it"
FRONTEND_TOOL_CALLS = "frontend-tool-calls"
PROTOCOL = "AG-UI protocol"

# Every AG-UI run is sent the thread's whole history, so the thread is the client's; a surface's
# action and a tool call's answer go in the next run; the protocol has no message for a rating.
THREAD = Thread(
    kept_by_agent=follows(
        PROTOCOL,
        "RunAgentInput.messages",
        False,
        "Every run is sent the whole conversation: it continues from exactly what is shown",
    ),
    feedback_sent=follows(
        PROTOCOL, "RunAgentInput", False, "AG-UI carries no rating of an answer to the agent"
    ),
    surface_actions=follows(
        PROTOCOL,
        "forwardedProps.a2uiAction",
        True,
        "A press on an interface goes to the agent in the next run",
    ),
    tool_answers=follows(
        PROTOCOL, "RunAgentInput.messages", True, "A tool call's answer goes to the agent as a tool message"
    ),
)


def is_standard(raw: Mapping[str, Any]) -> bool:
    """Whether the object declares at least one category of AgentCapabilities."""
    return any(isinstance(raw.get(name), Mapping) for name in CATEGORIES)


def read(
    raw: Mapping[str, Any],
    *,
    shape: Shape = AGUI,
    notes: Mapping[str, str] | None = None,
) -> CapabilityProfile:
    """The profile of a standard declaration; `notes` explain non-standard fields by path."""
    doc = Document(raw, SOURCE)
    return CapabilityProfile(
        shape=shape,
        identity=_identity(doc),
        transport=Transport(
            streaming=doc.flag("transport.streaming"),
            websocket=doc.flag("transport.websocket"),
            http_binary=doc.flag("transport.httpBinary"),
            push_notifications=doc.flag("transport.pushNotifications"),
            resumable=doc.flag("transport.resumable"),
        ),
        tools=_tools(doc),
        output=Output(
            structured_output=doc.flag("output.structuredOutput"),
            mime_types=doc.texts("output.supportedMimeTypes"),
        ),
        state=State(
            snapshots=doc.flag("state.snapshots"),
            deltas=doc.flag("state.deltas"),
            memory=doc.flag("state.memory"),
            persistent_state=doc.flag("state.persistentState"),
        ),
        multi_agent=_multi_agent(doc),
        reasoning=Reasoning(
            supported=doc.flag("reasoning.supported"),
            streaming=doc.flag("reasoning.streaming"),
            encrypted=doc.flag("reasoning.encrypted"),
        ),
        multimodal=Multimodal(
            input=Modalities(**{name: doc.flag(f"multimodal.input.{name}") for name in INPUT_MODALITIES}),
            output=Modalities(**{name: doc.flag(f"multimodal.output.{name}") for name in OUTPUT_MODALITIES}),
        ),
        execution=Execution(
            code_execution=doc.flag("execution.codeExecution"),
            sandboxed=doc.flag("execution.sandboxed"),
            max_iterations=doc.count("execution.maxIterations"),
            max_execution_time=doc.count("execution.maxExecutionTime"),
        ),
        human_in_the_loop=HumanInTheLoop(
            supported=doc.flag("humanInTheLoop.supported"),
            approvals=doc.flag("humanInTheLoop.approvals"),
            interventions=doc.flag("humanInTheLoop.interventions"),
            feedback=doc.flag("humanInTheLoop.feedback"),
            interrupts=doc.flag("humanInTheLoop.interrupts"),
            approve_with_edits=doc.flag("humanInTheLoop.approveWithEdits"),
            mechanism=_present(doc.text("humanInTheLoop.mechanism")),
        ),
        custom=doc.mapping("custom"),
        files=_custom_files(doc),
        generative_ui=a2ui.from_custom(doc),
        limits=Limits(
            requests_per_minute=doc.count(
                "custom.rateLimit.maxRequestsPerMinute", note="the seed's own example of a custom capability"
            )
        ),
        extensions=_extensions(raw, notes or {}),
        raw=raw,
    )


def _present(fact: Fact[Any]) -> Fact[Any]:
    """A field only some agents send: its absence says nothing, so it is not listed as undeclared."""
    return fact if fact.origin is not None and fact.origin.present else UNSAID


def _identity(doc: Document) -> Identity:
    return Identity(
        name=doc.text("identity.name"),
        type=doc.text("identity.type"),
        description=doc.text("identity.description"),
        version=doc.text("identity.version"),
        provider=doc.text("identity.provider"),
        documentation_url=doc.url("identity.documentationUrl"),
        metadata=doc.mapping("identity.metadata"),
    )


def _tool(raw: Any) -> ToolInfo | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
        return None
    description = raw.get("description")
    return ToolInfo(
        name=raw["name"],
        description=description if isinstance(description, str) else None,
        schema=raw.get("parameters"),
    )


def _tools(doc: Document) -> Tools:
    supported = doc.flag("tools.supported")
    client_provided = doc.flag("tools.clientProvided")
    mechanism = doc.at("humanInTheLoop.mechanism")
    if not client_provided.known and mechanism == FRONTEND_TOOL_CALLS:
        client_provided = Fact(
            True,
            (
                doc.provenance(
                    "humanInTheLoop.mechanism",
                    Kind.INFERRED,
                    "the agent asks people through tool calls the client answers: it takes the "
                    "client's tools",
                ),
                *client_provided.provenance,
            ),
        )
    return Tools(
        supported=supported,
        items=doc.items("tools.items", _tool),
        parallel_calls=doc.flag("tools.parallelCalls"),
        client_provided=client_provided,
    )


def _subagent(raw: Any) -> SubagentInfo | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
        return None
    description = raw.get("description")
    return SubagentInfo(raw["name"], description if isinstance(description, str) else None)


def _multi_agent(doc: Document) -> MultiAgent:
    path = "multiAgent.subagents"
    if doc.at(path) is None and doc.at("multiAgent.subAgents") is not None:
        path = "multiAgent.subAgents"
    return MultiAgent(
        supported=doc.flag("multiAgent.supported"),
        delegation=doc.flag("multiAgent.delegation"),
        handoffs=doc.flag("multiAgent.handoffs"),
        subagents=doc.items(path, _subagent),
    )


def _custom_files(doc: Document) -> Files:
    """AG-UI has no field for upload limits; this product reads `custom.input` where an agent sends
    it (docs/protocol-decisions.md): {"maxBytes": int, "mimeTypes": [exact types]}."""
    note = "this product's convention for upload limits (docs/protocol-decisions.md)"
    mime_types = doc.texts("custom.input.mimeTypes", note=note)
    if not mime_types.value:  # an empty list declares no limit here
        mime_types = UNSAID
    return Files(max_bytes=_present(doc.count("custom.input.maxBytes", note=note)), mime_types=mime_types)


def _extensions(raw: Mapping[str, Any], notes: Mapping[str, str]) -> tuple[Provenance, ...]:
    """Fields that are not part of AgentCapabilities, in the order they were sent (a bounded number)."""

    def note(path: str) -> str:
        return notes.get(path, NOT_STANDARD)

    found: list[Provenance] = []
    for key, value in raw.items():
        known = CATEGORIES.get(key)
        if known is None:
            found.append(Provenance(SOURCE, key, value, Kind.DECLARED, note(key)))
        elif known and isinstance(value, Mapping):
            odd = {field: inner for field, inner in value.items() if field not in known}
            found += kept(SOURCE, odd, note, f"{key}.")
            for direction, allowed in (("input", INPUT_MODALITIES), ("output", OUTPUT_MODALITIES)):
                flags = value.get(direction) if key == "multimodal" else None
                if isinstance(flags, Mapping):
                    odd = {name: flag for name, flag in flags.items() if name not in allowed}
                    found += kept(SOURCE, odd, note, f"multimodal.{direction}.")
    return capped(SOURCE, found)
