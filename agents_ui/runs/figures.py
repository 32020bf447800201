"""What a turn cost, from the runs' own records: time to the first word, total time, steps, tool
calls and token usage, read from the event log's arrival times and the run's stored clock, never
from a browser. A turn may be several runs (a decision or a tool's answer resumes it): they add up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agents_ui.display.usage import NOT_REPORTED, UsageLine, summed_lines
from agents_ui.display.values import seconds_label
from agents_ui.models import Run, RunEvent
from agents_ui.runs.event_log import event_from_record
from agents_ui.sdk.folding import TranscriptBuilder
from agents_ui.sdk.transcript import Transcript

# Events folded to find the first word: an answer whose first word comes later is "after N events".
FIRST_WORD_SCAN = 2000


@dataclass(frozen=True)
class TurnFigures:
    first_word_seconds: float | None
    total_seconds: float | None
    steps: int
    tool_calls: int
    usage: list[UsageLine]
    finished: bool
    # The turn's last run waits on its person (a decision, an answer): the turn may go on.
    waiting: bool = False

    @property
    def first_word(self) -> str:
        if self.first_word_seconds is None:
            return "no words yet" if not self.finished else "no words"
        return duration_label(self.first_word_seconds)

    @property
    def total(self) -> str:
        if self.total_seconds is None:
            return "still answering" if not self.finished else NOT_REPORTED
        return duration_label(self.total_seconds)


def duration_label(seconds: float) -> str:
    """Tenths under ten seconds (agents side by side often differ by less than one), else as the
    run status says it."""
    return f"{max(seconds, 0):.1f} s" if seconds < 10 else seconds_label(seconds)


def _first_word_at(run: Run, protocol: str) -> datetime | None:
    """When the first event that gave the answer a visible character arrived."""
    builder = TranscriptBuilder()
    rows = (
        RunEvent.objects.filter(run_id=run.pk)
        .order_by("seq")
        .values_list("type", "payload", "received_at")[:FIRST_WORD_SCAN]
    )
    for type_, payload, received_at in rows.iterator(chunk_size=200):
        try:
            event = event_from_record(protocol, type_, payload)
        except Exception:  # a stored event that no longer parses is skipped, as the replay does
            continue
        if event is None:
            continue
        builder.apply(event)
        if any(m.role == "assistant" and m.text.strip() for m in builder.transcript.messages):
            return received_at
    return None


def turn_figures(runs: Sequence[Run], transcripts: Sequence[Transcript], protocol: str) -> TurnFigures:
    """The figures of one turn: its runs, oldest first (the first is the one the message started),
    with their transcripts as the page folded them."""
    if not runs:
        return TurnFigures(None, None, 0, 0, [], False)
    first, last = runs[0], runs[-1]
    word_at = None
    for run in runs:
        if (word_at := _first_word_at(run, protocol)) is not None:
            break
    finished = all(run.is_finished for run in runs)
    return TurnFigures(
        first_word_seconds=(word_at - first.created_at).total_seconds() if word_at else None,
        total_seconds=(
            (last.finished_at - first.created_at).total_seconds() if finished and last.finished_at else None
        ),
        steps=sum(len(t.steps) for t in transcripts),
        tool_calls=sum(len(t.tool_calls) for t in transcripts),
        usage=summed_lines(run.usage for run in runs if run.usage),
        finished=finished,
        waiting=last.status in (Run.Status.INTERRUPTED, Run.Status.AUTH_REQUIRED),
    )
