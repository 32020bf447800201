"""A run's transcript, whoever drives it; what earlier runs already showed; what was decided."""

from __future__ import annotations

from agents_ui.models import ApprovalRecord, Run
from agents_ui.runs.event_log import replay
from agents_ui.runs.live import live_run
from agents_ui.sdk.transcript import Transcript


def earlier_ids(run: Run) -> frozenset[str]:
    """Ids of the messages and tool calls the conversation's earlier runs already showed."""
    seen: set[str] = set()
    for earlier in run.conversation.runs.filter(created_at__lt=run.created_at).order_by("created_at"):
        earlier.conversation = run.conversation
        transcript = transcript_of(earlier)
        seen.update(m.id for m in transcript.messages)
        seen.update(transcript.tool_calls)
    return frozenset(seen)


def transcript_of(run: Run) -> Transcript:
    live = live_run(run.pk)
    return live.transcript if live is not None else replay(run)


def decided_for(run: Run) -> dict[str, ApprovalRecord]:
    """The decisions already recorded for this run's requests: request id -> record."""
    return {r.request_id: r for r in ApprovalRecord.objects.filter(run=run).select_related("decided_by")}
