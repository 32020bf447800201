"""How a run's events reach the browsers that follow it from other processes, and how a stop reaches
the process that drives the run (docs/architecture.md, "Live fan-out").

Two backings, chosen by settings (AGENTS_UI_FANOUT_URL, by default REDIS_URL):

- **In-process** (nothing set, the embedded default): the driving process wakes its own followers in
  memory (LiveRun.subscribe); a follower in another process reads the event log from the database
  every POLL_SECONDS; a control message is a direct call in the process that drives the run.
- **Redis**: the driver adds every event to one bounded Stream per run (`run:<id>`, the entry's id
  is the event's seq), a pipeline of calls per batch from a background task, never one awaited
  call per event; followers in any process read it from their cursor with XREAD BLOCK and read from
  the database what the Stream does not hold (trimmed, too large, lost while Redis was away). Control
  messages go to every process over one pub/sub channel; the one driving the run acts on them.

The database stays the record: Redis may lose anything, and a follower still sees every event once.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings

from agents_ui.runs.event_log import EventLogReader
from agents_ui.runs.registry import live_run

logger = logging.getLogger(__name__)

# A follower without Redis reads the event log this often.
POLL_SECONDS = 0.25
# Rows read from the database in one go (a follower far behind catches up in several frames).
READ_ROWS = 5000
# XREAD waits this long for an entry before the follower looks at the run's status.
BLOCK_MS = 1000
# Entries read in one XREAD: with AGENTS_UI_FANOUT_EVENT_MAX_BYTES, what one replay may hold.
READ_ENTRIES = 200
# After Redis failed, it is tried again this much later (followers read the database meanwhile).
RETRY_SECONDS = 1.0
# Events waiting to be published beyond this are dropped: followers read them from the database.
QUEUE_MAX = 20_000
CONTROL_CHANNEL = "agents-ui:control"
CONTROL_MAX_BYTES = 4096

ControlHandler = Callable[[str, dict[str, Any]], Awaitable[bool]]
_HANDLERS: dict[str, ControlHandler] = {}


def on_control(kind: str, handler: ControlHandler) -> None:
    """`handler(run_id, message)` acts on control messages of this kind for a run this process drives."""
    _HANDLERS[kind] = handler


async def _dispatch(run_id: str, message: dict[str, Any]) -> bool:
    handler = _HANDLERS.get(str(message.get("kind", "")))
    if handler is None or live_run(run_id) is None:
        return False
    return await handler(run_id, message)


# Tasks started in the background, kept until they end (the event loop holds only weak references).
_TASKS: set[asyncio.Task] = set()


def _background(loop: asyncio.AbstractEventLoop, work: Awaitable[Any]) -> None:
    task = loop.create_task(work, context=contextvars.Context())  # type: ignore[arg-type]
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


def stream_key(run_id: str) -> str:
    return f"run:{run_id}"


class DatabaseTail:
    """A follower of a run driven elsewhere that reads the event log from the database alone."""

    def __init__(self, log: EventLogReader) -> None:
        self.log = log
        self._first = True
        self.from_database = 0

    async def next(self) -> int:
        """Fold what the run said since the last call (waiting a little first); how many events."""
        if not self._first:
            await asyncio.sleep(POLL_SECONDS)
        self._first = False
        count = await sync_to_async(self.log.read)(limit=READ_ROWS)
        self.from_database += count
        return count

    def status_due(self) -> bool:
        """Whether the follower should look at the run's status now (every poll)."""
        return True


class InProcessFanout:
    """The embedded default: nothing leaves the process."""

    def publish(self, run_id: str, seq: int, type_: str, payload: str) -> None:
        """The driver's followers in this process are woken by the live run itself."""

    def ended(self, run_id: str, seq: int) -> None:
        pass

    def driving(self, run_id: str) -> None:
        pass

    def released(self, run_id: str) -> None:
        pass

    async def publish_control(self, run_id: str, message: dict[str, Any]) -> bool:
        """Acts on the message if this process drives the run; True if it did."""
        return await _dispatch(str(run_id), message)

    def tail(self, log: EventLogReader, *, min_interval: float = 0.0) -> DatabaseTail:
        return DatabaseTail(log)

    async def aclose(self) -> None:
        pass


