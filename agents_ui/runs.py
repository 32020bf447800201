"""Live runs: the user's message in, the agent's events out, stored as they arrive.

A run is started by the request that saved the user's message (`start_run`), as a task of the
server's event loop, so it goes on when the browser disconnects and nothing the agent says is lost.
Browsers follow it through `LiveRun.subscribe()`; a second tab or a reconnect subscribes again and
never starts the agent twice. Every event is folded by the SDK's TranscriptBuilder, written to the
run's event log in batches, and the assistant's messages are saved as they complete.

One process owns a live run. A page served by another worker, or after a restart, reads the
event log from the database instead (`replay`).
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import json
import logging
import uuid
import weakref
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import httpx
from ag_ui.core import (
    AssistantMessage,
    DataSource,
    DocumentPart,
    ImagePart,
    ReasoningMessage,
    ResumeEntry,
    RunAgentInput,
    TextPart,
    UserMessage,
)
from asgiref.sync import sync_to_async
from django.db import connection, transaction
from django.utils import timezone

from agents_ui import agent_errors
from agents_ui.discovery import sdk_client
from agents_ui.http import agent_http_client
from agents_ui.models import AgentEndpoint, Attachment, Conversation, Message, Run, RunEvent
from agents_ui.sdk import AgentError, ExternalAgentClient
from agents_ui.sdk.agui import parse_event_object
from agents_ui.sdk.policy import EXTERNAL_EVENT_TYPES, Done, ExternalEvent, LegacyText
from agents_ui.sdk.transcript import Transcript, TranscriptBuilder

logger = logging.getLogger(__name__)

# Events are written to the database at most this often, or when this many are waiting.
FLUSH_SECONDS = 0.25
FLUSH_EVENTS = 500
# The end of a run retries a refused write this many times (1 + 2 + 3 + 4 s apart) before giving up.
FINAL_WRITE_ATTEMPTS = 5
# An external agent's stream waits while a person decides an approval: allow it that long.
APPROVAL_WAIT_SECONDS = 900.0


# --- Events to and from the event log -----------------------------------------------------------


def event_record(event: Any) -> tuple[str, str]:
    """A typed event -> (type, JSON text) for the run's event log."""
    if isinstance(event, ExternalEvent):
        if isinstance(event, LegacyText):
            return "legacy:text", json.dumps({"text": event.text})
        if isinstance(event, Done):
            return "legacy:done", "{}"
        return event.event_name, event.model_dump_json(by_alias=True, exclude_none=True)
    return event.type.value, event.model_dump_json(by_alias=True, exclude_none=True)


def event_from_record(protocol: str, type_: str, payload: dict[str, Any]) -> Any:
    if protocol == AgentEndpoint.Protocol.AGUI:
        return parse_event_object(payload)
    if type_ == "legacy:text":
        return LegacyText(text=payload.get("text", ""))
    if type_ == "legacy:done":
        return Done()
    cls = EXTERNAL_EVENT_TYPES.get(type_)
    return cls.model_validate(payload) if cls else None


# --- The registry of runs this process is driving -----------------------------------------------


