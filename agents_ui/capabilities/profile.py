"""One capability profile per agent, whatever shape its declaration came in.

The categories follow AG-UI's `AgentCapabilities` (the ten of the seed and `custom`), named in
snake_case; what only the external agent policy says (file policy, stream profiles, host context,
limits, grounding) and what was negotiated or observed sit beside them. Every leaf is a `Fact`
with its provenance: readers (agents_ui.capabilities.readers) fill them, decisions read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from agents_ui.capabilities.observations import Observations
from agents_ui.capabilities.provenance import UNSAID, Fact, Kind, Provenance
from agents_ui.capabilities.values import (
    CredentialInfo,
    RateLimit,
    SkillInfo,
    SpendLimit,
    SubagentInfo,
    ToolInfo,
)


@dataclass(frozen=True, slots=True)
class Shape:
    """Which shape a declaration was read as, and how to say that it has no field for something."""

    key: str  # agui | agui-empty | crewai | strands | unknown | external | a2a | none
    label: str
    # What a reason names when the shape has no field for a control ("capabilities", "policy").
    root: str
    protocol: str | None  # agui | external | a2a; None without a declaration
    missing: str  # "Not declared: ... {what}"

    @property
    def declares_nothing(self) -> bool:
        """No declaration at all, or an empty one (`{}`): nothing is declared, not "declared"."""
        return self.key in ("none", "agui-empty")

    @property
    def unknown(self) -> bool:
        return self.key == "unknown"

    def no_field(self, what: str) -> str:
        return self.missing.format(what=what)


_AGUI_MISSING = "Not declared: AG-UI capabilities have no field for {what}"

AGUI = Shape("agui", "AG-UI capabilities", "capabilities", "agui", _AGUI_MISSING)
AGUI_EMPTY = Shape(
    "agui-empty",
    "an empty AG-UI declaration ({}): the agent declares nothing",
    "capabilities",
    "agui",
    _AGUI_MISSING,
)
CREWAI = Shape(
    "crewai",
    "CrewAI capabilities (AG-UI with CrewAI's own categories)",
    "capabilities",
    "agui",
    _AGUI_MISSING,
)
STRANDS = Shape(
    "strands",
    "AWS Strands capabilities (a shape of its own)",
    "capabilities",
    "agui",
    "Not declared: AWS Strands capabilities have no field for {what}",
)
UNKNOWN = Shape(
    "unknown",
    "a declaration in an unknown shape",
    "capabilities",
    "agui",
    "Not declared: the declaration is in an unknown shape, so nothing in it says {what}",
)
EXTERNAL = Shape(
    "external",
    "external agent policy",
    "policy",
    "external",
    "Not declared: the external agent policy has no field for {what}",
)
A2A = Shape(
    "a2a",
    "A2A Agent Card",
    "card",
    "a2a",
    "Not declared: an A2A Agent Card has no field for {what}",
)
NONE = Shape(
    "none",
    "no declaration",
    "declaration",
    None,
    "Not declared: the agent has no discovery, so nothing is known about {what}",
)


@dataclass(frozen=True, slots=True)
class Identity:
    name: Fact[str] = UNSAID
    type: Fact[str] = UNSAID  # the framework ("langgraph", "crewai" ...)
    description: Fact[str] = UNSAID
    version: Fact[str] = UNSAID
    provider: Fact[str] = UNSAID
    documentation_url: Fact[str] = UNSAID  # http(s) only
    metadata: Fact[Mapping[str, Any]] = UNSAID


@dataclass(frozen=True, slots=True)
class Transport:
    streaming: Fact[bool] = UNSAID
    websocket: Fact[bool] = UNSAID
    http_binary: Fact[bool] = UNSAID
    push_notifications: Fact[bool] = UNSAID
    resumable: Fact[bool] = UNSAID


@dataclass(frozen=True, slots=True)
class Tools:
    supported: Fact[bool] = UNSAID
    items: Fact[tuple[ToolInfo, ...]] = UNSAID
    parallel_calls: Fact[bool] = UNSAID
    client_provided: Fact[bool] = UNSAID
    # Names of the tools that wait for a person's approval before acting.
    needing_approval: Fact[tuple[str, ...]] = UNSAID


@dataclass(frozen=True, slots=True)
class Output:
    structured_output: Fact[bool] = UNSAID
    mime_types: Fact[tuple[str, ...]] = UNSAID
    module_types: Fact[tuple[str, ...]] = UNSAID  # structured output modules offered
    grounding: Fact[bool] = UNSAID  # provider grounding may be shown


@dataclass(frozen=True, slots=True)
class State:
    snapshots: Fact[bool] = UNSAID
    deltas: Fact[bool] = UNSAID
    memory: Fact[bool] = UNSAID
    persistent_state: Fact[bool] = UNSAID


@dataclass(frozen=True, slots=True)
class MultiAgent:
    supported: Fact[bool] = UNSAID
    delegation: Fact[bool] = UNSAID
    handoffs: Fact[bool] = UNSAID
    subagents: Fact[tuple[SubagentInfo, ...]] = UNSAID


@dataclass(frozen=True, slots=True)
class Reasoning:
    supported: Fact[bool] = UNSAID
    streaming: Fact[bool] = UNSAID
    encrypted: Fact[bool] = UNSAID


@dataclass(frozen=True, slots=True)
class Modalities:
    image: Fact[bool] = UNSAID
    audio: Fact[bool] = UNSAID
    video: Fact[bool] = UNSAID
    pdf: Fact[bool] = UNSAID
    file: Fact[bool] = UNSAID


@dataclass(frozen=True, slots=True)
class Multimodal:
    input: Modalities = Modalities()
    output: Modalities = Modalities()  # AG-UI says image and audio only


@dataclass(frozen=True, slots=True)
class Execution:
    code_execution: Fact[bool] = UNSAID
    sandboxed: Fact[bool] = UNSAID
    max_iterations: Fact[int] = UNSAID
    max_execution_time: Fact[int] = UNSAID  # milliseconds


@dataclass(frozen=True, slots=True)
class HumanInTheLoop:
    supported: Fact[bool] = UNSAID
    approvals: Fact[bool] = UNSAID
    interventions: Fact[bool] = UNSAID
    feedback: Fact[bool] = UNSAID
    interrupts: Fact[bool] = UNSAID
    approve_with_edits: Fact[bool] = UNSAID
    mechanism: Fact[str] = UNSAID  # how it asks ("frontend-tool-calls": through tools the client answers)


@dataclass(frozen=True, slots=True)
class Files:
    enabled: Fact[bool] = UNSAID  # the agent takes files at all
    upload: Fact[bool] = UNSAID
    read: Fact[bool] = UNSAID
    max_bytes: Fact[int] = UNSAID
    mime_types: Fact[tuple[str, ...]] = UNSAID  # exact types; an empty tuple accepts nothing


@dataclass(frozen=True, slots=True)
class Limits:
    rate_limits: Fact[tuple[RateLimit, ...]] = UNSAID  # enforced by the agent
    spend_limits: Fact[tuple[SpendLimit, ...]] = UNSAID
    requests_per_minute: Fact[int] = UNSAID  # a send rate the client is asked to keep


@dataclass(frozen=True, slots=True)
class GenerativeUI:
    """Interfaces the agent builds: A2UI (capabilities/readers/a2ui.py)."""

    a2ui: Fact[bool] = UNSAID
    catalogs: Fact[tuple[str, ...]] = UNSAID  # A2UI catalogue ids it generates


@dataclass(frozen=True, slots=True)
class StreamProfiles:
    offered: Fact[tuple[str, ...]] = UNSAID
    default: Fact[str] = UNSAID


@dataclass(frozen=True, slots=True)
class HostContext:
    accepted_fields: Fact[tuple[str, ...]] = UNSAID
    max_total_bytes: Fact[int] = UNSAID


@dataclass(frozen=True, slots=True)
class Negotiation:
    """What `prepare()` granted; `prepared` is false until it was asked."""

    prepared: bool = False
    stream_profile: Fact[str] = UNSAID
    output_module_types: Fact[tuple[str, ...]] = UNSAID
    grounding: Fact[bool] = UNSAID


@dataclass(frozen=True, slots=True)
class Thread:
    """What the protocol does with a conversation: who keeps its history, and what the person's
    answers can carry back to the agent. No declaration says these; each follows from the protocol."""

    kept_by_agent: Fact[bool] = UNSAID  # the agent keeps its own history (it cannot be rewound)
    feedback_sent: Fact[bool] = UNSAID  # a rating of an answer can be sent to the agent
    surface_actions: Fact[bool] = UNSAID  # a press on a generated interface goes back to the agent
    tool_answers: Fact[bool] = UNSAID  # a tool call the agent left can be answered by the client


def follows(source: str, path: str, value: bool, note: str) -> Fact[bool]:
    """A fact the protocol itself sets, not any field of the declaration."""
    return Fact(value, (Provenance(source, path, None, Kind.INFERRED, note),))


RUNS = "runs"
NOTHING_SEEN = Observations()


def _seen(flag: bool, name: str) -> Fact[bool]:
    return Fact(True, (Provenance(RUNS, name, True, Kind.OBSERVED),)) if flag else UNSAID


@dataclass(frozen=True, slots=True)
class Seen:
    """What runs showed, as facts: only "seen" is a fact; not seen says nothing."""

    record: Observations = NOTHING_SEEN

    def _fact(self, name: str) -> Fact[bool]:
        return _seen(getattr(self.record, name), name)

    @property
    def reasoning(self) -> Fact[bool]:
        return self._fact("reasoning_seen")

    @property
    def interrupts(self) -> Fact[bool]:
        return self._fact("interrupts_seen")

    @property
    def approvals(self) -> Fact[bool]:
        return self._fact("approvals_seen")

    @property
    def state(self) -> Fact[bool]:
        return self._fact("state_seen")

    @property
    def subagents(self) -> Fact[tuple[SubagentInfo, ...]]:
        """The sub-agents runs showed at work, by name (unknown until a run named one)."""
        names = self.record.subagent_names
        if not names:
            return UNSAID
        found = tuple(SubagentInfo(name) for name in names)
        return Fact(found, (Provenance(RUNS, "subagent_names", list(names), Kind.OBSERVED),))

    @property
    def media(self) -> Fact[bool]:
        return self._fact("media_seen")

    @property
    def a2ui(self) -> Fact[bool]:
        return self._fact("a2ui_seen")


@dataclass(frozen=True, slots=True)
class CapabilityProfile:
    """Everything known about one agent, each fact with where it came from."""

    shape: Shape
    identity: Identity = Identity()
    transport: Transport = Transport()
    tools: Tools = Tools()
    output: Output = Output()
    state: State = State()
    multi_agent: MultiAgent = MultiAgent()
    reasoning: Reasoning = Reasoning()
    multimodal: Multimodal = Multimodal()
    execution: Execution = Execution()
    human_in_the_loop: HumanInTheLoop = HumanInTheLoop()
    custom: Fact[Mapping[str, Any]] = UNSAID
    files: Files = Files()
    generative_ui: GenerativeUI = GenerativeUI()
    limits: Limits = Limits()
    stream_profiles: StreamProfiles = StreamProfiles()
    host_context: HostContext = HostContext()
    negotiation: Negotiation = Negotiation()
    seen: Seen = Seen()
    thread: Thread = Thread()
    # A2A: the skills the card names, and the credentials its security schemes require.
    skills: Fact[tuple[SkillInfo, ...]] = UNSAID
    credentials: Fact[tuple[CredentialInfo, ...]] = UNSAID
    # Fields the reader kept without acting on them: non-standard categories and extra keys.
    extensions: tuple[Provenance, ...] = ()
    # A declaration in an unknown shape: every top-level field, kept and shown, none read.
    unread: tuple[Provenance, ...] = ()
    # The document as it was read (for the explain view; never parsed again).
    raw: Mapping[str, Any] | None = None

    @property
    def protocol(self) -> str | None:
        return self.shape.protocol

    def with_observations(self, observations: Observations) -> CapabilityProfile:
        """The same profile, with what runs have shown folded in."""
        if self.seen.record.covers(observations):
            return self
        return replace(self, seen=Seen(self.seen.record | observations))
