"""The plan of a workspace: which controls an agent gets, and the reasons behind each one.

`decide()` is one pure function of five sources, read in this order:

1. declared: the AG-UI `AgentCapabilities`, or the external agent's `PublicExternalAgentPolicy`;
2. negotiated: what `prepare()` granted (stream profile, output modules, grounding);
3. observed: what runs have shown (reasoning emitted although never declared ...);
4. override: the admin's per-endpoint `{control: "hide" | "allow"}`;
5. user: what the current user may do (Django permissions, passed in as `UserAbilities`).

Absent means unknown, never unsupported: only an explicit `false` (or an explicitly empty list)
says "unsupported". An unknown control is hidden until a run shows evidence of it or an admin
allows it, and its reasons say "not declared". No I/O and no Django import here: the caller
reads the declaration, the endpoint and the user, and templates only read the plan.

Rules chosen where docs/PROTOCOLS.md is silent:
- Evidence wins over the declaration: reasoning, interrupts or state seen in a run show the
  control even when the agent declared it false (what arrives must be renderable); the reasons
  say the declaration and the run disagree.
- "hide" always wins, except on the identity card, which is always shown: a user must know which
  agent they are talking to.
- "allow" shows a control only where the declaration is silent. It never overrides an explicit
  false (the agent would answer 403 or ignore it); the reasons say so.
- A permission never hides: a user without it sees the control disabled (approvals: the request
  is visible, deciding it is not).
- An explicit `humanInTheLoop.supported`, `multiAgent.supported` or `tools.supported` of false
  makes its specific fields false when they are absent.
- External approvals: a domain tool with `approvalRequired` shows the approval workflow; if the
  policy also says `capabilities.approvals: false`, the workflow is disabled (requests can be
  seen, not decided: the agent denies them when they expire).
- External stop: every external message stream is SSE and can be stopped by closing it, so stop
  follows `capabilities.messages`; there is no "intervene" for external agents.
- External policy: a field the agent did not send is unknown, even where the SDK model defaults
  it to false or []: only `model_fields_set` counts as declared. Without `allowedMimeTypes` any
  type is offered (the agent checks it); an explicitly empty list accepts nothing.
- AG-UI `tools.items` listed without `tools.supported` is a declaration in itself: shown. Only
  `tools.supported: false` hides listed tools.
- Limits are never "unsupported" for AG-UI (a number can only say there is a limit); for an
  external agent, explicitly empty `rateLimits` and `spendLimits` mean none.
- Grounding and structured output follow what was negotiated; before `prepare()` they are
  unknown, unless the policy already rules them out.
- Byte sizes are labelled in binary units ("10 MB" = 10 x 1024 x 1024 bytes).

Details per control (keys always present, None where not declared):
identity: name, description, version, provider, documentation_url, framework
reasoning: streaming, encrypted
subagents: subagents [{name, description}], delegation, handoffs
upload: accept [MIME patterns, empty = any], accept_any, accept_attr (for <input accept>),
  max_bytes, max_bytes_label, read
approvals: approvals, interrupts, approve_with_edits, tools_needing_approval [tool entries]
tools: tools [{name, description, schema, output_schema, status, kind, side_effect_class,
  idempotency, approval_required}], parallel_calls, client_provided
state: snapshots, deltas, persistent_state, memory
structured-output: module_types (granted), offered_module_types, mime_types
grounding: negotiated, offered
feedback: (none)
stop: intervene, streaming
limits: max_iterations, max_execution_time (ms), max_execution_time_label, rate_limits, spend_limits
host-context: accepted_fields, max_total_bytes, max_total_bytes_label
stream-profile: offered, default, negotiated, chooser (several offered)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ag_ui.core import AgentCapabilities

    from agents_ui.sdk.policy import Negotiated, PublicExternalAgentPolicy

# The markup contract: templates and the explain view use exactly these names, in this order.
CONTROL_NAMES: tuple[str, ...] = (
    "identity",
    "reasoning",
    "subagents",
    "upload",
    "approvals",
    "tools",
    "state",
    "structured-output",
    "grounding",
    "feedback",
    "stop",
    "limits",
    "host-context",
    "stream-profile",
)

CONTROL_LABELS: dict[str, str] = {
    "identity": "Identity card",
    "reasoning": "Reasoning panel",
    "subagents": "Sub-agent selector",
    "upload": "Upload button",
    "approvals": "Approval workflow",
    "tools": "Tool list",
    "state": "State panel",
    "structured-output": "Structured output",
    "grounding": "Grounding sources",
    "feedback": "Feedback buttons",
    "stop": "Stop / intervene",
    "limits": "Limits",
    "host-context": "Host context notice",
    "stream-profile": "Stream profile",
}

Source = Literal["declared", "negotiated", "override", "user", "observed", "default"]
Protocol = Literal["agui", "external"]


class Decision(StrEnum):
    SHOWN = "shown"
    HIDDEN = "hidden"
    DISABLED = "disabled"


@dataclass(frozen=True)
class Reason:
    """One link of a decision's chain: which source said what, in a sentence for the explain view."""

    source: Source
    field: str
    value: Any
    text: str


