"""The process's one writer of run events: every live run's new events, a few times a second.

However many runs stream, the database sees a few transactions a second from one thread and one
connection, instead of each run competing for SQLite's single write lock.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import uuid
import weakref
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from django.db import connection, transaction

from agents_ui.models import Message, Run, RunEvent
from agents_ui.monitoring import metrics

logger = logging.getLogger(__name__)

# Events are written to the database at most this often, or when this many are waiting.
FLUSH_SECONDS = 0.25
FLUSH_EVENTS = 500
# ... or when this much event text waits: an agent sending large events fast is not held in memory.
FLUSH_BYTES = 1024 * 1024
# The end of a run retries a refused write this many times (1 + 2 + 3 + 4 s apart) before giving up.
FINAL_WRITE_ATTEMPTS = 5


class Batched(Protocol):
    """A run whose events wait to be written (agents_ui.runs.live.LiveRun)."""

    run_id: str
    stopped_elsewhere: bool
    # The lease the run is written under (agents_ui.runs.queue; 0 and "" in a web process).
    attempt: int
    worker: str
    lease_lost: bool

    def take_batch(self, *, final: bool = False) -> WriteJob | None: ...

    def give_back(self, job: WriteJob) -> None: ...


@dataclass
class WriteJob:
    live: Batched
    events: list[tuple[int, str, str]]
    messages: list[Message]
    count: int
    saved_before: set[str]
    # When the oldest of `events` arrived (time.perf_counter; 0: no events).
    since: float = 0.0


class EventWriter:
    """One writer per process: every FLUSH_SECONDS, every live run's new events in one transaction.

    However many runs stream, the database sees a few transactions a second from one thread and one
    connection, instead of each run competing for SQLite's single write lock.
    """

    def __init__(self) -> None:
        self.runs: dict[str, Batched] = {}
        self.lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None

    def add(self, live: Batched) -> None:
        self.runs[live.run_id] = live
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._loop(), context=contextvars.Context())

    def discard(self, live: Batched) -> None:
        self.runs.pop(live.run_id, None)

    def wake(self) -> None:
        self._wake.set()

    async def _loop(self) -> None:
        while self.runs:
            try:
                await asyncio.wait_for(self._wake.wait(), FLUSH_SECONDS)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self.write([live.take_batch() for live in list(self.runs.values())])
            except Exception:
                logger.warning(
                    "writing the runs' events failed; they are kept for the next write", exc_info=True
                )

    async def write(self, jobs: list[WriteJob | None]) -> None:
        jobs = [job for job in jobs if job is not None]
        if not jobs:
            return
        async with self.lock:  # in order: a run's final write waits for the batch before it
            try:
                stopped, lost = await asyncio.get_running_loop().run_in_executor(
                    _WRITE_THREAD, _write_many, jobs, not self.runs
                )
            except Exception:
                for job in reversed(jobs):
                    job.live.give_back(job)
                metrics.WRITER_FAILURES.inc()
                raise
        _observe_lag(jobs)
        for job in jobs:
            if job.live.run_id in lost:  # its events were refused: the run goes no further here
                job.live.lease_lost = job.live.stopped_elsewhere = True
            elif job.live.run_id in stopped:
                job.live.stopped_elsewhere = True

    async def write_final(self, live: Batched) -> None:
        """The end of a run: everything it said, retried while the database is busy."""
        for attempt in range(1, FINAL_WRITE_ATTEMPTS + 1):
            try:
                await self.write([live.take_batch(final=True)])
                return
            except Exception:
                if attempt == FINAL_WRITE_ATTEMPTS:
                    raise
                await asyncio.sleep(attempt)


def _observe_lag(jobs: list[WriteJob]) -> None:
    """How long the oldest event of this write waited to be stored."""
    arrived = [job.since for job in jobs if job.since]
    if arrived:
        metrics.WRITER_LAG_SECONDS.observe(time.perf_counter() - min(arrived))


# The writer's own thread, and so its own database connection: requests that open a page or a
# stream never wait behind a batch of events, and a batch never waits behind them.
_WRITE_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agents-ui-writer")

_WRITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, EventWriter] = weakref.WeakKeyDictionary()


def writer_for_loop() -> EventWriter:
    loop = asyncio.get_running_loop()
    writer = _WRITERS.get(loop)
    if writer is None:
        writer = _WRITERS[loop] = EventWriter()
    return writer


def _write_many(jobs: list[WriteJob], last: bool = False) -> tuple[set[str], set[str]]:
    """One transaction for every job, a few statements whatever the number of runs and events.
    Returns the runs found stopped by another server process, and those whose lease was taken
    away (their events and messages are refused: the run is another worker's, or ended).

    The fence: each run's row is locked (on PostgreSQL) and its (attempt, worker) compared with the
    job's before anything is written, so a sweeper or a claim either waits for this transaction or
    this transaction sees what they did.

    Statements, not rows, are what this costs: the database driver lets go of Python's GIL for each
    statement it steps through, and getting it back from a busy event loop can take milliseconds,
    so a statement per event or per run would make the writer fall behind the agents.
    """
    run_field = RunEvent._meta.get_field("run")
    run_values = {
        job.live.run_id: run_field.get_db_prep_value(uuid.UUID(job.live.run_id), connection) for job in jobs
    }
    run_table = connection.ops.quote_name(Run._meta.db_table)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            marks = ", ".join(["%s"] * len(run_values))
            lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
            cursor.execute(
                # In one order (the id's) wherever the lock is taken: two writers never deadlock.
                f"SELECT id, attempt, worker, status FROM {run_table} "
                f"WHERE id IN ({marks}) ORDER BY id{lock}",
                list(run_values.values()),
            )
            found = {str(Run._meta.pk.to_python(pk)): (a, w, st) for pk, a, w, st in cursor.fetchall()}
            lost = {
                job.live.run_id
                for job in jobs
                if found.get(job.live.run_id, (None, None, None))[:2] != (job.live.attempt, job.live.worker)
            }
            stopped = {run_id for run_id, row in found.items() if row[2] == Run.Status.CANCELLED} - lost
            jobs = [job for job in jobs if job.live.run_id not in lost]
            rows = [
                (run_values[job.live.run_id], seq, type_, payload)
                for job in jobs
                for seq, type_, payload in job.events
            ]
            messages = [message for job in jobs for message in job.messages]
            for statement, params in _insert_events(rows):
                cursor.execute(statement, params)
            if messages:
                Message.objects.bulk_create(messages)
            # One UPDATE for every run's count; a run stopped from another process keeps the one it had.
            # Written by hand: QuerySet.bulk_update builds the same CASE from a When() expression per
            # run, and compiling those costs more Python per batch than the writer can spare.
            if jobs:
                cases = " ".join("WHEN %s THEN %s" for _ in jobs)
                params = [value for job in jobs for value in (run_values[job.live.run_id], job.count)]
                ids = [run_values[job.live.run_id] for job in jobs]
                marks = ", ".join(["%s"] * len(ids))
                cursor.execute(
                    f"UPDATE {run_table} SET event_count = CASE id {cases} ELSE event_count END "
                    f"WHERE id IN ({marks}) AND status <> %s",
                    [*params, *ids, Run.Status.CANCELLED],
                )
    except Exception:
        # The connection may be what failed (a restarted database): the next batch opens a new one.
        connection.close()
        raise
    if last:  # no run left to write for: the connection is not kept open while idle
        connection.close()
    return stopped, lost


def _insert_events(rows: list[tuple[Any, int, str, str]]) -> Iterator[tuple[str, list[Any]]]:
    """Multi-row INSERTs of the event log, each within the database's limit on parameters."""
    table = connection.ops.quote_name(RunEvent._meta.db_table)
    per_statement = max(1, min(1000, (connection.features.max_query_params or 4000) // 4))
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        values = ", ".join(["(%s, %s, %s, %s)"] * len(chunk))
        yield (
            f"INSERT INTO {table} (run_id, seq, type, payload) VALUES {values}",
            [value for row in chunk for value in row],
        )
