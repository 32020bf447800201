"""The run transcript every protocol folds into, and its records (no protocol's wire types here).

A run's messages, tool calls, reasoning, state, activities and sub-agents; and the three run records
that mean the same whatever protocol brought them: :class:`ApprovalRequest` (an AG-UI interrupt, an
external agent's approval request), :class:`Artifact` (an external agent's artifact, an A2A artifact
or the parts that came with an A2A answer) and :class:`TaskStatus` (an A2A task's state). What a
protocol needs to act on a record later (an interrupt's response schema, an approval's input, an A2A
artifact's parts) is a typed field of the record. The fold that builds a transcript is
:mod:`agents_ui.sdk.folding`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .external.policy import GroundingSource

__all__ = [
    "ActivityRecord",
    "ApprovalRequest",
    "Artifact",
    "ArtifactPart",
    "Observed",
    "Outcome",
    "ReasoningEntry",
    "StepRecord",
    "SubagentNode",
    "TaskStatus",
    "ToolCallRecord",
    "Transcript",
    "TranscriptMessage",
    "content_text",
    "display_text",
    "merge_metadata",
]


class _Parts:
    """Streamed text: deltas are appended to a list and joined once when read.

    ``text += delta`` on an attribute copies the whole text per delta (quadratic on long answers).
    A live view asks only for what it has not shown yet (:meth:`since`), which joins the last few
    parts instead of the whole text.
    """

    __slots__ = ("_joined", "_parts", "length")

    # More unjoined parts than this are joined into one (bounds a long answer's memory).
    MAX_PARTS = 64

    def __init__(self, text: str = "") -> None:
        self._parts: list[str] = [text] if text else []
        self._joined: str | None = text
        self.length = len(text)

    def append(self, delta: str) -> None:
        self._parts.append(delta)
        self._joined = None
        self.length += len(delta)

    def set(self, text: str) -> None:
        self._parts = [text] if text else []
        self._joined = text
        self.length = len(text)

    @property
    def text(self) -> str:
        if self._joined is None:
            self._joined = "".join(self._parts)
            self._parts = [self._joined]
        return self._joined

    def since(self, start: int) -> str:
        """The text from character ``start`` on."""
        if self._joined is not None or len(self._parts) > self.MAX_PARTS:
            return self.text[start:]
        parts, begin, i = self._parts, self.length, len(self._parts)
        while i and begin > start:
            i -= 1
            begin -= len(parts[i])
        return "".join(parts[i:])[start - begin :]


class _StreamedText:
    """A message or reasoning entry, whose text arrives in pieces (kept in ``self._text``)."""

    __slots__ = ()
    _text: _Parts

    @property
    def text(self) -> str:
        return self._text.text

    @property
    def text_length(self) -> int:
        return self._text.length

    def text_since(self, start: int) -> str:
        return self._text.since(start)

    def append_text(self, delta: str) -> None:
        self._text.append(delta)

    def set_text(self, text: str) -> None:
        self._text.set(text)


@dataclass(slots=True, eq=False)
class TranscriptMessage(_StreamedText):
    id: str
    role: str
    # Which event of the stream first mentioned it: the order to show messages and tool calls in.
    position: int = 0
    subagent_run_id: str | None = None
    name: str | None = None
    complete: bool = False
    tool_call_ids: list[str] = field(default_factory=list)
    # role="tool" messages: the call they answer.
    tool_call_id: str | None = None
    # Non-text parts of a message from MESSAGES_SNAPSHOT (images, documents), kept as given.
    parts: list[Any] = field(default_factory=list)
    # role="tool" messages: why the tool failed, when a snapshot said so.
    error: str | None = None
    # The agent's opaque value for this message (REASONING_ENCRYPTED_VALUE), kept to send back.
    encrypted_value: str | None = None
    # Its metadata: every event's merged in, key by key, the last write winning (never read).
    metadata: dict[str, Any] | None = None
    # The content as the agent gave it when it is a list of parts (a snapshot, a tool result).
    content: Any = None
    _text: _Parts = field(default_factory=_Parts, repr=False)


def merge_metadata(record: Any, metadata: dict[str, Any] | None) -> None:
    """AG-UI 1.1 metadata (spec ``basic/metadata``): merged key by key, last write wins, no recursion."""
    if metadata:
        record.metadata = {**(record.metadata or {}), **metadata}


def display_text(value: Any) -> str:
    """A tool result as a person reads it: text as itself, any other JSON document pretty-printed.

    Results travel as text; a JSON string (``"Sent"``) or text that is not JSON is shown without
    quotes, a JSON object, array or number is shown indented.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
        if isinstance(value, str):
            return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=_plain)
    except (TypeError, ValueError):
        return str(value)


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if dump is not None else str(value)


