"""Models of the external-agent policy API (docs/PROTOCOLS.md section 2).

Wire names are camelCase; Python attributes are snake_case. Both spellings populate a model and
unknown fields are kept (``extra="allow"``), so a newer agent does not break an older client.
Models serialise by alias, so ``model_dump()`` / ``model_dump_json()`` already produce wire JSON.

The stream event models of section 2.2 live here too, so that the demo agents (which write them)
and the client (which reads them) share one definition.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from ..limits import safe_link

__all__ = [
    "CHAT_LEGACY_V1",
    "EXTERNAL_EVENT_TYPES",
    "MODULES_V1",
    "RUNTIME_STANDARD_V1",
    "STREAM_PROFILES",
    "ApprovalDecision",
    "ApprovalRequested",
    "ApprovalResolved",
    "ArtifactContent",
    "ArtifactCreated",
    "DomainTool",
    "DomainToolOperation",
    "Done",
    "ErrorBody",
    "ErrorDetail",
    "ExternalConversation",
    "ExternalEvent",
    "FileInfo",
    "FilePolicy",
    "GroundingEvent",
    "GroundingSource",
    "HostContextPolicy",
    "Idempotency",
    "Identity",
    "InteractionRequest",
    "LegacyText",
    "MessageCompleted",
    "MessageDelta",
    "MessageRequest",
    "MessageStarted",
    "ModuleEvent",
    "Negotiated",
    "PolicyCapabilities",
    "PrepareRequest",
    "PrepareResult",
    "PublicErrorDetail",
    "PublicExternalAgentPolicy",
    "RateLimit",
    "RunCompleted",
    "RunFailed",
    "RunStarted",
    "SdkRequirement",
    "SideEffectClass",
    "SpendLimit",
    "ToolCompleted",
    "ToolStarted",
    "ToolStatus",
]

RUNTIME_STANDARD_V1 = "runtime-standard-v1"
MODULES_V1 = "modules-v1"
CHAT_LEGACY_V1 = "chat-legacy-v1"
STREAM_PROFILES = (RUNTIME_STANDARD_V1, MODULES_V1, CHAT_LEGACY_V1)

SideEffectClass = Literal["none", "read", "write", "external", "financial", "destructive"]
Idempotency = Literal["idempotent", "non_idempotent"]
ToolStatus = Literal["active", "degraded", "disabled"]
PublicErrorDetail = Literal["minimal", "standard", "diagnostic"]


class PolicyModel(BaseModel):
    """Base of every policy-API model: camelCase on the wire, snake_case in Python, extras kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="allow",
    )


# --- 2.1 policy -----------------------------------------------------------------------------------


class Identity(PolicyModel):
    name: str | None = None
    description: str | None = None
    version: str | None = None
    provider: str | None = None


class PolicyCapabilities(PolicyModel):
    """What the agent offers. An absent flag is read as "not offered": the policy is the agent's
    full public statement, unlike AG-UI discovery where absent means unknown."""

    messages: bool = False
    conversations: bool = False
    files: bool = False
    artifacts: bool = False
    interactions: bool = False
    approvals: bool = False


class DomainToolOperation(PolicyModel):
    kind: str
    side_effect_class: SideEffectClass
    idempotency: Idempotency
    approval_required: bool = False


class DomainTool(PolicyModel):
    public_name: str
    description: str = ""
    operation: DomainToolOperation
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    status: ToolStatus = "active"


class FilePolicy(PolicyModel):
    upload: bool = False
    read: bool = False
    max_upload_bytes: int | None = Field(default=None, ge=0)
    allowed_mime_types: list[str] = Field(default_factory=list)

    def allows_mime_type(self, mime_type: str) -> bool:
        """Whether ``mime_type`` is in ``allowed_mime_types`` (``type/*`` and ``*/*`` patterns too)."""
        mime_type = mime_type.split(";", 1)[0].strip().lower()
        major = mime_type.split("/", 1)[0]
        for allowed in self.allowed_mime_types:
            allowed = allowed.strip().lower()
            if allowed in (mime_type, "*/*", "*") or allowed == f"{major}/*":
                return True
        return False


