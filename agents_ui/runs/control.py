"""A person's stop, from whichever web process served it, reaching whichever process drives the run.

One function each way, so that another carrier (a Redis pub/sub channel) can be added beside the
database without the views or the worker changing:

- `request_stop` (web processes): a run this process drives is stopped here and now; any other is
  recorded stopped in the database (its status is the message), which frees the thread at once.
- `stops_among` (run workers, every AGENTS_UI_WORKER_POLL_SECONDS): which of the worker's runs were
  stopped that way, and what the stop says; the worker then ends them as `live.stop_run` does.
"""

from __future__ import annotations

import uuid

from asgiref.sync import sync_to_async
from django.db import transaction
from django.utils import timezone

from agents_ui.models import Run
from agents_ui.runs.live import STOPPED, stop_run
from agents_ui.runs.queue import Beat, Lease, heartbeat, wake_workers


async def request_stop(run_id: uuid.UUID | str, reason: str = "") -> bool:
    """Stop a run wherever it is driven; False when it had already ended."""
    if await stop_run(run_id, reason):
        return True
    # Driven by another process (a run worker, another web worker), queued, or orphaned by a restart.
    return await sync_to_async(_record_stop)(run_id, reason or STOPPED)


def _record_stop(run_id: uuid.UUID | str, reason: str) -> bool:
    with transaction.atomic():
        going = Run.objects.filter(pk=run_id, status__in=[Run.Status.PENDING, Run.Status.RUNNING])
        stopped = going.update(status=Run.Status.CANCELLED, error=reason, finished_at=timezone.now())
        if stopped:
            wake_workers()  # the run's worker looks at its runs now, not at its next poll
    return bool(stopped)


def stops_among(leases: list[Lease], *, beat: bool = False) -> Beat:
    """The worker's look at its runs: which were stopped (and which it lost); `beat` renews them."""
    return heartbeat(leases, beat=beat)