@dataclass(slots=True, eq=False)
class ToolCallRecord:
    id: str
    name: str
    position: int = 0
    parent_message_id: str | None = None
    subagent_run_id: str | None = None
    complete: bool = False
    # Parsed once the call is complete; ``args_error`` says why parsing failed.
    args: Any = None
    args_error: str | None = None
    result: Any = None
    has_result: bool = False
    result_error: str | None = None
    # External agents: tool:completed's status ("ok", "error", ...).
    status: str | None = None
    encrypted_value: str | None = None
    metadata: dict[str, Any] | None = None
    _args: _Parts = field(default_factory=_Parts, repr=False)

    @property
    def args_text(self) -> str:
        return self._args.text

    @property
    def args_length(self) -> int:
        return self._args.length

    def append_args(self, delta: str) -> None:
        self._args.append(delta)

    def set_args(self, text: str) -> None:
        self._args.set(text)

    @property
    def result_display(self) -> str:
        """The result as shown: see :func:`display_text` (``result`` keeps what the agent sent)."""
        return display_text(self.result) if self.has_result else ""

    def fill_args(self, text: str) -> None:
        """The arguments a MESSAGES_SNAPSHOT gives: they complete a call still streaming, and fill
        in a complete one that streamed none; streamed arguments are kept."""
        if self.complete:
            if self._args.length or not text:
                return
            self.complete, self.args, self.args_error = False, None, None
        self._args.set(text)
        self.finish()

    def finish(self) -> None:
        """Mark complete and parse the arguments (once; an empty text is ``{}``)."""
        if self.complete:
            return
        self.complete = True
        text = self._args.text
        if not text.strip():
            self.args = {}
            return
        try:
            self.args = json.loads(text)
        except ValueError as exc:
            self.args_error = f"the arguments are not valid JSON: {exc}"


@dataclass(slots=True, eq=False)
class ReasoningEntry(_StreamedText):
    id: str
    subagent_run_id: str | None = None
    position: int = 0
    complete: bool = False
    # The provider's opaque value (a signature, or the whole reasoning sealed): stored to send
    # back, never shown.
    encrypted_value: str | None = None
    _text: _Parts = field(default_factory=_Parts, repr=False)

    @property
    def encrypted(self) -> bool:
        """Sealed: the reasoning exists only as the encrypted value, there is no text to show."""
        return self.encrypted_value is not None and self._text.length == 0


@dataclass(slots=True, eq=False)
class SubagentNode:
    run_id: str
    name: str
    description: str | None = None
    parent_run_id: str | None = None
    parent_tool_call_id: str | None = None
    status: Literal["running", "finished", "suspended", "error"] = "running"
    result: Any = None
    error: str | None = None
    interrupt_ids: list[str] = field(default_factory=list)
    children: list[SubagentNode] = field(default_factory=list)


@dataclass(slots=True)
class Outcome:
    kind: Literal["success", "interrupt", "cancelled", "error"]
    message: str | None = None
    code: str | None = None
    result: Any = None
    pending_tool_call_ids: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ApprovalRequest:
    """A request for a person's decision, whatever protocol asked, and its decision once known.

    ``kind`` says how the answer reaches the agent: ``"interrupt"`` when the run ended to wait for
    it and a new run resumes with it (AG-UI interrupts; ``response_schema`` is what the answer must
    match), ``"in-run"`` when the run holds while the person decides (an external agent's approval
    request; ``input`` is what the tool is about to do, and ``decision`` arrives in the stream).
    """

    id: str
    kind: Literal["interrupt", "in-run"]
    tool_call_id: str | None = None
    # The tool or action's public name, when the request names one.
    name: str | None = None
    message: str | None = None
    reason: str | None = None
    input: Any = None
    response_schema: Any = None
    side_effect_class: str | None = None
    expires_at: str | None = None
    metadata: Any = None
    subagent_run_id: str | None = None
    decision: str | None = None

    @property
    def pending(self) -> bool:
        return self.decision is None


@dataclass
class ArtifactPart:
    """One part of an artifact carried in the stream: text, a file (inline or a link), or data."""

    kind: str  # text | file | data
    text: str = ""
    media_type: str = ""
    filename: str = ""
    raw: bytes | None = None  # a file sent inline
    url: str = ""  # a file sent by reference (shown, never fetched by the server)
    data: Any = None

    @property
    def size(self) -> int | None:
        return len(self.raw) if self.raw is not None else None


def _default_type(part: ArtifactPart) -> str:
    return {"text": "text/plain", "data": "application/json"}.get(part.kind, "application/octet-stream")


@dataclass
class Artifact:
    """Something the agent made, whatever protocol brought it.

    ``remote``: the content stays with the agent and is fetched from it when asked for (an external
    agent's artifact, described by ``media_type`` and ``size``); otherwise it came in the stream as
    ``parts`` (A2A artifacts and the non-text parts of an A2A answer), text growing as chunks come.
    """

    id: str
    name: str = ""
    description: str = ""
    parts: list[ArtifactPart] = field(default_factory=list)
    complete: bool = False
    remote: bool = False
    media_type: str | None = None
    size: int | None = None
    of_answer: bool = False  # the non-text parts of an agent's answer, kept beside its text

    @property
    def media_types(self) -> list[str]:
        if self.remote:
            return [self.media_type] if self.media_type else []
        return list(dict.fromkeys(p.media_type or _default_type(p) for p in self.parts))


