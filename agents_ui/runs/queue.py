"""The run queue on PostgreSQL, for separate run workers (AGENTS_UI_RUN_WORKERS=separate).

A send commits the user's message and its run (pending, no worker) in one transaction: that row is
the queue. A run worker (agents_ui.runs.worker, `manage.py run_worker`) claims the oldest with
``SELECT ... FOR UPDATE SKIP LOCKED``, so two workers never take the same run, and takes a lease
on it: ``attempt`` goes up by one, ``worker`` names it, ``heartbeat_at`` says when it last said it
still drives the run. Every write a worker makes about a run checks (attempt, worker) under the
run's row lock (agents_ui.runs.writer, agents_ui.runs.live): once the lease is taken away, the old
worker's writes are refused, whatever it still believes.

The sweeper, in every worker, takes the lease back from a worker whose heartbeat is older than the
lease: a run that had not reached the agent (never begun, no event stored) is queued again once;
any other is ended as failed with INTERRUPTED, keeping every event it stored.

These functions are synchronous (the ORM on the caller's connection); workers call them in a thread.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from agents_ui.models import Run

logger = logging.getLogger(__name__)

# The page adds "What the agent said before is kept." to a failed run that said anything.
INTERRUPTED = "Interrupted: the server running it stopped."
# A run is started again at most this many times after its worker stopped before reaching the agent.
MAX_ATTEMPTS = 2
# The PostgreSQL channel on which a send (or a stop, or a run queued again) wakes the run workers at
# once; they also look every AGENTS_UI_WORKER_POLL_SECONDS, so a lost notification only delays.
CHANNEL = "agents_ui_runs"


def separate() -> bool:
    """Runs are driven by run workers, not by the web process that saved them."""
    return settings.AGENTS_UI_RUN_WORKERS == "separate"


def worker_name() -> str:
    """This process, as the runs it holds name it: host, process id and a random part."""
    return f"{socket.gethostname()[:120]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def wake_workers() -> None:
    """Tell the run workers to look now: sent when the caller's transaction commits (PostgreSQL's
    NOTIFY), so a worker never looks before the run it is told of is there."""
    if separate() and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, '')", [CHANNEL])


def queued() -> Any:
    return Run.objects.filter(status=Run.Status.PENDING, worker="")


def ahead_of(run: Run) -> int:
    """How many queued runs a worker will take before this one (0: it is next)."""
    return (
        queued()
        .filter(Q(created_at__lt=run.created_at) | Q(created_at=run.created_at, pk__lt=run.pk))
        .count()
    )


def full() -> bool:
    """The queue holds AGENTS_UI_QUEUE_MAX runs: a new send is refused until workers catch up."""
    bound = settings.AGENTS_UI_QUEUE_MAX
    return queued()[: bound + 1].count() >= bound


@dataclass(frozen=True)
class Lease:
    """A run this worker holds: its writes are fenced by (attempt, worker)."""

    run_id: str
    attempt: int
    worker: str


def claim(worker: str, limit: int) -> list[Lease]:
    """Take up to `limit` queued runs, oldest first; each is taken by one worker only."""
    if limit <= 0:
        return []
    with transaction.atomic():
        ids = list(
            queued()
            .select_for_update(skip_locked=True)
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)[:limit]
        )
        if not ids:
            return []
        Run.objects.filter(pk__in=ids).update(
            attempt=F("attempt") + 1, worker=worker, heartbeat_at=timezone.now()
        )
        rows = Run.objects.filter(pk__in=ids).order_by("created_at", "pk").values_list("pk", "attempt")
        return [Lease(str(pk), attempt, worker) for pk, attempt in rows]


@dataclass(frozen=True)
class Beat:
    """What a heartbeat learned of this worker's runs."""

    lost: set[str]  # taken away (swept, or claimed again elsewhere): stop without writing
    stopped: dict[str, str]  # stopped by a person from a web process: run id -> what it says


def heartbeat(leases: list[Lease], *, beat: bool = True) -> Beat:
    """Which runs this worker still holds, which were stopped; and (`beat`) the lease renewed."""
    if not leases:
        return Beat(set(), {})
    rows = {
        str(pk): (attempt, worker, status, error)
        for pk, attempt, worker, status, error in Run.objects.filter(
            pk__in=[lease.run_id for lease in leases]
        ).values_list("pk", "attempt", "worker", "status", "error")
    }
    lost, stopped, held = set(), {}, []
    for lease in leases:
        row = rows.get(lease.run_id)
        if row is None or (row[0], row[1]) != (lease.attempt, lease.worker):
            lost.add(lease.run_id)
            continue
        if row[2] == Run.Status.CANCELLED:
            stopped[lease.run_id] = row[3]
        held.append(lease)
    if beat and held:
        fence = Q()
        for lease in held:
            fence |= Q(pk=lease.run_id, attempt=lease.attempt, worker=lease.worker)
        Run.objects.filter(fence).update(heartbeat_at=timezone.now())
    return Beat(lost, stopped)


def reached_agent(run: Run) -> bool:
    """The run may have called the agent: begun by a worker, or an event stored."""
    return run.started_at is not None or run.event_count > 0 or run.events.exists()


def take_back(run_id: str, *, attempt: int, worker: str, reason: str = INTERRUPTED) -> str:
    """The lease of (attempt, worker) on a run taken away: queued again once if it had not reached
    the agent, otherwise ended as failed with `reason`. Returns "requeued", "interrupted" or ""
    (the lease had already moved on, or the run had ended)."""
    with transaction.atomic():
        run = (
            Run.objects.select_for_update()
            .filter(pk=run_id, attempt=attempt, worker=worker)
            .exclude(status__in=Run.FINISHED)
            .first()
        )
        if run is None:
            return ""
        if not reached_agent(run) and run.attempt < MAX_ATTEMPTS:
            Run.objects.filter(pk=run.pk).update(status=Run.Status.PENDING, worker="", heartbeat_at=None)
            wake_workers()
            logger.warning(
                "run %s: worker %s stopped before reaching the agent; queued again", run.pk, worker
            )
            return "requeued"
        Run.objects.filter(pk=run.pk).update(
            status=Run.Status.FAILED, error=reason, finished_at=timezone.now(), worker="", heartbeat_at=None
        )
        logger.warning("run %s: worker %s stopped while driving it; ended as interrupted", run.pk, worker)
        return "interrupted"


def sweep(lease_seconds: float | None = None) -> dict[str, str]:
    """Take back every run whose worker's heartbeat is older than the lease: run id -> outcome."""
    lease_seconds = settings.AGENTS_UI_WORKER_LEASE_SECONDS if lease_seconds is None else lease_seconds
    stale = timezone.now() - timedelta(seconds=lease_seconds)
    found = (
        Run.objects.exclude(worker="")
        .exclude(status__in=Run.FINISHED)
        .filter(Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True))
        .values_list("pk", "attempt", "worker")
    )
    outcomes = {}
    for pk, attempt, worker in list(found):
        outcome = take_back(str(pk), attempt=attempt, worker=worker)
        if outcome:
            outcomes[str(pk)] = outcome
    return outcomes
