"""The fold: an event stream (either protocol) -> the run transcript the UI renders and tests assert.

``TranscriptBuilder.apply(event)`` folds live, one event at a time; ``fold(events)`` folds a whole
stream, ``fold_thread(runs)`` a thread's runs, each seeing the ones before it (a resume's results
belong to the calls the interrupted run opened). Both protocols land in the same ``Transcript``
shape. The fold never raises on a strange stream: what cannot be applied is recorded in
``Transcript.errors`` and the fold goes on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from a2a.types.a2a_pb2 import StreamResponse as A2AStreamResponse
from ag_ui import core as ag

from . import policy as ext
from .a2a_fold import TaskRecord, apply_stream_response
from .state import StateKeeper

A2UI_ACTIVITY = "a2ui-surface"  # AG-UI's A2UI middleware (sdk/a2ui.py)
A2UI_MODULE = "a2ui"  # an external agent's output module of A2UI operations (docs/PROTOCOLS.md)

__all__ = [
    "ActivityRecord",
    "ApprovalRecord",
    "Observed",
    "Outcome",
    "ReasoningEntry",
    "StepRecord",
    "SubagentNode",
    "ToolCallRecord",
    "Transcript",
    "TranscriptBuilder",
    "TranscriptMessage",
    "afold",
    "display_text",
    "fold",
    "fold_thread",
]

logger = logging.getLogger(__name__)


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
    _text: _Parts = field(default_factory=_Parts, repr=False)


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
    _args: _Parts = field(default_factory=_Parts, repr=False)

    @property
    def args_text(self) -> str:
        return self._args.text

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
    interrupts: list[ag.Interrupt] = field(default_factory=list)
    message: str | None = None
    code: str | None = None
    result: Any = None
    pending_tool_call_ids: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ApprovalRecord:
    """An external agent's approval request and, once known, its decision."""

    id: str
    tool_call_id: str | None = None
    public_name: str | None = None
    input: Any = None
    side_effect_class: str | None = None
    expires_at: str | None = None
    decision: str | None = None

    @property
    def pending(self) -> bool:
        return self.decision is None


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
    a2ui: bool = False  # an A2UI surface activity (sdk/a2ui.py)

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
    grounding: list[ext.GroundingSource] = field(default_factory=list)
    artifacts: list[ext.ArtifactCreated] = field(default_factory=list)
    # The A2A task the run follows (agents_ui.sdk.a2a_fold); None for the other protocols.
    task: TaskRecord | None = None
    approvals: dict[str, ApprovalRecord] = field(default_factory=dict)
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
    def open_interrupts(self) -> list[ag.Interrupt]:
        if self.outcome is not None and self.outcome.kind == "interrupt":
            return self.outcome.interrupts
        return []

    @property
    def pending_approvals(self) -> list[ApprovalRecord]:
        return [a for a in self.approvals.values() if a.pending]

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


def _content_text(content: Any) -> tuple[str, list[Any]]:
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


# Events that only lengthen an existing text, and the builder's index of such texts by id.
_TEXT_DELTAS: dict[type, str] = {
    ag.TextMessageContentEvent: "_messages",
    ag.ReasoningMessageContentEvent: "_reasoning",
    ext.MessageDelta: "_messages",
}


def _said_ids(transcripts: Iterable[Transcript]) -> frozenset[str]:
    """What runs said, by id: messages, reasoning, and the messages their calls named."""
    ids: set[str] = set()
    for t in transcripts:
        ids.update(m.id for m in t.messages)
        ids.update(r.id for r in t.reasoning)
        ids.update(c.parent_message_id for c in t.tool_calls.values() if c.parent_message_id)
    return frozenset(ids)