@dataclass(frozen=True)
class ControlDecision:
    name: str
    decision: Decision
    reasons: tuple[Reason, ...]
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return CONTROL_LABELS[self.name]

    @property
    def shown(self) -> bool:
        return self.decision is Decision.SHOWN

    @property
    def hidden(self) -> bool:
        return self.decision is Decision.HIDDEN

    @property
    def disabled(self) -> bool:
        return self.decision is Decision.DISABLED

    @property
    def visible(self) -> bool:
        """On the page: shown, or disabled (seen but not usable by this user)."""
        return self.decision is not Decision.HIDDEN


@dataclass(frozen=True)
class Observations:
    """Evidence from runs, kept apart from the declaration (docs/PROTOCOLS.md 1.2)."""

    reasoning_seen: bool = False
    interrupts_seen: bool = False
    state_seen: bool = False


# Django permission -> UserAbilities attribute.
PERMISSIONS: dict[str, str] = {
    "agents_ui.upload_files": "can_upload",
    "agents_ui.approve_actions": "can_approve",
    "agents_ui.view_reasoning": "can_view_reasoning",
}


@dataclass(frozen=True)
class UserAbilities:
    can_upload: bool = True
    can_approve: bool = True
    can_view_reasoning: bool = True

    @classmethod
    def from_permissions(cls, perms: Iterable[str]) -> UserAbilities:
        """From `user.get_all_permissions()` ("agents_ui.upload_files", ...)."""
        granted = set(perms)
        return cls(**{attr: perm in granted for perm, attr in PERMISSIONS.items()})


@dataclass(frozen=True)
class Plan:
    """Every control of the table, in table order, each with its decision, details and reasons."""

    controls: dict[str, ControlDecision]
    # Which declaration the plan was read from; None when the agent declares nothing.
    protocol: Protocol | None = None

    def __getitem__(self, name: str) -> ControlDecision:
        # Underscores work too, so a template can write plan.structured_output.
        return self.controls[name.replace("_", "-")]

    def __iter__(self) -> Iterator[ControlDecision]:
        return iter(self.controls.values())

    def visible(self) -> tuple[ControlDecision, ...]:
        return tuple(control for control in self.controls.values() if control.visible)


# ------------------------------------------------------------------------------------------------
# Reading the sources


@dataclass(frozen=True)
class _Sources:
    capabilities: AgentCapabilities | None
    policy: PublicExternalAgentPolicy | None
    negotiated: Negotiated | None
    observed: Observations
    fallback_identity: Mapping[str, Any]


@dataclass
class _Evidence:
    """What the declaration, the negotiation and the runs say about one control, before the admin and
    the user: supported (True), unsupported (False) or unknown (None)."""

    support: bool | None = None
    reasons: list[Reason] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    # Visible but unusable whatever the user may do (a contradiction inside the declaration).
    blocked: Reason | None = None

    def read(self, source: Source, name: str, value: Any, text: str | None = None) -> Any:
        self.reasons.append(Reason(source, name, value, text or _describe(name, value)))
        return value

    def declared(self, name: str, value: Any, text: str | None = None) -> Any:
        return self.read("declared", name, value, text)

    def declared_under(self, name: str, value: bool | None, parent: str, parent_value: bool | None) -> Any:
        """A flag of a category that was switched off explicitly (`supported: false`): absent is false."""
        if value is None and parent_value is False:
            self.declared(name, None, f"{name} is not declared, and {parent} is false: unsupported")
            return False
        return self.declared(name, value)

    def not_in_protocol(self, src: _Sources, what: str) -> None:
        if src.policy is not None:
            self.declared("policy", None, f"Not declared: the external agent policy has no field for {what}")
        elif src.capabilities is not None:
            self.declared("capabilities", None, f"Not declared: AG-UI capabilities have no field for {what}")
        else:
            self.declared(
                "declaration",
                None,
                f"Not declared: the agent has no discovery, so nothing is known about {what}",
            )

    def observe(self, seen: bool, name: str, what: str) -> None:
        if not seen:
            return
        if self.support is True:
            text = f"{what} in a run, as declared"
        elif self.support is False:
            text = f"{what} in a run although it was declared unsupported: what the agent does wins"
        else:
            text = f"{what} in a run although it was never declared"
        self.support = True
        self.read("observed", name, True, text)


