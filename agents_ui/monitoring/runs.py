"""What the product measures of a run as it goes: the metrics, and one log line at its start and end.

`RunWatch` is made when a live run begins (agents_ui.runs.live) and told of its first event, of
the events counted so far, and of its end. It resolves its labelled series once, so counting costs
a run a few additions, not a lookup per event. The log lines carry ids, the agent's slug, the
outcome and durations: never what was said, and never a credential.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.utils import timezone

from agents_ui.monitoring import metrics

logger = logging.getLogger("agents_ui.runs")

# Token counts, whatever the protocol calls them: AG-UI's TokenUsage fields, an external agent's
# camelCase usage object (docs/PROTOCOLS.md), or the snake_case most libraries use.
TOKEN_KEYS = {
    "input_tokens": "input_tokens",
    "inputTokens": "input_tokens",
    "prompt_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "outputTokens": "output_tokens",
    "completion_tokens": "output_tokens",
    "total_tokens": "total_tokens",
    "totalTokens": "total_tokens",
    "reasoning_tokens": "reasoning_tokens",
    "reasoningTokens": "reasoning_tokens",
    "cached_input_tokens": "cached_input_tokens",
    "cachedInputTokens": "cached_input_tokens",
    "cache_write_input_tokens": "cache_write_input_tokens",
    "cacheWriteInputTokens": "cache_write_input_tokens",
}


class RunWatch:
    """One run's measures: when it started, when its first event came, how many it counted."""

    __slots__ = (
        "_events",
        "agent",
        "conversation_id",
        "counted",
        "first_event",
        "first_event_at",
        "protocol",
        "run_id",
        "started",
    )

    def __init__(self, run_id: Any, conversation_id: Any, agent: str, protocol: str) -> None:
        self.agent, self.protocol = agent, protocol
        self.run_id, self.conversation_id = str(run_id), str(conversation_id)
        self.started = time.monotonic()
        self.first_event: float | None = None  # monotonic
        self.first_event_at: datetime | None = None  # wall clock, stored on the run
        self.counted = 0
        self._events = metrics.EVENTS.labels(agent, protocol)
        metrics.RUNS_STARTED.labels(agent, protocol).inc()
        logger.info(
            "run %s started with %s",
            self.run_id,
            agent,
            extra={"run": self.run_id, "conversation": self.conversation_id, "agent": agent,
                   "protocol": protocol, "phase": "start"},
        )  # fmt: skip

    def saw_first_event(self) -> None:
        self.first_event = time.monotonic()
        self.first_event_at = timezone.now()
        metrics.FIRST_EVENT_SECONDS.labels(self.agent).observe(self.first_event - self.started)

    def count_to(self, seq: int) -> None:
        """The run has had `seq` events in all (called a batch at a time)."""
        if seq > self.counted:
            self._events.inc(seq - self.counted)
            self.counted = seq

    def ended(self, outcome: str) -> None:
        seconds = time.monotonic() - self.started
        metrics.RUN_SECONDS.labels(self.agent).observe(seconds)
        metrics.RUNS_FINISHED.labels(self.agent, self.protocol, outcome).inc()
        first = None if self.first_event is None else round(self.first_event - self.started, 3)
        logger.info(
            "run %s with %s ended %s after %.2f s",
            self.run_id,
            self.agent,
            outcome,
            seconds,
            extra={"run": self.run_id, "conversation": self.conversation_id, "agent": self.agent,
                   "protocol": self.protocol, "phase": "end", "outcome": outcome,
                   "first_event_seconds": first, "duration_seconds": round(seconds, 3),
                   "events": self.counted},
        )  # fmt: skip


def token_counts(usage: Any) -> dict[str, int] | None:
    """The token counts an agent reported for a run, summed per kind (None: it reported none).

    AG-UI sends a list (one entry per model), an external agent one object; a run keeps the list
    of agents_ui/sdk/usage.py (older runs kept these sums).
    """
    entries = usage if isinstance(usage, list | tuple) else [usage]
    totals: dict[str, int] = {}
    for entry in entries:
        if entry is None:
            continue
        if not isinstance(entry, Mapping):
            entry = entry.model_dump() if hasattr(entry, "model_dump") else getattr(entry, "__dict__", {})
        for key, value in entry.items():
            kind = TOKEN_KEYS.get(key)
            if kind and isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
                totals[kind] = totals.get(kind, 0) + int(value)
    return totals or None
