"""A run's transcript, whoever drives it; the thread's runs folded together; what was decided.

AG-UI ids are not unique across runs, and a resume's results belong to the calls the run it
resumes opened: a thread's runs are folded oldest first, each seeing the ones before it
(``fold_thread``), for the page and for the history the next run sends.
"""

from __future__ import annotations

from agents_ui.models import ApprovalRecord, Conversation, Run
from agents_ui.runs.event_log import replay, stored_events
from agents_ui.runs.live import live_run
from agents_ui.sdk.transcript import Transcript, TranscriptBuilder


def thread_runs(conversation: Conversation, *, before: Run | None = None) -> list[tuple[Run, Transcript]]:
    """The conversation's runs (those created before ``before``, if given), oldest first, each
    folded with the ones before it. A run this process drives is its live transcript, already
    folded with the runs before it."""
    runs = conversation.runs.order_by("created_at", "id")
    if before is not None:
        runs = runs.filter(created_at__lt=before.created_at).exclude(pk=before.pk)
    folded: list[tuple[Run, Transcript]] = []
    for run in runs:
        run.conversation = conversation
        live = live_run(run.pk)
        if live is not None and live.earlier_runs is not None:
            # Its results for earlier calls are on its own copies of the earlier runs: show those.
            folded = list(zip(live.earlier_runs, live.builder.earlier, strict=True))
            folded.append((run, live.transcript))
            continue
        if live is not None:  # not begun yet: nothing of it to fold
            folded.append((run, live.transcript))
            continue
        earlier = [t for _, t in folded]
        folded.append((run, TranscriptBuilder(earlier=earlier).apply_all(stored_events(run))))
    return folded


def transcript_of(run: Run) -> Transcript:
    live = live_run(run.pk)
    return live.transcript if live is not None else replay(run)


def decided_for(run: Run) -> dict[str, ApprovalRecord]:
    """The decisions already recorded for this run's requests: request id -> record."""
    return {r.request_id: r for r in ApprovalRecord.objects.filter(run=run).select_related("decided_by")}
