"""The fold: an event stream (either protocol) -> the run transcript the UI renders and tests assert.

``TranscriptBuilder.apply(event)`` folds live, one event at a time; ``fold(events)`` folds a whole
stream. Both protocols land in the same ``Transcript`` shape. The fold never raises on a strange
stream: what cannot be applied is recorded in ``Transcript.errors`` and the fold goes on.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import AsyncIterable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ag_ui import core as ag

from . import policy as ext
from .state import StateKeeper

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
    "fold",
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
    _text: _Parts = field(default_factory=_Parts, repr=False)


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
    complete: bool = False
    # Encrypted reasoning is kept opaque: stored to send back, never shown.
    encrypted: bool = False
    encrypted_value: str | None = None
    _text: _Parts = field(default_factory=_Parts, repr=False)


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
    approvals: dict[str, ApprovalRecord] = field(default_factory=dict)
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


class TranscriptBuilder:
    """Folds events into ``self.transcript``, one :meth:`apply` at a time."""

    def __init__(self, transcript: Transcript | None = None) -> None:
        self.transcript = transcript or Transcript()
        self._messages: dict[str, TranscriptMessage] = {m.id: m for m in self.transcript.messages}
        self._reasoning: dict[str, ReasoningEntry] = {r.id: r for r in self.transcript.reasoning}
        self._subagents: dict[str, SubagentNode] = {}
        self._open_text: str | None = None
        self._open_tool: str | None = None
        self._open_reasoning: str | None = None
        # Snapshots and patches of the state and of activities, within their bounds (sdk/state.py).
        self._state = StateKeeper("state")
        self._activity = StateKeeper("activity")
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
        elif name and not record.name:
            record.name = name
        return record

    def _reasoning_entry(self, entry_id: str, subagent_run_id: str | None = None) -> ReasoningEntry:
        entry = self._reasoning.get(entry_id)
        if entry is None:
            entry = ReasoningEntry(id=entry_id, subagent_run_id=subagent_run_id)
            self._reasoning[entry_id] = entry
            self.transcript.reasoning.append(entry)
        return entry

    def _apply_patch(self, document: Any, operations: list[Any], what: str) -> tuple[Any, bool]:
        errors = self.transcript.errors
        noted = len(errors)
        patched = self._activity.patch(document, operations, errors)
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

    def _tool_args(self, event: ag.ToolCallArgsEvent) -> None:
        record = self.transcript.tool_calls.get(event.tool_call_id)
        if record is None:
            self.transcript.errors.append(
                f"arguments for tool call {event.tool_call_id!r} arrived before its start"
            )
            record = self._tool(event.tool_call_id)
        record._args.append(event.delta)

    def _tool_end(self, event: ag.ToolCallEndEvent) -> None:
        record = self.transcript.tool_calls.get(event.tool_call_id)
        if record is not None:
            record.finish()
        if self._open_tool == event.tool_call_id:
            self._open_tool = None

    def _tool_chunk(self, event: ag.ToolCallChunkEvent) -> None:
        tool_call_id = event.tool_call_id or self._open_tool
        if tool_call_id is None:
            self.transcript.errors.append("a TOOL_CALL_CHUNK without toolCallId and no open tool call")
            return
        record = self._tool(
            tool_call_id,
            event.tool_call_name or "",
            parent_message_id=event.parent_message_id,
            subagent_run_id=event.subagent_run_id,
        )
        self._open_tool = tool_call_id
        if event.delta:
            record._args.append(event.delta)

    def _set_tool_result(self, tool_call_id: str, content: Any, error: str | None = None) -> None:
        record = self._tool(tool_call_id)
        record.finish()  # a result implies the arguments are complete (chunked calls have no END)
        text, parts = _content_text(content)
        record.result = text if not parts else content
        record.has_result = True
        record.result_error = error

    def _tool_result(self, event: ag.ToolCallResultEvent) -> None:
        self._set_tool_result(event.tool_call_id, event.content)
        message = self._message(event.message_id, "tool", event.subagent_run_id)
        message.tool_call_id = event.tool_call_id
        text, parts = _content_text(event.content)
        message._text.set(text)
        message.parts = parts
        message.complete = True

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
        for wire in event.messages:
            role = wire.role
            known = self._messages.get(wire.id)
            message = TranscriptMessage(
                id=wire.id,
                role=role,
                position=known.position if known is not None else self.transcript.event_count,
                subagent_run_id=getattr(wire, "subagent_run_id", None),
                name=getattr(wire, "name", None),
                complete=True,
            )
            if role == "activity":
                message.parts = [wire.content]
            else:
                text, parts = _content_text(getattr(wire, "content", None))
                message._text.set(text)
                message.parts = parts
            if role == "assistant" and wire.tool_calls:
                for call in wire.tool_calls:
                    record = self._tool(call.id, call.function.name, parent_message_id=wire.id)
                    if not record.complete:
                        record._args.set(call.function.arguments)
                        record.finish()
                    if call.encrypted_value:
                        record.encrypted_value = call.encrypted_value
                    message.tool_call_ids.append(call.id)
            elif role == "tool":
                # Resumed runs may carry the result only here (docs/PROTOCOLS.md 1.3).
                message.tool_call_id = wire.tool_call_id
                self._set_tool_result(wire.tool_call_id, wire.content, wire.error)
            elif role == "reasoning":
                entry = self._reasoning_entry(wire.id)
                if wire.content and not entry.text:
                    entry._text.set(wire.content)
                if wire.encrypted_value:
                    entry.encrypted = True
                    entry.encrypted_value = wire.encrypted_value
                entry.complete = True
            messages.append(message)
            index[message.id] = message
        self.transcript.messages = messages
        self._messages = index

    def _activity_snapshot(self, event: ag.ActivitySnapshotEvent) -> None:
        existing = self.transcript.activities.get(event.message_id)
        if existing is not None and event.replace is False:
            return
        self.transcript.activities[event.message_id] = ActivityRecord(
            event.message_id, event.activity_type, copy.deepcopy(event.content)
        )

    def _activity_delta(self, event: ag.ActivityDeltaEvent) -> None:
        record = self.transcript.activities.get(event.message_id)
        if record is None:
            record = ActivityRecord(event.message_id, event.activity_type, {})
            self.transcript.activities[event.message_id] = record
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
        observed = self.transcript.observed
        observed.reasoning = True
        observed.encrypted_reasoning = True
        if event.subtype == "tool-call":
            self._tool(event.entity_id).encrypted_value = event.encrypted_value
            return
        entry = self._reasoning_entry(event.entity_id, event.subagent_run_id)
        entry.encrypted = True
        entry.encrypted_value = event.encrypted_value
        entry.complete = True

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
        self.transcript.observed.modules = True
        self.transcript.modules.append((event.type, event.data))

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


async def afold(events: AsyncIterable[Any]) -> Transcript:
    """Fold an async stream, e.g. ``await afold(agent.run(input))``."""
    builder = TranscriptBuilder()
    async for event in events:
        builder.apply(event)
    return builder.transcript
