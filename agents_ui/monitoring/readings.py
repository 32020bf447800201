"""Gauges read from the database when /metrics is asked for: true for every server process at once."""

from __future__ import annotations

from django.db.models import Count, Exists, OuterRef

from agents_ui.models import Run
from agents_ui.monitoring.metrics import Reading

WAITING = (Run.Status.INTERRUPTED, Run.Status.AUTH_REQUIRED)


def waiting_for_person() -> dict[tuple[str], float]:
    """Conversations whose latest run ended to wait for a person (a decision, an answer, credentials),
    by agent."""
    later = Run.objects.filter(conversation=OuterRef("conversation"), created_at__gt=OuterRef("created_at"))
    rows = (
        Run.objects.filter(status__in=WAITING, superseded_at__isnull=True)
        .exclude(Exists(later))
        .values_list("conversation__endpoint__slug")
        .annotate(count=Count("pk"))
        .order_by()
    )
    return {(slug,): float(count) for slug, count in rows}


def queued_runs() -> dict[tuple, float]:
    """Runs waiting for a run worker (separate run workers; always 0 in the embedded shape, whose
    runs start in the web process as they are saved)."""
    return {(): float(Run.objects.filter(status=Run.Status.PENDING, worker="").count())}


READINGS = (
    Reading(
        "agents_ui_runs_waiting_for_person",
        "Conversations whose latest run waits for a person (a decision, an answer, credentials), by agent.",
        ["agent"],
        waiting_for_person,
    ),
    Reading(
        "agents_ui_runs_queued",
        "Runs waiting for a run worker to claim them (AGENTS_UI_RUN_WORKERS=separate).",
        [],
        queued_runs,
    ),
)
