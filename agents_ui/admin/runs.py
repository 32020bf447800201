"""Runs, read-only: what the health page's failures link to.

An admin sees how a run went (its agent, outcome, the sentence people saw, its times, events and
tokens), never what was said in it: messages and the agent's state belong to the person's thread.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from agents_ui.display.usage import UsageLine, summed_lines, usage_lines
from agents_ui.models import Run


def _seconds(start, end) -> str:
    return "none" if start is None or end is None else f"{(end - start).total_seconds():.2f} s"


def _lines(lines: list[UsageLine], nothing: str) -> SafeString | str:
    if not lines:
        return nothing
    return format_html_join(
        "",
        '<div data-usage-model="{}">{}{}</div>',
        ((line.model, f"{line.model}: " if line.model else "", line.text) for line in lines),
    )


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["short_id", "agent", "status", "created_at", "time_to_first_event", "duration", "tokens"]
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
        "tokens",
        "conversation_tokens",
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

    @admin.display(description="tokens")
    def tokens(self, obj: Run) -> SafeString | str:
        return _lines(usage_lines(obj.usage), "not reported")

    @admin.display(description="tokens of its conversation")
    def conversation_tokens(self, obj: Run) -> SafeString | str:
        """Every run of the conversation, summed per model: what the thread cost, not what it said."""
        reports = Run.objects.filter(conversation_id=obj.conversation_id, usage__isnull=False)
        runs = Run.objects.filter(conversation_id=obj.conversation_id).count()
        lines = summed_lines(reports.values_list("usage", flat=True))
        reported = reports.count()
        if not lines:
            return "not reported"
        return format_html(
            '{}<div class="help">{} of its {} run{} reported usage.</div>',
            _lines(lines, ""),
            reported,
            runs,
            "" if runs == 1 else "s",
        )
