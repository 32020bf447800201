"""The endpoint's conformance report in the admin: every declared capability against what runs
showed, the probes run against it, and the drift alarm (its column and filter in the list).

The verdicts are agents_ui.conformance's; the numbers come from agents_ui.endpoints.conformance,
a bounded read whatever the number of runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from asgiref.sync import async_to_sync
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from agents_ui.admin.listing import age
from agents_ui.endpoints.conformance import report_of
from agents_ui.endpoints.discovery import discover_one
from agents_ui.models import AgentEndpoint, Probe

RECENT_PROBES = 5
# The most agents one request probes one after another (each probe takes seconds).
MOST_AT_ONCE = 5
STEP_TITLES = {
    "discovery": "Discovery",
    "text": "A plain text run",
    "upload": "An upload of a declared type",
    "cancel": "A cancel",
    "probe": "The probe",
}


def report_url(endpoint: AgentEndpoint) -> str:
    return reverse("admin:agents_ui_agentendpoint_conformance", args=[endpoint.pk])


def probe_url(endpoint: AgentEndpoint) -> str:
    return reverse("admin:agents_ui_agentendpoint_probe", args=[endpoint.pk])


def run_url(run_id: str | None) -> str:
    return reverse("admin:agents_ui_run_change", args=[run_id]) if run_id else ""


def alarm_items(endpoint: AgentEndpoint) -> list[dict[str, Any]]:
    """The drift alarm's contradictions, each with when it was raised, as the pages show them."""
    found = []
    for item in endpoint.drift or ():
        if not isinstance(item, dict):
            continue
        at = parse_datetime(str(item.get("at") or ""))
        found.append({**item, "at": at, "age": age(at)})
    return found


def alarm_html(endpoint: AgentEndpoint) -> SafeString:
    """The list's column: the alarm with its count and age, or a quiet "no drift"."""
    items = alarm_items(endpoint)
    if not items:
        return format_html('<a class="drift-none" href="{}">{}</a>', report_url(endpoint), "No drift")
    count = len(items)
    return format_html(
        '<a class="drift-alarm" data-drift="{}" href="{}" title="{}">Drift: {} contradiction{}</a> '
        '<span class="discovery-age">{}</span>',
        count,
        report_url(endpoint),
        "; ".join(f"{item.get('label', '')}: {item.get('sentence', '')}" for item in items),
        count,
        "s" if count != 1 else "",
        age(endpoint.drift_since),
    )


def alarm_detail_html(endpoint: AgentEndpoint) -> SafeString:
    """The change page's field: what contradicted and when, with the way to the report."""
    context = {
        "alarm": alarm_items(endpoint),
        "drift_since": age(endpoint.drift_since),
        "report_link": report_url(endpoint),
    }
    return mark_safe(render_to_string("admin/agents_ui/agentendpoint/drift_alarm.html", context))


class DriftFilter(admin.SimpleListFilter):
    title = "drift"
    parameter_name = "drift"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("alarm", "Contradicts its declaration"), ("none", "No drift")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "alarm":
            return queryset.filter(drift_since__isnull=False)
        if self.value() == "none":
            return queryset.filter(drift_since__isnull=True)
        return queryset


def _probes(endpoint: AgentEndpoint) -> list[dict[str, Any]]:
    found = []
    for probe in endpoint.probes.select_related("started_by")[:RECENT_PROBES]:
        steps = [
            {
                **step,
                "title": STEP_TITLES.get(step.get("step"), step.get("step")),
                "url": run_url(step.get("run")),
            }
            for step in probe.steps or ()
            if isinstance(step, dict)
        ]
        who = probe.started_by.get_username() if probe.started_by else "the schedule"
        found.append({"probe": probe, "age": age(probe.started_at), "who": who, "steps": steps})
    return found


def _when(moment: datetime | None) -> str:
    return age(moment) if moment else ""


def report_page(
    request: HttpRequest, endpoint: AgentEndpoint, page: dict[str, Any], *, can_probe: bool
) -> TemplateResponse:
    if not endpoint.snapshots.exists():  # never discovered: its declaration is read once, now
        async_to_sync(discover_one)(endpoint)
    found = report_of(endpoint)
    rows = [
        {
            "row": row,
            "last_seen": _when(row.evidence.last_seen),
            "last_refused": _when(row.evidence.last_refused),
            "runs": [
                {"item": item, "url": run_url(item.run_id), "age": age(item.at)}
                for item in row.evidence.recent
            ],
        }
        for row in found.rows
    ]
    context = {
        **page,
        "title": f"Conformance: {endpoint.name}",
        "report": found,
        "rows": rows,
        "alarm": alarm_items(endpoint),
        "drift_since": age(endpoint.drift_since),
        "probes": _probes(endpoint),
        "can_probe": can_probe,
        "probe_url": probe_url(endpoint),
        "probe_every": endpoint.probe_every,
        "probe_running": endpoint.probes.filter(outcome=Probe.Outcome.RUNNING).exists(),
    }
    return TemplateResponse(request, "admin/agents_ui/agentendpoint/conformance.html", context)
