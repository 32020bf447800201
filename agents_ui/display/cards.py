"""The cards a run is shown as: one typed record per kind, what the run templates read.

RunView (display/run_view.py) makes them from the transcript under the plan; the templates only
read them. A field's default is what the card shows when the transcript has nothing for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from agents_ui.display.media import Media


@dataclass(frozen=True)
class MessageCard:
    """An assistant's answer: whole once complete, else what settled and the live tail."""

    id: str
    dom: str
    text: str
    hidden: int  # characters before the shown end of the text
    html: str
    settled_html: str
    tail_html: str
    complete: bool
    streaming: bool
    subagent: str
    feedback: str  # the person's rating: "up", "down" or ""


@dataclass(frozen=True)
class DecisionCard:
    """A decided (or expired) approval request, in the same words whatever protocol asked it."""

    label: str
    tone: str
    tool: str
    request_id: str
    by: str = ""
    at: datetime | None = None
    expired_at: str | None = None
    sent: str = ""  # the arguments the agent was given, as JSON
    asked: str = ""  # what it asked for, when it differs or when it was not decided


@dataclass(frozen=True)
class ApprovalCard:
    """One request of the agent to act, waiting for a person's decision or decided already."""

    id: str
    dom: str
    tool: str
    args: Any
    args_json: str
    editable: bool
    # The decision is posted while the run waits on its stream (it goes on in place), rather than
    # answered by a new run that resumes the thread.
    in_place: bool
    reason: str = ""
    message: str = ""
    args_list: list[tuple[str, str]] = field(default_factory=list)  # plain "name: value" lines
    expires_at: str | None = None
    expired: bool = False
    side_effect_class: str | None = None
    idempotency: str | None = None
    # The JSON Schema edited arguments must fit (None: any JSON object).
    edit_schema: dict[str, Any] | None = None
    # What else the agent's responseSchema asks beside the decision (runs/resume.py), the prefix of
    # their field names, and why the card cannot send what the schema asks, if so.
    fields: list[Any] = field(default_factory=list)
    field_prefix: str = ""
    answer_problem: str = ""
    record: DecisionCard | None = None
    # Never decided, and nobody can now: the run stopped waiting.
    stale: bool = False

    @property
    def open(self) -> bool:
        return self.record is None and not self.stale and not self.expired


@dataclass(frozen=True)
class ApprovalForm:
    """The requests decided together by one form: a resume answers all of a run's open requests
    at once; a request decided in place is decided alone."""

    requests: list[ApprovalCard]
    in_place: bool
    errors_id: str  # the form's message area

    @property
    def request(self) -> ApprovalCard:
        return self.requests[0]


@dataclass(frozen=True)
class ToolCallCard:
    """A tool call: its arguments and result, or the card with which the person answers it."""

    id: str
    dom: str
    name: str
    confirms: str  # the call a confirmation tool asks about
    complete: bool
    args: str
    args_hidden: int
    args_error: str | None
    edited_from: str  # what the agent asked, when a decision edited the arguments
    has_result: bool
    # A call an interrupt asks about waits for the person, then shows their decision: a
    # confirmation call (ADK's) never gets a result of its own (docs/PROTOCOLS.md 1.3).
    decided: DecisionCard | None
    asking: bool
    result: str
    result_hidden: int
    result_error: str | None
    status: str | None
    media: list[Media]
    media_more: int
    media_hidden: int
    # A call the person answers (a client tool, or a call left without a result).
    client: Any = None
    awaiting: bool = False
    decides: str = ""  # the approval request its confirmation decides
    decides_edit: ApprovalCard | None = None  # that request, when it takes edited arguments
    decision: DecisionCard | None = None
    answered: bool = False
    dismissed: bool = False
    kept: bool = False  # answered, kept until the run's other calls are too
    answer: str = ""
    answer_value: Any = None
    has_args: bool = False
    shaped: Any = None  # the answer form drawn from an unknown tool's arguments


@dataclass(frozen=True)
class ActivityCard:
    """An AG-UI activity, drawn by its type's renderer (display/activities.py) or as a tree."""

    id: str
    type: str
    dom: str
    template: str
    note: str = ""
    tree: list[dict[str, Any]] = field(default_factory=list)
    # A2UI surfaces: what templates/agents_ui/a2ui/ reads.
    surfaces: list[dict[str, Any]] = field(default_factory=list)
    status: Any = None
    error: Any = None
    deleted: bool = False
    notes: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class RunItem:
    """One entry of a run's items, in the order the agent started them."""

    kind: Literal["message", "call", "activity"]
    card: MessageCard | ToolCallCard | ActivityCard


@dataclass(frozen=True)
class ReasoningCard:
    id: str
    dom: str
    text: str
    hidden: int
    encrypted: bool
    complete: bool


@dataclass(frozen=True)
class SourceCard:
    """A source the agent names: in its structured result, or grounding its answer."""

    title: str
    url: str
    snippet: str = ""
    publisher: str = ""


@dataclass(frozen=True)
class ModuleCard:
    """A typed module of the agent's answer: a citation, a table, or any other as JSON."""

    type: str
    json: str
    text: str | None = None
    title: str | None = None
    url: str = ""
    columns: list[Any] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
