"""A conversation frozen at a moment, for a shared link: which runs it had, how far each had gone.

Nothing is copied: the event log is append-only, so a run's first N events are what it had said
when it was shared, whatever happens after (a regenerate supersedes it, a resume follows it). A
run still answering is left out, with the message that started it: a shared page shows finished
turns, never half an answer.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Max

from agents_ui.models import ApprovalRecord, Conversation, Message, Run, RunEvent
from agents_ui.runs.event_log import stored_events
from agents_ui.sdk.folding import TranscriptBuilder
from agents_ui.sdk.transcript import Transcript


def freeze(conversation: Conversation) -> list[dict[str, Any]]:
    """The thread as it is now: its finished runs, each with its last stored event and status."""
    runs = conversation.runs.filter(superseded_at__isnull=True, status__in=Run.FINISHED)
    last = dict(
        RunEvent.objects.filter(run__in=runs)
        .values("run_id")
        .annotate(seq=Max("seq"))
        .values_list("run_id", "seq")
    )
    return [
        {"run": str(run.pk), "seq": last.get(run.pk, 0), "status": run.status, "error": run.error}
        for run in runs.order_by("created_at", "id")
    ]


@dataclass(frozen=True)
class FrozenTurn:
    """One run of a frozen thread: the run (its status and error as they were), its transcript
    folded up to where it was, and the person's message that started it (None for a resume)."""

    run: Run
    transcript: Transcript
    message: Message | None


def thaw(conversation: Conversation, covered: list[dict[str, Any]]) -> list[FrozenTurn]:
    """The frozen runs, oldest first, each folded with the ones before it (as the page folds them)."""
    wanted = {str(entry["run"]): entry for entry in covered}
    runs = {str(run.pk): run for run in conversation.runs.filter(pk__in=list(wanted))}
    asked = [(run.request or {}).get("message_id") for run in runs.values()]
    messages = {
        m.pk: m
        for m in Message.objects.filter(
            conversation=conversation, pk__in=[a for a in asked if a]
        ).prefetch_related("attachments")
    }
    turns: list[FrozenTurn] = []
    earlier: list[Transcript] = []
    for run_id, entry in wanted.items():
        run = runs.get(run_id)
        if run is None:
            continue
        run.conversation = conversation
        run.status, run.error = entry.get("status", run.status), entry.get("error", run.error)
        events = stored_events(run, upto=entry.get("seq", 0))
        transcript = TranscriptBuilder(earlier=earlier).apply_all(events)
        earlier = [*earlier, transcript]
        turns.append(FrozenTurn(run, transcript, messages.get((run.request or {}).get("message_id"))))
    return turns


def decided_before(conversation: Conversation, moment: datetime) -> dict[Any, dict[str, ApprovalRecord]]:
    """The decisions on the conversation's runs made by `moment`: run id -> request id -> record."""
    records = ApprovalRecord.objects.filter(run__conversation=conversation, decided_at__lte=moment)
    found: dict[Any, dict[str, ApprovalRecord]] = {}
    for record in records.select_related("decided_by"):
        found.setdefault(record.run_id, {})[record.request_id] = record
    return found


def answers_between(turns: list[FrozenTurn]) -> dict[Any, dict[str, Any]]:
    """A run's answers to tool calls are carried by the run after it: run id -> call id -> answer."""
    return {
        asked.run.pk: {a.get("toolCallId"): a for a in (answering.run.request or {}).get("answers") or ()}
        for asked, answering in itertools.pairwise(turns)
    }