class HostContextPolicy(PolicyModel):
    accepted_fields: list[str] = Field(default_factory=list)
    max_total_bytes: int | None = Field(default=None, ge=0)


class RateLimit(PolicyModel):
    scope: str
    limit: int
    window_seconds: int


class SpendLimit(PolicyModel):
    scope: str
    limit: float
    currency: str
    window_seconds: int


class SdkRequirement(PolicyModel):
    min_version: str | None = None


class PublicExternalAgentPolicy(PolicyModel):
    """``GET {base}/policy``: what an external agent publicly offers (docs/PROTOCOLS.md 2.1)."""

    identity: Identity | None = None
    capabilities: PolicyCapabilities = Field(default_factory=PolicyCapabilities)
    stream_profiles: list[str] = Field(default_factory=list)
    default_stream_profile: str | None = None
    output_module_types: list[str] = Field(default_factory=list)
    provider_grounding_display: bool = False
    domain_tools: list[DomainTool] = Field(default_factory=list)
    file_policy: FilePolicy = Field(default_factory=FilePolicy)
    host_context_policy: HostContextPolicy = Field(default_factory=HostContextPolicy)
    rate_limits: list[RateLimit] = Field(default_factory=list)
    spend_limits: list[SpendLimit] = Field(default_factory=list)
    public_error_detail: PublicErrorDetail = "standard"
    sdk: SdkRequirement | None = None


class PrepareRequest(PolicyModel):
    """Body of ``POST {base}/prepare``: what the client would like. Unset fields are left out."""

    stream_profile: str | None = None
    output_module_types: list[str] | None = None
    provider_grounding_display: bool | None = None


class Negotiated(PolicyModel):
    """What the agent actually granted. A client reads this, never its own request."""

    stream_profile: str
    output_module_types: list[str] = Field(default_factory=list)
    provider_grounding_display: bool = False


class PrepareResult(PolicyModel):
    policy: PublicExternalAgentPolicy
    negotiated: Negotiated


# --- 2.2 resources ---------------------------------------------------------------------------------


class ExternalConversation(PolicyModel):
    id: str


class MessageRequest(PolicyModel):
    content: str
    file_ids: list[str] | None = None
    host_context: dict[str, Any] | None = None
    stream_profile: str
    output_module_types: list[str] | None = None


class ApprovalDecision(PolicyModel):
    decision: Literal["approve", "deny"]
    edited_input: dict[str, Any] | None = None
    reason: str | None = None


class FileInfo(PolicyModel):
    id: str
    name: str
    mime_type: str
    size: int


class ArtifactContent(PolicyModel):
    id: str
    name: str | None = None
    mime_type: str | None = None
    size: int | None = None
    # The artifact itself, as text (GET /artifacts/{id} only).
    content: str | None = None


class InteractionRequest(PolicyModel):
    conversation_id: str
    message_id: str
    type: Literal["feedback"] = "feedback"
    value: Literal["up", "down"]
    comment: str | None = None


# --- 2.3 errors ------------------------------------------------------------------------------------


class ErrorDetail(PolicyModel):
    code: str
    message: str | None = None
    capability: str | None = None
    request_id: str | None = None
    details: Any = None


class ErrorBody(PolicyModel):
    """Every non-2xx answer: ``{"error": {...}}``."""

    error: ErrorDetail


# --- 2.2 stream events -----------------------------------------------------------------------------


class ExternalEvent(PolicyModel):
    """One event of an external agent's stream. ``sequence`` is the frame's ``id:`` line, not data."""

    event_name: ClassVar[str] = ""
    sequence: int | None = Field(default=None, exclude=True)

    def to_sse(self, sequence: int | None = None) -> str:
        """Encode as one SSE frame (used by agents that speak this protocol, e.g. the demo agents)."""
        data = self.model_dump_json(exclude_none=True)
        head = f"id: {sequence}\n" if sequence is not None else ""
        return f"{head}event: {self.event_name}\ndata: {data}\n\n"


