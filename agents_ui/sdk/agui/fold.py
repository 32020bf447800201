"""The fold of AG-UI events into the transcript: one named method per event type.

:class:`~agents_ui.sdk.folding.TranscriptBuilder` dispatches each ``ag_ui.core`` event here; what every
protocol shares (messages, tool calls, reasoning, activities, earlier runs) goes through the
builder's own methods, what only AG-UI streams have (open text and tool calls for chunks, sub-agents,
calls an earlier run opened and this one streams again) is kept here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ag_ui import core as ag

from ..transcript import (
    ApprovalRequest,
    Outcome,
    StepRecord,
    SubagentNode,
    ToolCallRecord,
    TranscriptMessage,
    content_text,
    merge_metadata,
)

if TYPE_CHECKING:
    from ..folding import TranscriptBuilder

__all__ = ["AgUiFold", "approval_request"]


def approval_request(interrupt: ag.Interrupt) -> ApprovalRequest:
    """An interrupt as the transcript keeps it: what the resume needs, in the neutral record."""
    return ApprovalRequest(
        id=interrupt.id,
        kind="interrupt",
        tool_call_id=interrupt.tool_call_id,
        message=interrupt.message,
        reason=interrupt.reason,
        response_schema=interrupt.response_schema,
        expires_at=interrupt.expires_at,
        metadata=interrupt.metadata,
        subagent_run_id=interrupt.subagent_run_id,
    )


class AgUiFold:
    """AG-UI's event handlers, for one builder (one run)."""

    # Events that only lengthen an existing text, and the builder's index of such texts.
    TEXT_DELTAS: dict[type, str] = {
        ag.TextMessageContentEvent: "messages",
        ag.ReasoningMessageContentEvent: "reasoning",
    }

    def __init__(self, builder: TranscriptBuilder) -> None:
        self.builder = builder
        self.transcript = builder.transcript
        self._subagents: dict[str, SubagentNode] = {}
        self._open_text: str | None = None
        self._open_tool: str | None = None
        self._open_reasoning: str | None = None
        self._spans: set[str] = set()
        # Open calls of earlier runs that this run announced again, by id.
        self._continued: dict[str, ToolCallRecord] = {}

    def handlers(self) -> dict[type, Callable[[Any], None]]:
        return {
            ag.RunStartedEvent: self.run_started,
            ag.RunFinishedEvent: self.run_finished,
            ag.RunErrorEvent: self.run_error,
            ag.StepStartedEvent: self.step_started,
            ag.StepFinishedEvent: self.step_finished,
            ag.TextMessageStartEvent: self.text_start,
            ag.TextMessageContentEvent: self.text_content,
            ag.TextMessageEndEvent: self.text_end,
            ag.TextMessageChunkEvent: self.text_chunk,
            ag.ToolCallStartEvent: self.tool_start,
            ag.ToolCallArgsEvent: self.tool_args,
            ag.ToolCallEndEvent: self.tool_end,
            ag.ToolCallChunkEvent: self.tool_chunk,
            ag.ToolCallResultEvent: self.tool_result,
            ag.StateSnapshotEvent: self.state_snapshot,
            ag.StateDeltaEvent: self.state_delta,
            ag.MessagesSnapshotEvent: self.messages_snapshot,
            ag.ActivitySnapshotEvent: self.activity_snapshot,
            ag.ActivityDeltaEvent: self.activity_delta,
            ag.RawEvent: self.raw,
            ag.CustomEvent: self.custom,
            ag.ReasoningStartEvent: self.reasoning_start,
            ag.ReasoningMessageStartEvent: self.reasoning_message_start,
            ag.ReasoningMessageContentEvent: self.reasoning_content,
            ag.ReasoningMessageEndEvent: self.reasoning_message_end,
            ag.ReasoningMessageChunkEvent: self.reasoning_chunk,
            ag.ReasoningEndEvent: self.reasoning_end,
            ag.ReasoningEncryptedValueEvent: self.reasoning_encrypted,
            ag.SubagentStartedEvent: self.subagent_started,
            ag.SubagentFinishedEvent: self.subagent_finished,
            ag.SubagentErrorEvent: self.subagent_error,
        }

    # --- run and steps -------------------------------------------------------------------------

    def run_started(self, event: ag.RunStartedEvent) -> None:
        t = self.transcript
        t.thread_id = event.thread_id
        t.run_id = event.run_id
        t.outcome = None

    def run_finished(self, event: ag.RunFinishedEvent) -> None:
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
            t.outcome = Outcome("interrupt", result=event.result)
            t.observed.interrupts = True
            for key in [key for key, request in t.approvals.items() if request.kind == "interrupt"]:
                del t.approvals[key]  # the run's last word on what it waits for
            for interrupt in outcome.interrupts:
                t.approvals[interrupt.id] = approval_request(interrupt)
        else:
            t.outcome = Outcome("cancelled", result=event.result)

    def run_error(self, event: ag.RunErrorEvent) -> None:
        self.transcript.outcome = Outcome("error", message=event.message, code=event.code)
        if getattr(event, "usage", None):
            self.transcript.usage = event.usage  # what the run spent before it failed

    def step_started(self, event: ag.StepStartedEvent) -> None:
        self.transcript.steps.append(StepRecord(event.step_name))

    def step_finished(self, event: ag.StepFinishedEvent) -> None:
        for step in reversed(self.transcript.steps):
            if step.name == event.step_name and not step.finished:
                step.finished = True
                return

    # --- text ---------------------------------------------------------------------------

    def text_start(self, event: ag.TextMessageStartEvent) -> None:
        message = self.builder.message(event.message_id, event.role or "assistant", event.subagent_run_id)
        if event.name:
            message.name = event.name
        message.complete = False  # a closed message is closed, not sealed: it goes on
        merge_metadata(message, event.metadata)
        self._open_text = event.message_id

    def text_content(self, event: ag.TextMessageContentEvent) -> None:
        message = self.builder.messages.get(event.message_id)
        if message is None:
            self.transcript.errors.append(f"text for message {event.message_id!r} arrived before its start")
            message = self.builder.message(event.message_id, "assistant", event.subagent_run_id)
        message.append_text(event.delta)
        merge_metadata(message, event.metadata)

    def text_end(self, event: ag.TextMessageEndEvent) -> None:
        message = self.builder.messages.get(event.message_id)
        if message is not None:
            message.complete = True
            merge_metadata(message, event.metadata)
        if self._open_text == event.message_id:
            self._open_text = None

    def text_chunk(self, event: ag.TextMessageChunkEvent) -> None:
        message_id = event.message_id or self._open_text
        if message_id is None:
            self.transcript.errors.append("a TEXT_MESSAGE_CHUNK without messageId and no open message")
            return
        message = self.builder.message(message_id, event.role or "assistant", event.subagent_run_id)
        if event.name:
            message.name = event.name
        self._open_text = message_id
        if event.delta:
            message.append_text(event.delta)

    # --- tool calls ---------------------------------------------------------------------

    def tool_start(self, event: ag.ToolCallStartEvent) -> None:
        if self._continues(event.tool_call_id) is not None:
            self._open_tool = event.tool_call_id
            return
        record = self.builder.tool(
            event.tool_call_id,
            event.tool_call_name,
            parent_message_id=event.parent_message_id,
            subagent_run_id=event.subagent_run_id,
        )
        self._open_tool = record.id
        merge_metadata(record, event.metadata)
        if event.parent_message_id:
            parent = self.builder.messages.get(event.parent_message_id)
            if parent is not None and record.id not in parent.tool_call_ids:
                parent.tool_call_ids.append(record.id)

    def _continues(self, tool_call_id: str) -> ToolCallRecord | None:
        """The open call of an earlier run that this run announces again (LangGraph streams it anew
        on a resume): its arguments are kept, unless they never completed."""
        if not self.builder.earlier or tool_call_id in self.transcript.tool_calls:
            return None
        record = self._continued.get(tool_call_id)
        if record is None or record.has_result:
            record = self.builder.earlier_call(tool_call_id, open_only=True)
            if record is None:
                return None
            self._continued[tool_call_id] = record
            if not record.complete:
                record.set_args("")
        return record

    def tool_args(self, event: ag.ToolCallArgsEvent) -> None:
        record = self.transcript.tool_calls.get(event.tool_call_id)
        if record is None:
            continued = self._continued.get(event.tool_call_id)
            if continued is not None:
                if not continued.complete:
                    continued.append_args(event.delta)
                return
            self.transcript.errors.append(
                f"arguments for tool call {event.tool_call_id!r} arrived before its start"
            )
            record = self.builder.tool(event.tool_call_id)
        record.append_args(event.delta)
        merge_metadata(record, event.metadata)

    def tool_end(self, event: ag.ToolCallEndEvent) -> None:
        record = self.transcript.tool_calls.get(event.tool_call_id) or self._continued.get(event.tool_call_id)
        if record is not None:
            record.finish()
            merge_metadata(record, event.metadata)
        if self._open_tool == event.tool_call_id:
            self._open_tool = None

    def tool_chunk(self, event: ag.ToolCallChunkEvent) -> None:
        tool_call_id = event.tool_call_id or self._open_tool
        if tool_call_id is None:
            self.transcript.errors.append("a TOOL_CALL_CHUNK without toolCallId and no open tool call")
            return
        self._open_tool = tool_call_id
        continued = self._continues(tool_call_id)
        if continued is not None:
            if event.delta and not continued.complete:
                continued.append_args(event.delta)
            return
        record = self.builder.tool(
            tool_call_id,
            event.tool_call_name or "",
            parent_message_id=event.parent_message_id,
            subagent_run_id=event.subagent_run_id,
        )
        if event.delta:
            record.append_args(event.delta)

    def tool_result(self, event: ag.ToolCallResultEvent) -> None:
        record = self.transcript.tool_calls.get(event.tool_call_id)
        earlier = self.builder.earlier_call(event.tool_call_id, open_only=True) if record is None else None
        if earlier is not None:
            self.builder.answer_earlier(earlier, event.content)
        else:
            # A call of this run, or an id an earlier run already answered: a new call.
            self.builder.store_result(record or self.builder.tool(event.tool_call_id), event.content)
        message = self.builder.message(event.message_id, "tool", event.subagent_run_id)
        message.tool_call_id = event.tool_call_id
        text, parts = content_text(event.content)
        message.set_text(text)
        message.parts = parts
        message.content = event.content if isinstance(event.content, list) else None
        message.complete = True
        self.builder.see_media(parts, event.tool_call_id)

    # --- state, messages, activity ------------------------------------------------------

    def state_snapshot(self, event: ag.StateSnapshotEvent) -> None:
        # An owned copy: later in-place patches never change the caller's event object.
        t = self.transcript
        t.observed.state_snapshots = True
        t.state = self.builder.state_keeper.snapshot(t.state, event.snapshot, t.errors)

    def state_delta(self, event: ag.StateDeltaEvent) -> None:
        # Before any snapshot the patch applies to {} (or to the state the transcript was seeded with).
        t = self.transcript
        t.observed.state_deltas = True
        t.state = self.builder.state_keeper.patch(t.state, event.delta, t.errors)

    def messages_snapshot(self, event: ag.MessagesSnapshotEvent) -> None:
        messages: list[TranscriptMessage] = []
        index: dict[str, TranscriptMessage] = {}
        earlier_ids = self.builder.earlier_ids
        # LangGraph streams a result under one message id and lists it under another.
        results = {m.tool_call_id: m for m in self.transcript.messages if m.role == "tool" and m.tool_call_id}
        for wire in event.messages:
            role = wire.role
            known = self.builder.messages.get(wire.id)
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
                    record = self.builder.activity(wire.id, wire.activity_type)
                    record.position = message.position
                    record.content = self.builder.activity_keeper.snapshot(
                        None, wire.content, self.transcript.errors
                    )
            else:
                content = getattr(wire, "content", None)
                text, parts = content_text(content)
                message.set_text(text)
                message.parts = parts
                message.content = content if isinstance(content, list) else None
                message.metadata = getattr(wire, "metadata", None)
                if role == "tool":
                    self.builder.see_media(parts, wire.tool_call_id)
            if role == "assistant" and wire.tool_calls:
                for call in wire.tool_calls:
                    record = self.transcript.tool_calls.get(call.id)
                    if record is None:
                        earlier = self.builder.earlier_call(call.id)
                        if earlier is not None:
                            # Not begun in this run: the earlier run's call, listed again.
                            self._fill_call(earlier, call)
                            continue
                        record = self.builder.tool(call.id, call.function.name, parent_message_id=wire.id)
                    self._fill_call(record, call)
                    message.tool_call_ids.append(call.id)
            elif role == "tool":
                # Resumed runs may carry the result only here (docs/PROTOCOLS.md 1.3).
                message.tool_call_id = wire.tool_call_id
                message.error = wire.error
                record = self.transcript.tool_calls.get(wire.tool_call_id)
                if record is None:
                    earlier = self.builder.earlier_call(wire.tool_call_id)
                    if earlier is not None:
                        if not earlier.has_result:
                            self.builder.answer_earlier(earlier, wire.content, wire.error)
                    else:
                        record = self.builder.tool(wire.tool_call_id)
                if record is not None and not record.has_result:
                    self.builder.store_result(record, wire.content, wire.error)
            elif role == "reasoning":
                entry = self.builder.reasoning_entry(wire.id)
                if wire.content and not entry.text:
                    entry.set_text(wire.content)
                if wire.encrypted_value:
                    entry.encrypted_value = wire.encrypted_value
                entry.complete = True
            messages.append(message)
            index[message.id] = message
        self.transcript.messages = messages
        self.builder.messages = index

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
                earlier = self.builder.earlier_call(call.id)
                if earlier is not None:
                    self._fill_call(earlier, call)
        elif wire.role == "tool":
            earlier = self.builder.earlier_call(wire.tool_call_id, open_only=True)
            if earlier is not None:
                self.builder.answer_earlier(earlier, wire.content, wire.error)

    def activity_snapshot(self, event: ag.ActivitySnapshotEvent) -> None:
        known = event.message_id in self.transcript.activities
        record = self.builder.activity(event.message_id, event.activity_type)
        if known and event.replace is False:
            return
        # Bounded like the state (sdk/state.py): past a bound the last good content stays.
        record.activity_type = event.activity_type
        record.content = self.builder.activity_keeper.snapshot(
            record.content, event.content, self.transcript.errors
        )

    def activity_delta(self, event: ag.ActivityDeltaEvent) -> None:
        if event.message_id not in self.transcript.activities:
            # Nothing to patch: skipped, and no activity is made of a delta (spec events/activity).
            self.transcript.errors.append(
                f"An activity update for {event.message_id[:80]!r}, which the agent never started, "
                "was skipped."
            )
            return
        record = self.builder.activity(event.message_id, event.activity_type)
        record.content, _ = self._apply_patch(record.content, event.patch, "ACTIVITY_DELTA")

    def raw(self, event: ag.RawEvent) -> None:
        self.transcript.custom_events.append(("RAW", event.event))

    def custom(self, event: ag.CustomEvent) -> None:
        self.transcript.custom_events.append((event.name, event.value))

    # --- reasoning ----------------------------------------------------------------------

    def reasoning_start(self, event: ag.ReasoningStartEvent) -> None:
        self.transcript.observed.reasoning = True
        self._spans.add(event.message_id)

    def reasoning_message_start(self, event: ag.ReasoningMessageStartEvent) -> None:
        self.transcript.observed.reasoning = True
        self.builder.reasoning_entry(event.message_id, event.subagent_run_id)
        self._open_reasoning = event.message_id

    def reasoning_content(self, event: ag.ReasoningMessageContentEvent) -> None:
        self.builder.reasoning_entry(event.message_id, event.subagent_run_id).append_text(event.delta)

    def reasoning_message_end(self, event: ag.ReasoningMessageEndEvent) -> None:
        entry = self.builder.reasoning.get(event.message_id)
        if entry is not None:
            entry.complete = True
        if self._open_reasoning == event.message_id:
            self._open_reasoning = None

    def reasoning_chunk(self, event: ag.ReasoningMessageChunkEvent) -> None:
        self.transcript.observed.reasoning = True
        entry_id = event.message_id or self._open_reasoning
        if entry_id is None:
            self.transcript.errors.append("a REASONING_MESSAGE_CHUNK without messageId and no open reasoning")
            return
        self._open_reasoning = entry_id
        entry = self.builder.reasoning_entry(entry_id, event.subagent_run_id)
        if event.delta:
            entry.append_text(event.delta)

    def reasoning_end(self, event: ag.ReasoningEndEvent) -> None:
        self._open_reasoning = None
        self._spans.discard(event.message_id)

    def reasoning_encrypted(self, event: ag.ReasoningEncryptedValueEvent) -> None:
        """An opaque value for its entity: a reasoning message, another message, or a tool call.

        Only a value on reasoning is evidence of reasoning (pydantic-ai also carries a tool's kind and
        a denied result's outcome this way), and only reasoning with no text is sealed.
        """
        entity, value = event.entity_id, event.encrypted_value
        if event.subtype == "tool-call":
            record = self.transcript.tool_calls.get(entity) or self.builder.earlier_call(entity)
            if record is not None:
                record.encrypted_value = value
            else:
                self.builder.waiting_values[entity] = value
            return
        entry = self.builder.reasoning.get(entity)
        if entry is None:
            message = self.builder.messages.get(entity)
            if message is not None and message.role != "activity":
                message.encrypted_value = value
                return
            if not self._spans and not self.transcript.observed.reasoning:
                # No reasoning in sight: a value before the message it belongs to (given to it when
                # it begins), or for an entity this run never names, which the spec lets a consumer
                # drop: nothing is made of it.
                self.builder.waiting_values[entity] = value
                return
            # Inside a reasoning span, nothing of that id yet: reasoning that exists only sealed
            # (REASONING_START, the value, REASONING_END).
            entry = self.builder.reasoning_entry(entity, event.subagent_run_id)
            entry.complete = True
        entry.encrypted_value = value
        observed = self.transcript.observed
        observed.reasoning = True
        if entry.encrypted:
            observed.encrypted_reasoning = True

    # --- sub-agents ---------------------------------------------------------------------

    def subagent_started(self, event: ag.SubagentStartedEvent) -> None:
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

    def subagent_finished(self, event: ag.SubagentFinishedEvent) -> None:
        node = self._subagent_node(event.subagent_run_id)
        node.result = event.result
        if event.outcome is not None and event.outcome.type == "suspended":
            node.status = "suspended"
            node.interrupt_ids = list(event.outcome.interrupt_ids or [])
        else:
            node.status = "finished"

    def subagent_error(self, event: ag.SubagentErrorEvent) -> None:
        node = self._subagent_node(event.subagent_run_id)
        node.status = "error"
        node.error = event.message

    def _apply_patch(self, document: Any, operations: list[Any], what: str) -> tuple[Any, bool]:
        errors = self.transcript.errors
        noted = len(errors)
        patched = self.builder.activity_keeper.patch(document, operations, errors)
        return patched, len(errors) == noted
