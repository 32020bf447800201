"""The fold of A2A events (the SDK's `StreamResponse`) into the transcript every protocol shares.

An agent's messages (a status update's message, or a message answered alone) become the
transcript's assistant messages; the task's state is kept on `Transcript.task` (what the person is
asked, why it failed); artifacts keep their parts (text, file, data) with names and MIME types,
their text growing as `append` chunks arrive. The run ends as the task's state says: completed,
input-required and auth-required end the turn (the next message continues the task), failed and
rejected are errors with the agent's reason, canceled is a stop.

A2UI's A2A extension carries surfaces as DataParts (`metadata.mimeType` application/json+a2ui, the
`data` a list of A2UI messages): those of one message or artifact become one `a2ui-surface` activity,
the record AG-UI's surfaces use, bounded the same way and drawn by the same templates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import MessageToDict

from . import a2ui

# The transcript's builder (agents_ui.sdk.transcript, which imports this module): its `transcript`,
# `_message()`, and the `Outcome` type it hands over.
TranscriptBuilder = Any

__all__ = ["A2AArtifact", "A2APart", "TaskRecord", "apply_stream_response"]

# Text kept per artifact and per run: bounds what an agent's appends can grow to in memory.
MAX_ARTIFACT_TEXT = 2 * 1024 * 1024
MAX_ARTIFACTS = 100
MAX_PARTS = 100

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
STATE_LABELS: dict[str, str] = {
    "submitted": "Submitted",
    "working": "Working",
    "input-required": "Waiting for your answer",
    "auth-required": "Needs authorization",
    "completed": "Completed",
    "failed": "Failed",
    "canceled": "Canceled",
    "rejected": "Rejected",
}
# The task waits for the person: the next message carries its id.
WAITING = frozenset({"input-required", "auth-required"})
FINAL = frozenset({"completed", "failed", "canceled", "rejected"})


@dataclass
class A2APart:
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


@dataclass
class A2AArtifact:
    artifact_id: str
    name: str = ""
    description: str = ""
    parts: list[A2APart] = field(default_factory=list)
    complete: bool = False

    @property
    def media_types(self) -> list[str]:
        return list(dict.fromkeys(p.media_type or _default_type(p) for p in self.parts))


@dataclass
class TaskRecord:
    """The A2A task a run follows: its ids, its state, and what it made."""

    task_id: str = ""
    context_id: str = ""
    state: str = ""
    # The agent's words with the latest state (the question, the reason it failed ...).
    status_text: str = ""
    artifacts: dict[str, A2AArtifact] = field(default_factory=dict)
    # Progress the agent reported while working, in order (bounded).
    progress: list[str] = field(default_factory=list)
    revision: int = 0

    @property
    def label(self) -> str:
        return STATE_LABELS.get(self.state, self.state or "Unknown")

    @property
    def waiting(self) -> bool:
        return self.state in WAITING

    @property
    def final(self) -> bool:
        return self.state in FINAL


def _default_type(part: A2APart) -> str:
    return {"text": "text/plain", "data": "application/json"}.get(part.kind, "application/octet-stream")


def _part(part: pb.Part) -> A2APart | None:
    which = part.WhichOneof("content")
    media, name = part.media_type[:128], part.filename[:200]
    if which == "text":
        return A2APart("text", text=part.text[:MAX_ARTIFACT_TEXT], media_type=media, filename=name)
    if which == "raw":
        return A2APart("file", raw=bytes(part.raw), media_type=media, filename=name)
    if which == "url":
        return A2APart("file", url=part.url[:2048], media_type=media, filename=name)
    if which == "data":
        return A2APart("data", data=_whole_numbers(MessageToDict(part.data)), media_type=media, filename=name)
    return None


def _whole_numbers(value: Any) -> Any:
    """JSON as the agent meant it: protobuf carries every number as a double (2 arrives as 2.0)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(item) for item in value]
    return value


def is_a2ui(part: pb.Part) -> bool:
    """A DataPart of A2UI messages (A2UI's A2A extension): its metadata's mimeType says so."""
    if part.WhichOneof("content") != "data":
        return False
    declared = part.metadata.fields.get("mimeType") if part.HasField("metadata") else None
    kind = declared.string_value if declared is not None else part.media_type
    return kind in a2ui.A2A_MIME_TYPES


def _surfaces(builder: TranscriptBuilder, key: str, parts: Any, *, append: bool = False) -> list[pb.Part]:
    """Fold the A2UI DataParts among `parts` into the activity of `key` (a message or an artifact);
    the other parts are handed back."""
    others, messages, found = [], [], False
    for part in parts:
        if not is_a2ui(part):
            others.append(part)
            continue
        found = True
        data = _whole_numbers(MessageToDict(part.data))
        messages.extend(data if isinstance(data, list) else [data])
    if found:
        record = builder._activity(f"a2ui-{key}", a2ui.ACTIVITY_TYPE)
        earlier = record.content.get(a2ui.OPERATIONS_KEY) if isinstance(record.content, dict) else None
        if append and isinstance(earlier, list):
            messages = [*earlier, *messages]
        # Bounded like AG-UI's activity snapshots: past a bound the last good content stays.
        record.content = builder._activity_keeper.snapshot(
            record.content, {a2ui.OPERATIONS_KEY: messages}, builder.transcript.errors
        )
    return others


