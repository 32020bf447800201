"""A conversation as a document to take away: one JSON shape (docs/export.md), and Markdown drawn
from it. Both are what the person's own page shows of the thread: its finished turns, what was
edited away or answered again left out.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.text import slugify

from agents_ui.models import ApprovalRecord, Attachment, Conversation
from agents_ui.runs.snapshots import FrozenTurn
from agents_ui.sdk.transcript import Artifact, Transcript

FORMAT = "agents-ui.conversation"
VERSION = 1
# A file's bytes are kept in the export up to this size (base64); past it, only what it is.
INLINE_FILE_BYTES = 1024 * 1024


def export_document(
    conversation: Conversation,
    turns: list[FrozenTurn],
    decided: dict[Any, dict[str, ApprovalRecord]],
    *,
    with_reasoning: bool,
) -> dict[str, Any]:
    """The conversation in the export's JSON shape, version 1."""
    endpoint = conversation.endpoint
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _when(timezone.now()),
        "conversation": {
            "id": str(conversation.pk),
            "title": str(conversation),
            "agent": {"name": endpoint.name, "slug": endpoint.slug, "protocol": endpoint.protocol},
            "created_at": _when(conversation.created_at),
            "updated_at": _when(conversation.updated_at),
        },
        "runs": [_run(turn, decided.get(turn.run.pk, {}), with_reasoning) for turn in turns],
    }


def export_markdown(document: dict[str, Any]) -> str:
    return render_to_string("agents_ui/export.md", {"document": document, "runs": document["runs"]})


def export_filename(conversation: Conversation, extension: str) -> str:
    """An ASCII name a file system takes: the title's words, then the date."""
    stem = slugify(str(conversation))[:60].strip("-") or "conversation"
    return f"{stem}-{timezone.localdate(conversation.updated_at):%Y-%m-%d}.{extension}"


def _run(turn: FrozenTurn, decided: dict[str, ApprovalRecord], with_reasoning: bool) -> dict[str, Any]:
    run, transcript, message = turn.run, turn.transcript, turn.message
    found: dict[str, Any] = {
        "id": str(run.pk),
        "kind": (run.request or {}).get("kind") or "message",
        "status": run.status,
        "error": run.error,
        "created_at": _when(run.created_at),
        "finished_at": _when(run.finished_at),
        "message": None,
        "answers": [
            {"id": m.id, "text": m.text, **({"subagent": m.subagent_run_id} if m.subagent_run_id else {})}
            for m in transcript.messages
            if m.role == "assistant" and m.text
        ],
        "tool_calls": [_call(call) for call in transcript.tool_calls.values()],
        "approvals": [_approval(record) for record in decided.values()],
        "artifacts": [_artifact(artifact) for artifact in transcript.artifacts.values()],
        "state": transcript.state if transcript.state is not None else run.state,
    }
    if message is not None:
        found["message"] = {
            "id": message.pk,
            "content": message.content,
            "created_at": _when(message.created_at),
            "edited": message.edited_from_id is not None,
            "attachments": [_attachment(file) for file in message.attachments.all()],
        }
    if with_reasoning:
        found["reasoning"] = _reasoning(transcript)
    return found


def _call(call: Any) -> dict[str, Any]:
    return {
        "id": call.id,
        "name": call.name,
        "arguments": call.args if call.args_error is None else call.args_text,
        "result": call.result if call.has_result else None,
        "error": call.result_error or call.args_error,
        "status": "failed"
        if call.result_error or call.status == "error"
        else "done"
        if call.has_result
        else "no result",
    }


def _approval(record: ApprovalRecord) -> dict[str, Any]:
    return {
        "request_id": record.request_id,
        "tool": record.tool_name,
        "decision": record.decision,
        "arguments": record.arguments,
        "edited_arguments": record.edited_arguments,
        "reason": record.reason,
        "decided_by": record.decided_by.get_username() if record.decided_by else None,
        "decided_at": _when(record.decided_at),
    }


def _reasoning(transcript: Transcript) -> list[str]:
    """Reasoning the agent showed; sealed reasoning is never exported (it is never shown either)."""
    return [entry.text for entry in transcript.reasoning if not entry.encrypted and entry.text]


def _artifact(artifact: Artifact) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": artifact.id,
        "name": artifact.name,
        "description": artifact.description,
        "remote": artifact.remote,
        "media_type": artifact.media_type or ", ".join(artifact.media_types),
        "size": artifact.size,
    }
    if artifact.remote:
        # Its content stays with the agent: the workspace's download link fetches it when asked.
        found["parts"] = []
        return found
    found["parts"] = [_part(part) for part in artifact.parts]
    return found


def _part(part: Any) -> dict[str, Any]:
    if part.kind == "text":
        return {"kind": "text", "text": part.text}
    if part.kind == "data":
        return {"kind": "data", "data": part.data}
    shown: dict[str, Any] = {
        "kind": "file",
        "filename": part.filename,
        "media_type": part.media_type,
        "size": part.size,
    }
    if part.url:
        shown["url"] = part.url
    shown.update(_bytes(part.raw))
    return shown


def _attachment(file: Attachment) -> dict[str, Any]:
    return {
        "name": file.name,
        "media_type": file.mime_type,
        "size": file.size,
        **_bytes(bytes(file.data) if file.data is not None else None),
    }


def _bytes(data: bytes | None) -> dict[str, Any]:
    """A file's content: base64 up to INLINE_FILE_BYTES, else left out with the reason."""
    if data is None:
        return {"content_base64": None}
    if len(data) > INLINE_FILE_BYTES:
        return {"content_base64": None, "omitted": f"larger than {INLINE_FILE_BYTES // 1024} KiB"}
    return {"content_base64": base64.b64encode(data).decode("ascii")}


def _when(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def export_json(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2, default=str)
