"""The fold of A2A events (the SDK's `StreamResponse`) into the transcript every protocol shares.

An agent's messages (a status update's message, or a message answered alone) become the
transcript's assistant messages; the task's state is the transcript's neutral `TaskStatus` (what the
person is asked, why it failed); artifacts are its neutral `Artifact`s, keeping their parts (text,
file, data) with names and MIME types, their text growing as `append` chunks arrive. The run ends as
the task's state says: completed, input-required and auth-required end the turn (the next message
continues the task), failed and rejected are errors with the agent's reason, canceled is a stop.

Tool use as Google ADK's A2A exposure sends it (DataParts whose metadata's `adk_type` is
`function_call` or `function_response`, in working updates) becomes the transcript's ordinary tool
calls, bounded in number and size: see `_tool_steps`.

A2UI's A2A extension carries surfaces as DataParts (`metadata.mimeType` application/json+a2ui, the
`data` a list of A2UI messages): those of one message or artifact become one `a2ui-surface` activity,
the record AG-UI's surfaces use, bounded the same way and drawn by the same templates.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import MessageToDict

from ..a2ui import catalog as a2ui
from ..transcript import Artifact, ArtifactPart, Outcome, TaskStatus

if TYPE_CHECKING:
    from ..folding import TranscriptBuilder

__all__ = ["A2AFold", "is_a2ui", "whole_numbers"]

# Text kept per artifact and per run: bounds what an agent's appends can grow to in memory.
MAX_ARTIFACT_TEXT = 2 * 1024 * 1024
MAX_ARTIFACTS = 100
MAX_PARTS = 100
# Tool steps an agent's updates can add to one run, and the text kept of each one's arguments/result.
MAX_TOOL_CALLS = 50
MAX_TOOL_TEXT = 64 * 1024
# ADK's DataPart metadata key (google/adk/a2a/converters/part_converter.py, ADK 2.13.0) and its kinds.
ADK_TYPE_KEY = "adk_type"
ADK_FUNCTION_CALL = "function_call"
ADK_FUNCTION_RESPONSE = "function_response"

STATE_NAMES: dict[int, str] = {
    pb.TASK_STATE_SUBMITTED: "submitted",
    pb.TASK_STATE_WORKING: "working",
    pb.TASK_STATE_INPUT_REQUIRED: "input-required",
    pb.TASK_STATE_AUTH_REQUIRED: "auth-required",
    pb.TASK_STATE_COMPLETED: "completed",
    pb.TASK_STATE_FAILED: "failed",
    pb.TASK_STATE_CANCELED: "canceled",
    pb.TASK_STATE_REJECTED: "rejected",
}


def _part(part: pb.Part) -> ArtifactPart | None:
    which = part.WhichOneof("content")
    media, name = part.media_type[:128], part.filename[:200]
    if which == "text":
        return ArtifactPart("text", text=part.text[:MAX_ARTIFACT_TEXT], media_type=media, filename=name)
    if which == "raw":
        return ArtifactPart("file", raw=bytes(part.raw), media_type=media, filename=name)
    if which == "url":
        return ArtifactPart("file", url=part.url[:2048], media_type=media, filename=name)
    if which == "data":
        data = whole_numbers(MessageToDict(part.data))
        return ArtifactPart("data", data=data, media_type=media, filename=name)
    return None


def whole_numbers(value: Any) -> Any:
    """JSON as the agent meant it: protobuf carries every number as a double (2 arrives as 2.0)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_numbers(item) for item in value]
    return value


def is_a2ui(part: pb.Part) -> bool:
    """A DataPart of A2UI messages (A2UI's A2A extension): its metadata's mimeType says so."""
    if part.WhichOneof("content") != "data":
        return False
    declared = part.metadata.fields.get("mimeType") if part.HasField("metadata") else None
    kind = declared.string_value if declared is not None else part.media_type
    return kind in a2ui.A2A_MIME_TYPES


def _text_of(message: pb.Message) -> str:
    return "\n".join(p.text for p in message.parts if p.WhichOneof("content") == "text")