class RunStarted(ExternalEvent):
    event_name: ClassVar[str] = "run:started"
    run_id: str
    conversation_id: str | None = None


class MessageStarted(ExternalEvent):
    event_name: ClassVar[str] = "message:started"
    message_id: str
    role: str = "assistant"


class MessageDelta(ExternalEvent):
    event_name: ClassVar[str] = "message:delta"
    message_id: str
    delta: str


class MessageCompleted(ExternalEvent):
    event_name: ClassVar[str] = "message:completed"
    message_id: str
    content: str | None = None


class ToolStarted(ExternalEvent):
    event_name: ClassVar[str] = "tool:started"
    tool_call_id: str
    public_name: str
    input: Any = None


class ToolCompleted(ExternalEvent):
    event_name: ClassVar[str] = "tool:completed"
    tool_call_id: str
    status: str
    output: Any = None


class ApprovalRequested(ExternalEvent):
    event_name: ClassVar[str] = "approval:requested"
    approval_id: str
    tool_call_id: str | None = None
    public_name: str | None = None
    input: Any = None
    side_effect_class: str | None = None
    expires_at: str | None = None


class ApprovalResolved(ExternalEvent):
    event_name: ClassVar[str] = "approval:resolved"
    approval_id: str
    decision: str


class ModuleEvent(ExternalEvent):
    event_name: ClassVar[str] = "module"
    type: str
    data: Any = None


class GroundingSource(PolicyModel):
    title: str | None = None
    # Shown as a link: anything but an absolute http(s) URL is dropped.
    url: str | None = None
    snippet: str | None = None

    @field_validator("url", mode="before")
    @classmethod
    def _only_web_links(cls, value: Any) -> str | None:
        return safe_link(value)


class GroundingEvent(ExternalEvent):
    event_name: ClassVar[str] = "grounding"
    sources: list[GroundingSource] = Field(default_factory=list)


class ArtifactCreated(ExternalEvent):
    event_name: ClassVar[str] = "artifact:created"
    artifact_id: str
    name: str | None = None
    mime_type: str | None = None
    size: int | None = None


class RunCompleted(ExternalEvent):
    event_name: ClassVar[str] = "run:completed"
    run_id: str | None = None
    usage: dict[str, Any] | None = None


class RunFailed(ExternalEvent):
    event_name: ClassVar[str] = "run:failed"
    # Agents send either a bare message or the section 2.3 error object.
    error: ErrorDetail | str | dict[str, Any] | None = None

    @property
    def message(self) -> str:
        error = self.error
        if isinstance(error, ErrorDetail):
            return error.message or error.code
        if isinstance(error, dict):
            return str(error.get("message") or error.get("code") or "the run failed")
        return error or "the run failed"


class LegacyText(ExternalEvent):
    """``chat-legacy-v1``: an unnamed ``data: {"text": ...}`` frame."""

    event_name: ClassVar[str] = ""
    text: str

    def to_sse(self, sequence: int | None = None) -> str:
        return f"data: {json.dumps({'text': self.text})}\n\n"


class Done(ExternalEvent):
    """``chat-legacy-v1``: the last frame, ``data: [DONE]``."""

    event_name: ClassVar[str] = ""

    def to_sse(self, sequence: int | None = None) -> str:
        return "data: [DONE]\n\n"


# Named events by their ``event:`` line. LegacyText and Done are unnamed frames.
EXTERNAL_EVENT_TYPES: dict[str, type[ExternalEvent]] = {
    cls.event_name: cls
    for cls in (
        RunStarted,
        MessageStarted,
        MessageDelta,
        MessageCompleted,
        ToolStarted,
        ToolCompleted,
        ApprovalRequested,
        ApprovalResolved,
        ModuleEvent,
        GroundingEvent,
        ArtifactCreated,
        RunCompleted,
        RunFailed,
    )
}