def _describe(name: str, value: Any) -> str:
    if value is None:
        return f"{name} is not declared"
    if isinstance(value, list | tuple) and not value:
        return f"{name} is empty"
    return f"{name} is {_show(value)}"


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(_show(item) for item in value)
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, default=str)


def _get(obj: Any, *path: str) -> Any:
    """obj.a.b..., or None as soon as one step was not declared.

    A pydantic default is not a declaration: the SDK defaults an absent policy flag to false, but
    absent still means unknown here, so only fields the agent actually sent (`model_fields_set`)
    are read.
    """
    for attr in path:
        if obj is None:
            return None
        declared = getattr(obj, "model_fields_set", None)
        if declared is not None and attr in type(obj).model_fields and attr not in declared:
            return None
        obj = getattr(obj, attr, None)
    return obj


def _any_true(values: Iterable[bool | None]) -> bool | None:
    """True if one is true; False only if every one is explicitly false; otherwise unknown."""
    values = list(values)
    if any(value is True for value in values):
        return True
    if values and all(value is False for value in values):
        return False
    return None


def _size_label(size: int | None) -> str | None:
    if size is None:
        return None
    amount = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if amount < 1024 or unit == "GB":
            break
        amount /= 1024
    if unit == "bytes":
        return f"{size} bytes"
    return f"{amount:.0f} {unit}" if amount == int(amount) else f"{amount:.1f} {unit}"


def _duration_label(milliseconds: int | None) -> str | None:
    if milliseconds is None:
        return None
    if milliseconds < 1000:
        return f"{milliseconds} ms"
    seconds = milliseconds / 1000
    if seconds < 60:
        return f"{seconds:g} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def _dump(items: Sequence[Any] | None) -> list[dict[str, Any]]:
    """Pydantic models as plain dicts with snake_case keys, for templates."""
    return [item.model_dump(by_alias=False) for item in items or ()]


# ------------------------------------------------------------------------------------------------
# One function per control: the declared, negotiated and observed evidence, and the details.


def _identity(src: _Sources) -> _Evidence:
    ev = _Evidence(support=True)
    # details key -> (attribute, wire name) of what each protocol declares.
    fields = {"name": ("name", "name"), "description": ("description", "description")}
    fields |= {"version": ("version", "version"), "provider": ("provider", "provider")}
    declared = None
    if src.capabilities is not None:
        declared = _get(src.capabilities, "identity")
        fields |= {
            "documentation_url": ("documentation_url", "documentationUrl"),
            "framework": ("type", "type"),
        }
    elif src.policy is not None:
        declared = _get(src.policy, "identity")
    else:
        fields = {}
        ev.not_in_protocol(src, "its identity")
    for key in ("name", "description", "version", "provider", "documentation_url", "framework"):
        attr, wire = fields.get(key, (key, key))
        value = _get(declared, attr)
        if key in fields:
            ev.declared(f"identity.{wire}", value)
        if value is None and src.fallback_identity.get(key):
            value = src.fallback_identity[key]
            ev.read(
                "default", f"identity.{wire}", value, f"The admin's {key.replace('_', ' ')} is shown instead"
            )
        ev.details[key] = value
    ev.read("default", "identity", None, "The identity card is always shown")
    return ev