class TranscriptBuilder:
    """Folds events into ``self.transcript``, one :meth:`apply` at a time.

    ``earlier`` are the transcripts of the thread's earlier runs, oldest first (each folded with its
    own earlier runs, as :func:`fold_thread` does). AG-UI ids are not unique across runs, so this
    run's tool calls are its own, keyed by id within the run; what belongs to an earlier run stays
    there: a result for a call an earlier run left open (a resume) goes on that call, and a
    MESSAGES_SNAPSHOT's repeat of earlier messages only fills in what those calls lacked.
    """

    def __init__(self, transcript: Transcript | None = None, *, earlier: Iterable[Transcript] = ()) -> None:
        self.transcript = transcript or Transcript()
        self.earlier: tuple[Transcript, ...] = tuple(earlier)
        if self.transcript.state is None and not self.transcript.event_count:
            # The thread's state goes on from run to run: a patch before this run's first
            # snapshot applies to the state the runs before it left (an owned copy).
            self.transcript.state = _last_state(self.earlier)
        self._messages: dict[str, TranscriptMessage] = {m.id: m for m in self.transcript.messages}
        self._reasoning: dict[str, ReasoningEntry] = {r.id: r for r in self.transcript.reasoning}
        self._earlier_ids = _said_ids(self.earlier)
        self._subagents: dict[str, SubagentNode] = {}
        self._open_text: str | None = None
        self._open_tool: str | None = None
        self._open_reasoning: str | None = None
        # Encrypted values for a tool call not begun yet: given to it when it begins.
        self._waiting_values: dict[str, str] = {}
        # Open calls of earlier runs that this run announced again, by id.
        self._continued: dict[str, ToolCallRecord] = {}
        # Snapshots and patches of the state and of activities, within their bounds (sdk/state.py).
        self._state = StateKeeper("state")
        self._activity_keeper = StateKeeper("activity")
        self._handlers: dict[type, Callable[[Any], None]] = {
            ag.RunStartedEvent: self._run_started,
            ag.RunFinishedEvent: self._run_finished,
            ag.RunErrorEvent: self._run_error,
            ag.StepStartedEvent: self._step_started,
            ag.StepFinishedEvent: self._step_finished,
            ag.TextMessageStartEvent: self._text_start,
            ag.TextMessageContentEvent: self._text_content,
            ag.TextMessageEndEvent: self._text_end,
            ag.TextMessageChunkEvent: self._text_chunk,
            ag.ToolCallStartEvent: self._tool_start,
            ag.ToolCallArgsEvent: self._tool_args,
            ag.ToolCallEndEvent: self._tool_end,
            ag.ToolCallChunkEvent: self._tool_chunk,
            ag.ToolCallResultEvent: self._tool_result,
            ag.StateSnapshotEvent: self._state_snapshot,
            ag.StateDeltaEvent: self._state_delta,
            ag.MessagesSnapshotEvent: self._messages_snapshot,
            ag.ActivitySnapshotEvent: self._activity_snapshot,
            ag.ActivityDeltaEvent: self._activity_delta,
            ag.RawEvent: self._raw,
            ag.CustomEvent: self._custom,
            ag.ReasoningStartEvent: self._reasoning_start,
            ag.ReasoningMessageStartEvent: self._reasoning_message_start,
            ag.ReasoningMessageContentEvent: self._reasoning_content,
            ag.ReasoningMessageEndEvent: self._reasoning_message_end,
            ag.ReasoningMessageChunkEvent: self._reasoning_chunk,
            ag.ReasoningEndEvent: self._reasoning_end,
            ag.ReasoningEncryptedValueEvent: self._reasoning_encrypted,
            ag.SubagentStartedEvent: self._subagent_started,
            ag.SubagentFinishedEvent: self._subagent_finished,
            ag.SubagentErrorEvent: self._subagent_error,
            # External agents (docs/PROTOCOLS.md 2.2)
            ext.RunStarted: self._x_run_started,
            ext.MessageStarted: self._x_message_started,
            ext.MessageDelta: self._x_message_delta,
            ext.MessageCompleted: self._x_message_completed,
            ext.ToolStarted: self._x_tool_started,
            ext.ToolCompleted: self._x_tool_completed,
            ext.ApprovalRequested: self._x_approval_requested,
            ext.ApprovalResolved: self._x_approval_resolved,
            ext.ModuleEvent: self._x_module,
            ext.GroundingEvent: self._x_grounding,
            ext.ArtifactCreated: self._x_artifact,
            ext.RunCompleted: self._x_run_completed,
            ext.RunFailed: self._x_run_failed,
            ext.LegacyText: self._x_legacy_text,
            ext.Done: self._x_done,
            # A2A agents (agents_ui.sdk.a2a_fold)
            A2AStreamResponse: lambda event: apply_stream_response(self, event, Outcome),
        }

    def apply(self, event: Any) -> None:
        """Fold one event. Unknown event objects are logged and skipped."""
        if event is None:
            return
        handler = self._handlers.get(type(event))
        if handler is None:
            logger.warning("the transcript fold skipped an event of type %s", type(event).__name__)
            return
        transcript = self.transcript
        transcript.event_count += 1
        texts = _TEXT_DELTAS.get(type(event))
        if texts is None or event.message_id not in getattr(self, texts):
            transcript.revision += 1
        handler(event)

    def apply_all(self, events: Iterable[Any]) -> Transcript:
        apply = self.apply
        for event in events:
            apply(event)
        return self.transcript

    # --- helpers -------------------------------------------------------------------------------

    def _message(
        self, message_id: str, role: str = "assistant", subagent_run_id: str | None = None
    ) -> TranscriptMessage:
        message = self._messages.get(message_id)
        if message is None:
            message = TranscriptMessage(
                id=message_id,
                role=role,
                position=self.transcript.event_count,
                subagent_run_id=subagent_run_id,
            )
            self._messages[message_id] = message
            self.transcript.messages.append(message)
        return message

    def _tool(self, tool_call_id: str, name: str = "", **extra: Any) -> ToolCallRecord:
        record = self.transcript.tool_calls.get(tool_call_id)
        if record is None:
            record = ToolCallRecord(id=tool_call_id, name=name, position=self.transcript.event_count, **extra)
            self.transcript.tool_calls[tool_call_id] = record
            self.transcript.observed.tool_calls = True
            if self._waiting_values:
                record.encrypted_value = self._waiting_values.pop(tool_call_id, None)
        elif name and not record.name:
            record.name = name
        return record

    def _earlier_call(self, tool_call_id: str, *, open_only: bool = False) -> ToolCallRecord | None:
        """The latest call with this id in an earlier run (still without a result, if ``open_only``)."""
        for transcript in reversed(self.earlier):
            record = transcript.tool_calls.get(tool_call_id)
            if record is not None and not (open_only and record.has_result):
                return record
        return None

    def _answer_earlier(self, record: ToolCallRecord, content: Any, error: str | None = None) -> None:
        """This run gives the result of a call an earlier run opened: it goes on that call."""
        self._store_result(record, content, error)
        self.transcript.answered_earlier[record.id] = record
        for transcript in self.earlier:
            if transcript.tool_calls.get(record.id) is record:
                transcript.revision += 1  # a view of that run sees it changed

    def _reasoning_entry(self, entry_id: str, subagent_run_id: str | None = None) -> ReasoningEntry:
        entry = self._reasoning.get(entry_id)
        if entry is None:
            entry = ReasoningEntry(
                id=entry_id, subagent_run_id=subagent_run_id, position=self.transcript.event_count
            )
            self._reasoning[entry_id] = entry
            self.transcript.reasoning.append(entry)
        return entry

    def _apply_patch(self, document: Any, operations: list[Any], what: str) -> tuple[Any, bool]:
        errors = self.transcript.errors
        noted = len(errors)
        patched = self._activity_keeper.patch(document, operations, errors)
        return patched, len(errors) == noted

    # --- AG-UI: run and steps ------------------------------------------------------------------

    def _run_started(self, event: ag.RunStartedEvent) -> None:
        t = self.transcript
        t.thread_id = event.thread_id
        t.run_id = event.run_id
        t.outcome = None

    def _run_finished(self, event: ag.RunFinishedEvent) -> None:
        t = self.transcript
        outcome = event.outcome
        if t.run_id is None:
            t.run_id = event.run_id
        if event.usage:
            t.usage = event.usage
        if outcome is None or outcome.type == "success":
            pending = list(getattr(outcome, "pending_tool_call_ids", None) or [])
            t.outcome = Outcome("success", result=event.result, pending_tool_call_ids=pending)
        elif outcome.type == "interrupt":
            t.outcome = Outcome("interrupt", interrupts=list(outcome.interrupts), result=event.result)
            t.observed.interrupts = True
        else:
            t.outcome = Outcome("cancelled", result=event.result)

    def _run_error(self, event: ag.RunErrorEvent) -> None:
        self.transcript.outcome = Outcome("error", message=event.message, code=event.code)

    def _step_started(self, event: ag.StepStartedEvent) -> None:
        self.transcript.steps.append(StepRecord(event.step_name))

    def _step_finished(self, event: ag.StepFinishedEvent) -> None:
        for step in reversed(self.transcript.steps):
            if step.name == event.step_name and not step.finished:
                step.finished = True
                return

    # --- AG-UI: text ---------------------------------------------------------------------------

    def _text_start(self, event: ag.TextMessageStartEvent) -> None:
        message = self._message(event.message_id, event.role or "assistant", event.subagent_run_id)
        if event.name:
            message.name = event.name
        self._open_text = event.message_id

    def _text_content(self, event: ag.TextMessageContentEvent) -> None:
        message = self._messages.get(event.message_id)
        if message is None:
            self.transcript.errors.append(f"text for message {event.message_id!r} arrived before its start")
            message = self._message(event.message_id, "assistant", event.subagent_run_id)
        message._text.append(event.delta)

    def _text_end(self, event: ag.TextMessageEndEvent) -> None:
        message = self._messages.get(event.message_id)
        if message is not None:
            message.complete = True
        if self._open_text == event.message_id:
            self._open_text = None

    def _text_chunk(self, event: ag.TextMessageChunkEvent) -> None:
        message_id = event.message_id or self._open_text
        if message_id is None:
            self.transcript.errors.append("a TEXT_MESSAGE_CHUNK without messageId and no open message")
            return
        message = self._message(message_id, event.role or "assistant", event.subagent_run_id)
        if event.name:
            message.name = event.name
        self._open_text = message_id
        if event.delta:
            message._text.append(event.delta)

    # --- AG-UI: tool calls ---------------------------------------------------------------------

    def _tool_start(self, event: ag.ToolCallStartEvent) -> None:
        if self._continues(event.tool_call_id) is not None:
            self._open_tool = event.tool_call_id
            return
        record = self._tool(
            event.tool_call_id,
            event.tool_call_name,
            parent_message_id=event.parent_message_id,
            subagent_run_id=event.subagent_run_id,
        )
        self._open_tool = record.id
        if event.parent_message_id:
            parent = self._messages.get(event.parent_message_id)
            if parent is not None and record.id not in parent.tool_call_ids:
                parent.tool_call_ids.append(record.id)

    def _continues(self, tool_call_id: str) -> ToolCallRecord | None:
        """The open call of an earlier run that this run announces again (LangGraph streams it anew
        on a resume): its arguments are kept, unless they never completed."""
        if not self.earlier or tool_call_id in self.transcript.tool_calls:
            return None
        record = self._continued.get(tool_call_id)
        if record is None or record.has_result:
            record = self._earlier_call(tool_call_id, open_only=True)
            if record is None:
                return None
            self._continued[tool_call_id] = record
            if not record.complete:
                record._args.set("")
        return record

    def _tool_args(self, event: ag.ToolCallArgsEvent) -> None:
        record = self.transcript.tool_calls.get(event.tool_call_id)
        if record is None:
            continued = self._continued.get(event.tool_call_id)
            if continued is not None:
                if not continued.complete:
                    continued._args.append(event.delta)
                return
            self.transcript.errors.append(
                f"arguments for tool call {event.tool_call_id!r} arrived before its start"
            )
            record = self._tool(event.tool_call_id)
        record._args.append(event.delta)

    def _tool_end(self, event: ag.ToolCallEndEvent) -> None:
        record = self.transcript.tool_calls.get(event.tool_call_id) or self._continued.get(event.tool_call_id)
        if record is not None:
            record.finish()
        if self._open_tool == event.tool_call_id:
            self._open_tool = None

    def _tool_chunk(self, event: ag.ToolCallChunkEvent) -> None:
        tool_call_id = event.tool_call_id or self._open_tool
        if tool_call_id is None:
            self.transcript.errors.append("a TOOL_CALL_CHUNK without toolCallId and no open tool call")
            return
        self._open_tool = tool_call_id
        continued = self._continues(tool_call_id)
        if continued is not None:
            if event.delta and not continued.complete:
                continued._args.append(event.delta)
            return
        record = self._tool(
            tool_call_id,
            event.tool_call_name or "",
            parent_message_id=event.parent_message_id,
            subagent_run_id=event.subagent_run_id,
        )
        if event.delta:
            record._args.append(event.delta)

    @staticmethod
    def _store_result(record: ToolCallRecord, content: Any, error: str | None = None) -> None:
        record.finish()  # a result implies the arguments are complete (chunked calls have no END)
        text, parts = _content_text(content)
        record.result = text if not parts else content
        record.has_result = True
        record.result_error = error

    def _tool_result(self, event: ag.ToolCallResultEvent) -> None:
        record = self.transcript.tool_calls.get(event.tool_call_id)
        earlier = self._earlier_call(event.tool_call_id, open_only=True) if record is None else None
        if earlier is not None:
            self._answer_earlier(earlier, event.content)
        else:
            # A call of this run, or an id an earlier run already answered: a new call.
            self._store_result(record or self._tool(event.tool_call_id), event.content)
        message = self._message(event.message_id, "tool", event.subagent_run_id)
        message.tool_call_id = event.tool_call_id
        text, parts = _content_text(event.content)
        message._text.set(text)
        message.parts = parts
        message.complete = True
        self._see_media(parts)

    def _see_media(self, parts: list[Any]) -> None:
        if any(getattr(part, "type", None) in ("image", "audio") for part in parts):
            self.transcript.observed.media = True

    # --- AG-UI: state, messages, activity ------------------------------------------------------

    def _state_snapshot(self, event: ag.StateSnapshotEvent) -> None:
        # An owned copy: later in-place patches never change the caller's event object.
        t = self.transcript
        t.observed.state_snapshots = True
        t.state = self._state.snapshot(t.state, event.snapshot, t.errors)

    def _state_delta(self, event: ag.StateDeltaEvent) -> None:
        # Before any snapshot the patch applies to {} (or to the state the transcript was seeded with).
        t = self.transcript
        t.observed.state_deltas = True
        t.state = self._state.patch(t.state, event.delta, t.errors)

    def _messages_snapshot(self, event: ag.MessagesSnapshotEvent) -> None:
        messages: list[TranscriptMessage] = []
        index: dict[str, TranscriptMessage] = {}
        earlier_ids = self._earlier_ids
        # LangGraph streams a result under one message id and lists it under another.
        results = {m.tool_call_id: m for m in self.transcript.messages if m.role == "tool" and m.tool_call_id}
        for wire in event.messages:
            role = wire.role
            known = self._messages.get(wire.id)
            if known is None and wire.id in earlier_ids:
                # The snapshot is conversation-wide: an earlier run's message stays with that run.
                self._snapshot_repeat(wire)
                continue
            if known is None and role == "tool":
                known = results.get(wire.tool_call_id)
            message = TranscriptMessage(
                id=wire.id,
                role=role,
                position=known.position if known is not None else self.transcript.event_count,
                subagent_run_id=getattr(wire, "subagent_run_id", None),
                name=getattr(wire, "name", None),
                complete=True,
                encrypted_value=getattr(wire, "encrypted_value", None),
            )
            if role == "activity":
                message.parts = [wire.content]
                if wire.id not in self.transcript.activities:
                    record = self._activity(wire.id, wire.activity_type)
                    record.position = message.position
                    record.content = self._activity_keeper.snapshot(
                        None, wire.content, self.transcript.errors
                    )
            else:
                text, parts = _content_text(getattr(wire, "content", None))
                message._text.set(text)
                message.parts = parts
                if role == "tool":
                    self._see_media(parts)
            if role == "assistant" and wire.tool_calls:
                for call in wire.tool_calls:
                    record = self.transcript.tool_calls.get(call.id)
                    if record is None:
                        earlier = self._earlier_call(call.id)
                        if earlier is not None:
                            # Not begun in this run: the earlier run's call, listed again.
                            self._fill_call(earlier, call)
                            continue
                        record = self._tool(call.id, call.function.name, parent_message_id=wire.id)
                    self._fill_call(record, call)
                    message.tool_call_ids.append(call.id)
            elif role == "tool":
                # Resumed runs may carry the result only here (docs/PROTOCOLS.md 1.3).
                message.tool_call_id = wire.tool_call_id
                message.error = wire.error
                record = self.transcript.tool_calls.get(wire.tool_call_id)
                if record is None:
                    earlier = self._earlier_call(wire.tool_call_id)
                    if earlier is not None:
                        if not earlier.has_result:
                            self._answer_earlier(earlier, wire.content, wire.error)
                    else:
                        record = self._tool(wire.tool_call_id)
                if record is not None and not record.has_result:
                    self._store_result(record, wire.content, wire.error)
            elif role == "reasoning":
                entry = self._reasoning_entry(wire.id)
                if wire.content and not entry.text:
                    entry._text.set(wire.content)
                if wire.encrypted_value:
                    entry.encrypted_value = wire.encrypted_value
                entry.complete = True
            messages.append(message)
            index[message.id] = message
        self.transcript.messages = messages
        self._messages = index

    @staticmethod
    def _fill_call(record: ToolCallRecord, call: ag.ToolCall) -> None:
        # A call streamed without TOOL_CALL_ARGS gets its arguments from the snapshot.
        record.fill_args(call.function.arguments)
        if call.encrypted_value:
            record.encrypted_value = call.encrypted_value

    def _snapshot_repeat(self, wire: Any) -> None:
        """An earlier run's message in a snapshot: it may fill in that run's calls, nothing else."""
        if wire.role == "assistant":
            for call in wire.tool_calls or ():
                earlier = self._earlier_call(call.id)
                if earlier is not None:
                    self._fill_call(earlier, call)
        elif wire.role == "tool":
            earlier = self._earlier_call(wire.tool_call_id, open_only=True)
            if earlier is not None:
                self._answer_earlier(earlier, wire.content, wire.error)

    def _activity(self, message_id: str, activity_type: str) -> ActivityRecord:
        t = self.transcript
        t.observed.activities = True
        t.observed.a2ui = t.observed.a2ui or activity_type == A2UI_ACTIVITY
        record = t.activities.get(message_id)
        if record is None:
            record = ActivityRecord(message_id, activity_type, None, t.event_count)
            t.activities[message_id] = record
        record.revision += 1
        return record

    def _activity_snapshot(self, event: ag.ActivitySnapshotEvent) -> None:
        known = event.message_id in self.transcript.activities
        record = self._activity(event.message_id, event.activity_type)
        if known and event.replace is False:
            return
        # Bounded like the state (sdk/state.py): past a bound the last good content stays.
        record.activity_type = event.activity_type
        record.content = self._activity_keeper.snapshot(record.content, event.content, self.transcript.errors)

    def _activity_delta(self, event: ag.ActivityDeltaEvent) -> None:
        record = self._activity(event.message_id, event.activity_type)
        record.content, _ = self._apply_patch(record.content, event.patch, "ACTIVITY_DELTA")

    def _raw(self, event: ag.RawEvent) -> None:
        self.transcript.custom_events.append(("RAW", event.event))

    def _custom(self, event: ag.CustomEvent) -> None:
        self.transcript.custom_events.append((event.name, event.value))

    # --- AG-UI: reasoning ----------------------------------------------------------------------

    def _reasoning_start(self, event: ag.ReasoningStartEvent) -> None:
        self.transcript.observed.reasoning = True

    def _reasoning_message_start(self, event: ag.ReasoningMessageStartEvent) -> None:
        self.transcript.observed.reasoning = True
        self._reasoning_entry(event.message_id, event.subagent_run_id)
        self._open_reasoning = event.message_id

    def _reasoning_content(self, event: ag.ReasoningMessageContentEvent) -> None:
        self._reasoning_entry(event.message_id, event.subagent_run_id)._text.append(event.delta)

    def _reasoning_message_end(self, event: ag.ReasoningMessageEndEvent) -> None:
        entry = self._reasoning.get(event.message_id)
        if entry is not None:
            entry.complete = True
        if self._open_reasoning == event.message_id:
            self._open_reasoning = None

    def _reasoning_chunk(self, event: ag.ReasoningMessageChunkEvent) -> None:
        self.transcript.observed.reasoning = True
        entry_id = event.message_id or self._open_reasoning
        if entry_id is None:
            self.transcript.errors.append("a REASONING_MESSAGE_CHUNK without messageId and no open reasoning")
            return
        self._open_reasoning = entry_id
        entry = self._reasoning_entry(entry_id, event.subagent_run_id)
        if event.delta:
            entry._text.append(event.delta)

    def _reasoning_end(self, event: ag.ReasoningEndEvent) -> None:
        self._open_reasoning = None

    def _reasoning_encrypted(self, event: ag.ReasoningEncryptedValueEvent) -> None:
        """An opaque value for its entity: a reasoning message, another message, or a tool call.

        Only a value on reasoning is evidence of reasoning (pydantic-ai also carries a tool's kind and
        a denied result's outcome this way), and only reasoning with no text is sealed.
        """
        entity, value = event.entity_id, event.encrypted_value
        if event.subtype == "tool-call":
            record = self.transcript.tool_calls.get(entity) or self._earlier_call(entity)
            if record is not None:
                record.encrypted_value = value
            else:
                self._waiting_values[entity] = value
            return
        entry = self._reasoning.get(entity)
        if entry is None:
            message = self._messages.get(entity)
            if message is not None and message.role != "activity":
                message.encrypted_value = value
                return
            # Nothing of that id yet: reasoning that exists only sealed (REASONING_START, the value,
            # REASONING_END), or a value the agent sends before the answer it belongs to.
            entry = self._reasoning_entry(entity, event.subagent_run_id)
            entry.complete = True
        entry.encrypted_value = value
        observed = self.transcript.observed
        observed.reasoning = True
        if entry.encrypted:
            observed.encrypted_reasoning = True

    # --- AG-UI: sub-agents ---------------------------------------------------------------------

    def _subagent_started(self, event: ag.SubagentStartedEvent) -> None:
        self.transcript.observed.subagents = True
        node = SubagentNode(
            run_id=event.subagent_run_id,
            name=event.name,
            description=event.description,
            parent_run_id=event.parent_subagent_run_id,
            parent_tool_call_id=event.parent_tool_call_id,
        )
        self._subagents[node.run_id] = node
        parent = self._subagents.get(event.parent_subagent_run_id) if event.parent_subagent_run_id else None
        (parent.children if parent is not None else self.transcript.subagents).append(node)

    def _subagent_node(self, run_id: str) -> SubagentNode:
        node = self._subagents.get(run_id)
        if node is None:
            self.transcript.errors.append(f"sub-agent {run_id!r} ended without having started")
            node = SubagentNode(run_id=run_id, name=run_id)
            self._subagents[run_id] = node
            self.transcript.subagents.append(node)
        return node

    def _subagent_finished(self, event: ag.SubagentFinishedEvent) -> None:
        node = self._subagent_node(event.subagent_run_id)
        node.result = event.result
        if event.outcome is not None and event.outcome.type == "suspended":
            node.status = "suspended"
            node.interrupt_ids = list(event.outcome.interrupt_ids or [])
        else:
            node.status = "finished"

    def _subagent_error(self, event: ag.SubagentErrorEvent) -> None:
        node = self._subagent_node(event.subagent_run_id)
        node.status = "error"
        node.error = event.message

    # --- external agents -----------------------------------------------------------------------

    def _x_run_started(self, event: ext.RunStarted) -> None:
        t = self.transcript
        t.run_id = event.run_id
        t.thread_id = event.conversation_id or t.thread_id
        t.outcome = None

    def _x_message_started(self, event: ext.MessageStarted) -> None:
        self._message(event.message_id, event.role)

    def _x_message_delta(self, event: ext.MessageDelta) -> None:
        self._message(event.message_id)._text.append(event.delta)

    def _x_message_completed(self, event: ext.MessageCompleted) -> None:
        message = self._message(event.message_id)
        if event.content is not None:
            message._text.set(event.content)  # the completed content is authoritative
        message.complete = True

    def _x_tool_started(self, event: ext.ToolStarted) -> None:
        record = self._tool(event.tool_call_id, event.public_name)
        record._args.set(json.dumps(event.input) if event.input is not None else "")
        record.args = event.input if event.input is not None else {}
        record.complete = True

    def _x_tool_completed(self, event: ext.ToolCompleted) -> None:
        record = self._tool(event.tool_call_id)
        record.complete = True
        record.status = event.status
        record.result = event.output
        record.has_result = True

    def _x_approval_requested(self, event: ext.ApprovalRequested) -> None:
        self.transcript.observed.approvals = True
        self.transcript.approvals[event.approval_id] = ApprovalRecord(
            id=event.approval_id,
            tool_call_id=event.tool_call_id,
            public_name=event.public_name,
            input=event.input,
            side_effect_class=event.side_effect_class,
            expires_at=event.expires_at,
        )

    def _x_approval_resolved(self, event: ext.ApprovalResolved) -> None:
        record = self.transcript.approvals.get(event.approval_id)
        if record is None:
            record = ApprovalRecord(id=event.approval_id)
            self.transcript.approvals[event.approval_id] = record
        record.decision = event.decision

    def _x_module(self, event: ext.ModuleEvent) -> None:
        t = self.transcript
        t.observed.modules = True
        if event.type == A2UI_MODULE:
            # An A2UI surface as an output module: an activity of its own, drawn like AG-UI's.
            record = self._activity(f"module-{t.event_count}", A2UI_ACTIVITY)
            record.content = self._activity_keeper.snapshot(None, event.data, t.errors)
            return
        t.modules.append((event.type, event.data))

    def _x_grounding(self, event: ext.GroundingEvent) -> None:
        self.transcript.observed.grounding = True
        self.transcript.grounding.extend(event.sources)

    def _x_artifact(self, event: ext.ArtifactCreated) -> None:
        self.transcript.artifacts.append(event)

    def _x_run_completed(self, event: ext.RunCompleted) -> None:
        self.transcript.usage = event.usage
        self.transcript.outcome = Outcome("success")
        for message in self.transcript.messages:
            message.complete = True

    def _x_run_failed(self, event: ext.RunFailed) -> None:
        code = event.error.code if isinstance(event.error, ext.ErrorDetail) else None
        self.transcript.outcome = Outcome("error", message=event.message, code=code)

    def _x_legacy_text(self, event: ext.LegacyText) -> None:
        # chat-legacy-v1 has no message ids: the whole answer is one assistant message.
        self._message("legacy-answer")._text.append(event.text)

    def _x_done(self, event: ext.Done) -> None:
        for message in self.transcript.messages:
            message.complete = True
        if self.transcript.outcome is None:
            self.transcript.outcome = Outcome("success")


def fold(events: Iterable[Any]) -> Transcript:
    """Fold a whole stream (AG-UI or external events) into a transcript."""
    return TranscriptBuilder().apply_all(events)


def _last_state(transcripts: Iterable[Transcript]) -> Any:
    """An owned copy of the state the latest of ``transcripts`` that has one left (None without)."""
    for transcript in reversed(tuple(transcripts)):
        if transcript.state is not None:
            return json.loads(json.dumps(transcript.state))
    return None


def fold_thread(runs: Iterable[Iterable[Any]]) -> list[Transcript]:
    """Fold a thread's runs, oldest first, each seeing the ones before it: one transcript per run.

    A resume run's results land on the calls the earlier runs opened (see :class:`TranscriptBuilder`).
    """
    transcripts: list[Transcript] = []
    for events in runs:
        transcripts.append(TranscriptBuilder(earlier=transcripts).apply_all(events))
    return transcripts


async def afold(events: AsyncIterable[Any]) -> Transcript:
    """Fold an async stream, e.g. ``await afold(agent.run(input))``."""
    builder = TranscriptBuilder()
    async for event in events:
        builder.apply(event)
    return builder.transcript
