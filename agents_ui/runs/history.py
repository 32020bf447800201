"""A run's transcript, whoever drives it; the thread's runs folded together; what was decided.

AG-UI ids are not unique across runs, and a resume's results belong to the calls the run it
resumes opened: a thread's runs are folded oldest first, each seeing the ones before it
(``fold_thread``), for the page and for the history the next run sends.
"""

from __future__ import annotations

from typing import Any

from agents_ui.models import ApprovalRecord, Run
from agents_ui.runs.event_log import replay
from agents_ui.runs.live import live_run, thread_runs
from agents_ui.sdk.transcript import Transcript

__all__ = ["decided_for", "decided_in", "thread_runs", "transcript_of"]


def transcript_of(run: Run) -> Transcript:
    live = live_run(run.pk)
    return live.transcript if live is not None else replay(run)


def decided_for(run: Run) -> dict[str, ApprovalRecord]:
    """The decisions already recorded for this run's requests: request id -> record."""
    return {r.request_id: r for r in ApprovalRecord.objects.filter(run=run).select_related("decided_by")}


def decided_in(conversation: Any) -> dict[Any, dict[str, ApprovalRecord]]:
    """The decisions recorded on a conversation's runs: run id -> request id -> record."""
    found: dict[Any, dict[str, ApprovalRecord]] = {}
    for record in ApprovalRecord.objects.filter(run__conversation=conversation).select_related("decided_by"):
        found.setdefault(record.run_id, {})[record.request_id] = record
    return found


REASONING_EVENTS = ("REASONING", "THINKING")


def thought_seconds(run: Run, transcript: Transcript | None = None) -> int | None:
    """How long the agent thought: from its first reasoning event to the first event after its
    reasoning, as the event log received them (None while unknown)."""
    if (transcript is not None and not transcript.reasoning) or not run.is_finished:
        return None
    times = list(
        run.events.exclude(received_at__isnull=True).order_by("seq").values_list("type", "received_at")[:2000]
    )
    start = next((at for kind, at in times if kind.startswith(REASONING_EVENTS)), None)
    if start is None:
        return None
    seen_reasoning, end = False, None
    for kind, at in times:
        if kind.startswith(REASONING_EVENTS):
            seen_reasoning = True
        elif seen_reasoning and kind.startswith(("TEXT_MESSAGE", "TOOL_CALL", "RUN_FINISHED")):
            end = at
            break
    if end is None:
        end = run.finished_at or times[-1][1]
    return max(1, round((end - start).total_seconds()))