def _reasoning(src: _Sources) -> _Evidence:
    ev = _Evidence()
    reasoning = _get(src.capabilities, "reasoning")
    ev.details.update(streaming=None, encrypted=None)
    if src.capabilities is not None:
        ev.support = ev.declared("reasoning.supported", _get(reasoning, "supported"))
        streaming = ev.details["streaming"] = _get(reasoning, "streaming")
        encrypted = ev.details["encrypted"] = _get(reasoning, "encrypted")
        if streaming is not None:
            live = "live, as it streams" if streaming else "at the end of each step"
            ev.declared(
                "reasoning.streaming", streaming, f"reasoning.streaming is {_show(streaming)}: shown {live}"
            )
        if encrypted:
            ev.declared(
                "reasoning.encrypted",
                True,
                "reasoning.encrypted is true: a 'reasoning hidden' notice is shown, never the value",
            )
    else:
        ev.not_in_protocol(src, "reasoning")
    ev.observe(src.observed.reasoning_seen, "reasoning_seen", "The agent emitted reasoning")
    return ev


def _subagents(src: _Sources) -> _Evidence:
    ev = _Evidence()
    ev.details.update(subagents=[], delegation=None, handoffs=None)
    if src.capabilities is None:
        ev.not_in_protocol(src, "sub-agents")
        return ev
    multi = _get(src.capabilities, "multi_agent")
    supported = _get(multi, "supported")
    subagents = _get(multi, "subagents")
    if supported is False:
        ev.declared(
            "multiAgent.supported", False, "multiAgent.supported is false: no multi-agent coordination"
        )
        ev.support = False
    names = [item.name for item in subagents] if subagents is not None else None
    ev.declared("multiAgent.subagents", names)
    if ev.support is None and subagents is not None:
        ev.support = bool(subagents)
    ev.details["subagents"] = [
        {"name": item.name, "description": item.description} for item in subagents or ()
    ]
    for flag in ("delegation", "handoffs"):
        value = ev.details[flag] = _get(multi, flag)
        if value is not None:
            ev.declared(f"multiAgent.{flag}", value)
    return ev


# AG-UI input modality -> what an <input accept> takes; "file" means any other kind, so any type.
_MODALITY_ACCEPT = {"image": "image/*", "audio": "audio/*", "video": "video/*", "pdf": "application/pdf"}


def _upload(src: _Sources) -> _Evidence:
    ev = _Evidence()
    accept: list[str] = []
    max_bytes: int | None = None
    read: bool | None = None
    if src.capabilities is not None:
        inputs = _get(src.capabilities, "multimodal", "input")
        modalities = {name: _get(inputs, name) for name in (*_MODALITY_ACCEPT, "file")}
        for name, value in modalities.items():
            ev.declared(f"multimodal.input.{name}", value)
        ev.support = _any_true(modalities.values())
        if not modalities["file"]:
            accept = [pattern for name, pattern in _MODALITY_ACCEPT.items() if modalities[name]]
        # AG-UI has no field for upload limits; this product reads `custom.input` (see
        # docs/protocol-decisions.md): {"maxBytes": int, "mimeTypes": [exact types]}.
        custom = _get(src.capabilities, "custom")
        limits = custom.get("input") if isinstance(custom, dict) else None
        if isinstance(limits, dict):
            declared_max = limits.get("maxBytes")
            if isinstance(declared_max, int) and declared_max > 0:
                max_bytes = ev.declared(
                    "custom.input.maxBytes",
                    declared_max,
                    f"custom.input.maxBytes is {declared_max} ({_size_label(declared_max)})",
                )
            types = limits.get("mimeTypes")
            if isinstance(types, list) and types and all(isinstance(t, str) for t in types):
                accept = ev.declared("custom.input.mimeTypes", list(types))
    elif src.policy is not None:
        files = ev.declared("capabilities.files", _get(src.policy, "capabilities", "files"))
        file_policy = _get(src.policy, "file_policy")
        upload = ev.declared("filePolicy.upload", _get(file_policy, "upload"))
        allowed = _get(file_policy, "allowed_mime_types")
        ev.declared(
            "filePolicy.allowedMimeTypes",
            allowed,
            "filePolicy.allowedMimeTypes is not declared: any type is offered, the agent checks it"
            if allowed is None
            else "filePolicy.allowedMimeTypes is empty: the agent accepts no type"
            if not allowed
            else None,
        )
        max_bytes = _get(file_policy, "max_upload_bytes")
        ev.declared(
            "filePolicy.maxUploadBytes",
            max_bytes,
            None
            if max_bytes is None
            else f"filePolicy.maxUploadBytes is {max_bytes} ({_size_label(max_bytes)})",
        )
        read = _get(file_policy, "read")
        if files is False or upload is False:
            ev.support = False
        elif allowed is not None and not allowed:
            # POST /files answers 415 for every type not in the list: an empty list accepts nothing.
            ev.support = False
        elif files is True and upload is True:
            ev.support = True
        accept = list(allowed or ())
    else:
        ev.not_in_protocol(src, "file upload")
    ev.details.update(
        accept=accept,
        accept_any=not accept,
        accept_attr=",".join(accept),
        max_bytes=max_bytes,
        max_bytes_label=_size_label(max_bytes),
        read=read,
    )
    return ev


