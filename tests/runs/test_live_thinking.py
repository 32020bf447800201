"""A live run times the agent's reasoning, so a stream can say how long it thought as it answers."""

from __future__ import annotations

from unittest import mock

from ag_ui.core import (
    ReasoningStartEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
)

from agents_ui.runs import live as live_module
from agents_ui.runs.live import LiveRun


def test_the_time_thought_runs_from_the_first_reasoning_to_the_first_answer():
    run = LiveRun("r", "agui")
    clock = iter([100.0, 103.4, 200.0])
    with mock.patch.object(live_module.time, "monotonic", lambda: next(clock)), \
            mock.patch.object(live_module, "writer_for_loop"):  # fmt: skip
        run.apply(RunStartedEvent(thread_id="t", run_id="r"))
        assert run.thought_seconds is None
        run.apply(ReasoningStartEvent(message_id="w"))
        run.apply(TextMessageStartEvent(message_id="m", role="assistant"))
        run.apply(TextMessageContentEvent(message_id="m", delta="Hi"))
    assert run.thought_seconds == 3