@dataclass(eq=False)
class LiveRun:
    """A run this process is driving: its transcript so far, and who is watching it."""

    run_id: str
    protocol: str
    builder: TranscriptBuilder = field(default_factory=TranscriptBuilder)
    done: bool = False
    status: str = Run.Status.RUNNING
    error: str = ""
    task: asyncio.Task | None = None
    conversation: Conversation | None = None
    _subscribers: set[asyncio.Event] = field(default_factory=set)
    # (seq, type, JSON text) waiting for the process's writer.
    _pending: list[tuple[int, str, str]] = field(default_factory=list)
    _seq: int = 0
    _saved_messages: set[str] = field(default_factory=set)
    # Set when a write finds the run stopped by another server process.
    stopped_elsewhere: bool = False

    @property
    def transcript(self) -> Transcript:
        return self.builder.transcript

    def subscribe(self) -> asyncio.Event:
        """An event set whenever the run changes (and once now, so the first look is immediate)."""
        changed = asyncio.Event()
        changed.set()
        self._subscribers.add(changed)
        return changed

    def unsubscribe(self, changed: asyncio.Event) -> None:
        self._subscribers.discard(changed)

    def notify(self) -> None:
        for changed in self._subscribers:
            changed.set()

    def apply(self, event: Any, raw: str | None = None) -> None:
        """Fold one event and queue it for the log (as the agent wrote it, when that text is known)."""
        self.builder.apply(event)
        self._seq += 1
        type_, payload = (event.type.value, raw) if raw is not None else event_record(event)
        self._pending.append((self._seq, type_[:64], payload))
        if len(self._pending) == FLUSH_EVENTS:  # once, as the batch fills up
            writer_for_loop().wake()
        self.notify()

    def take_batch(self, *, final: bool = False) -> WriteJob | None:
        """What waits to be written, handed to the process's writer (given back if the write fails)."""
        events, self._pending = self._pending, []
        saved = set(self._saved_messages)
        messages = self._new_messages(self.conversation, final=final)
        if not events and not messages:
            return None
        return WriteJob(self, events, messages, self._seq, saved)

    def give_back(self, job: WriteJob) -> None:
        """A write failed (SQLite busy past its timeout, a lost connection): keep it all for the next."""
        self._pending[:0] = job.events
        self._saved_messages = job.saved_before

    def _new_messages(self, conversation: Conversation, *, final: bool) -> list[Message]:
        """Assistant messages to save: each once complete, or, at the end, whatever was said."""
        found = []
        for message in self.transcript.messages:
            if message.role != "assistant" or message.id in self._saved_messages:
                continue
            if not (message.complete or final) or not message.text:
                continue
            self._saved_messages.add(message.id)
            node = self.transcript.subagent(message.subagent_run_id) if message.subagent_run_id else None
            found.append(
                Message(
                    conversation=conversation,
                    run_id=self.run_id,
                    role=Message.Role.ASSISTANT,
                    remote_id=message.id[:200],
                    content=message.text,
                    subagent=(node.name if node else "")[:200],
                )
            )
        if final:
            for entry in self.transcript.reasoning:
                key = f"reasoning:{entry.id}"  # the agent may give it its answer's id
                if entry.encrypted and entry.encrypted_value and key not in self._saved_messages:
                    self._saved_messages.add(key)
                    found.append(
                        Message(
                            conversation=conversation,
                            run_id=self.run_id,
                            role=Message.Role.REASONING,
                            remote_id=entry.id[:200],
                            encrypted_value=entry.encrypted_value,
                        )
                    )
        return found


@dataclass
class WriteJob:
    live: LiveRun
    events: list[tuple[int, str, str]]
    messages: list[Message]
    count: int
    saved_before: set[str]


class EventWriter:
    """One writer per process: every FLUSH_SECONDS, every live run's new events in one transaction.

    However many runs stream, the database sees a few transactions a second from one thread and one
    connection, instead of each run competing for SQLite's single write lock.
    """

    def __init__(self) -> None:
        self.runs: dict[str, LiveRun] = {}
        self.lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None

    def add(self, live: LiveRun) -> None:
        self.runs[live.run_id] = live
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._loop(), context=contextvars.Context())

    def discard(self, live: LiveRun) -> None:
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
                stopped = await asyncio.get_running_loop().run_in_executor(
                    _WRITE_THREAD, _write_many, jobs, not self.runs
                )
            except Exception:
                for job in reversed(jobs):
                    job.live.give_back(job)
                raise
        for job in jobs:
            if job.live.run_id in stopped:
                job.live.stopped_elsewhere = True

    async def write_final(self, live: LiveRun) -> None:
        """The end of a run: everything it said, retried while the database is busy."""
        for attempt in range(1, FINAL_WRITE_ATTEMPTS + 1):
            try:
                await self.write([live.take_batch(final=True)])
                return
            except Exception:
                if attempt == FINAL_WRITE_ATTEMPTS:
                    raise
                await asyncio.sleep(attempt)


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


