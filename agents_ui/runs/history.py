"""A run's transcript, whoever drives it; what earlier runs already showed; what was decided."""

from __future__ import annotations

from agents_ui.models import ApprovalRecord, Run
from agents_ui.runs.event_log import replay
from agents_ui.runs.live import live_run
from agents_ui.sdk.transcript import Transcript


def earlier_ids(run: Run) -> frozenset[str]:
    """Ids of the messages and tool calls the conversation's earlier runs already showed."""
    seen: set[str] = set()
    for earlier in run.conversation.runs.filter(
        created_at__lt=run.created_at, superseded_at__isnull=True
    ).order_by("created_at"):
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
