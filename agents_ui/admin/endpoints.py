"""The agent endpoints' admin: the list, the change page with its tools, and the actions.

What each part shows or asks lives beside this module (`forms`, `listing`, `checks`, `history`);
this one puts them together and says who may do what: viewing an endpoint lets staff test its
connection and read its history, changing it is needed to re-discover, enable or disable it.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.views.decorators.http import require_POST

from agents_ui.admin import checks, conformance, health, history
from agents_ui.admin.forms import OVERRIDE_FIELDS, AgentEndpointForm
from agents_ui.admin.listing import AccessFilter, DiscoveryStatusFilter, annotate_endpoints, status_html
from agents_ui.capabilities import read_card
from agents_ui.endpoints import discovery as discovery_service
from agents_ui.models import AgentEndpoint, CapabilitySnapshot
from agents_ui.runs import probe
from agents_ui.sdk import AgentError
from agents_ui.sdk.a2a.client import normalised_card

# Fields that take a credential in: only for those who may change the endpoint, never read back.
WRITE_ONLY_FIELDS = frozenset({"credential", "clear_credential"})


@admin.register(AgentEndpoint)
class AgentEndpointAdmin(admin.ModelAdmin):
    form = AgentEndpointForm
    change_form_template = "admin/agents_ui/agentendpoint/change_form.html"
    change_list_template = "admin/agents_ui/agentendpoint/change_list.html"
    list_display = [
        "name",
        "protocol",
        "host",
        "enabled",
        "health_status",
        "drift_alarm",
        "discovery_status",
        "who_may_use",
        "credential_status",
    ]
    list_display_links = ["name"]
    list_filter = [
        DiscoveryStatusFilter, conformance.DriftFilter, "protocol", "enabled", AccessFilter, "is_demo",
        "allowed_groups",
    ]  # fmt: skip
    search_fields = ["name", "slug", "base_url", "description"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = [
        "required_credentials",
        "credential_status",
        "is_demo",
        "latest_discovery",
        "drift_detail",
        "access_summary",
        "created_at",
        "updated_at",
    ]
    filter_horizontal = ["allowed_groups"]
    actions = ["test_connection", "rediscover_now", "probe_now", "enable_endpoints", "disable_endpoints"]
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "protocol", "enabled", "is_demo"]}),
        ("What it declares", {"fields": ["latest_discovery"]}),
        (
            "Conformance",
            {
                "fields": ["drift_detail", "probe_every"],
                "description": "What its runs and probes showed against what it declares. The probe only "
                "takes read-only steps (docs/security.md, “The conformance probe”).",
            },
        ),
        (
            "Where it is",
            {"fields": ["base_url", "discovery_url", "connect_timeout", "read_timeout", "remote_images"]},
        ),
        (
            "Credentials",
            {
                "fields": [
                    "required_credentials",
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
            "Card signing keys",
            {
                "fields": ["signature_policy", "signing_keys", "signing_keys_url", "signer_name"],
                "description": "A2A: the keys its Agent Card must be signed with. Only these are "
                "trusted: a key or key set URL the card itself names is never fetched.",
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
        if obj is None:  # nothing discovered yet for a new endpoint, nothing run
            return [
                fs if fs[0] != "Conformance" else ("Conformance", {"fields": ["probe_every"]})
                for fs in self.fieldsets
                if fs[0] != "What it declares"
            ]
        if not self.has_change_permission(request, obj):
            # The admin shows every field of a page one may only view as its stored value: the
            # credential's would be the secret itself. "set" / "not set" is all they see.
            return [
                (name, {**options, "fields": [f for f in options["fields"] if f not in WRITE_ONLY_FIELDS]})
                for name, options in self.fieldsets
            ]
        return self.fieldsets

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentEndpoint]:
        return health.annotate_health(annotate_endpoints(super().get_queryset(request)))

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        return super().changelist_view(request, {"health_rule": health.RULE, **(extra_context or {})})

    # --- list columns ---

    @admin.display(description="stored credential")
    def credential_status(self, obj: AgentEndpoint) -> str:
        return "set" if obj.has_credential else "not set"

    @admin.display(description="health")
    def health_status(self, obj: AgentEndpoint) -> SafeString:
        return health.health_html(obj)

    @admin.display(description="drift", ordering="drift_since")
    def drift_alarm(self, obj: AgentEndpoint) -> SafeString:
        return conformance.alarm_html(obj)

    @admin.display(description="drift alarm")
    def drift_detail(self, obj: AgentEndpoint) -> SafeString:
        return conformance.alarm_detail_html(obj)

    @admin.display(description="discovery", ordering="latest_seen_at")
    def discovery_status(self, obj: AgentEndpoint) -> SafeString:
        return status_html(getattr(obj, "latest_status", None), getattr(obj, "latest_seen_at", None))

    @admin.display(description="users", ordering="users_count")
    def who_may_use(self, obj: AgentEndpoint) -> str:
        count = getattr(obj, "users_count", None) or 0
        users = f"{count} user{'s' if count != 1 else ''}"
        return f"everyone ({users})" if not getattr(obj, "has_groups", False) else users

    # --- change page read-only fields ---

    @admin.display(description="latest discovery")
    def latest_discovery(self, obj: AgentEndpoint) -> SafeString:
        snapshot = obj.snapshots.order_by("-last_seen_at", "-pk").first()
        count = obj.snapshots.count()
        link = format_html(
            '<a href="{}">History of declarations ({} snapshot{})</a>',
            history.history_url(obj),
            count,
            "s" if count != 1 else "",
        )
        if snapshot is None:
            return format_html("{} · not discovered yet: use “Re-discover now”.", status_html(None, None))
        error = (
            format_html('<div class="discovery-error">{}</div>', obj.scrub(snapshot.error))
            if snapshot.error
            else ""
        )
        return format_html(
            "{} · hash <code>{}</code> · from <code>{}</code>{}<br>{}{}",
            status_html(snapshot.status, snapshot.last_seen_at),
            snapshot.content_hash[:8],
            snapshot.source,
            history.signature_html(obj, snapshot),
            link,
            error,
        )

    @admin.display(description="what the agent requires")
    def required_credentials(self, obj: AgentEndpoint) -> SafeString | str:
        """An A2A card's security schemes: the credential an admin must set below."""
        schemes = required_credentials(obj)
        if schemes is None:
            return "Its declaration names no security scheme."
        if not schemes:
            return "Its Agent Card declares no security scheme: no credential is needed."
        return format_html(
            '<ul class="required-credentials">{}</ul>',
            format_html_join(
                "",
                "<li><code>{}</code>: {}{}{}</li>",
                (
                    (
                        c.name,
                        c.kind,
                        f" ({c.detail})" if c.detail else "",
                        f" — {c.description}" if c.description else "",
                    )
                    for c in schemes
                ),
            ),
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
        for level, text in checks.summed_up(verb, results):
            self.message_user(request, text, level)

    @admin.action(description="Test connection to the selected agents", permissions=["view"])
    def test_connection(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        found = async_to_sync(checks.check_connections)(list(queryset))
        self._report(request, "Tested", [checks.connection_message(check) for check in found])

    @admin.action(description="Re-discover the selected agents now", permissions=["change"])
    def rediscover_now(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        endpoints = list(queryset)
        since = timezone.now()
        found = async_to_sync(discovery_service.discover)(endpoints, refresh=True)
        results = [checks.rediscovery_message(endpoint, found[endpoint.pk], since) for endpoint in endpoints]
        self._report(request, "Re-discovered", results)

    @admin.action(description="Probe the selected agents now (read-only steps)", permissions=["change"])
    def probe_now(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        for endpoint in queryset[: conformance.MOST_AT_ONCE]:
            found = async_to_sync(probe.run_probe)(endpoint, request.user)
            level = messages.SUCCESS if found.outcome == found.Outcome.PASSED else messages.WARNING
            self.message_user(
                request, f"Probed {endpoint.name}: {found.get_outcome_display().lower()}.", level
            )
        if queryset.count() > conformance.MOST_AT_ONCE:
            self.message_user(
                request,
                f"Only the first {conformance.MOST_AT_ONCE} were probed: select fewer.",
                messages.WARNING,
            )

    @admin.action(description="Enable the selected agents", permissions=["change"])
    def enable_endpoints(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        count = queryset.update(enabled=True)
        self.message_user(request, f"Enabled {count} agent{'s' if count != 1 else ''}.", messages.SUCCESS)

    @admin.action(description="Disable the selected agents", permissions=["change"])
    def disable_endpoints(self, request: HttpRequest, queryset: QuerySet[AgentEndpoint]) -> None:
        count = queryset.update(enabled=False)
        self.message_user(request, f"Disabled {count} agent{'s' if count != 1 else ''}.", messages.SUCCESS)

    # --- the endpoint's own pages ---

    def get_urls(self) -> list[URLPattern]:
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
            path("<path:object_id>/health/", wrap(self.health_view), name=f"{name}_health"),
            path("<path:object_id>/conformance/", wrap(self.conformance_view), name=f"{name}_conformance"),
            path("<path:object_id>/probe/", wrap(self.probe_view), name=f"{name}_probe"),
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

    def _page(self, request: HttpRequest, endpoint: AgentEndpoint) -> dict[str, Any]:
        """What every page of one endpoint has: the admin's frame and the links between its pages."""
        return {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": endpoint,
            "subtitle": endpoint.name,
            "media": self.media,
            "has_view_permission": self.has_view_permission(request, endpoint),
            "history_url": history.history_url(endpoint),
            "diff_url": history.diff_url(endpoint),
            "health_url": health.health_url(endpoint),
            "change_url": self._change_url(endpoint),
        }

    def declarations_view(self, request: HttpRequest, object_id: str) -> TemplateResponse:
        endpoint = self._endpoint(request, object_id)
        return history.declarations_page(request, endpoint, self._page(request, endpoint))

    def diff_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self._endpoint(request, object_id)
        return history.diff_page(request, endpoint, self._page(request, endpoint))

    def health_view(self, request: HttpRequest, object_id: str) -> TemplateResponse:
        endpoint = self._endpoint(request, object_id)
        return health.health_page(request, endpoint, self._page(request, endpoint))

    def conformance_view(self, request: HttpRequest, object_id: str) -> TemplateResponse:
        endpoint = self._endpoint(request, object_id)
        can_probe = self.has_change_permission(request, endpoint)
        return conformance.report_page(request, endpoint, self._page(request, endpoint), can_probe=can_probe)

    def probe_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return require_POST(self._probe)(request, object_id)

    def _probe(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Probe now: read-only steps only (agents_ui.runs.probe), for those who may change it."""
        endpoint = self._endpoint(request, object_id, change=True)
        self.probe_now(request, AgentEndpoint.objects.filter(pk=endpoint.pk))
        return HttpResponseRedirect(conformance.report_url(endpoint))

    def render_change_form(self, request: HttpRequest, context: dict, *args, **kwargs) -> HttpResponse:
        obj = kwargs.get("obj")
        if obj is not None and obj.pk:
            context.update(
                test_url=reverse("admin:agents_ui_agentendpoint_test", args=[obj.pk]),
                rediscover_url=reverse("admin:agents_ui_agentendpoint_rediscover", args=[obj.pk]),
                declarations_url=history.history_url(obj),
                health_url=health.health_url(obj),
                conformance_url=conformance.report_url(obj),
                probe_url=conformance.probe_url(obj),
                preview_url=f"{reverse('workspace', kwargs={'slug': obj.slug})}?preview=1",
                can_rediscover=self.has_change_permission(request, obj),
            )
        return super().render_change_form(request, context, *args, **kwargs)


def required_credentials(endpoint: AgentEndpoint) -> tuple[Any, ...] | None:
    """The security schemes the endpoint's last stored Agent Card declares (None: no card says)."""
    if endpoint.protocol != AgentEndpoint.Protocol.A2A:
        return None
    payload = (
        endpoint.snapshots.filter(status=CapabilitySnapshot.Status.DECLARED)
        .order_by("-last_seen_at")
        .values_list("payload", flat=True)
        .first()
    )
    if not isinstance(payload, dict):
        return None
    try:
        profile = read_card(normalised_card(payload), payload)
    except AgentError:
        return None
    return profile.credentials.value or ()