def _tool_entry(tool: Any) -> dict[str, Any]:
    """A domain tool of the external policy, in the same shape as an AG-UI tool."""
    operation = tool.operation
    return {
        "name": tool.public_name,
        "description": tool.description,
        "schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "status": tool.status,
        "kind": operation.kind,
        "side_effect_class": operation.side_effect_class,
        "idempotency": operation.idempotency,
        "approval_required": operation.approval_required,
    }


def _approvals(src: _Sources) -> _Evidence:
    ev = _Evidence()
    ev.details.update(approvals=None, interrupts=None, approve_with_edits=None, tools_needing_approval=[])
    if src.capabilities is not None:
        hitl = _get(src.capabilities, "human_in_the_loop")
        parent = _get(hitl, "supported")
        if parent is not None:
            ev.declared("humanInTheLoop.supported", parent)
        flags = {}
        for flag in ("approvals", "interrupts"):
            flags[flag] = ev.details[flag] = ev.declared_under(
                f"humanInTheLoop.{flag}", _get(hitl, flag), "humanInTheLoop.supported", parent
            )
        ev.support = _any_true(flags.values())
        edits = ev.details["approve_with_edits"] = _get(hitl, "approve_with_edits")
        if edits is not None:
            ev.declared("humanInTheLoop.approveWithEdits", edits)
    elif src.policy is not None:
        approvals = ev.details["approvals"] = ev.declared(
            "capabilities.approvals", _get(src.policy, "capabilities", "approvals")
        )
        needing = [
            _tool_entry(tool)
            for tool in _get(src.policy, "domain_tools") or ()
            if tool.operation.approval_required
        ]
        ev.details["tools_needing_approval"] = needing
        if needing:
            names = [tool["name"] for tool in needing]
            ev.declared(
                "domainTools[].operation.approvalRequired",
                names,
                f"{len(names)} domain tool(s) need approval before acting: {', '.join(names)}",
            )
        if approvals is True:
            ev.support = True
        elif needing:
            ev.support = True
            if approvals is False:
                ev.blocked = Reason(
                    "declared",
                    "capabilities.approvals",
                    False,
                    "capabilities.approvals is false: approval requests can be seen but not decided "
                    "(the agent denies them when they expire)",
                )
        else:
            ev.support = approvals
    else:
        ev.not_in_protocol(src, "approvals")
    ev.observe(src.observed.interrupts_seen, "interrupts_seen", "The agent paused for a decision")
    return ev


def _tools(src: _Sources) -> _Evidence:
    ev = _Evidence()
    ev.details.update(tools=[], parallel_calls=None, client_provided=None)
    if src.capabilities is not None:
        tools = _get(src.capabilities, "tools")
        supported = ev.declared("tools.supported", _get(tools, "supported"))
        items = _get(tools, "items")
        ev.declared("tools.items", [item.name for item in items] if items is not None else None)
        if supported is False:
            # The protocol: false disables tool calling "even if items are present".
            ev.support = False
        elif items is not None:
            # A non-empty list is a declaration in itself; an empty one lists nothing to show.
            ev.support = bool(items)
        ev.details["tools"] = [
            {
                "name": item.name,
                "description": item.description,
                "schema": item.parameters,
                "output_schema": None,
                "status": None,
                "kind": None,
                "side_effect_class": None,
                "idempotency": None,
                "approval_required": None,
            }
            for item in items or ()
        ]
        for key, attr, wire in (
            ("parallel_calls", "parallel_calls", "parallelCalls"),
            ("client_provided", "client_provided", "clientProvided"),
        ):
            value = ev.details[key] = _get(tools, attr)
            if value is not None:
                ev.declared(f"tools.{wire}", value)
    elif src.policy is not None:
        domain_tools = _get(src.policy, "domain_tools")
        entries = [_tool_entry(tool) for tool in domain_tools or ()]
        ev.declared("domainTools", [entry["name"] for entry in entries] if domain_tools is not None else None)
        if domain_tools is not None:
            ev.support = bool(entries)
        ev.details["tools"] = entries
    else:
        ev.not_in_protocol(src, "tools")
    return ev


