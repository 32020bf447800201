"""The admin for agent endpoints: register, check and govern them."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from agents_ui.models import AgentEndpoint, CapabilitySnapshot


class AgentEndpointForm(forms.ModelForm):
    """The credential is write-only: never rendered back, kept when left empty, cleared on request."""

    credential = forms.CharField(
        label="Credential",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="The bearer token or header value. Write-only: leave empty to keep the current one.",
    )
    clear_credential = forms.BooleanField(label="Remove the stored credential", required=False)

    class Meta:
        model = AgentEndpoint
        fields = [
            "name", "slug", "description", "protocol", "enabled", "base_url", "discovery_url",
            "connect_timeout", "read_timeout", "auth_kind", "auth_header_name", "allowed_groups", "overrides",
        ]  # fmt: skip

    def clean(self) -> dict:
        cleaned = super().clean()
        new_credential = cleaned.get("credential")
        if cleaned.get("clear_credential"):
            cleaned["credential"] = ""
        elif not new_credential:
            cleaned["credential"] = self.instance.credential if self.instance.pk else ""
        kind = cleaned.get("auth_kind")
        if kind and kind != AgentEndpoint.AuthKind.NONE and not cleaned.get("credential"):
            self.add_error("credential", "Enter the credential for this kind of authentication.")
        return cleaned


@admin.register(AgentEndpoint)
class AgentEndpointAdmin(admin.ModelAdmin):
    form = AgentEndpointForm
    list_display = ["name", "protocol", "host", "enabled", "is_demo", "credential_status", "updated_at"]
    list_filter = ["protocol", "enabled", "is_demo"]
    search_fields = ["name", "slug", "base_url", "description"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["credential_status", "is_demo", "created_at", "updated_at"]
    filter_horizontal = ["allowed_groups"]
    actions = ["enable_endpoints", "disable_endpoints"]
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "protocol", "enabled", "is_demo"]}),
        ("Where it is", {"fields": ["base_url", "discovery_url", "connect_timeout", "read_timeout"]}),
        (
            "Credentials",
            {
                "fields": [
                    "auth_kind",
                    "auth_header_name",
                    "credential_status",
                    "credential",
                    "clear_credential",
                ],
                "description": "Kept on the server only: never shown in a page, sent to a browser or logged.",
            },
        ),
        ("Access and overrides", {"fields": ["allowed_groups", "overrides"]}),
        ("History", {"fields": ["created_at", "updated_at"]}),
    ]

    @admin.display(description="credential")
    def credential_status(self, obj: AgentEndpoint) -> str:
        return "set" if obj.has_credential else "not set"

    @admin.action(description="Enable the selected agents")
    def enable_endpoints(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        count = queryset.update(enabled=True)
        self.message_user(request, f"Enabled {count} agent{'s' if count != 1 else ''}.", messages.SUCCESS)

    @admin.action(description="Disable the selected agents")
    def disable_endpoints(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        count = queryset.update(enabled=False)
        self.message_user(request, f"Disabled {count} agent{'s' if count != 1 else ''}.", messages.SUCCESS)


@admin.register(CapabilitySnapshot)
class CapabilitySnapshotAdmin(admin.ModelAdmin):
    list_display = ["endpoint", "status", "short_hash", "first_seen_at", "last_seen_at"]
    list_filter = ["status", "endpoint"]
    readonly_fields = [f.name for f in CapabilitySnapshot._meta.fields]

    @admin.display(description="hash")
    def short_hash(self, obj: CapabilitySnapshot) -> str:
        return obj.content_hash[:12]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
