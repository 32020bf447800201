"""The A2A task of a run, rendered by agents_ui/a2a_task.html (agents_ui.views.a2a_task)."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.inclusion_tag("agents_ui/a2a_task.html")
def a2a_task(rv: Any, run: Any) -> dict[str, Any]:
    from agents_ui.views.a2a_task import task_view

    profile = getattr(rv.plan, "profile", None)
    credentials = profile.credentials.value if profile is not None else None
    stopped = getattr(run, "status", "") == "cancelled"
    task = task_view(rv.transcript.task, stopped, rv.transcript.artifacts.values())
    return {"task": task, "run": run, "credentials": credentials or ()}
