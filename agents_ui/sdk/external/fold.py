"""The fold of an external agent's stream events (docs/PROTOCOLS.md 2.2) into the transcript.

One named method per event model of :mod:`agents_ui.sdk.external.policy`, dispatched by
:class:`~agents_ui.sdk.folding.TranscriptBuilder`. Approval requests become the transcript's neutral
:class:`~agents_ui.sdk.transcript.ApprovalRequest` (decided in the run), artifacts its
:class:`~agents_ui.sdk.transcript.Artifact` (fetched from the agent when asked for).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..a2ui.catalog import ACTIVITY_TYPE as A2UI_ACTIVITY
from ..transcript import ApprovalRequest, Artifact, Outcome
from . import policy as ext

if TYPE_CHECKING:
    from ..folding import TranscriptBuilder

__all__ = ["A2UI_MODULE", "ExternalFold"]

A2UI_MODULE = "a2ui"  # an external agent's output module of A2UI operations (docs/PROTOCOLS.md)


class ExternalFold:
    """An external agent's event handlers, for one builder (one run)."""

    TEXT_DELTAS: dict[type, str] = {ext.MessageDelta: "messages"}

    def __init__(self, builder: TranscriptBuilder) -> None:
        self.builder = builder
        self.transcript = builder.transcript

    def handlers(self) -> dict[type, Callable[[Any], None]]:
        return {
            ext.RunStarted: self.run_started,
            ext.MessageStarted: self.message_started,
            ext.MessageDelta: self.message_delta,
            ext.MessageCompleted: self.message_completed,
            ext.ToolStarted: self.tool_started,
            ext.ToolCompleted: self.tool_completed,
            ext.ApprovalRequested: self.approval_requested,
            ext.ApprovalResolved: self.approval_resolved,
            ext.ModuleEvent: self.module,
            ext.GroundingEvent: self.grounding,
            ext.ArtifactCreated: self.artifact,
            ext.RunCompleted: self.run_completed,
            ext.RunFailed: self.run_failed,
            ext.LegacyText: self.legacy_text,
            ext.Done: self.done,
        }

    def run_started(self, event: ext.RunStarted) -> None:
        t = self.transcript
        t.run_id = event.run_id
        t.thread_id = event.conversation_id or t.thread_id
        t.outcome = None

    def message_started(self, event: ext.MessageStarted) -> None:
        self.builder.message(event.message_id, event.role)

    def message_delta(self, event: ext.MessageDelta) -> None:
        self.builder.message(event.message_id).append_text(event.delta)

    def message_completed(self, event: ext.MessageCompleted) -> None:
        message = self.builder.message(event.message_id)
        if event.content is not None:
            message.set_text(event.content)  # the completed content is authoritative
        message.complete = True

    def tool_started(self, event: ext.ToolStarted) -> None:
        record = self.builder.tool(event.tool_call_id, event.public_name)
        record.set_args(json.dumps(event.input) if event.input is not None else "")
        record.args = event.input if event.input is not None else {}
        record.complete = True

    def tool_completed(self, event: ext.ToolCompleted) -> None:
        record = self.builder.tool(event.tool_call_id)
        record.complete = True
        record.status = event.status
        record.result = event.output
        record.has_result = True

    def approval_requested(self, event: ext.ApprovalRequested) -> None:
        self.transcript.observed.approvals = True
        self.transcript.approvals[event.approval_id] = ApprovalRequest(
            id=event.approval_id,
            kind="in-run",
            tool_call_id=event.tool_call_id,
            name=event.public_name,
            input=event.input,
            side_effect_class=event.side_effect_class,
            expires_at=event.expires_at,
        )

    def approval_resolved(self, event: ext.ApprovalResolved) -> None:
        record = self.transcript.approvals.get(event.approval_id)
        if record is None:
            record = ApprovalRequest(id=event.approval_id, kind="in-run")
            self.transcript.approvals[event.approval_id] = record
        record.decision = event.decision

    def module(self, event: ext.ModuleEvent) -> None:
        t = self.transcript
        t.observed.modules = True
        if event.type == A2UI_MODULE:
            # An A2UI surface as an output module: an activity of its own, drawn like AG-UI's.
            record = self.builder.activity(f"module-{t.event_count}", A2UI_ACTIVITY)
            record.content = self.builder.activity_keeper.snapshot(None, event.data, t.errors)
            return
        t.modules.append((event.type, event.data))

    def grounding(self, event: ext.GroundingEvent) -> None:
        self.transcript.observed.grounding = True
        self.transcript.grounding.extend(event.sources)

    def artifact(self, event: ext.ArtifactCreated) -> None:
        # The content stays with the agent: the product fetches it through the artifact API.
        self.transcript.artifacts[event.artifact_id] = Artifact(
            id=event.artifact_id,
            name=event.name or "",
            complete=True,
            remote=True,
            media_type=event.mime_type,
            size=event.size,
        )

    def run_completed(self, event: ext.RunCompleted) -> None:
        self.transcript.usage = event.usage
        self.transcript.outcome = Outcome("success")
        for message in self.transcript.messages:
            message.complete = True

    def run_failed(self, event: ext.RunFailed) -> None:
        code = event.error.code if isinstance(event.error, ext.ErrorDetail) else None
        self.transcript.outcome = Outcome("error", message=event.message, code=code)

    def legacy_text(self, event: ext.LegacyText) -> None:
        # chat-legacy-v1 has no message ids: the whole answer is one assistant message.
        self.builder.message("legacy-answer").append_text(event.text)

    def done(self, event: ext.Done) -> None:
        for message in self.transcript.messages:
            message.complete = True
        if self.transcript.outcome is None:
            self.transcript.outcome = Outcome("success")
