"""Runs, read-only: what the health page's failures link to.

An admin sees how a run went (its agent, outcome, the sentence people saw, its times, events and
tokens), never what was said in it: messages and the agent's state belong to the person's thread.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from agents_ui.models import Run


def _seconds(start, end) -> str:
    return "none" if start is None or end is None else f"{(end - start).total_seconds():.2f} s"


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["short_id", "agent", "status", "created_at", "time_to_first_event", "duration"]
    list_filter = ["status", "conversation__endpoint"]
    list_select_related = ["conversation__endpoint"]
    date_hierarchy = "created_at"
    fields = [
        "agent",
        "status",
        "error",
        "conversation_id",
        "created_at",
        "started_at",
        "first_event_at",
        "finished_at",
        "time_to_first_event",
        "duration",
        "event_count",
        "usage",
    ]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False

    @admin.display(description="run")
    def short_id(self, obj: Run) -> str:
        return str(obj.pk)[:8]

    @admin.display(description="agent", ordering="conversation__endpoint__name")
    def agent(self, obj: Run) -> SafeString:
        endpoint = obj.conversation.endpoint
        url = reverse("admin:agents_ui_agentendpoint_health", args=[endpoint.pk])
        return format_html('<a href="{}">{}</a>', url, endpoint.name)

    @admin.display(description="conversation")
    def conversation_id(self, obj: Run) -> str:
        return str(obj.conversation_id)

    @admin.display(description="time to first event")
    def time_to_first_event(self, obj: Run) -> str:
        return _seconds(obj.started_at, obj.first_event_at)

    @admin.display(description="duration")
    def duration(self, obj: Run) -> str:
        return _seconds(obj.started_at, obj.finished_at)
