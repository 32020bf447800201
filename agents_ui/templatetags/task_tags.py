"""The task of a run, rendered by agents_ui/task.html (agents_ui.display.task)."""

from __future__ import annotations

from typing import Any

from django import template

from agents_ui.display.task import task_view

register = template.Library()


@register.inclusion_tag("agents_ui/task.html")
def run_task(rv: Any, run: Any) -> dict[str, Any]:
    profile = getattr(rv.plan, "profile", None)
    credentials = profile.credentials.value if profile is not None else None
    stopped = getattr(run, "status", "") == "cancelled"
    task = task_view(rv.transcript.task, stopped, rv.transcript.artifacts.values())
    # Through a shared link, files download from the link (views/shares.py), not from the owner's run.
    return {"task": task, "run": run, "credentials": credentials or (), "shared": getattr(rv, "shared", "")}
