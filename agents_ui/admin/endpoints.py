"""The admin for agent endpoints: register, check, compare and govern them.

Admins are the second kind of user, so this is a product surface: the list says how each agent is
doing (discovery status and its age, who may use it), actions test and re-discover with messages
that say what happened, and an endpoint's page has its history of declarations, a diff between any
two, per-control overrides and a preview of the workspace. The credential is write-only throughout:
it never appears in a page, a message or a log line.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import async_to_sync
from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.db.models import (
    Case,
    Exists,
    F,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    When,
)
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince
from django.views.decorators.http import require_POST

from agents_ui import discovery as discovery_service
from agents_ui.decisions import CONTROL_LABELS, CONTROL_NAMES
from agents_ui.http import agent_http_client
from agents_ui.models import AgentEndpoint, CapabilitySnapshot
from agents_ui.snapshot_diff import Declaration, diff_declarations

Status = CapabilitySnapshot.Status

# An action on more agents than this reports a summary, and a line only for those needing a look.
SUMMARY_AFTER = 3

# --- Overrides: one select per control -------------------------------------------------------------

OVERRIDE_CHOICES = [
    ("", "Follow the agent"),
    ("hide", "Force hidden"),
    ("allow", "Allow where not declared"),
]
# The identity card is always shown (decisions.py), so it has nothing to override.
OVERRIDABLE_CONTROLS: tuple[str, ...] = tuple(name for name in CONTROL_NAMES if name != "identity")


def override_field_name(control: str) -> str:
    return f"override_{control.replace('-', '_')}"


OVERRIDE_FIELDS: tuple[str, ...] = tuple(override_field_name(name) for name in OVERRIDABLE_CONTROLS)


def _with_override_fields(form_class: type[forms.ModelForm]) -> type[forms.ModelForm]:
    """Declare one select per control, from the decision module's list, so a new control gets one.

    Declared on the class (not in __init__) because the admin builds its form from the fieldsets
    and only accepts names the form class declares.
    """
    for control in OVERRIDABLE_CONTROLS:
        field = forms.ChoiceField(
            label=CONTROL_LABELS[control], choices=OVERRIDE_CHOICES, required=False, initial=""
        )
        form_class.base_fields[override_field_name(control)] = field
        form_class.declared_fields[override_field_name(control)] = field
    return form_class


@_with_override_fields
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
            "connect_timeout", "read_timeout", "auth_kind", "auth_header_name", "allowed_groups",
        ]  # fmt: skip

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        current = self.instance.overrides or {}
        for control in OVERRIDABLE_CONTROLS:
            name = override_field_name(control)
            if name in self.fields and current.get(control) in {"hide", "allow"}:
                self.initial[name] = current[control]

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
        if any(name in self.fields for name in OVERRIDE_FIELDS):
            # Only known controls with a real choice are stored: "follow the agent" is no entry.
            self.instance.overrides = {
                control: cleaned[override_field_name(control)]
                for control in OVERRIDABLE_CONTROLS
                if cleaned.get(override_field_name(control)) in {"hide", "allow"}
            }
        return cleaned


# --- Discovery status and "who may use it", for the whole list in one query ------------------------


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


def _age(moment) -> str:
    if moment is None:
        return ""
    text = timesince(moment, timezone.now())
    return "just now" if text.startswith("0\xa0minutes") else f"{text} ago"


def status_html(status: str | None, seen_at) -> str:
    if not status:
        return format_html('<span class="discovery-status discovery-never">{}</span>', "Never checked")
    return format_html(
        '<span class="discovery-status discovery-{}">{}</span> <span class="discovery-age">{}</span>',
        status,
        Status(status).label,
        _age(seen_at),
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


# --- Talking to the agents from the admin ----------------------------------------------------------


@dataclass(frozen=True)
class ConnectionCheck:
    endpoint: AgentEndpoint
    discovery: discovery_service.Discovery
    elapsed_ms: int

    @property
    def content_hash(self) -> str:
        # The same hash the snapshot of this answer has (or will have), so the admin can match them.
        return discovery_service.content_hash(self.discovery)


async def check_connections(endpoints: Iterable[AgentEndpoint]) -> list[ConnectionCheck]:
    """Ask each discovery route once, now, and time it. Nothing is recorded or cached: a check."""

    async def one(endpoint: AgentEndpoint, client) -> ConnectionCheck:
        started = time.perf_counter()
        found = await discovery_service.probe(endpoint, client)
        return ConnectionCheck(endpoint, found, round((time.perf_counter() - started) * 1000))

    async with agent_http_client() as client:
        return list(await asyncio.gather(*(one(endpoint, client) for endpoint in endpoints)))


def _what_it_declared(endpoint: AgentEndpoint) -> str:
    return "a policy" if endpoint.protocol == AgentEndpoint.Protocol.EXTERNAL else "capabilities"


def scrub(text: str, endpoint: AgentEndpoint) -> str:
    return endpoint.scrub(text)


def scrub_payload(payload: Any, endpoint: AgentEndpoint) -> Any:
    return endpoint.scrub_payload(payload)


def connection_message(check: ConnectionCheck) -> tuple[int, str]:
    endpoint, found, ms = check.endpoint, check.discovery, check.elapsed_ms
    if found.status == Status.UNREACHABLE:
        return messages.ERROR, scrub(f"{endpoint.name}: unreachable after {ms} ms: {found.error}", endpoint)
    head = f"{endpoint.name}: reachable in {ms} ms; "
    if found.status == Status.DECLARED:
        text = f"declared {_what_it_declared(endpoint)} (hash {check.content_hash[:8]})"
        return messages.SUCCESS, head + text
    if found.status == Status.NONE:
        text = f"no discovery at {found.source_url} (capabilities unknown, a normal state)"
        return messages.WARNING, head + text
    return messages.WARNING, scrub(head + f"invalid declaration: {found.error}", endpoint)


def rediscovery_message(
    endpoint: AgentEndpoint, found: discovery_service.Discovery, since
) -> tuple[int, str]:
    snapshot = endpoint.snapshots.order_by("-last_seen_at", "-pk").first()
    short = snapshot.content_hash[:8] if snapshot else ""
    if snapshot is not None and snapshot.first_seen_at >= since:
        news = "a new snapshot was recorded"
    elif snapshot is not None:
        news = f"unchanged since {_age(snapshot.first_seen_at)}"
    else:
        news = "nothing recorded"
    if found.status == Status.DECLARED:
        return (
            messages.SUCCESS,
            f"{endpoint.name}: declared {_what_it_declared(endpoint)} (hash {short}); {news}.",
        )
    if found.status == Status.NONE:
        return messages.WARNING, f"{endpoint.name}: no discovery (capabilities unknown); {news}."
    if found.status == Status.INVALID:
        return messages.WARNING, scrub(
            f"{endpoint.name}: invalid declaration: {found.error}; {news}.", endpoint
        )
    return messages.ERROR, scrub(f"{endpoint.name}: unreachable: {found.error}; {news}.", endpoint)


# --- The admin --------------------------------------------------------------------------------------


@admin.register(AgentEndpoint)
class AgentEndpointAdmin(admin.ModelAdmin):
    form = AgentEndpointForm
    change_form_template = "admin/agents_ui/agentendpoint/change_form.html"
    list_display = [
        "name",
        "protocol",
        "host",
        "enabled",
        "discovery_status",
        "who_may_use",
        "credential_status",
    ]
    list_display_links = ["name"]
    list_filter = [DiscoveryStatusFilter, "protocol", "enabled", AccessFilter, "is_demo", "allowed_groups"]
    search_fields = ["name", "slug", "base_url", "description"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = [
        "credential_status",
        "is_demo",
        "latest_discovery",
        "access_summary",
        "created_at",
        "updated_at",
    ]
    filter_horizontal = ["allowed_groups"]
    actions = ["test_connection", "rediscover_now", "enable_endpoints", "disable_endpoints"]
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "protocol", "enabled", "is_demo"]}),
        ("What it declares", {"fields": ["latest_discovery"]}),
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
        (
            "Who may use it",
            {
                "fields": ["access_summary", "allowed_groups"],
                "description": "No group selected: every signed-in user. Users outside the groups "
                "do not see the agent at all (its page answers “not found”).",
            },
        ),
        (
            "Overrides",
            {
                "fields": list(OVERRIDE_FIELDS),
                "classes": ["overrides"],
                "description": "Per control: follow what the agent declares, force the control hidden, "
                "or allow it where the agent declares nothing. An explicit “not supported” from the "
                "agent always wins over “allow”. The workspace's explain panel names each override.",
            },
        ),
        ("Record", {"fields": ["created_at", "updated_at"]}),
    ]

    class Media:
        css = {"all": ["agents_ui/admin.css"]}

    def get_fieldsets(self, request: HttpRequest, obj: AgentEndpoint | None = None) -> list:
        if obj is None:  # nothing discovered yet for a new endpoint
            return [fs for fs in self.fieldsets if fs[0] != "What it declares"]
        return self.fieldsets

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentEndpoint]:
        return annotate_endpoints(super().get_queryset(request))

    # --- list columns ---

    @admin.display(description="stored credential")
    def credential_status(self, obj: AgentEndpoint) -> str:
        return "set" if obj.has_credential else "not set"

    @admin.display(description="discovery", ordering="latest_seen_at")
    def discovery_status(self, obj: AgentEndpoint) -> str:
        return status_html(getattr(obj, "latest_status", None), getattr(obj, "latest_seen_at", None))

    @admin.display(description="users", ordering="users_count")
    def who_may_use(self, obj: AgentEndpoint) -> str:
        count = getattr(obj, "users_count", None) or 0
        users = f"{count} user{'s' if count != 1 else ''}"
        return f"everyone ({users})" if not getattr(obj, "has_groups", False) else users

    # --- change page read-only fields ---

    @admin.display(description="latest discovery")
    def latest_discovery(self, obj: AgentEndpoint) -> str:
        snapshot = obj.snapshots.order_by("-last_seen_at", "-pk").first()
        history = reverse("admin:agents_ui_agentendpoint_declarations", args=[obj.pk])
        count = obj.snapshots.count()
        link = format_html(
            '<a href="{}">History of declarations ({} snapshot{})</a>',
            history,
            count,
            "s" if count != 1 else "",
        )
        if snapshot is None:
            return format_html("{} · not discovered yet: use “Re-discover now”.", status_html(None, None))
        error = (
            format_html('<div class="discovery-error">{}</div>', scrub(snapshot.error, obj))
            if snapshot.error
            else ""
        )
        return format_html(
            "{} · hash <code>{}</code> · from <code>{}</code><br>{}{}",
            status_html(snapshot.status, snapshot.last_seen_at),
            snapshot.content_hash[:8],
            snapshot.source,
            link,
            error,
        )

    @admin.display(description="who may use it")
    def access_summary(self, obj: AgentEndpoint) -> str:
        if obj.pk is None:
            return "every signed-in user"
        annotated = annotate_endpoints(AgentEndpoint.objects.filter(pk=obj.pk)).first()
        count = annotated.users_count if annotated else 0
        users = f"{count} active user{'s' if count != 1 else ''}"
        groups = list(obj.allowed_groups.values_list("name", flat=True))
        state = "" if obj.enabled else " once enabled (it is disabled now)"
        if not groups:
            return f"Every signed-in user: {users}{state}."
        names = format_html_join(", ", "{}", ((name,) for name in groups))
        return format_html("{}{} in {}, and superusers.", users, state, names)

    # --- actions ---

    def _report(self, request: HttpRequest, verb: str, results: list[tuple[int, str]]) -> None:
        """One message per agent for a few; for many, a summary and a line per agent needing a look."""
        if len(results) <= SUMMARY_AFTER:
            for level, text in results:
                self.message_user(request, text, level)
            return
        fine = sum(1 for level, _ in results if level == messages.SUCCESS)
        self.message_user(
            request,
            f"{verb} {len(results)} agents: {fine} declared what they can do"
            + (f", {len(results) - fine} need a look (below)." if fine < len(results) else "."),
            messages.SUCCESS if fine == len(results) else messages.WARNING,
        )
        for level, text in results:
            if level != messages.SUCCESS:
                self.message_user(request, text, level)

    @admin.action(description="Test connection to the selected agents", permissions=["view"])
    def test_connection(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        checks = async_to_sync(check_connections)(list(queryset))
        self._report(request, "Tested", [connection_message(check) for check in checks])

    @admin.action(description="Re-discover the selected agents now", permissions=["change"])
    def rediscover_now(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        endpoints = list(queryset)
        since = timezone.now()
        found = async_to_sync(discovery_service.discover)(endpoints, refresh=True)
        results = [rediscovery_message(endpoint, found[endpoint.pk], since) for endpoint in endpoints]
        self._report(request, "Re-discovered", results)

    @admin.action(description="Enable the selected agents", permissions=["change"])
    def enable_endpoints(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        count = queryset.update(enabled=True)
        self.message_user(request, f"Enabled {count} agent{'s' if count != 1 else ''}.", messages.SUCCESS)

    @admin.action(description="Disable the selected agents", permissions=["change"])
    def disable_endpoints(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        count = queryset.update(enabled=False)
        self.message_user(request, f"Disabled {count} agent{'s' if count != 1 else ''}.", messages.SUCCESS)

    # --- the endpoint's own pages ---

    def get_urls(self) -> list:
        wrap = self.admin_site.admin_view
        name = f"{self.opts.app_label}_{self.opts.model_name}"
        return [
            path("<path:object_id>/test-connection/", wrap(self.test_connection_view), name=f"{name}_test"),
            path("<path:object_id>/rediscover/", wrap(self.rediscover_view), name=f"{name}_rediscover"),
            path(
                "<path:object_id>/history-of-declarations/",
                wrap(self.declarations_view),
                name=f"{name}_declarations",
            ),
            path("<path:object_id>/diff/", wrap(self.diff_view), name=f"{name}_diff"),
            *super().get_urls(),
        ]

    def _endpoint(self, request: HttpRequest, object_id: str, *, change: bool = False) -> AgentEndpoint:
        endpoint = self.get_object(request, object_id)
        if endpoint is None:
            raise Http404("No such agent endpoint.")
        allowed = (
            self.has_change_permission(request, endpoint)
            if change
            else self.has_view_permission(request, endpoint)
        )
        if not allowed:
            raise PermissionDenied
        return endpoint

    def _change_url(self, endpoint: AgentEndpoint) -> str:
        return reverse("admin:agents_ui_agentendpoint_change", args=[endpoint.pk])

    def test_connection_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return require_POST(self._test_connection)(request, object_id)

    def _test_connection(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self._endpoint(request, object_id)
        self.test_connection(request, AgentEndpoint.objects.filter(pk=endpoint.pk))
        return HttpResponseRedirect(self._change_url(endpoint))

    def rediscover_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return require_POST(self._rediscover)(request, object_id)

    def _rediscover(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self._endpoint(request, object_id, change=True)
        self.rediscover_now(request, AgentEndpoint.objects.filter(pk=endpoint.pk))
        return HttpResponseRedirect(self._change_url(endpoint))

    def _page(self, request: HttpRequest, endpoint: AgentEndpoint, title: str, **context) -> dict:
        return {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": endpoint,
            "title": title,
            "subtitle": endpoint.name,
            "media": self.media,
            "has_view_permission": self.has_view_permission(request, endpoint),
            "history_url": reverse("admin:agents_ui_agentendpoint_declarations", args=[endpoint.pk]),
            "diff_url": reverse("admin:agents_ui_agentendpoint_diff", args=[endpoint.pk]),
            "change_url": self._change_url(endpoint),
            **context,
        }

    def declarations_view(self, request: HttpRequest, object_id: str) -> TemplateResponse:
        endpoint = self._endpoint(request, object_id)
        snapshots = list(endpoint.snapshots.order_by("-last_seen_at", "-pk"))
        rows = [
            {
                "snapshot": snapshot,
                "number": len(snapshots) - index,
                "pretty": json.dumps(scrub_payload(snapshot.payload, endpoint), indent=2, sort_keys=True)
                if snapshot.payload is not None
                else "",
                "error": scrub(snapshot.error, endpoint),
                "first_age": _age(snapshot.first_seen_at),
                "last_age": _age(snapshot.last_seen_at),
            }
            for index, snapshot in enumerate(snapshots)
        ]
        context = self._page(
            request,
            endpoint,
            f"History of declarations: {endpoint.name}",
            rows=rows,
            default_a=snapshots[1].pk if len(snapshots) > 1 else None,
            default_b=snapshots[0].pk if snapshots else None,
        )
        return TemplateResponse(request, "admin/agents_ui/agentendpoint/declarations.html", context)

    def diff_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self._endpoint(request, object_id)
        history_url = reverse("admin:agents_ui_agentendpoint_declarations", args=[endpoint.pk])
        picked = []
        for key in ("a", "b"):
            try:
                picked.append(endpoint.snapshots.get(pk=int(request.GET.get(key, ""))))
            except (ValueError, CapabilitySnapshot.DoesNotExist):
                self.message_user(request, "Pick two snapshots of this agent to compare.", messages.WARNING)
                return HttpResponseRedirect(history_url)
        if picked[0].pk == picked[1].pk:
            self.message_user(request, "Pick two different snapshots to compare.", messages.WARNING)
            return HttpResponseRedirect(history_url)
        old, new = sorted(picked, key=lambda s: (s.first_seen_at, s.pk))
        diff = diff_declarations(
            Declaration(endpoint.protocol, old.status, scrub_payload(old.payload, endpoint)),
            Declaration(endpoint.protocol, new.status, scrub_payload(new.payload, endpoint)),
            overrides=endpoint.overrides or {},
        )
        swap = f"{reverse('admin:agents_ui_agentendpoint_diff', args=[endpoint.pk])}?" + urlencode(
            {"a": old.pk, "b": new.pk}
        )
        context = self._page(
            request,
            endpoint,
            f"What changed: {endpoint.name}",
            diff=diff,
            old=old,
            new=new,
            permalink=swap,
            overrides=endpoint.overrides or {},
        )
        return TemplateResponse(request, "admin/agents_ui/agentendpoint/diff.html", context)

    def render_change_form(self, request: HttpRequest, context: dict, *args, **kwargs) -> HttpResponse:
        obj = kwargs.get("obj")
        if obj is not None and obj.pk:
            context.update(
                test_url=reverse("admin:agents_ui_agentendpoint_test", args=[obj.pk]),
                rediscover_url=reverse("admin:agents_ui_agentendpoint_rediscover", args=[obj.pk]),
                declarations_url=reverse("admin:agents_ui_agentendpoint_declarations", args=[obj.pk]),
                preview_url=f"{reverse('workspace', kwargs={'slug': obj.slug})}?preview=1",
                can_rediscover=self.has_change_permission(request, obj),
            )
        return super().render_change_form(request, context, *args, **kwargs)


@admin.register(CapabilitySnapshot)
class CapabilitySnapshotAdmin(admin.ModelAdmin):
    """Snapshots across all endpoints, read-only; an endpoint's own history page is the usual way in."""

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
    def status_pill(self, obj: CapabilitySnapshot) -> str:
        return status_html(obj.status, obj.last_seen_at)

    @admin.display(description="hash")
    def short_hash(self, obj: CapabilitySnapshot) -> str:
        return obj.content_hash[:12]

    @admin.display(description="declaration")
    def declaration(self, obj: CapabilitySnapshot) -> str:
        if obj.payload is None:
            return "-"
        text = json.dumps(scrub_payload(obj.payload, obj.endpoint), indent=2, sort_keys=True)
        return format_html('<pre class="declaration-json">{}</pre>', text)

    @admin.display(description="error")
    def error_text(self, obj: CapabilitySnapshot) -> str:
        # What the agent answered is shown, minus a credential it may have echoed back.
        return scrub(obj.error, obj.endpoint) or "-"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    class Media:
        css = {"all": ["agents_ui/admin.css"]}
