"""The plan of a workspace: which controls an agent gets, and the reasons behind each one.

`decide()` is one pure function of a capability profile (agents_ui.capabilities: what the agent
declared, in whatever shape, and what was negotiated, each fact with its provenance), what runs
observed (folded into the profile), the admin's per-endpoint overrides `{control: "hide" | "allow"}`
and what the current user may do (Django permissions, passed in as `UserAbilities`). It reads only
the profile: no control knows which protocol or shape a fact came from, so a new shape is a new
reader, never a change here.

Absent means unknown, never unsupported: only an explicit `false` (or an explicitly empty list)
says "unsupported". An unknown control is hidden until a run shows evidence of it or an admin
allows it, and its reasons say "not declared"; where the declaration's shape has no field for a
control at all, the reasons say that. No I/O and no Django import here.

Rules chosen where docs/PROTOCOLS.md is silent:
- Evidence wins over the declaration: reasoning, interrupts, approvals, state or media seen in a run show
  the control even when the agent declared it false (what arrives must be renderable); the reasons
  say the declaration and the run disagree.
- "hide" always wins, except on the identity card, which is always shown: a user must know which
  agent they are talking to.
- "allow" shows a control only where the declaration is silent. It never overrides an explicit
  false (the agent would answer 403 or ignore it); the reasons say so.
- A permission never hides: a user without it sees the control disabled (approvals: the request
  is visible, deciding it is not).
- "False only if every field that could say it says false": a control read from several facts is
  unsupported only when each fact the shape has a field for is explicitly false.
- An explicit `humanInTheLoop.supported`, `multiAgent.supported` or `tools.supported` of false
  makes its specific fields false when they are absent.
- Tools that need approval show the approval workflow; if approvals are also declared false, the
  workflow is disabled (requests can be seen, not decided: the agent denies them when they expire).
- Stop follows `humanInTheLoop.interventions` or `transport.streaming` (an external agent's
  `capabilities.messages`: each of its messages streams and stops when the stream is closed); with
  interventions the composer offers Change course while a run streams (docs/PROTOCOLS.md 1.3c).
- `identity.metadata` is listed on the identity card (its first entries, each value one line).
- Listed tools without `tools.supported` are a declaration in themselves: shown. Only
  `tools.supported: false` hides listed tools.
- Upload: any input modality, or files with an upload policy; without a list of types any type is
  offered (the agent checks it); an explicitly empty list accepts nothing. A kind declared false
  (`multimodal.input.video: false` ...) is refused where any other type is taken; with `file: false`
  only the kinds not ruled out are taken.
- Limits: a number only ever says "there is a limit"; explicitly empty lists of limits mean none.
- Grounding and structured output follow what was negotiated; before `prepare()` they are
  unknown, unless the declaration already rules them out.
- Editing what an approval request will do: where approving with edits is declared (or follows
  from the protocol), or where the request's own schema has `editedArgs` (`ApprovalsDetails.can_edit`).
- Image picker and audio recorder follow `multimodal.input.image` / `.audio` and need the upload
  permission; the picker takes photos on phones (`capture`) and pasted images, the recorder records
  in a type the agent lists, else in what the browser offers first.
- Frontend tools: the control follows `tools.clientProvided`; the product's generic tools are offered
  with each run unless the agent said it takes none (`details.offer`).
- State is sent back with the next run only where it persists or the agent did not say
  (`details.send_state_back`).
- Connection: shown where it differs from a plain stream (no streaming: one complete response;
  resumable: resume from the last event; a binary transport, WebSocket or push notifications are
  shown; this product reads SSE, so a binary transport is declared but not used).
- Code execution warns wherever the code is not declared to run in a sandbox.
- `custom.rateLimit.maxRequestsPerMinute` throttles sends (the seed's own example); a rate that is
  not a whole number above zero throttles nothing.
- `custom` and every field kept without a control are shown; a declaration in an unknown shape is
  shown whole, and nothing in it is read.
- Byte sizes are labelled in binary units ("10 MB" = 10 x 1024 x 1024 bytes).

Details per control are typed (the `*Details` classes below); they read by attribute, and by name
like a mapping for templates and older callers (`details.accept`, `details["accept"]`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from enum import StrEnum
from itertools import islice
from typing import TYPE_CHECKING, Any, Literal

from agents_ui.capabilities import (
    CapabilityProfile,
    Fact,
    Kind,
    Observations,
    Provenance,
    SubagentInfo,
    ToolInfo,
    read_declaration,
)
from agents_ui.capabilities.provenance import show
from agents_ui.capabilities.readers.document import KEPT_LIMIT
from agents_ui.capabilities.values import RateLimit, Readable, SkillInfo, SpendLimit

if TYPE_CHECKING:
    from ag_ui.core import AgentCapabilities

    from agents_ui.sdk.external.policy import Negotiated, PublicExternalAgentPolicy

__all__ = [
    "CONTROL_LABELS",
    "CONTROL_NAMES",
    "PERMISSIONS",
    "ControlDecision",
    "Decision",
    "Observations",
    "Plan",
    "Reason",
    "UserAbilities",
    "decide",
]

# The markup contract: templates and the explain view use exactly these names, in this order.
CONTROL_NAMES: tuple[str, ...] = (
    "identity",
    "reasoning",
    "subagents",
    "skills",
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
    "image-picker",
    "audio-recorder",
    "media-output",
    "frontend-tools",
    "transport",
    "code-execution",
    "memory",
    "throttle",
    "generative-ui",
    "custom",
)

CONTROL_LABELS: dict[str, str] = {
    "identity": "Identity card",
    "reasoning": "Reasoning panel",
    "subagents": "Sub-agent selector",
    "skills": "Skill chooser",
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
    "image-picker": "Image picker",
    "audio-recorder": "Audio recorder",
    "media-output": "Images and audio in answers",
    "frontend-tools": "Frontend tools",
    "transport": "Connection",
    "code-execution": "Code execution",
    "memory": "Long-term memory",
    "throttle": "Throttle",
    "generative-ui": "Generative UI (A2UI)",
    "custom": "Integration-specific capabilities",
}

# Where a reason came from: a kind of fact (declared, negotiated, inferred, observed, override),
# the user's permissions, or the rule applied when nothing said anything.
Source = Literal["declared", "negotiated", "inferred", "override", "user", "observed", "default"]
Protocol = Literal["agui", "external", "a2a"]

ADMIN = "admin overrides"
NOTHING_SEEN = Observations()


class Decision(StrEnum):
    SHOWN = "shown"
    HIDDEN = "hidden"
    DISABLED = "disabled"


@dataclass(frozen=True, slots=True)
class Reason:
    """One link of a decision's chain: which source said what, in a sentence for the explain view.

    `field` and `value` are what the decision read (the field in the declaration's own names);
    `provenance` goes down to the documents: each field read, its raw value and its kind.
    """

    source: Source
    field: str
    value: Any
    text: str
    provenance: tuple[Provenance, ...] = ()


# ------------------------------------------------------------------------------------------------
# Details: what each control needs besides its decision


@dataclass(frozen=True, slots=True)
class Details(Readable):
    """The details of one control; every field is present, None where nothing was declared."""


@dataclass(frozen=True, slots=True)
class IdentityDetails(Details):
    name: str | None = None
    description: str | None = None
    version: str | None = None
    provider: str | None = None
    documentation_url: str | None = None  # http(s) only
    framework: str | None = None
    metadata: Mapping[str, Any] | None = None

    @property
    def metadata_lines(self) -> list[tuple[str, str]]:
        """identity.metadata as the identity card lists it: its first entries, each value one line."""
        if not isinstance(self.metadata, Mapping):
            return []
        return [(str(key)[:80], show(value, 120)) for key, value in islice(self.metadata.items(), 8)]


@dataclass(frozen=True, slots=True)
class ReasoningDetails(Details):
    streaming: bool | None = None  # live as it streams, or at the end of each step
    encrypted: bool | None = None  # a "reasoning hidden" notice, never the value


@dataclass(frozen=True, slots=True)
class SubagentsDetails(Details):
    subagents: tuple[SubagentInfo, ...] = ()
    delegation: bool | None = None
    handoffs: bool | None = None


@dataclass(frozen=True, slots=True)
class SkillsDetails(Details):
    skills: tuple[SkillInfo, ...] = ()
    # (skill id, <input accept> value) for each skill naming its own input modes ("" takes no files).
    accepts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class UploadDetails(Details):
    accept: tuple[str, ...] = ()  # MIME patterns; empty: any type
    accept_any: bool = True
    accept_attr: str = ""  # for <input accept>
    # Kinds the agent says it cannot process, refused where any other type is taken (MIME patterns).
    refuse: tuple[str, ...] = ()
    refuse_label: str = ""  # "video, PDF"
    max_bytes: int | None = None
    max_bytes_label: str | None = None
    read: bool | None = None  # the agent reads files back


@dataclass(frozen=True, slots=True)
class ApprovalsDetails(Details):
    approvals: bool | None = None
    interrupts: bool | None = None
    approve_with_edits: bool | None = None
    tools_needing_approval: tuple[ToolInfo, ...] = ()
    # How it asks: "frontend-tool-calls" means through tools the client answers (frontend tools).
    mechanism: str | None = None

    def can_edit(self, response_schema: Mapping[str, Any] | None = None) -> bool:
        """Whether a person may change what a request will do before approving it: where approving
        with edits is declared, or where the request's own schema takes `editedArgs`
        (docs/PROTOCOLS.md 1.3)."""
        if self.approve_with_edits is True:
            return True
        properties = response_schema.get("properties") if isinstance(response_schema, Mapping) else None
        return isinstance(properties, Mapping) and "editedArgs" in properties


@dataclass(frozen=True, slots=True)
class ToolsDetails(Details):
    tools: tuple[ToolInfo, ...] = ()
    parallel_calls: bool | None = None
    client_provided: bool | None = None


@dataclass(frozen=True, slots=True)
class StateDetails(Details):
    snapshots: bool | None = None
    deltas: bool | None = None
    persistent_state: bool | None = None
    memory: bool | None = None
    # Send the last state back with the next run: where state persists, or the agent did not say.
    send_state_back: bool = True


@dataclass(frozen=True, slots=True)
class StructuredOutputDetails(Details):
    module_types: tuple[str, ...] = ()  # granted
    offered_module_types: tuple[str, ...] = ()
    mime_types: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GroundingDetails(Details):
    negotiated: bool | None = None
    offered: bool | None = None


@dataclass(frozen=True, slots=True)
class FeedbackDetails(Details):
    pass


@dataclass(frozen=True, slots=True)
class StopDetails(Details):
    # A person may change the course of a running run, not only stop it (the run stops and the
    # correction goes as the next run): humanInTheLoop.interventions is true.
    intervene: bool = False
    interventions: bool | None = None  # as declared; None: not declared
    streaming: bool | None = None


@dataclass(frozen=True, slots=True)
class LimitsDetails(Details):
    max_iterations: int | None = None
    max_execution_time: int | None = None  # milliseconds
    max_execution_time_label: str | None = None
    rate_limits: tuple[RateLimit, ...] = ()
    spend_limits: tuple[SpendLimit, ...] = ()
    requests_per_minute: int | None = None


@dataclass(frozen=True, slots=True)
class HostContextDetails(Details):
    accepted_fields: tuple[str, ...] = ()
    max_total_bytes: int | None = None
    max_total_bytes_label: str | None = None


@dataclass(frozen=True, slots=True)
class StreamProfileDetails(Details):
    offered: tuple[str, ...] = ()
    default: str | None = None
    negotiated: str | None = None
    chooser: bool = False  # several offered


@dataclass(frozen=True, slots=True)
class ImagePickerDetails(Details):
    accept: tuple[str, ...] = ("image/*",)
    accept_attr: str = "image/*"
    capture: str = "environment"  # <input capture>: a phone offers its camera
    paste: bool = True  # an image pasted into the composer is attached
    max_bytes: int | None = None
    max_bytes_label: str | None = None


# What a recording is made as, in the order the browser is asked (MediaRecorder.isTypeSupported).
RECORDING_TYPES: tuple[str, ...] = ("audio/webm", "audio/ogg", "audio/mp4")


@dataclass(frozen=True, slots=True)
class AudioRecorderDetails(Details):
    mime_types: tuple[str, ...] = RECORDING_TYPES
    max_bytes: int | None = None
    max_bytes_label: str | None = None


@dataclass(frozen=True, slots=True)
class MediaOutputDetails(Details):
    images: bool | None = None  # images in answers are shown
    audio: bool | None = None  # audio in answers is playable


@dataclass(frozen=True, slots=True)
class FrontendToolsDetails(Details):
    # Offer the product's generic tools (ask, form, confirm, choose) with each run: unless the agent
    # said it takes no client tools.
    offer: bool = True
    parallel_calls: bool | None = None


@dataclass(frozen=True, slots=True)
class TransportDetails(Details):
    streaming: bool | None = None
    stream: bool = True  # read the answer as a stream; false: one complete response
    resumable: bool | None = None
    resume: bool = False  # after a cut connection, resume from the last event it has
    http_binary: bool | None = None
    use_binary: bool = False  # the binary transport is declared, but this product reads SSE
    websocket: bool | None = None
    push_notifications: bool | None = None


Sandbox = Literal["sandboxed", "not-sandboxed", "unknown"]


@dataclass(frozen=True, slots=True)
class CodeExecutionDetails(Details):
    sandboxed: bool | None = None
    sandbox: Sandbox = "unknown"
    warn: bool = True  # not in a sandbox, or not said


@dataclass(frozen=True, slots=True)
class MemoryDetails(Details):
    memory: bool | None = None  # remembers across conversations
    persistent_state: bool | None = None  # a thread's next run starts from its last state


@dataclass(frozen=True, slots=True)
class ThrottleDetails(Details):
    max_requests: int | None = None  # sends allowed per window
    window_seconds: int = 60


@dataclass(frozen=True, slots=True)
class GenerativeUIDetails(Details):
    # The catalogues the agent says it generates; the product renders the Basic Catalog.
    catalogs: tuple[str, ...] = ()
    # Tell the agent, with each run, which catalogue this product renders (the A2UI middleware's way).
    advertise: bool = False


@dataclass(frozen=True, slots=True)
class CustomDetails(Details):
    # Each entry of `custom` and each field kept without a control, as read (path, raw value, note).
    custom: tuple[Provenance, ...] = ()
    extensions: tuple[Provenance, ...] = ()
    unknown_shape: bool = False


@dataclass(frozen=True)
class ControlDecision:
    name: str
    decision: Decision
    reasons: tuple[Reason, ...]
    details: Details = field(default_factory=Details)

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


@dataclass(frozen=True, slots=True)
class PlanFact:
    """Something about the agent a page needs to know, with its reasons, so that no page asks
    which protocol the agent speaks."""

    name: str
    value: bool
    reasons: tuple[Reason, ...]

    def __bool__(self) -> bool:
        return self.value


# Each fact, and what it is when nothing says (the product's own behaviour: it keeps the thread,
# keeps ratings, sends a surface's action and a tool call's answer in the next run).
FACT_DEFAULTS: dict[str, bool] = {
    "keeps-thread": False,
    "feedback-reaches-agent": False,
    "surfaces-take-actions": True,
    "answers-tool-calls": True,
    "offers-frontend-tools": True,
}
FACT_NAMES = tuple(FACT_DEFAULTS)


@dataclass(frozen=True)
class Plan:
    """Every control of the table, in table order, each with its decision, details and reasons."""

    controls: dict[str, ControlDecision]
    # Which protocol the declaration speaks; None when the agent declares nothing.
    protocol: Protocol | None = None
    # What the plan was decided from (the explain view shows its shape and raw declaration).
    profile: CapabilityProfile | None = None
    # What pages need to know about the agent besides its controls (see FACT_NAMES).
    facts: Mapping[str, PlanFact] = field(default_factory=dict)

    def fact(self, name: str) -> bool:
        found = self.facts.get(name)
        return FACT_DEFAULTS[name] if found is None else found.value

    @property
    def agent_keeps_thread(self) -> bool:
        """The agent keeps its own copy of the conversation: what is edited or replaced here is
        not taken back there (it cannot be rewound)."""
        return self.fact("keeps-thread")

    @property
    def feedback_reaches_agent(self) -> bool:
        return self.fact("feedback-reaches-agent")

    @property
    def surfaces_take_actions(self) -> bool:
        return self.fact("surfaces-take-actions")

    @property
    def answers_tool_calls(self) -> bool:
        return self.fact("answers-tool-calls")

    @property
    def offers_frontend_tools(self) -> bool:
        return self.fact("offers-frontend-tools")

    def __getitem__(self, name: str) -> ControlDecision:
        # Underscores work too, so a template can write plan.structured_output.
        return self.controls[name.replace("_", "-")]

    def __iter__(self) -> Iterator[ControlDecision]:
        return iter(self.controls.values())

    def visible(self) -> tuple[ControlDecision, ...]:
        return tuple(control for control in self.controls.values() if control.visible)


# ------------------------------------------------------------------------------------------------
# Reading the profile into a chain of reasons


_SAME: Any = object()


@dataclass
class _Evidence:
    """What the profile says about one control, before the admin and the user: supported (True),
    unsupported (False) or unknown (None), and the reasons."""

    profile: CapabilityProfile
    # For "the declaration has no field for <what>".
    what: str
    support: bool | None = None
    reasons: list[Reason] = field(default_factory=list)
    # Visible but unusable whatever the user may do (a contradiction inside the declaration).
    blocked: Reason | None = None
    # Whether any fact read had a place in the declaration.
    said: bool = False

    def read(self, fact: Fact[Any], text: str | None = None, *, shown: Any = _SAME) -> Any:
        """A fact into the chain, known or not declared; a fact the shape has no place for adds
        nothing. `shown` is the value the reason names, when not the fact's own."""
        if not fact.sayable:
            return fact.value
        self.said = True
        value = fact.value if shown is _SAME else shown
        self.reasons.append(_reason(fact, value, text))
        return fact.value

    def known(self, fact: Fact[Any], text: str | None = None, *, shown: Any = _SAME) -> Any:
        """Like read, but only where the declaration does say something."""
        if fact.known:
            return self.read(fact, text, shown=shown)
        self.said = self.said or fact.sayable
        return None

    def under(self, fact: Fact[bool], parent: Fact[bool]) -> bool | None:
        """A flag of a category that was switched off explicitly (`supported: false`): absent is false."""
        if fact.sayable and fact.value is None and parent.value is False:
            path, parent_path = fact.origin.path, parent.origin.path
            self.said = True
            self.reasons.append(
                Reason(
                    "declared",
                    path,
                    None,
                    f"{path} is not declared, and {parent_path} is false: unsupported",
                    (*fact.provenance, *parent.provenance),
                )
            )
            return False
        return self.read(fact)

    def negotiated(self, fact: Fact[Any]) -> Any:
        """What `prepare()` granted: nothing yet, or the grant."""
        if not fact.sayable:
            return fact.value
        path, value = fact.origin.path, fact.value
        if not self.profile.negotiation.prepared:
            text = "Nothing was negotiated yet"
        elif value is None:
            text = f"{path} is not known"
        elif isinstance(value, tuple | list) and not value:
            text = f"{path} is empty: nothing was granted"
        else:
            text = f"{path} is {_show(value)}"
        return self.read(fact, text)

    def observe(self, fact: Fact[bool], what: str) -> None:
        if not fact.value:
            return
        if self.support is True:
            text = f"{what} in a run, as declared"
        elif self.support is False:
            text = f"{what} in a run although it was declared unsupported: what the agent does wins"
        else:
            text = f"{what} in a run although it was never declared"
        self.support = True
        self.reasons.append(Reason("observed", fact.origin.path, True, text, fact.provenance))

    def finish(self) -> _Evidence:
        if not self.said:
            shape = self.profile.shape
            self.reasons.insert(
                0,
                Reason(
                    "declared",
                    shape.root,
                    None,
                    shape.no_field(self.what),
                    (Provenance(shape.label, "", None, Kind.DECLARED),),
                ),
            )
        return self


def _reason(fact: Fact[Any], value: Any, text: str | None) -> Reason:
    origin = fact.origin
    if text is None:
        text = _describe(origin, value)
    elif fact.known and origin.note:
        text = f"{text} ({origin.note})"
    return Reason(origin.kind.value, origin.path, _plain(value), text, fact.provenance)


def _describe(origin: Provenance, value: Any) -> str:
    path = origin.path
    if origin.kind is Kind.INFERRED:
        if not origin.present:  # it follows from the protocol itself, not from a field
            return f"{origin.note} ({origin.source})"
        # Inferred from another field: name what that field holds.
        return f"{path} is {origin.raw_text} ({origin.note})"
    if value is None:
        if origin.present:  # sent, but not in a form that can be read
            return f"{path} is {origin.raw_text}: {origin.note}"
        return f"{path} is not declared"
    if isinstance(value, tuple | list) and not value:
        text = f"{path} is empty"
    else:
        text = f"{path} is {_show(value)}"
    return f"{text} ({origin.note})" if origin.note else text


_SCALARS = (bool, int, float, str, type(None))


def _plain(value: Any) -> Any:
    """A value as the reasons name it: lists and plain dicts (snake_case keys), as JSON would."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(_show(item) for item in value)
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(_plain(value), default=str)


def _any_true(facts: Iterable[Fact[bool]], values: Mapping[int, bool | None] | None = None) -> bool | None:
    """True if one is true; False only if every fact the shape has a field for is explicitly false;
    otherwise unknown. `values` replaces a fact's value (by position) where a rule adjusted it."""
    said = [(values or {}).get(i, fact.value) for i, fact in enumerate(facts) if fact.sayable or fact.known]
    if any(value is True for value in said):
        return True
    if said and all(value is False for value in said):
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


# ------------------------------------------------------------------------------------------------
# One function per control: the evidence the profile gives it, and its details.


@dataclass(frozen=True)
class _Inputs:
    profile: CapabilityProfile
    fallback_identity: Mapping[str, Any]


# Identity detail -> (profile fact, the field as AG-UI names it).
_IDENTITY: tuple[tuple[str, str, str], ...] = (
    ("name", "name", "name"),
    ("description", "description", "description"),
    ("version", "version", "version"),
    ("provider", "provider", "provider"),
    ("documentation_url", "documentation_url", "documentationUrl"),
    ("framework", "type", "type"),
)


def _identity(src: _Inputs) -> tuple[_Evidence, Details]:
    identity = src.profile.identity
    ev = _Evidence(src.profile, "its identity", support=True)
    values: dict[str, Any] = {}
    for key, attr, wire in _IDENTITY:
        value = ev.read(getattr(identity, attr))
        if value is None and src.fallback_identity.get(key):
            value = src.fallback_identity[key]
            ev.reasons.append(
                Reason(
                    "default",
                    f"identity.{wire}",
                    value,
                    f"The admin's {key.replace('_', ' ')} is shown instead",
                )
            )
        values[key] = value
    metadata = ev.known(identity.metadata)
    ev.finish()
    ev.reasons.append(Reason("default", "identity", None, "The identity card is always shown"))
    return ev, IdentityDetails(**values, metadata=metadata)


def _reasoning(src: _Inputs) -> tuple[_Evidence, Details]:
    reasoning = src.profile.reasoning
    ev = _Evidence(src.profile, "reasoning")
    ev.support = ev.read(reasoning.supported)
    streaming = reasoning.streaming.value
    if streaming is not None:
        live = "live, as it streams" if streaming else "at the end of each step"
        ev.known(
            reasoning.streaming, f"{reasoning.streaming.origin.path} is {_show(streaming)}: shown {live}"
        )
    if reasoning.encrypted.value:
        path = reasoning.encrypted.origin.path
        ev.known(
            reasoning.encrypted, f"{path} is true: a 'reasoning hidden' notice is shown, never the value"
        )
    else:
        ev.known(reasoning.encrypted)
    ev.finish().observe(src.profile.seen.reasoning, "The agent emitted reasoning")
    return ev, ReasoningDetails(streaming, reasoning.encrypted.value)


def _subagents(src: _Inputs) -> tuple[_Evidence, Details]:
    multi = src.profile.multi_agent
    ev = _Evidence(src.profile, "sub-agents")
    if multi.supported.value is False:
        ev.read(multi.supported, f"{multi.supported.origin.path} is false: no multi-agent coordination")
        ev.support = False
    else:
        ev.known(multi.supported)
    subagents = multi.subagents.value
    ev.read(multi.subagents, shown=[item.name for item in subagents] if subagents is not None else None)
    if ev.support is None and subagents is not None:
        ev.support = bool(subagents)
    delegation = ev.known(multi.delegation)
    handoffs = ev.known(multi.handoffs)
    # Sub-agents runs showed at work count too, after the declared ones.
    seen = src.profile.seen.subagents
    declared = {item.name for item in subagents or ()}
    more = tuple(item for item in seen.value or () if item.name not in declared)
    ev.finish()
    if more:
        names = ", ".join(item.name for item in more)
        ev.observe(Fact(True, seen.provenance), f"Sub-agents ({names}) worked")
    return ev, SubagentsDetails((*(subagents or ()), *more), delegation, handoffs)


def _skills(src: _Inputs) -> tuple[_Evidence, Details]:
    """The skills an agent names, to choose one for a message; each skill's examples are prompts."""
    fact = src.profile.skills
    ev = _Evidence(src.profile, "skills")
    skills = ev.read(fact, shown=[skill.name for skill in fact.value] if fact.value is not None else None)
    if skills is not None:
        ev.support = bool(skills)
    accepts = tuple(
        (skill.id, ",".join(skill.input_modes)) for skill in skills or () if skill.input_modes is not None
    )
    return ev.finish(), SkillsDetails(tuple(skills or ()), accepts)


# AG-UI input modality -> what an <input accept> takes; "file" means any other kind, so any type.
_MODALITY_ACCEPT = {"image": "image/*", "audio": "audio/*", "video": "video/*", "pdf": "application/pdf"}
_MODALITY_WORDS = {"image": "images", "audio": "audio", "video": "video", "pdf": "PDF"}


def _upload(src: _Inputs) -> tuple[_Evidence, Details]:
    inputs, files = src.profile.multimodal.input, src.profile.files
    ev = _Evidence(src.profile, "file upload")
    modalities = {name: getattr(inputs, name) for name in (*_MODALITY_ACCEPT, "file")}
    for fact in modalities.values():
        ev.read(fact)
    enabled = ev.read(files.enabled)
    upload = ev.read(files.upload)
    mime_types = ev.read(files.mime_types, _mime_types_text(files.mime_types))
    max_bytes = ev.read(files.max_bytes, _bytes_text(files.max_bytes))
    by_modality = _any_true(modalities.values())
    if enabled is False or upload is False:
        ev.support = False
    elif mime_types is not None and not mime_types:
        # The agent refuses every type not in the list: an empty list accepts nothing.
        ev.support = False
    elif by_modality is True or (enabled is True and upload is True):
        ev.support = True
    else:
        ev.support = by_modality
    refused = tuple(name for name in _MODALITY_ACCEPT if modalities[name].value is False)
    if mime_types is not None:
        accept = tuple(mime_types)
    elif modalities["file"].value:
        accept = ()
    else:
        accept = tuple(pattern for name, pattern in _MODALITY_ACCEPT.items() if modalities[name].value)
        if not accept and modalities["file"].value is False:
            # No arbitrary files: only the kinds it did not rule out.
            accept = tuple(pattern for name, pattern in _MODALITY_ACCEPT.items() if name not in refused)
    # Where any type is taken, what the agent ruled out is still refused.
    refuse = tuple(_MODALITY_ACCEPT[name] for name in refused) if not accept else ()
    details = UploadDetails(
        accept=accept,
        accept_any=not accept,
        accept_attr=",".join(accept),
        refuse=refuse,
        refuse_label=", ".join(_MODALITY_WORDS[name] for name in refused) if refuse else "",
        max_bytes=max_bytes,
        max_bytes_label=_size_label(max_bytes),
        read=files.read.value,
    )
    return ev.finish(), details


def _bytes_text(fact: Fact[int]) -> str | None:
    if fact.value is None:
        return None
    return f"{fact.origin.path} is {fact.value} ({_size_label(fact.value)})"


def _mime_types_text(fact: Fact[tuple[str, ...]]) -> str | None:
    if not fact.sayable or (fact.value is None and fact.origin.present):
        return None
    path = fact.origin.path
    if fact.value is None:
        return f"{path} is not declared: any type is offered, the agent checks it"
    if not fact.value:
        return f"{path} is empty: the agent accepts no type"
    return None


def _approvals(src: _Inputs) -> tuple[_Evidence, Details]:
    hitl, tools = src.profile.human_in_the_loop, src.profile.tools
    ev = _Evidence(src.profile, "approvals")
    ev.known(hitl.supported)
    approvals = ev.under(hitl.approvals, hitl.supported)
    interrupts = ev.under(hitl.interrupts, hitl.supported)
    edits = ev.known(hitl.approve_with_edits)
    mechanism = ev.known(hitl.mechanism)
    names = tools.needing_approval.value or ()
    if names:
        ev.read(
            tools.needing_approval,
            f"{len(names)} tool(s) need approval before acting: {', '.join(names)}",
        )
    needing = tuple(tool for tool in tools.items.value or () if tool.name in names)
    if approvals is True:
        ev.support = True
    elif names:
        ev.support = True
        if approvals is False:
            ev.blocked = Reason(
                "declared",
                hitl.approvals.origin.path,
                False,
                f"{hitl.approvals.origin.path} is false: approval requests can be seen but not decided "
                "(the agent denies them when they expire)",
                hitl.approvals.provenance,
            )
    else:
        ev.support = _any_true((hitl.approvals, hitl.interrupts), {0: approvals, 1: interrupts})
    ev.finish()
    ev.observe(src.profile.seen.interrupts, "The agent paused for a decision")
    ev.observe(src.profile.seen.approvals, "The agent asked for an approval")
    return ev, ApprovalsDetails(approvals, interrupts, edits, needing, mechanism)


def _tools(src: _Inputs) -> tuple[_Evidence, Details]:
    tools = src.profile.tools
    ev = _Evidence(src.profile, "tools")
    supported = ev.read(tools.supported)
    items = tools.items.value
    ev.read(tools.items, shown=[item.name for item in items] if items is not None else None)
    if supported is False:
        # The protocol: false disables tool calling "even if items are present".
        ev.support = False
    elif items is not None:
        # A non-empty list is a declaration in itself; an empty one lists nothing to show.
        ev.support = bool(items)
    parallel = ev.known(tools.parallel_calls)
    client_provided = ev.known(tools.client_provided)
    return ev.finish(), ToolsDetails(items or (), parallel, client_provided)


def _state(src: _Inputs) -> tuple[_Evidence, Details]:
    state = src.profile.state
    ev = _Evidence(src.profile, "shared state")
    snapshots, deltas = ev.read(state.snapshots), ev.read(state.deltas)
    persistent = state.persistent_state.value
    if persistent is not None:
        path = state.persistent_state.origin.path
        ev.known(
            state.persistent_state,
            f"{path} is true: the next run starts from the last state, which is sent back"
            if persistent
            else f"{path} is false: each run starts afresh, no state is sent back",
        )
    ev.support = _any_true((state.snapshots, state.deltas))
    ev.finish().observe(src.profile.seen.state, "The agent sent state events")
    details = StateDetails(
        snapshots, deltas, persistent, state.memory.value, send_state_back=persistent is not False
    )
    return ev, details


def _structured_output(src: _Inputs) -> tuple[_Evidence, Details]:
    output, negotiation = src.profile.output, src.profile.negotiation
    ev = _Evidence(src.profile, "structured output")
    structured = ev.read(output.structured_output)
    mime_types = ev.known(output.mime_types) or ()
    offered = ev.read(output.module_types)
    # A client reads what was granted, never what the agent offers or what it asked for.
    granted = ev.negotiated(negotiation.output_module_types)
    if granted is not None:
        ev.support = bool(granted)
    elif offered is not None and not offered:
        ev.support = False
    else:
        ev.support = structured
    return ev.finish(), StructuredOutputDetails(tuple(granted or ()), tuple(offered or ()), tuple(mime_types))


def _grounding(src: _Inputs) -> tuple[_Evidence, Details]:
    ev = _Evidence(src.profile, "provider grounding")
    offered = ev.read(src.profile.output.grounding)
    granted = ev.negotiated(src.profile.negotiation.grounding)
    # The agent grants grounding only where it offers it.
    ev.support = granted if granted is not None else (False if offered is False else None)
    return ev.finish(), GroundingDetails(granted, offered)


def _feedback(src: _Inputs) -> tuple[_Evidence, Details]:
    hitl = src.profile.human_in_the_loop
    ev = _Evidence(src.profile, "feedback")
    ev.known(hitl.supported)
    ev.support = ev.under(hitl.feedback, hitl.supported)
    return ev.finish(), FeedbackDetails()


def _stop(src: _Inputs) -> tuple[_Evidence, Details]:
    hitl, transport = src.profile.human_in_the_loop, src.profile.transport
    ev = _Evidence(src.profile, "stopping a run")
    ev.known(hitl.supported)
    interventions = ev.under(hitl.interventions, hitl.supported)
    streaming = ev.read(transport.streaming)
    ev.support = _any_true((hitl.interventions, transport.streaming), {0: interventions})
    return ev.finish(), StopDetails(
        intervene=interventions is True, interventions=interventions, streaming=streaming
    )


def _limits(src: _Inputs) -> tuple[_Evidence, Details]:
    execution, limits = src.profile.execution, src.profile.limits
    ev = _Evidence(src.profile, "limits")
    iterations = ev.read(execution.max_iterations)
    duration = execution.max_execution_time.value
    ev.read(
        execution.max_execution_time,
        None
        if duration is None
        else f"{execution.max_execution_time.origin.path} is {duration} ms ({_duration_label(duration)})",
    )
    rate = ev.read(limits.rate_limits, _limits_text(limits.rate_limits))
    spend = ev.read(limits.spend_limits, _limits_text(limits.spend_limits))
    per_minute = ev.known(limits.requests_per_minute)
    lists = [fact for fact in (limits.rate_limits, limits.spend_limits) if fact.sayable]
    numbers = any(
        fact.sayable
        for fact in (execution.max_iterations, execution.max_execution_time, limits.requests_per_minute)
    )
    # A number can only say "there is a limit": its silence is unknown, never "no limits".
    if iterations is not None or duration is not None or per_minute is not None or rate or spend:
        ev.support = True
    elif lists and all(fact.known for fact in lists) and not numbers:
        ev.support = False
    details = LimitsDetails(
        max_iterations=iterations,
        max_execution_time=duration,
        max_execution_time_label=_duration_label(duration),
        rate_limits=rate or (),
        spend_limits=spend or (),
        requests_per_minute=per_minute,
    )
    return ev.finish(), details


def _limits_text(fact: Fact[tuple[Any, ...]]) -> str | None:
    if not fact.sayable or (fact.origin.present and fact.value is None):
        return None
    path = fact.origin.path
    if fact.value is None:
        return f"{path} is not declared"
    if not fact.value:
        return f"{path} is empty: the agent declares none"
    return f"{path} declares {len(fact.value)} limit(s), enforced by the agent"


def _host_context(src: _Inputs) -> tuple[_Evidence, Details]:
    host = src.profile.host_context
    ev = _Evidence(src.profile, "host context")
    fields = ev.read(host.accepted_fields)
    limit = ev.read(host.max_total_bytes)
    if fields is not None:
        ev.support = bool(fields)
    return ev.finish(), HostContextDetails(tuple(fields or ()), limit, _size_label(limit))


def _stream_profile(src: _Inputs) -> tuple[_Evidence, Details]:
    profiles = src.profile.stream_profiles
    ev = _Evidence(src.profile, "stream profiles")
    offered = ev.read(profiles.offered)
    default = ev.read(profiles.default)
    granted = ev.negotiated(src.profile.negotiation.stream_profile)
    if offered is not None:
        ev.support = bool(offered)
    if granted is not None:
        # The agent did grant a profile: that is worth showing even where the policy lists none.
        ev.support = True
    details = StreamProfileDetails(tuple(offered or ()), default, granted, len(offered or ()) > 1)
    return ev.finish(), details


def _image_picker(src: _Inputs) -> tuple[_Evidence, Details]:
    files = src.profile.files
    ev = _Evidence(src.profile, "image input")
    ev.support = ev.read(src.profile.multimodal.input.image)
    images = tuple(t for t in files.mime_types.value or () if t.startswith("image/")) or ("image/*",)
    max_bytes = files.max_bytes.value
    details = ImagePickerDetails(
        accept=images,
        accept_attr=",".join(images),
        max_bytes=max_bytes,
        max_bytes_label=_size_label(max_bytes),
    )
    return ev.finish(), details


def _audio_recorder(src: _Inputs) -> tuple[_Evidence, Details]:
    files = src.profile.files
    ev = _Evidence(src.profile, "audio input")
    ev.support = ev.read(src.profile.multimodal.input.audio)
    declared = tuple(t for t in files.mime_types.value or () if t.startswith("audio/"))
    max_bytes = files.max_bytes.value
    details = AudioRecorderDetails(
        mime_types=declared or RECORDING_TYPES, max_bytes=max_bytes, max_bytes_label=_size_label(max_bytes)
    )
    return ev.finish(), details


def _media_output(src: _Inputs) -> tuple[_Evidence, Details]:
    output = src.profile.multimodal.output
    ev = _Evidence(src.profile, "images or audio in answers")
    images, audio = ev.read(output.image), ev.read(output.audio)
    ev.support = _any_true((output.image, output.audio))
    ev.finish().observe(src.profile.seen.media, "The agent sent an image or audio")
    return ev, MediaOutputDetails(images, audio)


def _frontend_tools(src: _Inputs) -> tuple[_Evidence, Details]:
    tools = src.profile.tools
    ev = _Evidence(src.profile, "client-provided tools")
    if tools.supported.value is False:
        ev.read(tools.supported)
    ev.support = client_provided = ev.under(tools.client_provided, tools.supported)
    return ev.finish(), FrontendToolsDetails(
        offer=client_provided is not False, parallel_calls=tools.parallel_calls.value
    )


# The SDK reads AG-UI over SSE only: a binary transport an agent declares is shown, not used.
_READS_BINARY = False


def _transport(src: _Inputs) -> tuple[_Evidence, Details]:
    transport = src.profile.transport
    ev = _Evidence(src.profile, "its connection")
    streaming = ev.read(
        transport.streaming,
        f"{transport.streaming.origin.path} is false: the answer is read as one complete response"
        if transport.streaming.value is False
        else None,
    )
    resumable = ev.read(
        transport.resumable,
        f"{transport.resumable.origin.path} is true: after a cut connection the stream resumes from the "
        "last event received"
        if transport.resumable.value
        else None,
    )
    binary = ev.read(
        transport.http_binary,
        f"{transport.http_binary.origin.path} is true: declared, but this product reads the stream as SSE"
        if transport.http_binary.value and not _READS_BINARY
        else None,
    )
    websocket = ev.read(transport.websocket)
    push = ev.read(transport.push_notifications)
    facts = (
        transport.streaming,
        transport.resumable,
        transport.http_binary,
        transport.websocket,
        transport.push_notifications,
    )
    if streaming is False or resumable or binary or websocket or push:
        ev.support = True
    elif any(fact.sayable for fact in facts) and all(fact.known for fact in facts if fact.sayable):
        ev.support = False
        ev.reasons.append(
            Reason("default", "transport", None, "The answer streams as usual: nothing to show")
        )
    details = TransportDetails(
        streaming=streaming,
        stream=streaming is not False,
        resumable=resumable,
        resume=resumable is True,
        http_binary=binary,
        use_binary=bool(binary) and _READS_BINARY,
        websocket=websocket,
        push_notifications=push,
    )
    return ev.finish(), details


def _code_execution(src: _Inputs) -> tuple[_Evidence, Details]:
    execution = src.profile.execution
    ev = _Evidence(src.profile, "code execution")
    ev.support = runs_code = ev.read(execution.code_execution)
    sandboxed = execution.sandboxed.value
    path = execution.sandboxed.origin.path if execution.sandboxed.sayable else ""
    text = {
        True: f"{path} is true: its code runs in a sandbox",
        False: f"{path} is false: its code runs outside a sandbox (a warning is shown)",
        None: f"{path} is not declared: whether its code runs in a sandbox is unknown (a warning is shown)",
    }[sandboxed]
    if runs_code:
        ev.read(execution.sandboxed, text)
    else:
        ev.known(execution.sandboxed)
    sandbox: Sandbox = "sandboxed" if sandboxed else "not-sandboxed" if sandboxed is False else "unknown"
    return ev.finish(), CodeExecutionDetails(sandboxed, sandbox, warn=sandboxed is not True)


def _memory(src: _Inputs) -> tuple[_Evidence, Details]:
    state = src.profile.state
    ev = _Evidence(src.profile, "long-term memory")
    memory = state.memory.value
    path = state.memory.origin.path if state.memory.sayable else ""
    ev.support = ev.read(
        state.memory, f"{path} is true: it remembers across conversations" if memory else None
    )
    return ev.finish(), MemoryDetails(memory, state.persistent_state.value)


def _throttle(src: _Inputs) -> tuple[_Evidence, Details]:
    fact = src.profile.limits.requests_per_minute
    ev = _Evidence(src.profile, "a send rate")
    per_minute = ev.read(
        fact,
        f"{fact.origin.path} is {fact.value}: at most {fact.value} messages a minute are sent"
        if fact.known
        else None,
    )
    if per_minute is not None:
        ev.support = True
    return ev.finish(), ThrottleDetails(max_requests=per_minute)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _custom(src: _Inputs) -> tuple[_Evidence, Details]:
    profile = src.profile
    ev = _Evidence(profile, "integration-specific capabilities")
    if profile.unread:
        ev.said = True
        ev.reasons.append(
            Reason(
                "declared",
                profile.shape.root,
                None,
                f"{_sentence(profile.shape.label)}: nothing in it is read; it is shown as it was sent",
                (Provenance(profile.shape.label, "", None, Kind.DECLARED), *profile.unread),
            )
        )
    custom = profile.custom.value
    # As many entries of `custom` as of any other kept fields (an agent could send thousands).
    shown = list(islice(custom or {}, KEPT_LIMIT))
    ev.read(profile.custom, shown=shown if custom is not None else None)
    entries = tuple(
        Provenance(origin.source, f"{origin.path}.{key}", custom[key], Kind.DECLARED)
        for origin in profile.custom.provenance[:1]
        for key in shown
    )
    kept = (*profile.extensions, *profile.unread)
    for link in kept:
        ev.said = True
        text = f"{link.path} is {link.raw_text}" if link.path else ""
        text = f"{text} ({link.note})" if text and link.note else text or link.note
        ev.reasons.append(Reason(link.kind.value, link.path or profile.shape.root, link.raw, text, (link,)))
    if custom or kept:
        ev.support = True
    elif custom is not None:
        ev.support = False
    details = CustomDetails(custom=entries, extensions=kept, unknown_shape=bool(profile.unread))
    return ev.finish(), details


def _generative_ui(src: _Inputs) -> tuple[_Evidence, Details]:
    ui = src.profile.generative_ui
    ev = _Evidence(src.profile, "generative UI (A2UI)")
    path = ui.a2ui.origin.path if ui.a2ui.sayable else ""
    speaks = ui.a2ui.value
    ev.support = ev.read(
        ui.a2ui,
        f"{path} declares A2UI v0.9 or v1.0: its surfaces are drawn here, and the catalogue is offered"
        if speaks
        else f"{path} declares no A2UI v0.9 or v1.0"
        if speaks is False
        else None,
    )
    ev.known(
        ui.catalogs,
        f"{ui.catalogs.origin.path} names {_show(ui.catalogs.value)}" if ui.catalogs.known else None,
    )
    ev.finish().observe(src.profile.seen.a2ui, "The agent sent A2UI surfaces")
    return ev, GenerativeUIDetails(catalogs=ui.catalogs.value or (), advertise=ev.support is True)


_CONTROLS: dict[str, Callable[[_Inputs], tuple[_Evidence, Details]]] = {
    "identity": _identity,
    "reasoning": _reasoning,
    "subagents": _subagents,
    "skills": _skills,
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
    "image-picker": _image_picker,
    "audio-recorder": _audio_recorder,
    "media-output": _media_output,
    "frontend-tools": _frontend_tools,
    "transport": _transport,
    "code-execution": _code_execution,
    "memory": _memory,
    "throttle": _throttle,
    "generative-ui": _generative_ui,
    "custom": _custom,
}

# Controls a user may see but not use without a permission: (UserAbilities attribute, permission, ability).
_NEEDS_PERMISSION: dict[str, tuple[str, str, str]] = {
    "reasoning": ("can_view_reasoning", "agents_ui.view_reasoning", "see the agent's reasoning"),
    "upload": ("can_upload", "agents_ui.upload_files", "upload files"),
    "approvals": ("can_approve", "agents_ui.approve_actions", "approve or reject the agent's actions"),
    "image-picker": ("can_upload", "agents_ui.upload_files", "send images"),
    "audio-recorder": ("can_upload", "agents_ui.upload_files", "send recordings"),
}

_ALWAYS_SHOWN = frozenset({"identity"})


# ------------------------------------------------------------------------------------------------
# The admin and the user, the same for every control


def _resolve(
    name: str, ev: _Evidence, details: Details, override: str | None, user: UserAbilities
) -> ControlDecision:
    reasons = list(ev.reasons)
    support = ev.support

    def done(decision: Decision) -> ControlDecision:
        return ControlDecision(name, decision, tuple(reasons), details)

    field_name = f"overrides.{name}"

    def admin(text: str) -> Reason:
        provenance = (Provenance(ADMIN, field_name, override, Kind.OVERRIDE),)
        return Reason("override", field_name, override, text, provenance)

    if override == "hide":
        if name in _ALWAYS_SHOWN:
            reasons.append(admin("The admin asked to hide this, but it is always shown"))
        else:
            reasons.append(admin("The admin forced this control off"))
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
        reasons.append(admin(text))
    elif override is not None:
        reasons.append(admin(f"Unknown override {override!r} (use hide or allow): ignored"))

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
    capabilities: AgentCapabilities | Mapping[str, Any] | None = None,
    policy: PublicExternalAgentPolicy | Mapping[str, Any] | None = None,
    negotiated: Negotiated | Mapping[str, Any] | None = None,
    profile: CapabilityProfile | None = None,
    overrides: Mapping[str, str] | None = None,
    user: UserAbilities = UserAbilities(),  # frozen: one shared default is safe
    observed: Observations = NOTHING_SEEN,
    fallback_identity: Mapping[str, Any] | None = None,
) -> Plan:
    """The plan of every control for one agent and one user.

    Pass the declaration as discovered (`capabilities` for an AG-UI agent, in any shape;
    `policy` and, once prepared, `negotiated` for an external agent; neither when the agent has
    no discovery), or a `profile` already read from it. `fallback_identity` is what the admin
    entered ({"name": ..., "description": ...}), shown where the agent declares no identity.
    Overrides for names outside CONTROL_NAMES are ignored.
    """
    if profile is None:
        profile = read_declaration(capabilities=capabilities, policy=policy, negotiated=negotiated)
    elif capabilities is not None or policy is not None or negotiated is not None:
        raise ValueError("Pass a declaration or a profile read from it, not both")
    profile = profile.with_observations(observed)
    src = _Inputs(profile, fallback_identity or {})
    overrides = overrides or {}
    controls = {}
    for name in CONTROL_NAMES:
        evidence, details = _CONTROLS[name](src)
        controls[name] = _resolve(name, evidence, details, overrides.get(name), user)
    return Plan(controls, profile.protocol, profile, _facts(profile, controls))


