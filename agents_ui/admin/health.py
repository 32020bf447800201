"""How each agent is doing, from its stored runs: the list's health column and the endpoint's page.

Everything is computed from Run rows (when each started, had its first event, ended, how, and the
tokens the agent reported), so it holds across server processes and restarts. The column reads a
day of runs annotated on the list's one query (`annotate_health`); the page reads the last hour,
day and week, the latest failures with the sentence people saw, and the discovery history.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery, TextChoices
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from agents_ui.admin.listing import _count, age
from agents_ui.display.usage import NOT_REPORTED, summed_lines
from agents_ui.models import AgentEndpoint, Run
from agents_ui.monitoring.runs import token_counts

RULE_WINDOW = timedelta(days=1)
RULE = (
    "Health, over the runs that ended in the last day: failing when the latest failed and at least "
    "half of them failed; degraded when the latest failed or more than one in ten failed; unused "
    "when none ended; healthy otherwise."
)
WINDOWS = (
    ("Last hour", timedelta(hours=1)),
    ("Last day", timedelta(days=1)),
    ("Last week", timedelta(days=7)),
)
RECENT_FAILURES = 10
RECENT_DISCOVERIES = 10


class Health(TextChoices):
    HEALTHY = "healthy", "Healthy"
    DEGRADED = "degraded", "Degraded"
    FAILING = "failing", "Failing"
    UNUSED = "unused", "Unused"


def health_of(ended: int, failed: int, last_failed: bool) -> Health:
    """The rule of RULE, over one window's ended and failed runs and whether the latest failed."""
    if not ended:
        return Health.UNUSED
    if last_failed and failed * 2 >= ended:
        return Health.FAILING
    if last_failed or failed * 10 > ended:
        return Health.DEGRADED
    return Health.HEALTHY


def _ended_since(since: datetime) -> QuerySet[Run]:
    return Run.objects.filter(conversation__endpoint=OuterRef("pk"), finished_at__gte=since)


def annotate_health(queryset: QuerySet[AgentEndpoint]) -> QuerySet[AgentEndpoint]:
    """day_ended, day_failed and last_status (of the latest run that ended in the window)."""
    since = timezone.now() - RULE_WINDOW
    return queryset.annotate(
        day_ended=_count(_ended_since(since)),
        day_failed=_count(_ended_since(since).filter(status=Run.Status.FAILED)),
        last_status=Subquery(_ended_since(since).order_by("-finished_at", "-pk").values("status")[:1]),
    )


def health_url(endpoint: AgentEndpoint) -> str:
    return reverse("admin:agents_ui_agentendpoint_health", args=[endpoint.pk])


def health_html(endpoint: AgentEndpoint, *, link: bool = True) -> SafeString:
    """The endpoint's health pill (from the list's annotations), saying why in its title."""
    ended, failed = getattr(endpoint, "day_ended", 0) or 0, getattr(endpoint, "day_failed", 0) or 0
    health = health_of(ended, failed, getattr(endpoint, "last_status", None) == Run.Status.FAILED)
    why = (
        f"{failed} of {ended} run{'s' if ended != 1 else ''} that ended in the last day failed"
        if ended
        else "No run ended in the last day"
    )
    pill = format_html(
        '<span class="agent-health agent-health-{}" title="{}">{}</span>', health, why, health.label
    )
    return format_html('<a href="{}">{}</a>', health_url(endpoint), pill) if link else pill


def percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile (`share` 0.5 for the median), None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass
class WindowHealth:
    """One window's runs: how many ended, how many failed, how long they took, the tokens used."""

    label: str
    ended: int = 0
    failed: int = 0
    last_failed: bool = False
    first_event: list[float] = field(default_factory=list)
    duration: list[float] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    # The token counts in the page's column order (set by the page).
    token_list: list[str] = field(default_factory=list)

    @property
    def health(self) -> Health:
        return health_of(self.ended, self.failed, self.last_failed)

    @property
    def success_rate(self) -> str:
        return f"{(self.ended - self.failed) / self.ended:.0%}" if self.ended else "none"

    def seconds(self, values: list[float], share: float) -> str:
        found = percentile(values, share)
        return "none" if found is None else f"{found:.2f} s"

    @property
    def first_event_p50(self) -> str:
        return self.seconds(self.first_event, 0.5)

    @property
    def first_event_p95(self) -> str:
        return self.seconds(self.first_event, 0.95)

    @property
    def duration_p50(self) -> str:
        return self.seconds(self.duration, 0.5)

    @property
    def duration_p95(self) -> str:
        return self.seconds(self.duration, 0.95)


def windows(endpoint: AgentEndpoint, now: datetime | None = None) -> list[WindowHealth]:
    """The last hour, day and week of the endpoint's ended runs, read in one query."""
    now = now or timezone.now()
    found = [WindowHealth(label) for label, _ in WINDOWS]
    starts = [now - span for _, span in WINDOWS]
    rows = (
        Run.objects.filter(conversation__endpoint=endpoint, finished_at__gte=min(starts))
        .order_by("finished_at", "pk")
        .values_list("status", "started_at", "first_event_at", "finished_at", "usage")
    )
    for status, started, first_event, finished, usage in rows.iterator():
        failed = status == Run.Status.FAILED
        for window, start in zip(found, starts, strict=True):
            if finished < start:
                continue
            window.ended += 1
            window.failed += failed
            window.last_failed = failed  # ordered by end: the last one seen is the latest
            if started is not None:
                window.duration.append((finished - started).total_seconds())
                if first_event is not None:
                    window.first_event.append((first_event - started).total_seconds())
            for kind, count in (token_counts(usage) or {}).items():
                window.tokens[kind] = window.tokens.get(kind, 0) + count
    return found


def recent_failures(endpoint: AgentEndpoint) -> list[dict[str, Any]]:
    failed = Run.objects.filter(
        conversation__endpoint=endpoint, status=Run.Status.FAILED, finished_at__isnull=False
    )
    return [
        {
            "run": run,
            "age": age(run.finished_at),
            "sentence": endpoint.scrub(run.error) or "No sentence was recorded.",
            "url": reverse("admin:agents_ui_run_change", args=[run.pk]),
        }
        for run in failed.order_by("-finished_at", "-pk")[:RECENT_FAILURES]
    ]


def discovery_history(endpoint: AgentEndpoint) -> list[dict[str, Any]]:
    return [
        {
            "snapshot": snapshot,
            "first_age": age(snapshot.first_seen_at),
            "last_age": age(snapshot.last_seen_at),
            "error": endpoint.scrub(snapshot.error),
        }
        for snapshot in endpoint.snapshots.order_by("-last_seen_at", "-pk")[:RECENT_DISCOVERIES]
    ]


def health_page(request: HttpRequest, endpoint: AgentEndpoint, page: dict[str, Any]) -> TemplateResponse:
    found = windows(endpoint)
    day = next(window for window in found if window.label == "Last day")
    kinds = sorted({kind for window in found for kind in window.tokens})
    for window in found:
        # A kind no run of the window reported is "not reported", never 0.
        window.token_list = [
            f"{window.tokens[kind]:,}" if kind in window.tokens else NOT_REPORTED for kind in kinds
        ]
    context = {
        **page,
        "title": f"Health: {endpoint.name}",
        "windows": found,
        "health": day.health,
        "rule": RULE,
        "token_kinds": [kind.replace("_", " ") for kind in kinds],
        "model_usage": summed_lines(
            Run.objects.filter(conversation__endpoint=endpoint, usage__isnull=False)
            .values_list("usage", flat=True)
            .iterator()
        ),
        "failures": recent_failures(endpoint),
        "discoveries": discovery_history(endpoint),
    }
    return TemplateResponse(request, "admin/agents_ui/agentendpoint/health.html", context)
