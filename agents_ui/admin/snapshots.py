"""Snapshots across all endpoints, read-only; an endpoint's own history page is the usual way in."""

from __future__ import annotations

import json

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

from agents_ui.admin.listing import status_html
from agents_ui.models import CapabilitySnapshot


@admin.register(CapabilitySnapshot)
class CapabilitySnapshotAdmin(admin.ModelAdmin):
    list_display = ["endpoint", "status_pill", "short_hash", "first_seen_at", "last_seen_at"]
    list_filter = ["status", "endpoint"]
    search_fields = ["content_hash", "endpoint__name"]
    list_select_related = ["endpoint"]
    fields = [
        "endpoint",
        "status",
        "content_hash",
        "source",
        "declaration",
        "error_text",
        "first_seen_at",
        "last_seen_at",
    ]
    readonly_fields = fields

    @admin.display(description="status", ordering="status")
    def status_pill(self, obj: CapabilitySnapshot) -> SafeString:
        return status_html(obj.status, obj.last_seen_at)

    @admin.display(description="hash")
    def short_hash(self, obj: CapabilitySnapshot) -> str:
        return obj.content_hash[:12]

    @admin.display(description="declaration")
    def declaration(self, obj: CapabilitySnapshot) -> str:
        if obj.payload is None:
            return "-"
        text = json.dumps(obj.endpoint.scrub_payload(obj.payload), indent=2, sort_keys=True)
        return format_html('<pre class="declaration-json">{}</pre>', text)

    @admin.display(description="error")
    def error_text(self, obj: CapabilitySnapshot) -> str:
        # What the agent answered is shown, minus a credential it may have echoed back.
        return obj.endpoint.scrub(obj.error) or "-"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: CapabilitySnapshot | None = None) -> bool:
        return False

    class Media:
        css = {"all": ["agents_ui/admin.css"]}