def _write_many(jobs: list[WriteJob], last: bool = False) -> set[str]:
    """One transaction for every job, a few statements whatever the number of runs and events.
    Returns the runs found stopped by another server process.

    Statements, not rows, are what this costs: the database driver lets go of Python's GIL for each
    statement it steps through, and getting it back from a busy event loop can take milliseconds,
    so a statement per event or per run would make the writer fall behind the agents.
    """
    run_field = RunEvent._meta.get_field("run")
    run_values = {
        job.live.run_id: run_field.get_db_prep_value(uuid.UUID(job.live.run_id), connection) for job in jobs
    }
    rows = [
        (run_values[job.live.run_id], seq, type_, payload)
        for job in jobs
        for seq, type_, payload in job.events
    ]
    messages = [message for job in jobs for message in job.messages]
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            for statement, params in _insert_events(rows):
                cursor.execute(statement, params)
            if messages:
                Message.objects.bulk_create(messages)
            # One UPDATE for every run's count; a run stopped from another process keeps the one it had.
            # Written by hand: QuerySet.bulk_update builds the same CASE from 500 When() expressions
            # and takes about 120 ms of Python per batch to compile it, four times a second.
            cases = " ".join("WHEN %s THEN %s" for _ in jobs)
            params = [value for job in jobs for value in (run_values[job.live.run_id], job.count)]
            ids = list(run_values.values())
            run_table, marks = connection.ops.quote_name(Run._meta.db_table), ", ".join(["%s"] * len(ids))
            cursor.execute(
                f"UPDATE {run_table} SET event_count = CASE id {cases} ELSE event_count END "
                f"WHERE id IN ({marks}) AND status <> %s",
                [*params, *ids, Run.Status.CANCELLED],
            )
            cursor.execute(
                f"SELECT id FROM {run_table} WHERE id IN ({marks}) AND status = %s",
                [*ids, Run.Status.CANCELLED],
            )
            stopped = cursor.fetchall()
    except Exception:
        # The connection may be what failed (a restarted database): the next batch opens a new one.
        connection.close()
        raise
    if last:  # no run left to write for: the connection is not kept open while idle
        connection.close()
    return {str(Run._meta.pk.to_python(pk)) for (pk,) in stopped}


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


LIVE: dict[str, LiveRun] = {}


def live_run(run_id: uuid.UUID | str) -> LiveRun | None:
    return LIVE.get(str(run_id))


# --- Starting, driving and stopping runs --------------------------------------------------------


@dataclass(frozen=True)
class RunRequest:
    """What the person asked for, as stored in Run.request."""

    kind: str = "message"  # "message" | "resume"
    message_id: int | None = None
    subagent: str = ""
    stream_profile: str = ""
    output_module_types: tuple[str, ...] = ()
    host_context: dict[str, Any] = field(default_factory=dict)
    resume: tuple[dict[str, Any], ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message_id": self.message_id,
            "subagent": self.subagent,
            "stream_profile": self.stream_profile,
            "output_module_types": list(self.output_module_types),
            "host_context": self.host_context,
            "resume": list(self.resume),
        }


def start_run(run: Run) -> LiveRun:
    """Drive a pending run in the background of the current event loop (the server's)."""
    live = LiveRun(str(run.id), run.conversation.endpoint.protocol)
    LIVE[live.run_id] = live
    # A fresh context: the run outlives the request that started it, and must not hold that request's
    # database thread (its writes go through the process's one writer).
    live.task = asyncio.get_running_loop().create_task(
        _drive(run, live), name=f"run-{run.id}", context=contextvars.Context()
    )
    return live


async def stop_run(run_id: uuid.UUID | str) -> bool:
    """End a live run: the upstream connection is closed, what was said so far is kept."""
    live = live_run(run_id)
    if live is None or live.done or live.task is None:
        return False
    live.task.cancel()
    try:
        await asyncio.wait_for(asyncio.shield(live.task), timeout=5)
    except (TimeoutError, asyncio.CancelledError):
        pass
    return True