# A task's states (A2A's names): the agent waits for the person, or the task has ended.
WAITING_STATES = frozenset({"input-required", "auth-required"})
FINAL_STATES = frozenset({"completed", "failed", "canceled", "rejected"})


@dataclass
class TaskStatus:
    """The task a run follows, when the agent keeps one: its ids, its state and the agent's words."""

    task_id: str = ""
    context_id: str = ""
    state: str = ""
    # The agent's words with the latest state (the question, the reason it failed ...).
    status_text: str = ""
    # Progress the agent reported while working, in order (bounded).
    progress: list[str] = field(default_factory=list)
    revision: int = 0

    @property
    def waiting(self) -> bool:
        return self.state in WAITING_STATES

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES


@dataclass(slots=True)
class ActivityRecord:
    message_id: str
    activity_type: str
    content: Any
    # Which event of the stream first mentioned it: its place among messages and tool calls.
    position: int = 0
    # Counts the snapshots and patches applied: a live view redraws the block when it moves.
    revision: int = 0


@dataclass(slots=True)
class StepRecord:
    name: str
    finished: bool = False


@dataclass(slots=True)
class Observed:
    """Evidence from what the run emitted, kept apart from any declaration (docs/PROTOCOLS.md 1.2)."""

    reasoning: bool = False
    encrypted_reasoning: bool = False
    interrupts: bool = False
    state_snapshots: bool = False
    state_deltas: bool = False
    tool_calls: bool = False
    subagents: bool = False
    approvals: bool = False
    modules: bool = False
    grounding: bool = False
    media: bool = False  # an image or audio part in a tool's result
    activities: bool = False
    a2ui: bool = False  # an A2UI surface activity (sdk/a2ui/)

    @property
    def state_events(self) -> bool:
        return self.state_snapshots or self.state_deltas


@dataclass(slots=True, eq=False)
class Transcript:
    thread_id: str | None = None
    run_id: str | None = None
    messages: list[TranscriptMessage] = field(default_factory=list)
    tool_calls: dict[str, ToolCallRecord] = field(default_factory=dict)
    reasoning: list[ReasoningEntry] = field(default_factory=list)
    state: Any = None
    subagents: list[SubagentNode] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    activities: dict[str, ActivityRecord] = field(default_factory=dict)
    custom_events: list[tuple[str, Any]] = field(default_factory=list)
    modules: list[tuple[str, Any]] = field(default_factory=list)
    # The sources an answer is grounded in (an external agent's grounding events).
    grounding: list[GroundingSource] = field(default_factory=list)
    artifacts: dict[str, Artifact] = field(default_factory=dict)
    # The task the run follows, when the agent keeps one (A2A); None otherwise.
    task: TaskStatus | None = None
    # Every request for a person's decision, by id (interrupts and in-run approvals alike).
    approvals: dict[str, ApprovalRequest] = field(default_factory=dict)
    # Calls an earlier run of the thread opened and this run gave the result of (a resume):
    # id -> that earlier run's own record, which now holds the result.
    answered_earlier: dict[str, ToolCallRecord] = field(default_factory=dict)
    usage: Any = None
    outcome: Outcome | None = None
    observed: Observed = field(default_factory=Observed)
    # What could not be applied (an invalid patch, a delta for an unknown message): the fold
    # keeps the last good state and goes on.
    errors: list[str] = field(default_factory=list)
    event_count: int = 0
    # Counts the events that changed more than the length of a message or reasoning text that
    # already existed: a live view that shows those texts re-checks the rest only when it moves.
    revision: int = 0

    @property
    def open_interrupts(self) -> list[ApprovalRequest]:
        """The requests the run ended to wait for (answered by resuming), while it waits."""
        if self.outcome is not None and self.outcome.kind == "interrupt":
            return [a for a in self.approvals.values() if a.kind == "interrupt"]
        return []

    @property
    def in_run_approvals(self) -> list[ApprovalRequest]:
        """The requests the run holds for while it streams, decided or not."""
        return [a for a in self.approvals.values() if a.kind == "in-run"]

    @property
    def pending_approvals(self) -> list[ApprovalRequest]:
        """In-run requests not decided yet: the agent holds its answer until then."""
        return [a for a in self.in_run_approvals if a.pending]

    @property
    def finished(self) -> bool:
        return self.outcome is not None

    def message(self, message_id: str) -> TranscriptMessage | None:
        for message in self.messages:
            if message.id == message_id:
                return message
        return None

    def subagent(self, run_id: str) -> SubagentNode | None:
        stack = list(self.subagents)
        while stack:
            node = stack.pop()
            if node.run_id == run_id:
                return node
            stack.extend(node.children)
        return None


def content_text(content: Any) -> tuple[str, list[Any]]:
    """A message's content (a string or a list of parts) -> its text and its non-text parts."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    others: list[Any] = []
    for part in content:
        text = getattr(part, "text", None)
        if isinstance(text, str) and getattr(part, "type", None) == "text":
            texts.append(text)
        else:
            others.append(part)
    return "".join(texts), others