class RedisFanout:
    """Streams of runs and a control channel in Redis (one instance per event loop)."""

    def __init__(self, url: str) -> None:
        import redis.asyncio as aioredis

        self.url = url
        self.redis = aioredis.Redis.from_url(
            url, decode_responses=True, socket_connect_timeout=2, socket_timeout=BLOCK_MS / 1000 + 10
        )
        self.maxlen = settings.AGENTS_UI_FANOUT_STREAM_MAXLEN
        self.max_event_bytes = settings.AGENTS_UI_FANOUT_EVENT_MAX_BYTES
        self.retention = settings.AGENTS_UI_FANOUT_RETENTION_SECONDS
        # A live run's Stream outlives a driver that died without ending it by this much.
        self.live_ttl = int(settings.AGENTS_UI_RUN_MAX_SECONDS) + self.retention
        # (run id, seq, type or None for the end, payload) waiting for the publisher.
        self._queue: list[tuple[str, int, str | None, str]] = []
        self._publisher: asyncio.Task | None = None
        self._down_until = 0.0
        self._driving: set[str] = set()
        self._listener: asyncio.Task | None = None
        self.subscribed = asyncio.Event()  # the control channel is listened to
        self.published = self.dropped = 0

    # --- The driver's side -------------------------------------------------------------------------

    def publish(self, run_id: str, seq: int, type_: str, payload: str) -> None:
        """Queue one event for the run's Stream: no Redis call here, the publisher sends batches."""
        self._enqueue((run_id, seq, type_, payload))

    def ended(self, run_id: str, seq: int) -> None:
        """The run has ended and its end is stored: followers learn it from an entry after its last."""
        self._enqueue((run_id, seq, None, ""))

    def _enqueue(self, item: tuple[str, int, str | None, str]) -> None:
        if len(self._queue) >= QUEUE_MAX or time.monotonic() < self._down_until:
            self.dropped += 1  # followers read it from the database (they see the gap)
            return
        self._queue.append(item)
        if self._publisher is None or self._publisher.done():
            self._publisher = asyncio.get_running_loop().create_task(
                self._publish_loop(), name="fanout-publisher", context=contextvars.Context()
            )

    async def _publish_loop(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                await self._send(batch)
                self.published += len(batch)
            except Exception as exc:  # Redis away: the database has it all, followers read it there
                self.dropped += len(batch)
                self._down_until = time.monotonic() + RETRY_SECONDS
                logger.warning("publishing %d run events to Redis failed: %s", len(batch), exc)
            if not self._queue:
                # Once round the event loop: the agent's events already read go in the same batch.
                await asyncio.sleep(0)

    async def _send(self, batch: list[tuple[str, int, str | None, str]]) -> None:
        pipe = self.redis.pipeline(transaction=False)
        live_keys: set[str] = set()
        ended_keys: set[str] = set()
        for run_id, seq, type_, payload in batch:
            key = stream_key(run_id)
            if type_ is None:
                pipe.xadd(key, {"end": "1"}, id=f"{seq}-1", maxlen=self.maxlen, approximate=True)
                ended_keys.add(key)
                continue
            if len(payload) > self.max_event_bytes // 4 and len(payload.encode()) > self.max_event_bytes:
                fields = {"t": type_, "big": "1"}  # followers read this one from the database
            else:
                fields = {"t": type_, "p": payload}
            pipe.xadd(key, fields, id=f"{seq}-0", maxlen=self.maxlen, approximate=True)
            live_keys.add(key)
        for key in live_keys - ended_keys:
            pipe.expire(key, self.live_ttl)
        for key in ended_keys:
            pipe.expire(key, self.retention)
        # An entry refused (its id not above the Stream's last) must not keep the others out.
        results = await pipe.execute(raise_on_error=False)
        for result in results:
            if isinstance(result, Exception) and not _is_id_refusal(result):
                raise result

    def driving(self, run_id: str) -> None:
        """This process drives the run: listen for its control messages."""
        self._driving.add(run_id)
        if self._listener is None or self._listener.done():
            self.subscribed.clear()
            self._listener = asyncio.get_running_loop().create_task(
                self._listen(), name="fanout-control", context=contextvars.Context()
            )

    def released(self, run_id: str) -> None:
        self._driving.discard(run_id)

    async def _listen(self) -> None:
        while self._driving:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(CONTROL_CHANNEL)
                self.subscribed.set()
                while self._driving:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None:
                        self._on_control(message.get("data"))
            except Exception as exc:
                self.subscribed.clear()
                logger.info("the control channel is away (%s); listening again in %ss", exc, RETRY_SECONDS)
                await asyncio.sleep(RETRY_SECONDS)
            finally:
                try:
                    await pubsub.aclose()
                except Exception:  # the connection may be what failed
                    pass
        self.subscribed.clear()

    def _on_control(self, data: Any) -> None:
        if not isinstance(data, str) or len(data) > CONTROL_MAX_BYTES:
            return
        try:
            message = json.loads(data)
        except ValueError:
            return
        run_id = message.get("run") if isinstance(message, dict) else None
        if not isinstance(run_id, str) or run_id not in self._driving:
            return  # another process drives it
        _background(asyncio.get_running_loop(), _dispatch(run_id, message))

    # --- Anyone's side -----------------------------------------------------------------------------

    async def publish_control(self, run_id: str, message: dict[str, Any]) -> bool:
        """Acts on the message here if this process drives the run (True if it did); otherwise sends
        it to every process, and the one driving the run acts on it (False)."""
        run_id = str(run_id)
        if live_run(run_id) is not None:
            return await _dispatch(run_id, message)
        await self.broadcast(run_id, message)
        return False

    async def broadcast(self, run_id: str, message: dict[str, Any]) -> int:
        """Send a control message to every process; how many listened (0 if Redis is away)."""
        data = json.dumps({**message, "run": str(run_id)})
        if len(data) > CONTROL_MAX_BYTES:
            raise ValueError("a control message is at most 4 KB")
        try:
            return await self.redis.publish(CONTROL_CHANNEL, data)
        except Exception as exc:  # the database holds the stop: the driver's writer finds it there
            logger.warning("sending a control message for run %s failed: %s", run_id, exc)
            return 0

    def tail(self, log: EventLogReader, *, min_interval: float = 0.0) -> RedisTail:
        return RedisTail(self, log, min_interval)

    async def aclose(self) -> None:
        self._driving.clear()
        for task in (self._publisher, self._listener):
            if task is not None and not task.done():
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass
        await self.redis.aclose()


def _is_id_refusal(error: Exception) -> bool:
    # "ERR The ID specified in XADD is equal or smaller than the target stream top item": the entry
    # is there already (a batch sent again) or the run is driven again; the database has it.
    return "equal or smaller" in str(error)


class RedisTail:
    """A follower of a run driven elsewhere: the database up to now, then the run's Stream from the
    follower's cursor (the last event folded); whatever the Stream misses is read from the database,
    and while Redis is away the database is polled."""

    def __init__(self, fanout: RedisFanout, log: EventLogReader, min_interval: float) -> None:
        self.fanout = fanout
        self.log = log
        self.key = stream_key(str(log.run_id))
        self.min_interval = min_interval
        self.ended = False
        self._first = True
        self._down_until = 0.0
        self._status_at = 0.0
        self._status_now = True
        self._last = 0.0
        # What came from where, for the tests and the benchmarks.
        self.from_stream = self.from_database = self.fallbacks = 0

    async def next(self) -> int:
        """Fold what the run said since the last call, waiting for it; how many events."""
        if self._first:
            self._first = False
            return await self._read_database()
        wait = self.min_interval - (time.monotonic() - self._last)
        if wait > 0:
            await asyncio.sleep(wait)  # under pressure: what comes meanwhile goes in one frame
        if self.ended or time.monotonic() < self._down_until:
            await asyncio.sleep(POLL_SECONDS)
            self._status_now = True
            return await self._read_database()
        count, block = 0, BLOCK_MS
        # A full read means more waits: read on (without waiting) up to one frame's worth, so that a
        # follower keeps up with an agent faster than READ_ENTRIES events a swap.
        while count < READ_ROWS:
            try:
                reply = await self.fanout.redis.xread(
                    {self.key: f"{self.log.last_seq}-0"}, count=READ_ENTRIES, block=block
                )
            except Exception as exc:
                self.fallbacks += 1
                self._down_until = time.monotonic() + RETRY_SECONDS
                self._status_now = True
                logger.info("following run %s from the database: Redis is away (%s)", self.log.run_id, exc)
                return count + await self._read_database()
            entries = _entries(reply) if reply else []
            if not entries:
                self._status_now = self._status_now or not count
                break
            applied = await self._apply(entries)
            count += applied
            if not applied or len(entries) < READ_ENTRIES or self.ended:
                break  # all read, the run's end, or a gap the database does not fill yet
            block = None
        if count:
            self._last = time.monotonic()
        return count

    async def _apply(self, entries: list[tuple[str, dict[str, str]]]) -> int:
        log, count = self.log, 0
        for entry_id, fields in entries:
            seq = int(entry_id.partition("-")[0])
            if "end" in fields:  # the run's end is stored: whatever is left is in the database
                self.ended = self._status_now = True
                return count + await self._read_database(everything=True)
            if seq <= log.last_seq:
                continue
            if seq > log.last_seq + 1 or "big" in fields or "p" not in fields:
                # Trimmed from the Stream, lost while Redis was away, or too large for it.
                read = await self._read_database()
                count += read
                if seq <= log.last_seq:
                    continue
                if seq > log.last_seq + 1 or "p" not in fields:
                    if read < READ_ROWS:  # not stored yet (the writer is a moment behind): shortly
                        await asyncio.sleep(POLL_SECONDS)
                    return count
            log.apply_record(seq, fields.get("t", ""), fields["p"])
            self.from_stream += 1
            count += 1
        return count

    async def _read_database(self, *, everything: bool = False) -> int:
        count = await sync_to_async(self.log.read)(limit=None if everything else READ_ROWS)
        self.from_database += count
        return count

    def status_due(self) -> bool:
        """Whether the follower should look at the run's status now: when the run's end came, Redis is
        away, nothing came for a while, or a second passed."""
        now = time.monotonic()
        if self._status_now or now - self._status_at >= 1.0:
            self._status_now, self._status_at = False, now
            return True
        return False


def _entries(reply: Any) -> list[tuple[str, dict[str, str]]]:
    # XREAD's reply: [[key, [(id, fields), ...]]] (RESP2) or {key: [[(id, fields), ...]]} (RESP3).
    if isinstance(reply, dict):
        return [entry for streams in reply.values() for batch in streams for entry in batch]
    return [entry for _, batch in reply for entry in batch]


Fanout = InProcessFanout | RedisFanout
_FANOUTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Fanout] = weakref.WeakKeyDictionary()


def fanout() -> Fanout:
    """This event loop's fan-out, as the settings choose it."""
    loop = asyncio.get_running_loop()
    url = settings.AGENTS_UI_FANOUT_URL
    found = _FANOUTS.get(loop)
    if found is None or getattr(found, "url", "") != url:
        if found is not None:  # the settings changed (tests do): the old one's connections are closed
            _background(loop, found.aclose())
        found = _FANOUTS[loop] = RedisFanout(url) if url else InProcessFanout()
    return found


def close_in(loop: asyncio.AbstractEventLoop, timeout: float = 10) -> None:
    """From another thread: close the fan-out of a running event loop (a server's, as it stops)."""
    found = _FANOUTS.pop(loop, None)
    if found is not None and loop.is_running():
        asyncio.run_coroutine_threadsafe(found.aclose(), loop).result(timeout)
