"""A run's task as the run templates show it: its state, what it asks, and its artifacts
(text as sanitised Markdown, files to download, data as a folding tree), each named with its type."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.utils.safestring import mark_safe

from agents_ui.display.markdown import markdown_html
from agents_ui.display.state_tree import state_tree
from agents_ui.runs.protocols import task_file_id
from agents_ui.sdk.limits import safe_link
from agents_ui.sdk.transcript import Artifact, TaskStatus

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
ENDINGS = {"failed": "The task failed", "rejected": "The agent declined the task"}


def task_ending(task: TaskStatus | None, reason: str | None) -> str | None:
    """What a run's status says of a task that failed or was declined, with the agent's reason;
    None for any other run."""
    ending = ENDINGS.get(task.state) if task is not None else None
    if ending is None:
        return None
    return f"{ending}: {reason}" if reason else f"{ending}."


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
        view["file_id"] = task_file_id(artifact.id, index)
    return view


def _default(kind: str) -> str:
    return {"text": "text/plain", "data": "application/json"}.get(kind, "application/octet-stream")


def task_view(
    task: TaskStatus | None, stopped: bool = False, artifacts: Iterable[Artifact] = ()
) -> dict[str, Any] | None:
    """What task.html shows of a task and the artifacts that came in the stream (None for runs
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
                "name": artifact.name or ("With the answer" if artifact.of_answer else "Artifact"),
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