class A2AFold:
    """A2A's handlers, for one builder (one run): one `StreamResponse` payload kind each."""

    def __init__(self, builder: TranscriptBuilder) -> None:
        self.builder = builder
        self.transcript = builder.transcript
        self._open_calls: dict[str, str] = {}  # a call's name -> its id, for calls sent without one

    def handlers(self) -> dict[type, Callable[[Any], None]]:
        return {pb.StreamResponse: self.stream_response}

    # --- the payload kinds ---------------------------------------------------------------------

    def stream_response(self, event: pb.StreamResponse) -> None:
        """Fold one StreamResponse (a task, a message, a status update or an artifact update)."""
        transcript = self.transcript
        kind = event.WhichOneof("payload")
        if kind == "task":
            self.whole_task(event.task)
        elif kind == "message":
            self.message(event.message)
        elif kind == "status_update":
            update = event.status_update
            self._ids(update.task_id, update.context_id)
            self.status(update.status)
        elif kind == "artifact_update":
            update = event.artifact_update
            self._ids(update.task_id, update.context_id)
            self.artifact(update.artifact, append=update.append, last=update.last_chunk)
        else:
            transcript.errors.append("an A2A stream response with nothing in it")
        thread = transcript.task.context_id if transcript.task else ""
        transcript.thread_id = thread or transcript.thread_id

    def whole_task(self, task: pb.Task) -> None:
        self._ids(task.id, task.context_id)
        for artifact in task.artifacts[:MAX_ARTIFACTS]:
            self.artifact(artifact, append=False, last=True)
        if task.HasField("status"):
            self.status(task.status)

    def message(self, message: pb.Message) -> None:
        transcript = self.transcript
        record = self._ids(message.task_id, message.context_id)
        self._agent_message(message)
        record.revision += 1
        if not message.task_id:  # a message answered alone ends the turn
            transcript.outcome = transcript.outcome or Outcome("success")
            for said in transcript.messages:
                said.complete = True

    def status(self, status: pb.TaskStatus) -> None:
        transcript = self.transcript
        record = self._task()
        state = STATE_NAMES.get(status.state, "")
        record.state = state or record.state
        text = _text_of(status.message) if status.HasField("message") else ""
        record.revision += 1
        if status.HasField("message") and state not in ("input-required", "completed"):
            # Only its surfaces: the words of a working or ended task are its progress or its reason.
            key = status.message.message_id or f"a2a-status-{transcript.event_count}"
            self._surfaces(key, self._tool_steps(status.message.parts[:MAX_PARTS]))
        if state in ("submitted", "working"):
            if text and len(record.progress) < 50:
                record.progress.append(text[:500])
            return
        record.status_text = text[:4000]
        if state in ("input-required", "completed") and status.HasField("message"):
            self._agent_message(status.message)
        if state in ("completed", "input-required", "auth-required"):
            transcript.outcome = Outcome("success")
            for message in transcript.messages:
                message.complete = True
        elif state in ("failed", "rejected"):
            # The agent's reason only: the task's state says how it ended, the display words it.
            transcript.outcome = Outcome("error", message=text[:4000] or None)
        elif state == "canceled":
            transcript.outcome = Outcome("cancelled", message=text or None)
        if record.final:
            for artifact in transcript.artifacts.values():
                artifact.complete = True

    def artifact(self, artifact: pb.Artifact, *, append: bool, last: bool) -> None:
        record = self._task()
        artifacts = self.transcript.artifacts
        record.revision += 1
        key = artifact.artifact_id or f"artifact-{len(artifacts)}"
        rest = self._surfaces(key, artifact.parts[:MAX_PARTS], append=append)
        if len(rest) < len(artifact.parts[:MAX_PARTS]) and not rest and key not in artifacts:
            return  # an artifact that is only a surface: drawn as the surface, not listed
        parts = [p for p in (_part(part) for part in rest) if p is not None]
        known = artifacts.get(key)
        if known is None:
            if len(artifacts) >= MAX_ARTIFACTS:
                self.transcript.errors.append("the agent sent more artifacts than a run shows")
                return
            known = artifacts[key] = Artifact(key)
        known.name = artifact.name[:200] or known.name
        known.description = artifact.description[:1000] or known.description
        if append and known.parts:
            for part in parts:
                last_part = known.parts[-1]
                if part.kind == "text" and last_part.kind == "text":
                    room = MAX_ARTIFACT_TEXT - len(last_part.text)
                    last_part.text += part.text[: max(0, room)]
                elif len(known.parts) < MAX_PARTS:
                    known.parts.append(part)
        else:
            known.parts = parts
        known.complete = known.complete or last

    # --- helpers -------------------------------------------------------------------------------

    def _task(self) -> TaskStatus:
        transcript = self.transcript
        if transcript.task is None:
            transcript.task = TaskStatus()
        return transcript.task

    def _ids(self, task_id: str, context_id: str) -> TaskStatus:
        record = self._task()
        record.task_id = task_id or record.task_id
        record.context_id = context_id or record.context_id
        return record

    def _agent_message(self, message: pb.Message) -> None:
        """An agent's message: its text as an assistant message, its other parts as an artifact."""
        if message.role == pb.ROLE_USER:
            return  # the person's own message, echoed in a task's history
        text = _text_of(message)
        message_id = message.message_id or f"a2a-message-{self.transcript.event_count}"
        if text:
            said = self.builder.message(message_id)
            said.set_text(text[:MAX_ARTIFACT_TEXT])
            said.complete = True
        rest = self._surfaces(message_id, message.parts[:MAX_PARTS])
        others = [p for p in (_part(part) for part in rest) if p and p.kind != "text"]
        if others:
            self._task()
            self.transcript.artifacts.setdefault(
                message_id, Artifact(message_id, parts=others, complete=True, of_answer=True)
            )

    def _surfaces(self, key: str, parts: Any, *, append: bool = False) -> list[pb.Part]:
        """Fold the A2UI DataParts among `parts` into the activity of `key` (a message or an
        artifact); the other parts are handed back."""
        others, messages, found = [], [], False
        for part in parts:
            if not is_a2ui(part):
                others.append(part)
                continue
            found = True
            data = whole_numbers(MessageToDict(part.data))
            messages.extend(data if isinstance(data, list) else [data])
        if found:
            builder = self.builder
            record = builder.activity(f"a2ui-{key}", a2ui.ACTIVITY_TYPE)
            earlier = record.content.get(a2ui.OPERATIONS_KEY) if isinstance(record.content, dict) else None
            if append and isinstance(earlier, list):
                messages = [*earlier, *messages]
            # Bounded like AG-UI's activity snapshots: past a bound the last good content stays.
            record.content = builder.activity_keeper.snapshot(
                record.content, {a2ui.OPERATIONS_KEY: messages}, self.transcript.errors
            )
        return others

    def _tool_steps(self, parts: Any) -> list[pb.Part]:
        """Fold ADK's function calls and responses among `parts` into the transcript's tool calls;
        the other parts are handed back."""
        others = []
        for part in parts:
            kind = _adk_type(part)
            if kind not in (ADK_FUNCTION_CALL, ADK_FUNCTION_RESPONSE):
                others.append(part)
                continue
            data = whole_numbers(MessageToDict(part.data))
            if isinstance(data, dict):
                self._tool_step(kind, data)
        return others

    def _tool_step(self, kind: str, data: dict[str, Any]) -> None:
        transcript = self.transcript
        name = data.get("name") if isinstance(data.get("name"), str) else ""
        name = name[:200]
        call_id = data.get("id") if isinstance(data.get("id"), str) else ""
        call_id = call_id[:200] or self._open_calls.get(name, "")
        if kind == ADK_FUNCTION_RESPONSE and call_id in transcript.tool_calls:
            record = transcript.tool_calls[call_id]
            self._open_calls.pop(record.name, None)
            result = _bounded_json(data.get("response"))
            self.builder.store_result(record, result)
            transcript.revision += 1
            return
        if len(transcript.tool_calls) >= MAX_TOOL_CALLS:
            if not any("tool calls" in error for error in transcript.errors):
                transcript.errors.append("the agent sent more tool calls than a run shows")
            return
        call_id = call_id if call_id and call_id not in transcript.tool_calls else ""
        call_id = call_id or f"a2a-tool-{len(transcript.tool_calls) + 1}"
        record = self.builder.tool(call_id, name or "tool")
        if kind == ADK_FUNCTION_CALL:
            record.set_args(_bounded_json(data.get("args", {})))
            record.finish()
            self._open_calls[record.name] = call_id
        else:  # a response to a call this run never saw
            record.set_args("")
            self.builder.store_result(record, _bounded_json(data.get("response")))
        transcript.revision += 1


def _adk_type(part: pb.Part) -> str:
    if part.WhichOneof("content") != "data" or not part.HasField("metadata"):
        return ""
    declared = part.metadata.fields.get(ADK_TYPE_KEY)
    return declared.string_value if declared is not None else ""


def _bounded_json(value: Any) -> str:
    """JSON text, cut at the bound (a cut text is no longer JSON, and is shown as text)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = str(value)
    return text[:MAX_TOOL_TEXT]
