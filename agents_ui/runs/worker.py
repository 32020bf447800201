"""A run worker (`manage.py run_worker`): claims queued runs and drives them, N at a time.

Each run is driven by the same machinery as in a web process (agents_ui.runs.live), under the
lease the claim took (agents_ui.runs.queue), so every write about it is fenced. Woken at once by
PostgreSQL's LISTEN/NOTIFY when a run is queued or stopped (queue.wake_workers), and at the latest
every AGENTS_UI_WORKER_POLL_SECONDS, the worker looks at its runs in the database (agents_ui.runs.control:
a stop from any web process; a lease taken away), renews their heartbeat every
AGENTS_UI_WORKER_HEARTBEAT_SECONDS, claims as many queued runs as it has room for, and every
AGENTS_UI_WORKER_SWEEP_SECONDS takes back the runs of workers that stopped beating.

Stopped gracefully (`stop()`, on SIGTERM): it claims nothing more, lets its runs finish within the
drain time, then hands back the rest: a run that had not begun is queued again, any other ends as
interrupted, keeping everything the agent said.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from agents_ui.decisions import Plan
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import Run
from agents_ui.runs import control, queue
from agents_ui.runs.live import LiveRun, drive_leased, stop_run
from agents_ui.runs.registry import LIVE

logger = logging.getLogger(__name__)


def _guarded(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A database call of the worker's loop: a failure (the database restarting) is logged, the
    connection dropped so that the next call opens a new one, and the loop goes on."""
    try:
        return function(*args, **kwargs)
    except Exception:
        logger.warning("run worker: %s failed; trying again shortly", function.__name__, exc_info=True)
        connections.close_all()
        return None


