"""Shared links, read-only, with one action: revoke. The token is never shown: it is the key."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from agents_ui.models import SharedLink


@admin.register(SharedLink)
class SharedLinkAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "agent", "audience", "created_at", "revoked_at"]
    list_filter = ["audience", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["title", "conversation__user__username"]
    list_select_related = ["conversation__user", "conversation__endpoint"]
    fields = ["title", "owner", "agent", "audience", "people_named", "turns", "created_at", "revoked_at"]
    readonly_fields = fields
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: SharedLink | None = None) -> bool:
        return False

    @admin.display(description="shared by", ordering="conversation__user__username")
    def owner(self, obj: SharedLink) -> str:
        return obj.conversation.user.get_username()

    @admin.display(description="agent", ordering="conversation__endpoint__name")
    def agent(self, obj: SharedLink) -> str:
        return obj.conversation.endpoint.name

    @admin.display(description="people named")
    def people_named(self, obj: SharedLink) -> str:
        return ", ".join(person.get_username() for person in obj.people.all()) or "-"

    @admin.display(description="turns shown")
    def turns(self, obj: SharedLink) -> int:
        return len(obj.covered)

    @admin.action(description="Revoke the selected links", permissions=["delete"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[SharedLink]) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"{count} link{'s' if count != 1 else ''} revoked.", messages.SUCCESS)