def _text_of(message: pb.Message) -> str:
    return "\n".join(p.text for p in message.parts if p.WhichOneof("content") == "text")


def _task(builder: TranscriptBuilder) -> TaskRecord:
    transcript = builder.transcript
    if transcript.task is None:
        transcript.task = TaskRecord()
    return transcript.task


def _ids(record: TaskRecord, task_id: str, context_id: str) -> None:
    record.task_id = task_id or record.task_id
    record.context_id = context_id or record.context_id


def _agent_message(builder: TranscriptBuilder, message: pb.Message) -> None:
    """An agent's message: its text as an assistant message, its other parts kept with the task."""
    if message.role == pb.ROLE_USER:
        return  # the person's own message, echoed in a task's history
    text = _text_of(message)
    message_id = message.message_id or f"a2a-message-{builder.transcript.event_count}"
    if text:
        said = builder._message(message_id)
        said._text.set(text[:MAX_ARTIFACT_TEXT])
        said.complete = True
    rest = _surfaces(builder, message_id, message.parts[:MAX_PARTS])
    others = [p for p in (_part(part) for part in rest) if p and p.kind != "text"]
    if others:
        record = _task(builder)
        record.artifacts.setdefault(
            message_id, A2AArtifact(message_id, name="With the answer", parts=others, complete=True)
        )


def _status(builder: TranscriptBuilder, status: pb.TaskStatus, Outcome: Any) -> None:
    record = _task(builder)
    state = STATE_NAMES.get(status.state, "")
    record.state = state or record.state
    text = _text_of(status.message) if status.HasField("message") else ""
    record.revision += 1
    if status.HasField("message") and state not in ("input-required", "completed"):
        # Only its surfaces: the words of a working or ended task are its progress or its reason.
        key = status.message.message_id or f"a2a-status-{builder.transcript.event_count}"
        _surfaces(builder, key, status.message.parts[:MAX_PARTS])
    if state in ("submitted", "working"):
        if text and len(record.progress) < 50:
            record.progress.append(text[:500])
        return
    record.status_text = text[:4000]
    if state in ("input-required", "completed") and status.HasField("message"):
        _agent_message(builder, status.message)
    transcript = builder.transcript
    if state in ("completed", "input-required", "auth-required"):
        transcript.outcome = Outcome("success")
        for message in transcript.messages:
            message.complete = True
    elif state == "failed":
        transcript.outcome = Outcome(
            "error", message=f"The task failed: {text}" if text else "The task failed."
        )
    elif state == "rejected":
        transcript.outcome = Outcome(
            "error",
            message=f"The agent declined the task: {text}" if text else "The agent declined the task.",
        )
    elif state == "canceled":
        transcript.outcome = Outcome("cancelled", message=text or None)
    for artifact in record.artifacts.values():
        if record.final:
            artifact.complete = True


def _artifact(builder: TranscriptBuilder, artifact: pb.Artifact, *, append: bool, last: bool) -> None:
    record = _task(builder)
    record.revision += 1
    key = artifact.artifact_id or f"artifact-{len(record.artifacts)}"
    rest = _surfaces(builder, key, artifact.parts[:MAX_PARTS], append=append)
    if len(rest) < len(artifact.parts[:MAX_PARTS]) and not rest and key not in record.artifacts:
        return  # an artifact that is only a surface: drawn as the surface, not listed
    parts = [p for p in (_part(part) for part in rest) if p is not None]
    known = record.artifacts.get(key)
    if known is None:
        if len(record.artifacts) >= MAX_ARTIFACTS:
            builder.transcript.errors.append("the agent sent more artifacts than a run shows")
            return
        known = record.artifacts[key] = A2AArtifact(key)
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


def _whole_task(builder: TranscriptBuilder, task: pb.Task, Outcome: Any) -> None:
    record = _task(builder)
    _ids(record, task.id, task.context_id)
    for artifact in task.artifacts[:MAX_ARTIFACTS]:
        _artifact(builder, artifact, append=False, last=True)
    if task.HasField("status"):
        _status(builder, task.status, Outcome)


def apply_stream_response(builder: TranscriptBuilder, event: pb.StreamResponse, Outcome: Any) -> None:
    """Fold one StreamResponse (a task, a message, a status update or an artifact update);
    `Outcome` is the transcript's outcome type."""
    transcript = builder.transcript
    kind = event.WhichOneof("payload")
    if kind == "task":
        _whole_task(builder, event.task, Outcome)
    elif kind == "message":
        message = event.message
        record = _task(builder)
        _ids(record, message.task_id, message.context_id)
        _agent_message(builder, message)
        record.revision += 1
        if not message.task_id:  # a message answered alone ends the turn
            transcript.outcome = transcript.outcome or Outcome("success")
            for said in transcript.messages:
                said.complete = True
    elif kind == "status_update":
        update = event.status_update
        _ids(_task(builder), update.task_id, update.context_id)
        _status(builder, update.status, Outcome)
    elif kind == "artifact_update":
        update = event.artifact_update
        _ids(_task(builder), update.task_id, update.context_id)
        _artifact(builder, update.artifact, append=update.append, last=update.last_chunk)
    else:
        transcript.errors.append("an A2A stream response with nothing in it")
    thread = transcript.task.context_id if transcript.task else ""
    transcript.thread_id = thread or transcript.thread_id