def _state(src: _Sources) -> _Evidence:
    ev = _Evidence()
    ev.details.update(snapshots=None, deltas=None, persistent_state=None, memory=None)
    if src.capabilities is not None:
        state = _get(src.capabilities, "state")
        flags = [ev.declared(f"state.{flag}", _get(state, flag)) for flag in ("snapshots", "deltas")]
        ev.support = _any_true(flags)
        ev.details.update(
            snapshots=flags[0],
            deltas=flags[1],
            persistent_state=_get(state, "persistent_state"),
            memory=_get(state, "memory"),
        )
    else:
        ev.not_in_protocol(src, "shared state")
    ev.observe(src.observed.state_seen, "state_seen", "The agent sent state events")
    return ev


def _structured_output(src: _Sources) -> _Evidence:
    ev = _Evidence()
    ev.details.update(module_types=[], offered_module_types=[], mime_types=[])
    if src.capabilities is not None:
        output = _get(src.capabilities, "output")
        ev.support = ev.declared("output.structuredOutput", _get(output, "structured_output"))
        mime_types = _get(output, "supported_mime_types")
        if mime_types is not None:
            ev.declared("output.supportedMimeTypes", mime_types)
        ev.details["mime_types"] = list(mime_types or ())
    elif src.policy is not None:
        offered = _get(src.policy, "output_module_types")
        ev.declared("outputModuleTypes", offered)
        ev.details["offered_module_types"] = list(offered or ())
        # A client reads what was granted, never what the policy offers or what it asked for.
        granted = _get(src.negotiated, "output_module_types")
        if src.negotiated is None:
            ev.read("negotiated", "negotiated.outputModuleTypes", None, "Nothing was negotiated yet")
        else:
            ev.read(
                "negotiated",
                "negotiated.outputModuleTypes",
                granted,
                _negotiated_text("outputModuleTypes", granted),
            )
        if granted is not None:
            ev.support = bool(granted)
        elif offered is not None and not offered:
            ev.support = False
        ev.details["module_types"] = list(granted or ())
    else:
        ev.not_in_protocol(src, "structured output")
    return ev


def _negotiated_text(name: str, value: Any) -> str:
    if value is None:
        return f"negotiated.{name} is not known"
    if isinstance(value, list) and not value:
        return f"negotiated.{name} is empty: nothing was granted"
    return f"negotiated.{name} is {_show(value)}"


def _grounding(src: _Sources) -> _Evidence:
    ev = _Evidence()
    ev.details.update(negotiated=None, offered=None)
    if src.policy is None:
        ev.not_in_protocol(src, "provider grounding")
        return ev
    offered = ev.details["offered"] = ev.declared(
        "providerGroundingDisplay", _get(src.policy, "provider_grounding_display")
    )
    if src.negotiated is None:
        ev.read("negotiated", "negotiated.providerGroundingDisplay", None, "Nothing was negotiated yet")
        # The agent grants grounding only where its policy allows it.
        ev.support = False if offered is False else None
        return ev
    granted = ev.details["negotiated"] = _get(src.negotiated, "provider_grounding_display")
    ev.read(
        "negotiated",
        "negotiated.providerGroundingDisplay",
        granted,
        _negotiated_text("providerGroundingDisplay", granted),
    )
    ev.support = granted
    return ev


def _feedback(src: _Sources) -> _Evidence:
    ev = _Evidence()
    if src.capabilities is not None:
        hitl = _get(src.capabilities, "human_in_the_loop")
        parent = _get(hitl, "supported")
        if parent is not None:
            ev.declared("humanInTheLoop.supported", parent)
        ev.support = ev.declared_under(
            "humanInTheLoop.feedback", _get(hitl, "feedback"), "humanInTheLoop.supported", parent
        )
    elif src.policy is not None:
        ev.support = ev.declared(
            "capabilities.interactions", _get(src.policy, "capabilities", "interactions")
        )
    else:
        ev.not_in_protocol(src, "feedback")
    return ev


