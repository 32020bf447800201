"""What the endpoint list shows: discovery status and its age, who may use it, and the filters.

Everything the list needs comes from one query: the newest snapshot's status and the count of
users are annotated on the queryset (`annotate_endpoints`), so a long list costs no query per row.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Case, Exists, F, Func, IntegerField, OuterRef, Q, QuerySet, Subquery, When
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.timesince import timesince

from agents_ui.models import AgentEndpoint, CapabilitySnapshot

Status = CapabilitySnapshot.Status


def _count(queryset: QuerySet) -> Subquery:
    """COUNT(*) of a correlated queryset as a scalar subquery (a plain Func: no GROUP BY)."""
    counted = queryset.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n")
    return Subquery(counted, output_field=IntegerField())


def annotate_endpoints(queryset: QuerySet[AgentEndpoint]) -> QuerySet[AgentEndpoint]:
    """latest_status, latest_seen_at, latest_hash from the newest snapshot, and users_count.

    users_count is who may use the endpoint once enabled, the rule of AgentEndpoint.usable_by():
    every active user when no group is set; otherwise active users in one of its groups, plus
    active superusers (who may use every agent).
    """
    latest = CapabilitySnapshot.objects.filter(endpoint=OuterRef("pk")).order_by("-last_seen_at", "-pk")
    active = get_user_model().objects.filter(is_active=True)
    in_a_group = Group.objects.filter(user=OuterRef("pk"), agent_endpoints=OuterRef(OuterRef("pk")))
    has_groups = AgentEndpoint.allowed_groups.through.objects.filter(agentendpoint=OuterRef("pk"))
    return queryset.annotate(
        latest_status=Subquery(latest.values("status")[:1]),
        latest_seen_at=Subquery(latest.values("last_seen_at")[:1]),
        latest_hash=Subquery(latest.values("content_hash")[:1]),
        has_groups=Exists(has_groups),
        users_count=Case(
            When(has_groups=True, then=_count(active.filter(Q(is_superuser=True) | Exists(in_a_group)))),
            default=_count(active),
            output_field=IntegerField(),
        ),
    )


def age(moment: datetime | None) -> str:
    """How long ago, in words ("just now" under a minute); nothing for a moment that never was."""
    if moment is None:
        return ""
    text = timesince(moment, timezone.now())
    return "just now" if text.startswith("0\xa0minutes") else f"{text} ago"


def status_html(status: str | None, seen_at: datetime | None) -> SafeString:
    if not status:
        return format_html('<span class="discovery-status discovery-never">{}</span>', "Never checked")
    return format_html(
        '<span class="discovery-status discovery-{}">{}</span> <span class="discovery-age">{}</span>',
        status,
        Status(status).label,
        age(seen_at),
    )


class DiscoveryStatusFilter(admin.SimpleListFilter):
    title = "discovery status"
    parameter_name = "discovery"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [*Status.choices, ("never", "Never checked")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == "never":
            return queryset.filter(latest_status__isnull=True)
        if value in Status.values:
            return queryset.filter(latest_status=value)
        return queryset


class AccessFilter(admin.SimpleListFilter):
    title = "access"
    parameter_name = "access"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("everyone", "Every signed-in user"), ("groups", "Some groups only")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "everyone":
            return queryset.filter(has_groups=False)
        if self.value() == "groups":
            return queryset.filter(has_groups=True)
        return queryset