async def _drive(run: Run, live: LiveRun) -> None:
    conversation = live.conversation = run.conversation
    endpoint = conversation.endpoint
    writer = writer_for_loop()
    await Run.objects.filter(pk=run.pk).aupdate(status=Run.Status.RUNNING, started_at=timezone.now())
    # A MESSAGES_SNAPSHOT repeats earlier answers: they are saved once, with the run that said them.
    async for role, remote_id in (
        Message.objects.filter(conversation=conversation)
        .exclude(remote_id="")
        .values_list("role", "remote_id")
    ):
        live._saved_messages.add(f"reasoning:{remote_id}" if role == Message.Role.REASONING else remote_id)
    status, error = Run.Status.RUNNING, ""
    writer.add(live)
    try:
        async with agent_http_client(pooled=False) as client:
            agent = sdk_client(endpoint, client)
            if isinstance(agent, ExternalAgentClient):
                agent.timeout = httpx.Timeout(
                    max(endpoint.read_timeout, APPROVAL_WAIT_SECONDS), connect=endpoint.connect_timeout
                )
                events = await _external_events(agent, run)
            else:
                events = agent.run_frames(await sync_to_async(_agui_input)(run))
            async with aclosing(events):
                async for item in events:
                    event, raw = item if isinstance(item, tuple) else (item, None)
                    live.apply(event, raw)
                    if live.stopped_elsewhere:
                        raise asyncio.CancelledError  # stopped from another server process
    except asyncio.CancelledError:
        status, error = Run.Status.CANCELLED, "Stopped. The answer so far is kept."
    except AgentError as exc:
        status, error = Run.Status.FAILED, agent_errors.describe(exc)
        logger.info("run %s failed: %s", run.pk, exc.code)
    except Exception:
        logger.exception("run %s failed unexpectedly", run.pk)
        status, error = Run.Status.FAILED, "Something went wrong while reading the agent's answer."
    if status == Run.Status.RUNNING:
        status, error = _final_status(live.transcript)
    error = endpoint.scrub(error)
    live.status, live.error = status, error
    try:
        writer.discard(live)
        await writer.write_final(live)
        await Run.objects.filter(pk=run.pk).aupdate(
            status=status, error=error, finished_at=timezone.now(), state=_jsonable(live.transcript.state)
        )
        await Conversation.objects.filter(pk=conversation.pk).aupdate(updated_at=timezone.now())
        await _remember_observations(endpoint, live.transcript)
    finally:
        live.done = True
        live.notify()
        LIVE.pop(live.run_id, None)


async def _remember_observations(endpoint: AgentEndpoint, transcript: Transcript) -> None:
    """Evidence from this run about what the agent does, kept apart from its declaration."""
    seen = transcript.observed
    found = {"reasoning": seen.reasoning, "interrupts": seen.interrupts, "state": seen.state_events}
    found = {key: True for key, value in found.items() if value}
    if found and not found.items() <= (endpoint.observed or {}).items():
        observed = {**(endpoint.observed or {}), **found}
        await AgentEndpoint.objects.filter(pk=endpoint.pk).aupdate(observed=observed)


def _final_status(transcript: Transcript) -> tuple[str, str]:
    outcome = transcript.outcome
    if outcome is None:
        return Run.Status.COMPLETED, ""
    if outcome.kind == "interrupt" or transcript.pending_approvals:
        return Run.Status.INTERRUPTED, ""
    if outcome.kind == "error":
        return Run.Status.FAILED, outcome.message or "The agent reported an error."
    if outcome.kind == "cancelled":
        return Run.Status.CANCELLED, "The agent cancelled the run."
    return Run.Status.COMPLETED, ""


def _jsonable(value: Any) -> Any:
    return value if isinstance(value, dict | list | str | int | float | bool) or value is None else None