def declared_support(profile: CapabilityProfile, name: str) -> tuple[bool | None, tuple[Reason, ...]]:
    """What the declaration alone says of one control: supported, unsupported or unknown (None),
    with the explain view's reasons, before runs, admins and users (the conformance report)."""
    if profile.seen.record != NOTHING_SEEN:
        profile = replace(profile, seen=type(profile.seen)())
    evidence, _ = _CONTROLS[name](_Inputs(profile, {}))
    return evidence.support, tuple(evidence.reasons)


# ------------------------------------------------------------------------------------------------
# Facts: what the pages read instead of the protocol

_FACT_UNSAID = {
    "keeps-thread": "Not said: the product keeps the conversation and sends it with each run",
    "feedback-reaches-agent": "Not said: ratings are kept with the conversation",
    "surfaces-take-actions": "Not said: a press on an interface is sent with the next run",
    "answers-tool-calls": "Not said: a tool call left without a result can be answered",
}


def _facts(profile: CapabilityProfile, controls: Mapping[str, ControlDecision]) -> dict[str, PlanFact]:
    thread = profile.thread
    read = {
        "keeps-thread": thread.kept_by_agent,
        "feedback-reaches-agent": thread.feedback_sent,
        "surfaces-take-actions": thread.surface_actions,
        "answers-tool-calls": thread.tool_answers,
    }
    facts = {}
    for name, fact in read.items():
        if fact.known:
            facts[name] = PlanFact(name, bool(fact.value), (_reason(fact, fact.value, None),))
        else:
            reason = Reason("default", name, None, _FACT_UNSAID[name])
            facts[name] = PlanFact(name, FACT_DEFAULTS[name], (reason,))
    # The product's generic tools go with each run unless the agent takes none (the control's rule).
    tools = controls["frontend-tools"]
    offer = bool(getattr(tools.details, "offer", True))
    facts["offers-frontend-tools"] = PlanFact("offers-frontend-tools", offer, tools.reasons)
    return facts