class RunWorker:
    def __init__(self, *, concurrency: int = 10, drain_seconds: float = 30.0, name: str = "") -> None:
        self.name = name or queue.worker_name()
        self.concurrency = max(1, concurrency)
        self.drain_seconds = max(0.0, drain_seconds)
        self.leases: dict[str, queue.Lease] = {}
        self.lives: dict[str, LiveRun] = {}
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()
        self._stops: set[asyncio.Task] = set()
        self.claimed = 0  # runs claimed since start

    def stop(self) -> None:
        """Stop claiming; `serve` drains and returns."""
        if not self._stopping.is_set():
            logger.info("run worker %s: stopping; draining %d run(s)", self.name, len(self.leases))
        self._stopping.set()

    async def serve(self) -> None:
        poll = settings.AGENTS_UI_WORKER_POLL_SECONDS
        logger.info("run worker %s: claiming queued runs, %d at a time", self.name, self.concurrency)
        listening = asyncio.get_running_loop().create_task(self._listen())
        try:
            await self._claim_loop(poll)
        finally:
            listening.cancel()
        await self._drain()

    async def _claim_loop(self, poll: float) -> None:
        next_beat = next_sweep = 0.0
        while not self._stopping.is_set():
            self._wake.clear()
            now = time.monotonic()
            beat = now >= next_beat
            await self._look(beat=beat)
            if beat:
                next_beat = now + settings.AGENTS_UI_WORKER_HEARTBEAT_SECONDS
            if now >= next_sweep:
                next_sweep = now + settings.AGENTS_UI_WORKER_SWEEP_SECONDS
                swept = await sync_to_async(_guarded)(queue.sweep)
                if swept:
                    logger.warning("run worker %s: took back %s", self.name, swept)
            free = self.concurrency - len(self.leases)
            if free > 0:
                leases = await sync_to_async(_guarded)(queue.claim, self.name, free) or []
                await asyncio.gather(*(self._drive(lease) for lease in leases))
            await self._pause(poll)

    async def _pause(self, seconds: float) -> None:
        """Until the next poll, a notification, or the stop."""
        waits = [asyncio.ensure_future(self._stopping.wait()), asyncio.ensure_future(self._wake.wait())]
        try:
            await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    async def _listen(self) -> None:
        """LISTEN on the queue's channel, on a connection of its own: every notification wakes the
        loop. Lost (the database restarting), it connects again; meanwhile the poll goes on."""
        import psycopg

        while not self._stopping.is_set():
            try:
                async with await psycopg.AsyncConnection.connect(**_libpq_params(), autocommit=True) as db:
                    await db.execute(f"LISTEN {queue.CHANNEL}")
                    while not self._stopping.is_set():
                        async for _ in db.notifies(timeout=5):
                            self._wake.set()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("run worker %s: not listening for new runs; polling", self.name, exc_info=True)
                await asyncio.sleep(5)

    async def _drive(self, lease: queue.Lease) -> None:
        run = await sync_to_async(_guarded)(_leased_run, lease.run_id)
        if run is None:  # gone (deleted with its conversation) or the database failed: taken back later
            return
        self.claimed += 1
        self.leases[lease.run_id] = lease
        self.lives[lease.run_id] = drive_leased(run, await _plan(run), lease)

    def _forget_ended(self) -> None:
        for run_id, live in list(self.lives.items()):
            if live.done or (live.task is not None and live.task.done()):
                self.lives.pop(run_id, None)
                self.leases.pop(run_id, None)
                LIVE.pop(run_id, None)

    async def _look(self, *, beat: bool) -> None:
        """Stops from web processes, leases taken away; the heartbeat renewed when `beat`."""
        self._forget_ended()
        if not self.leases:
            return
        seen = await sync_to_async(_guarded)(control.stops_among, list(self.leases.values()), beat=beat)
        if seen is None:
            return
        for run_id in seen.lost:
            live = self.lives.get(run_id)
            if live is not None and live.task is not None and not live.done:
                logger.warning("run worker %s: run %s was taken back; stopping it here", self.name, run_id)
                live.lease_lost = live.stopped_elsewhere = True
                live.task.cancel()
        for run_id, reason in seen.stopped.items():
            self._later(stop_run(run_id, reason))

    def _later(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._stops.add(task)
        task.add_done_callback(self._stops.discard)

    async def _drain(self) -> None:
        deadline = time.monotonic() + self.drain_seconds
        poll = settings.AGENTS_UI_WORKER_POLL_SECONDS
        next_beat = 0.0
        while self.leases and time.monotonic() < deadline:
            now = time.monotonic()
            await self._look(beat=now >= next_beat)
            if now >= next_beat:
                next_beat = now + settings.AGENTS_UI_WORKER_HEARTBEAT_SECONDS
            await asyncio.sleep(min(poll, max(0.0, deadline - time.monotonic())))
        self._forget_ended()
        if self.leases:
            logger.warning(
                "run worker %s: handing back %d run(s) after the drain", self.name, len(self.leases)
            )
        for run_id, lease in list(self.leases.items()):
            live = self.lives[run_id]
            if live.watch is None:  # not begun: nothing sent to the agent, queued again
                live.lease_lost = True
                if live.task is not None:
                    live.task.cancel()
                await sync_to_async(_guarded)(
                    queue.take_back, run_id, attempt=lease.attempt, worker=lease.worker
                )
            else:  # ends as interrupted, with what it stored
                self._later(stop_run(run_id, queue.INTERRUPTED, status=Run.Status.FAILED))
        tasks = [live.task for live in self.lives.values() if live.task is not None]
        if self._stops or tasks:
            await asyncio.wait([*self._stops, *tasks], timeout=30)
        self._forget_ended()
        logger.info("run worker %s: stopped", self.name)


# What a libpq connection is made of, of the parameters Django gives its own connections.
_LIBPQ = {
    *("dbname", "user", "password", "host", "port", "sslmode", "sslrootcert", "sslcert", "sslkey"),
    *("options", "application_name", "connect_timeout", "service", "passfile", "target_session_attrs"),
}


def _libpq_params() -> dict[str, Any]:
    return {k: v for k, v in connections["default"].get_connection_params().items() if k in _LIBPQ and v}


def _leased_run(run_id: str) -> Run | None:
    return (
        Run.objects.select_related("conversation__endpoint", "conversation__user").filter(pk=run_id).first()
    )


async def _plan(run: Run) -> Plan | None:
    """The plan of the person whose run it is, as their send made it (None: the defaults)."""
    try:
        user = run.conversation.user
        return (await plan_inputs(run.conversation.endpoint, await user_abilities(user))).plan()
    except Exception:
        logger.warning("run %s: its plan could not be made; driven with the defaults", run.pk, exc_info=True)
        return None