def _stop(src: _Sources) -> _Evidence:
    ev = _Evidence()
    ev.details.update(intervene=False, streaming=None)
    if src.capabilities is not None:
        hitl = _get(src.capabilities, "human_in_the_loop")
        parent = _get(hitl, "supported")
        if parent is not None:
            ev.declared("humanInTheLoop.supported", parent)
        interventions = ev.declared_under(
            "humanInTheLoop.interventions", _get(hitl, "interventions"), "humanInTheLoop.supported", parent
        )
        streaming = ev.declared("transport.streaming", _get(src.capabilities, "transport", "streaming"))
        ev.support = _any_true([interventions, streaming])
        ev.details.update(intervene=interventions is True, streaming=streaming)
    elif src.policy is not None:
        messages = _get(src.policy, "capabilities", "messages")
        text = None
        if messages is True:
            text = "capabilities.messages is true: every message stream can be stopped by closing it"
        ev.support = ev.declared("capabilities.messages", messages, text)
        ev.details["streaming"] = messages
    else:
        ev.not_in_protocol(src, "stopping a run")
    return ev


def _limits(src: _Sources) -> _Evidence:
    ev = _Evidence()
    ev.details.update(
        max_iterations=None,
        max_execution_time=None,
        max_execution_time_label=None,
        rate_limits=[],
        spend_limits=[],
    )
    if src.capabilities is not None:
        execution = _get(src.capabilities, "execution")
        iterations = ev.declared("execution.maxIterations", _get(execution, "max_iterations"))
        duration = _get(execution, "max_execution_time")
        ev.declared(
            "execution.maxExecutionTime",
            duration,
            None
            if duration is None
            else f"execution.maxExecutionTime is {duration} ms ({_duration_label(duration)})",
        )
        ev.details.update(
            max_iterations=iterations,
            max_execution_time=duration,
            max_execution_time_label=_duration_label(duration),
        )
        # A number can only say "there is a limit": silence is unknown, never "no limits".
        if iterations is not None or duration is not None:
            ev.support = True
    elif src.policy is not None:
        rate = _get(src.policy, "rate_limits")
        spend = _get(src.policy, "spend_limits")
        ev.declared("rateLimits", _dump(rate) if rate is not None else None, _limits_text("rateLimits", rate))
        ev.declared(
            "spendLimits", _dump(spend) if spend is not None else None, _limits_text("spendLimits", spend)
        )
        ev.details.update(rate_limits=_dump(rate), spend_limits=_dump(spend))
        if rate or spend:
            ev.support = True
        elif rate is not None and spend is not None:
            ev.support = False
    else:
        ev.not_in_protocol(src, "limits")
    return ev


def _limits_text(name: str, limits: Sequence[Any] | None) -> str:
    if limits is None:
        return f"{name} is not declared"
    if not limits:
        return f"{name} is empty: the agent declares none"
    return f"{name} declares {len(limits)} limit(s), enforced by the agent"


def _host_context(src: _Sources) -> _Evidence:
    ev = _Evidence()
    ev.details.update(accepted_fields=[], max_total_bytes=None, max_total_bytes_label=None)
    if src.policy is None:
        ev.not_in_protocol(src, "host context")
        return ev
    host = _get(src.policy, "host_context_policy")
    fields = ev.declared("hostContextPolicy.acceptedFields", _get(host, "accepted_fields"))
    limit = ev.declared("hostContextPolicy.maxTotalBytes", _get(host, "max_total_bytes"))
    if fields is not None:
        ev.support = bool(fields)
    ev.details.update(
        accepted_fields=list(fields or ()), max_total_bytes=limit, max_total_bytes_label=_size_label(limit)
    )
    return ev


def _stream_profile(src: _Sources) -> _Evidence:
    ev = _Evidence()
    ev.details.update(offered=[], default=None, negotiated=None, chooser=False)
    if src.policy is None:
        ev.not_in_protocol(src, "stream profiles")
        return ev
    offered = ev.declared("streamProfiles", _get(src.policy, "stream_profiles"))
    default = ev.declared("defaultStreamProfile", _get(src.policy, "default_stream_profile"))
    granted = _get(src.negotiated, "stream_profile")
    if src.negotiated is None:
        ev.read("negotiated", "negotiated.streamProfile", None, "Nothing was negotiated yet")
    else:
        ev.read("negotiated", "negotiated.streamProfile", granted, _negotiated_text("streamProfile", granted))
    if offered is not None:
        ev.support = bool(offered)
    if granted is not None:
        # The agent did grant a profile: that is worth showing even where the policy lists none.
        ev.support = True
    ev.details.update(
        offered=list(offered or ()),
        default=default,
        negotiated=granted,
        chooser=len(offered or ()) > 1,
    )
    return ev