def _agui_input(run: Run) -> RunAgentInput:
    """The conversation so far, and this run's request, as AG-UI wants it."""
    conversation = run.conversation
    request = run.request or {}
    history = list(conversation.messages.order_by("created_at", "id").prefetch_related("attachments"))
    current = request.get("message_id")
    # Sealed reasoning goes back on the message it belongs to (REASONING_ENCRYPTED_VALUE's entityId),
    # or as a reasoning message of its own when that message is not in the history.
    sealed = {m.remote_id: m for m in history if m.role == Message.Role.REASONING and m.encrypted_value}
    messages: list[Any] = []
    for message in history:
        if message.role == Message.Role.USER:
            content: Any = message.content
            if message.pk == current:
                parts = [_content_part(a) for a in message.attachments.all()]
                if parts:
                    content = [TextPart(text=message.content), *parts]
            messages.append(UserMessage(id=f"user-{message.pk}", content=content))
        elif message.role == Message.Role.ASSISTANT:
            blob = sealed.pop(message.remote_id, None) if message.remote_id else None
            messages.append(
                AssistantMessage(
                    id=message.remote_id or f"assistant-{message.pk}",
                    content=message.content,
                    encrypted_value=blob.encrypted_value if blob else None,
                )
            )
    messages += [
        ReasoningMessage(id=m.remote_id or f"reasoning-{m.pk}", content="", encrypted_value=m.encrypted_value)
        for m in sealed.values()
    ]
    previous = (
        conversation.runs.exclude(pk=run.pk).exclude(state__isnull=True).order_by("-created_at").first()
    )
    forwarded: dict[str, Any] = {}
    if request.get("subagent"):
        # docs/PROTOCOLS.md 1.1: the sub-agent the person chose travels as forwardedProps.subagent.
        forwarded["subagent"] = request["subagent"]
    resume = [ResumeEntry.model_validate(entry) for entry in request.get("resume") or []]
    return RunAgentInput(
        thread_id=conversation.thread_id,
        run_id=str(run.id),
        protocol_version="1.0",
        messages=messages,
        state=previous.state if previous else None,
        tools=[],
        context=[],
        forwarded_props=forwarded or None,
        resume=resume or None,
    )


def _content_part(attachment: Attachment) -> Any:
    source = DataSource(
        value=base64.b64encode(bytes(attachment.data)).decode(), mime_type=attachment.mime_type
    )
    metadata = {"filename": attachment.name, "size": attachment.size}
    if attachment.mime_type.startswith("image/"):
        return ImagePart(source=source, metadata=metadata)
    return DocumentPart(source=source, metadata=metadata)


async def _external_events(agent: ExternalAgentClient, run: Run) -> AsyncIterator[Any]:
    """Create the remote conversation and upload files where needed, then send the message."""
    conversation = run.conversation
    request = run.request or {}
    await agent.prepare(
        stream_profile=request.get("stream_profile") or None,
        output_module_types=request.get("output_module_types") or None,
        provider_grounding_display=True,
    )
    if not conversation.remote_id:
        remote = await agent.create_conversation()
        conversation.remote_id = remote.id
        await Conversation.objects.filter(pk=conversation.pk).aupdate(remote_id=remote.id)
    message = await Message.objects.aget(pk=request["message_id"])
    file_ids = []
    async for attachment in Attachment.objects.filter(message=message):
        if not attachment.remote_id:
            info = await agent.upload_file(
                bytes(attachment.data), attachment.name, declared_mime_type=attachment.mime_type
            )
            attachment.remote_id = info.id
            await Attachment.objects.filter(pk=attachment.pk).aupdate(remote_id=info.id)
        file_ids.append(attachment.remote_id)
    return agent.send_message(
        conversation.remote_id,
        message.content,
        file_ids=file_ids or None,
        host_context=request.get("host_context") or None,
    )


# --- Reading a run back -------------------------------------------------------------------------


def replay(run: Run) -> Transcript:
    """The transcript of a run from its event log (a finished run, or one driven elsewhere)."""
    builder = TranscriptBuilder()
    protocol = run.conversation.endpoint.protocol
    for type_, payload in RunEvent.objects.filter(run=run).order_by("seq").values_list("type", "payload"):
        try:
            event = event_from_record(protocol, type_, payload)
        except Exception:  # a stored event that no longer parses must not hide the rest
            logger.warning("skipping stored event %s of run %s", type_, run.pk, exc_info=True)
            continue
        if event is not None:
            builder.apply(event)
    return builder.transcript


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
