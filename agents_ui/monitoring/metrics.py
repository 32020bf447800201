"""The product's Prometheus series, and the text /metrics answers (docs/operations.md, Metrics).

Every label is bounded: an agent's slug (admins register agents), its protocol, a run's outcome
(Run.Status) or a discovery status; never a user, a conversation or a run. The series are
module-level, as prometheus_client wants: one process counts into them; with several worker
processes and PROMETHEUS_MULTIPROC_DIR set, each counts into files there and /metrics sums them.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = CONTENT_TYPE_LATEST

# Seconds: an agent's first word comes within a second or a few; a whole run may last minutes.
FIRST_EVENT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60)
DURATION_BUCKETS = (0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600)
# The writer writes every quarter second: its lag is normally under that.
WRITER_LAG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10)

RUNS_STARTED = Counter(
    "agents_ui_runs_started", "Runs the product started, by agent and protocol.", ["agent", "protocol"]
)
RUNS_FINISHED = Counter(
    "agents_ui_runs_finished",
    "Runs that ended, by agent, protocol and outcome (completed, failed, interrupted, cancelled, "
    "auth-required).",
    ["agent", "protocol", "outcome"],
)
FIRST_EVENT_SECONDS = Histogram(
    "agents_ui_run_first_event_seconds",
    "From the start of a run to the agent's first event, by agent.",
    ["agent"],
    buckets=FIRST_EVENT_BUCKETS,
)
RUN_SECONDS = Histogram(
    "agents_ui_run_duration_seconds",
    "From the start of a run to its end, whatever the outcome, by agent.",
    ["agent"],
    buckets=DURATION_BUCKETS,
)
EVENTS = Counter(
    "agents_ui_run_events", "Events agents sent during runs, by agent and protocol.", ["agent", "protocol"]
)
OPEN_STREAMS = Gauge(
    "agents_ui_open_streams",
    "Browsers following a run right now (open event streams).",
    multiprocess_mode="livesum",
)
QUEUE_REFUSALS = Counter(
    "agents_ui_queue_refusals",
    "Messages refused (503) because the run queue held AGENTS_UI_QUEUE_MAX runs (separate run workers).",
)
THROTTLE_REFUSALS = Counter(
    "agents_ui_throttle_refusals",
    "Messages refused because the person reached the agent's declared rate, by agent.",
    ["agent"],
)
DISCOVERY_FAILURES = Counter(
    "agents_ui_discovery_failures",
    "Discoveries that found no usable declaration (unreachable, invalid, unsupported), by agent.",
    ["agent", "status"],
)
WRITER_LAG_SECONDS = Histogram(
    "agents_ui_event_writer_lag_seconds",
    "From an event's arrival to the commit of the batch that stores it (the oldest event of each batch).",
    buckets=WRITER_LAG_BUCKETS,
)
WRITER_FAILURES = Counter(
    "agents_ui_event_writer_failures",
    "Batches of events the writer could not store (kept and written again with the next batch).",
)


def _forget_this_process_when_it_ends() -> None:
    """Multi-process mode: a worker that exits takes its live gauges (open streams) with it.

    uvicorn's supervisor has no hook for a worker's end, so each worker removes its own files as it
    exits; one killed outright leaves them until the directory is emptied (docs/operations.md).
    """
    from prometheus_client import multiprocess

    atexit.register(multiprocess.mark_process_dead, os.getpid())


if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _forget_this_process_when_it_ends()


class Reading(Collector):
    """A gauge read when /metrics is asked for (from the database: the same for every process).

    `read` gives the value of each set of labels (one value, and no labels, when `labels` is empty).
    """

    def __init__(
        self, name: str, documentation: str, labels: Sequence[str], read: Callable[[], Mapping[tuple, float]]
    ) -> None:
        self.name, self.documentation, self.labels, self.read = name, documentation, list(labels), read

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(self.name, self.documentation, labels=self.labels)
        for values, value in sorted(self.read().items()):
            family.add_metric(list(values), value)
        yield family

    def describe(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(self.name, self.documentation, labels=self.labels)


def exposition(readings: Iterable[Reading] = ()) -> bytes:
    """Every series in Prometheus's text format: this process's, or every worker's in
    multi-process mode, then the readings (read now, once whatever the number of processes)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    text = generate_latest(registry)
    read_now = CollectorRegistry(auto_describe=False)
    for one in readings:
        read_now.register(one)
    return text + generate_latest(read_now)