_CONTROLS: dict[str, Callable[[_Sources], _Evidence]] = {
    "identity": _identity,
    "reasoning": _reasoning,
    "subagents": _subagents,
    "upload": _upload,
    "approvals": _approvals,
    "tools": _tools,
    "state": _state,
    "structured-output": _structured_output,
    "grounding": _grounding,
    "feedback": _feedback,
    "stop": _stop,
    "limits": _limits,
    "host-context": _host_context,
    "stream-profile": _stream_profile,
}

# Controls a user may see but not use without a permission: (UserAbilities attribute, permission, ability).
_NEEDS_PERMISSION: dict[str, tuple[str, str, str]] = {
    "reasoning": ("can_view_reasoning", "agents_ui.view_reasoning", "see the agent's reasoning"),
    "upload": ("can_upload", "agents_ui.upload_files", "upload files"),
    "approvals": ("can_approve", "agents_ui.approve_actions", "approve or reject the agent's actions"),
}

_ALWAYS_SHOWN = frozenset({"identity"})


# ------------------------------------------------------------------------------------------------
# The admin and the user, the same for every control


def _resolve(name: str, ev: _Evidence, override: str | None, user: UserAbilities) -> ControlDecision:
    reasons = list(ev.reasons)
    support = ev.support

    def done(decision: Decision) -> ControlDecision:
        return ControlDecision(name, decision, tuple(reasons), ev.details)

    field_name = f"overrides.{name}"
    if override == "hide":
        if name in _ALWAYS_SHOWN:
            reasons.append(
                Reason("override", field_name, "hide", "The admin asked to hide this, but it is always shown")
            )
        else:
            reasons.append(Reason("override", field_name, "hide", "The admin forced this control off"))
            return done(Decision.HIDDEN)
    elif override == "allow":
        if support is None:
            support = True
            text = "The agent declares nothing about this; the admin allowed it"
        elif support is False:
            text = (
                "The admin allowed this control, but the agent declares it unsupported: the declaration wins"
            )
        else:
            text = "The admin allowed this control; it is supported anyway"
        reasons.append(Reason("override", field_name, "allow", text))
    elif override is not None:
        reasons.append(
            Reason(
                "override",
                field_name,
                override,
                f"Unknown override {override!r} (use hide or allow): ignored",
            )
        )

    if support is None:
        reasons.append(Reason("default", name, None, "Hidden until a run shows it or the admin allows it"))
        return done(Decision.HIDDEN)
    if support is False:
        return done(Decision.HIDDEN)
    if ev.blocked is not None:
        reasons.append(ev.blocked)
        return done(Decision.DISABLED)
    if name in _NEEDS_PERMISSION:
        attr, permission, ability = _NEEDS_PERMISSION[name]
        allowed = bool(getattr(user, attr))
        text = f"You may {ability}" if allowed else f"You do not have permission to {ability}"
        reasons.append(Reason("user", f"permission {permission}", allowed, text))
        if not allowed:
            return done(Decision.DISABLED)
    return done(Decision.SHOWN)


def decide(
    *,
    capabilities: AgentCapabilities | None = None,
    policy: PublicExternalAgentPolicy | None = None,
    negotiated: Negotiated | None = None,
    overrides: Mapping[str, str] | None = None,
    user: UserAbilities = UserAbilities(),  # frozen: one shared default is safe
    observed: Observations = Observations(),
    fallback_identity: Mapping[str, Any] | None = None,
) -> Plan:
    """The plan of every control for one agent and one user.

    Pass `capabilities` for an AG-UI agent, `policy` (and `negotiated`, once prepared) for an external
    agent, or neither when the agent has no discovery. `fallback_identity` is what the admin entered
    ({"name": ..., "description": ...}), shown where the agent declares no identity.
    Overrides for names outside CONTROL_NAMES are ignored.
    """
    if capabilities is not None and policy is not None:
        raise ValueError("An agent declares AG-UI capabilities or an external policy, not both")
    src = _Sources(capabilities, policy, negotiated, observed, fallback_identity or {})
    overrides = overrides or {}
    controls = {
        name: _resolve(name, _CONTROLS[name](src), overrides.get(name), user) for name in CONTROL_NAMES
    }
    protocol: Protocol | None = (
        "agui" if capabilities is not None else "external" if policy is not None else None
    )
    return Plan(controls, protocol)
