"""An A2A run's task as the run templates show it: its state, what it asks, and its artifacts
(text as sanitised Markdown, files to download, data as a folding tree), each named with its type."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from agents_ui.models import AgentEndpoint
from agents_ui.runs.history import transcript_of
from agents_ui.sdk.limits import safe_link
from agents_ui.sdk.transcript import Artifact, TaskStatus
from agents_ui.views.access import users_run
from agents_ui.views.run_render import markdown_html
from agents_ui.views.state_tree import state_tree

LABELS = {
    "submitted": "Submitted",
    "working": "Working",
    "input-required": "Waiting for your answer",
    "auth-required": "Needs authorization",
    "completed": "Completed",
    "failed": "Failed",
    "canceled": "Canceled",
    "rejected": "Rejected",
}
TONES = {
    "completed": "ok",
    "input-required": "warn",
    "auth-required": "warn",
    "failed": "bad",
    "rejected": "bad",
    "canceled": "info",
}


def _part_view(artifact: Artifact, index: int, part: Any) -> dict[str, Any]:
    view: dict[str, Any] = {"kind": part.kind, "media_type": part.media_type or _default(part.kind)}
    if part.kind == "text":
        view["html"] = mark_safe(markdown_html(part.text))  # sanitised by nh3
    elif part.kind == "data":
        view["tree"] = state_tree(part.data)
    else:
        view["filename"] = part.filename or f"{artifact.name or artifact.id}-{index + 1}"
        view["size"] = part.size
        view["downloadable"] = part.raw is not None
        view["link"] = safe_link(part.url) if part.url else None
        view["index"] = index
    return view


def _default(kind: str) -> str:
    return {"text": "text/plain", "data": "application/json"}.get(kind, "application/octet-stream")


def task_view(
    task: TaskStatus | None, stopped: bool = False, artifacts: Iterable[Artifact] = ()
) -> dict[str, Any] | None:
    """What a2a_task.html shows of a task and the artifacts that came in the stream (None for runs
    without a task); `stopped`: the run was stopped, which canceled a task still at work."""
    if task is None:
        return None
    state = task.state
    label = LABELS.get(state, state or "Unknown")
    if stopped and not task.final and not task.waiting:
        state, label = "canceled", "Canceled"
    shown = []
    for artifact in artifacts:
        if artifact.remote:
            continue
        shown.append(
            {
                "id": artifact.id,
                "name": artifact.name or "Artifact",
                "description": artifact.description,
                "media_types": artifact.media_types,
                "complete": artifact.complete,
                "parts": [_part_view(artifact, i, part) for i, part in enumerate(artifact.parts)],
            }
        )
    return {
        "task_id": task.task_id,
        "state": state,
        "label": label,
        "tone": TONES.get(state, "accent"),
        "asks": state == "input-required",
        "needs_auth": state == "auth-required",
        "text": task.status_text,
        "progress": task.progress[-1] if task.progress and state in ("submitted", "working") else "",
        "artifacts": shown,
    }


@login_required
@require_GET
async def download(request: Any, run_id: Any, artifact_id: str, index: int) -> HttpResponse:
    """A file an A2A agent sent inline in one of this run's artifacts, handed over as a download."""
    run = await users_run(request, run_id)
    if run.conversation.endpoint.protocol != AgentEndpoint.Protocol.A2A:
        raise Http404("No such file.")
    transcript = await sync_to_async(transcript_of)(run)
    artifact = transcript.artifacts.get(artifact_id)
    inline = artifact is not None and not artifact.remote and 0 <= index < len(artifact.parts)
    if not inline or artifact.parts[index].raw is None:
        raise Http404("No such file.")
    part = artifact.parts[index]
    name = part.filename or f"{artifact.name or artifact.id}-{index + 1}"
    # The agent's type is only a label: the browser is told to save it, never to render it.
    response = HttpResponse(part.raw, content_type="application/octet-stream")
    response["Content-Disposition"] = content_disposition_header(True, name)
    response["X-Content-Type-Options"] = "nosniff"
    return response
