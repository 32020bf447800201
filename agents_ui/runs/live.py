"""Live runs: the user's message in, the agent's events out, stored as they arrive.

A run is started by the request that saved the user's message (`start_run`), as a task of the
server's event loop, so it goes on when the browser disconnects and nothing the agent says is lost.
Browsers follow it through `LiveRun.subscribe()`; a second tab or a reconnect subscribes again and
never starts the agent twice. Every event is folded by the SDK's TranscriptBuilder, queued for the
process's event writer (agents_ui.runs.writer), and the assistant's messages are saved as they
complete.

One process owns a live run. A page served by another worker, or after a restart, reads the
event log from the database (agents_ui.runs.event_log) and, when Redis is configured, the run's
live Stream (agents_ui.runs.fanout), which the driver feeds; a stop sent to another worker reaches
the driver through the fan-out's control channel. With separate run workers (agents_ui.runs.queue),
`start_run` leaves the run queued and a worker drives it (`drive_leased`), every write about it
fenced by the worker's lease.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import uuid
from concurrent.futures import Future
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone

from agents_ui.capabilities import Observations
from agents_ui.decisions import Plan
from agents_ui.display.task import task_ending
from agents_ui.endpoints import conformance, errors
from agents_ui.endpoints.clients import sdk_client, streaming_agent_client
from agents_ui.endpoints.plans import remembered
from agents_ui.models import AgentEndpoint, ApprovalRecord, Conversation, Message, Run
from agents_ui.monitoring.runs import RunWatch
from agents_ui.runs import queue, tracing, waiting
from agents_ui.runs.event_log import event_record, stored_events
from agents_ui.runs.fanout import Fanout, fanout, on_control
from agents_ui.runs.protocols import RunContext, adapter_for
from agents_ui.runs.registry import LIVE, live_run
from agents_ui.runs.writer import FLUSH_BYTES, FLUSH_EVENTS, WriteJob, writer_for_loop
from agents_ui.sdk import AgentError
from agents_ui.sdk.agui.rules import RuleViolation
from agents_ui.sdk.folding import TranscriptBuilder
from agents_ui.sdk.transcript import Transcript
from agents_ui.sdk.usage import stored as stored_usage

logger = logging.getLogger(__name__)

STOPPED = "Stopped. The answer so far is kept."
# How many of a run's protocol warnings are kept (the first ones: the rest repeat them).
MAX_WARNINGS = 50
# A run stopped by a change of course: the next run carries the correction.
CHANGED_COURSE = "Stopped to change course. The answer so far is kept; the next turn carries the change."


class RunLimitReached(Exception):
    """The run's event log reached AGENTS_UI_RUN_MAX_BYTES: it ends here, saying so.

    The SDK's stream cuts a run at the same size (and at its time limits, see sdk_client); this is
    the store's own bound, whatever client fed the run.
    """


def _size_label(count: int) -> str:
    return f"{count / (1024 * 1024):.0f} MB" if count >= 1024 * 1024 else f"{count / 1024:.0f} KB"


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
    # The thread's earlier runs, beside their transcripts in ``builder.earlier`` (set before the
    # first event; a resume's results land on those transcripts' calls).
    earlier_runs: list[Run] | None = None
    _subscribers: set[asyncio.Event] = field(default_factory=set)
    # (seq, type, JSON text) waiting for the process's writer.
    _pending: list[tuple[int, str, str]] = field(default_factory=list)
    _seq: int = 0
    _saved_messages: set[str] = field(default_factory=set)
    # Set when a write finds the run stopped by another server process.
    stopped_elsewhere: bool = False
    # What the stopped run says of its stop, and the status it ends with.
    stop_reason: str = STOPPED
    stop_status: str = Run.Status.CANCELLED
    # The lease a run worker holds on the run (agents_ui.runs.queue; 0 and "" in the web process):
    # every write about the run checks both, and `lease_lost` says the database refused them.
    attempt: int = 0
    worker: str = ""
    lease_lost: bool = False
    # Decisions taken on this run's requests while it streams (request id -> ApprovalRecord): the
    # streams following it show who decided and what was sent, without a database query.
    decided: dict[str, Any] = field(default_factory=dict)
    # When the agent began to reason, and when it moved on from reasoning (monotonic clock).
    _thinking: list[float] = field(default_factory=list)
    # The event log's size so far, against AGENTS_UI_RUN_MAX_BYTES.
    stored_bytes: int = 0
    _pending_bytes: int = 0
    max_bytes: int = field(default_factory=lambda: settings.AGENTS_UI_RUN_MAX_BYTES)
    # What the consumer rules stripped or translated (for staff), and the rule broken, if one was.
    warnings: list[str] = field(default_factory=list)
    violation: dict[str, str] | None = None
    # How the agent's answer is read and what goes with the request, from its plan.
    connection: Connection = field(default_factory=lambda: Connection())
    # When the oldest event waiting for the writer arrived (time.perf_counter): the writer's lag.
    _pending_since: float = 0.0
    # The plan it was started under: what it leaves waiting on the person is read with it.
    plan: Plan | None = None
    # The run's metrics and log lines (set when it is driven).
    watch: RunWatch | None = None
    # Where its events go for the browsers other processes serve (set when it is driven).
    fanout: Fanout | None = None

    @property
    def transcript(self) -> Transcript:
        return self.builder.transcript

    @property
    def seq(self) -> int:
        """The seq of the last event folded (the event log's numbering): a stream's cursor."""
        return self._seq

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
        """Fold one event and queue it for the log (as the agent wrote it, when that text is known).

        An event that would take the log past the run's size limit is neither folded nor stored.
        """
        type_, payload = (event.type.value, raw) if raw is not None else event_record(event)
        if self.stored_bytes + len(payload) > self.max_bytes:
            raise RunLimitReached(
                f"The agent's answer reached {_size_label(self.max_bytes)}, the most one run may store, so "
                "the run was stopped there."
            )
        self.stored_bytes += len(payload)
        self.builder.apply(event)
        if not self._pending:
            self._pending_since = time.perf_counter()
        self._seq += 1
        self._pending.append((self._seq, type_[:64], payload))
        self._pending_bytes += len(payload)
        if self.fanout is not None:
            self.fanout.publish(self.run_id, self._seq, type_[:64], payload)
        if len(self._thinking) < 2:
            self._time_thinking(type_)
        # As the batch fills up (setting the writer's wake event again costs nothing).
        if len(self._pending) == FLUSH_EVENTS or self._pending_bytes > FLUSH_BYTES:
            writer_for_loop().wake()
        self.notify()

    def _time_thinking(self, type_: str) -> None:
        if not self._thinking:
            if type_.startswith(("REASONING", "THINKING")):
                self._thinking.append(time.monotonic())
        elif type_.startswith(("TEXT_MESSAGE", "TOOL_CALL", "RUN_FINISHED", "RUN_ERROR")):
            self._thinking.append(time.monotonic())

    @property
    def thought_seconds(self) -> int | None:
        """How long the agent reasoned before it answered (None until it did both)."""
        if len(self._thinking) < 2:
            return None
        return max(1, round(self._thinking[1] - self._thinking[0]))

    def take_batch(self, *, final: bool = False) -> WriteJob | None:
        """What waits to be written, handed to the process's writer (given back if the write fails)."""
        events, self._pending, self._pending_bytes = self._pending, [], 0
        saved = set(self._saved_messages)
        messages = self._new_messages(self.conversation, final=final)
        if self.watch is not None:
            self.watch.count_to(self._seq)
        if not events and not messages:
            return None
        since = self._pending_since if events else 0.0
        return WriteJob(self, events, messages, self._seq, saved, since=since)

    def give_back(self, job: WriteJob) -> None:
        """A write failed (SQLite busy past its timeout, a lost connection): keep it all for the next."""
        self._pending[:0] = job.events
        self._saved_messages = job.saved_before
        if job.since:
            self._pending_since = job.since

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


@dataclass(frozen=True)
class Connection:
    """What the plan says about reading a run: stream or one complete response, resume after a cut,
    send the last state back (docs/PROTOCOLS.md: transport, state.persistentState)."""

    stream: bool = True
    resume: bool = False
    send_state: bool = True
    # Tell the agent which A2UI catalogue this product renders (docs/PROTOCOLS.md, generative UI).
    offer_a2ui: bool = False

    @classmethod
    def of(cls, plan: Plan | None) -> Connection:
        if plan is None:
            return cls()
        transport = plan["transport"].details
        return cls(
            stream=bool(transport.stream),
            resume=bool(transport.resume),
            send_state=bool(plan["state"].details.send_state_back),
            offer_a2ui=plan["generative-ui"].shown and bool(plan["generative-ui"].details.advertise),
        )


def start_run(run: Run, plan: Plan | None = None) -> LiveRun | None:
    """Drive a pending run in the background of the current event loop (the server's), read as
    `plan` says (without one: a stream, not resumed, the last state sent back).

    With separate run workers the run stays queued, as committed with the message: a worker claims
    it (None comes back)."""
    if queue.separate():
        return None
    live = LiveRun(str(run.id), run.conversation.endpoint.protocol, connection=Connection.of(plan), plan=plan)
    return _start(live, run)


def drive_here(run: Run, plan: Plan | None = None) -> LiveRun:
    """Drive a run in this process whatever the run workers setting: for the conformance probe,
    which watches its own run to stop it at the first request (agents_ui.runs.probe). The run is
    saved running, so no worker claims it."""
    live = LiveRun(str(run.id), run.conversation.endpoint.protocol, connection=Connection.of(plan), plan=plan)
    return _start(live, run)


def drive_leased(run: Run, plan: Plan | None, lease: queue.Lease) -> LiveRun:
    """A run worker's claimed run, driven as `start_run` does, its writes fenced by `lease`."""
    live = LiveRun(str(run.id), run.conversation.endpoint.protocol, connection=Connection.of(plan), plan=plan)
    live.attempt, live.worker = lease.attempt, lease.worker
    return _start(live, run)


def _start(live: LiveRun, run: Run) -> LiveRun:
    LIVE[live.run_id] = live
    tracing.started_by_request(live.run_id)
    # A fresh context: the run outlives the request that started it, and must not hold that request's
    # database thread (its writes go through the process's one writer).
    live.task = asyncio.get_running_loop().create_task(
        _drive(run, live), name=f"run-{run.id}", context=contextvars.Context()
    )
    return live


async def stop_run(run_id: uuid.UUID | str, reason: str = "", *, status: str = Run.Status.CANCELLED) -> bool:
    """End a live run: the upstream connection is closed, what was said so far is kept; it has
    ended (and written what it said) when this returns, unless that takes too long. It ends
    `status` (cancelled; a worker that hands a run back ends it failed, saying so).

    A run another process drives is told to stop through the fan-out's control channel (with Redis:
    at once); False then, and the caller records the stop in the database, which the driver's
    writer also reads."""
    if live_run(run_id) is None:
        await fanout().publish_control(str(run_id), {"kind": "stop", "reason": reason[:500]})
        return False
    return await _stop_here(str(run_id), {"reason": reason}, status=status)


async def _stop_here(run_id: str, message: dict[str, Any], status: str = Run.Status.CANCELLED) -> bool:
    live = live_run(run_id)
    reason = message.get("reason")
    reason = reason[:500] if isinstance(reason, str) else ""
    if live is None or live.done or live.task is None:
        return False
    live.stop_reason, live.stop_status = reason or STOPPED, status
    live.task.cancel()
    try:
        await asyncio.wait_for(asyncio.shield(live.task), timeout=5)
    except (TimeoutError, asyncio.CancelledError):
        pass
    return True


async def _decided_elsewhere(run_id: str, message: dict[str, Any]) -> bool:
    """A decision on one of this run's requests, taken through another process: the run's streams
    here show who decided and what was sent, as they do for one taken here."""
    live, request = live_run(run_id), message.get("request")
    if live is None or not isinstance(request, str):
        return False
    record = (
        await ApprovalRecord.objects.select_related("decided_by")
        .filter(run_id=run_id, request_id=request[:200])
        .afirst()
    )
    if record is None:
        return False
    live.decided.setdefault(record.request_id, record)
    live.notify()
    return True


on_control("stop", _stop_here)
on_control("decided", _decided_elsewhere)


async def _drive(run: Run, live: LiveRun) -> None:
    conversation = live.conversation = run.conversation
    endpoint = conversation.endpoint
    writer = writer_for_loop()
    traced = tracing.start(run, live)  # None unless tracing is on
    if traced:
        traced.attach()
    mine = _fenced(run, live)
    begun = await _begin(run, live, traced.trace_id if traced else None)
    if begun is None:
        # Stopped before it began, or taken back (a sweeper judged this worker gone): nothing to write.
        live.lease_lost = live.done = True
        LIVE.pop(live.run_id, None)
        if traced:
            traced.detach()
        return
    watch = live.watch = RunWatch(run.pk, conversation.pk, endpoint.slug, endpoint.protocol)
    status, error, refused = Run.Status.RUNNING, "", ""
    writer.add(live)
    live.fanout = fanout()
    live.fanout.driving(live.run_id)
    try:
        async with streaming_agent_client() as client:
            if traced:
                traced.instrument(client)
            agent = sdk_client(endpoint, client)
            earlier = begun.result()
            if traced:
                await traced.waited(run, earlier)
            # The same (still empty) transcript, so that whoever follows it already keeps it.
            live.builder = TranscriptBuilder(live.transcript, earlier=[t for _, t in earlier])
            live.earlier_runs = [r for r, _ in earlier]
            live.notify()  # followers learn the earlier runs
            how = live.connection
            context = RunContext(
                earlier, stream=how.stream, resume=how.resume, send_state=how.send_state,
                offer_a2ui=how.offer_a2ui, warnings=live.warnings,
            )  # fmt: skip
            events = adapter_for(endpoint).events(agent, run, context)
            asked = 0  # the requests for a decision seen so far
            async with aclosing(events):
                async for item in events:
                    if watch.first_event is None:
                        watch.saw_first_event()
                    event, raw = item if isinstance(item, tuple) else (item, None)
                    live.apply(event, raw)
                    if len(live.transcript.approvals) != asked:
                        asked = len(live.transcript.approvals)
                        if live.transcript.pending_approvals:  # the stream holds: it waits on the person now
                            await _record_waiting(waiting.record_holding, run, live.transcript)
                    if traced:
                        traced.observe(live.transcript)
                    if live.stopped_elsewhere:
                        raise asyncio.CancelledError  # stopped from another server process
    except asyncio.CancelledError:
        status, error = live.stop_status, live.stop_reason
    except RunLimitReached as exc:
        status, error = Run.Status.FAILED, str(exc)
        if traced:
            traced.fail(exc, "run_too_large")
        logger.info("run %s stopped at a limit: %s", run.pk, exc)
    except AgentError as exc:
        status, error = Run.Status.FAILED, errors.describe(exc)
        refused = conformance.refusal(exc)
        if isinstance(exc, RuleViolation):
            live.violation = {"rule": exc.detail, "spec": exc.spec, "event": endpoint.scrub(exc.raw)}
        if traced:
            traced.fail(exc)
        logger.info("run %s failed: %s", run.pk, exc.code)
    except Exception as exc:
        logger.exception("run %s failed unexpectedly", run.pk)
        if traced:
            traced.fail(exc)
        status, error = Run.Status.FAILED, "Something went wrong while reading the agent's answer."
    if status == Run.Status.RUNNING:
        status, error = _final_status(live.transcript)
    error = endpoint.scrub(error)
    live.status, live.error = status, error
    try:
        writer.discard(live)
        if not live.lease_lost:  # else the run is another worker's, or ended by the sweeper
            await writer.write_final(live)
        if not live.lease_lost and await mine.aupdate(
            status=status, error=error, finished_at=timezone.now(), state=_jsonable(live.transcript.state),
            first_event_at=watch.first_event_at, usage=stored_usage(live.transcript.usage),
            protocol_warnings=[endpoint.scrub(w[:500]) for w in live.warnings[:MAX_WARNINGS]],
            violation=live.violation,
        ):  # fmt: skip
            await Conversation.objects.filter(pk=conversation.pk).aupdate(updated_at=timezone.now())
            await _record_waiting(waiting.record, run, live.transcript, live.plan, status)
            await _remember_observations(endpoint, live.transcript)
            await _record_evidence(endpoint, run, live.transcript, status, endpoint.scrub(refused))
        else:
            live.lease_lost = True
            logger.warning("run %s: its lease was taken away; this worker's last writes were refused", run.pk)
    finally:
        if traced:
            traced.finish(live)
            traced.detach()
        live.done = True
        live.notify()
        LIVE.pop(live.run_id, None)
        live.fanout.ended(live.run_id, live._seq)  # after its end is stored
        live.fanout.released(live.run_id)
        watch.ended(status)


async def _record_waiting(write: Any, *args: Any) -> None:
    """What the run leaves waiting on its person, for the inbox: never the reason a run fails."""
    try:
        await sync_to_async(write)(*args)
    except Exception:
        logger.exception("run %s: what it waits for could not be recorded", args[0].pk)


async def _remember_observations(endpoint: AgentEndpoint, transcript: Transcript) -> None:
    """Evidence from this run about what the agent does, kept apart from its declaration."""
    observed = remembered(endpoint.observed, transcript.observed, _subagent_names(transcript.subagents))
    if observed is not None:
        await AgentEndpoint.objects.filter(pk=endpoint.pk).aupdate(observed=observed)


async def _record_evidence(
    endpoint: AgentEndpoint, run: Run, transcript: Transcript, status: str, refused: str
) -> None:
    """What this run showed, as evidence for the agent's conformance report (never the reason a
    run fails)."""
    try:
        await sync_to_async(conformance.record_run)(
            endpoint, run.pk, Observations.of(transcript.observed),
            message_id=(run.request or {}).get("message_id"), refused=refused,
            ended_well=status in (Run.Status.COMPLETED, Run.Status.INTERRUPTED),
        )  # fmt: skip
    except Exception:
        logger.exception("run %s: its evidence could not be recorded", run.pk)


def _subagent_names(nodes: list[Any]) -> list[str]:
    names: list[str] = []
    for node in nodes:
        names += [node.name or "", *_subagent_names(node.children)]
    return names


def _fenced(run: Run, live: LiveRun) -> Any:
    """The run, as long as this drive still holds its lease: every write about it goes through this."""
    return Run.objects.filter(pk=run.pk, attempt=live.attempt, worker=live.worker)


@sync_to_async
def _begin(run: Run, live: LiveRun, trace_id: str | None) -> Future[list[tuple[Run, Transcript]]] | None:
    """The run marked running, fenced by its lease (None: stopped before it began, or taken back),
    with what the drive starts from, in one trip to a thread: the answers of the conversation saved
    already (a MESSAGES_SNAPSHOT repeats them; they are saved once, with the run that said them), and
    the thread's earlier runs, as a future whose failure the drive reports as the run's. A run
    that the send which made its conversation hands on (`first_of_thread`) has neither to read."""
    if (
        not _fenced(run, live)
        .exclude(status__in=Run.FINISHED)
        .update(
            status=Run.Status.RUNNING,
            started_at=timezone.now(),
            **({"trace_id": trace_id} if trace_id else {}),
        )
    ):
        return None
    earlier: Future[list[tuple[Run, Transcript]]] = Future()
    if getattr(run, "first_of_thread", False):  # saved with its new conversation: nothing before it
        earlier.set_result([])
        return earlier
    saved = Message.objects.filter(conversation=run.conversation).exclude(remote_id="")
    for role, remote_id in saved.values_list("role", "remote_id"):
        live._saved_messages.add(f"reasoning:{remote_id}" if role == Message.Role.REASONING else remote_id)
    try:
        earlier.set_result(thread_runs(run.conversation, before=run))
    except Exception as exc:
        earlier.set_exception(exc)
    return earlier


def thread_runs(conversation: Conversation, *, before: Run | None = None) -> list[tuple[Run, Transcript]]:
    """The conversation's runs (those created before ``before``, if given), oldest first, each
    folded with the ones before it. A run this process drives is its live transcript, already
    folded with the runs before it."""
    # What was edited away or answered again is not part of the thread any more.
    runs = conversation.runs.filter(superseded_at__isnull=True).order_by("created_at", "id")
    if before is not None:
        runs = runs.filter(created_at__lt=before.created_at).exclude(pk=before.pk)
    folded: list[tuple[Run, Transcript]] = []
    for run in runs:
        run.conversation = conversation
        live = live_run(run.pk)
        if live is not None and live.earlier_runs is not None:
            # Its results for earlier calls are on its own copies of the earlier runs: show those.
            folded = list(zip(live.earlier_runs, live.builder.earlier, strict=True))
            folded.append((run, live.transcript))
            continue
        if live is not None:  # not begun yet: nothing of it to fold
            folded.append((run, live.transcript))
            continue
        earlier = [t for _, t in folded]
        folded.append((run, TranscriptBuilder(earlier=earlier).apply_all(stored_events(run))))
    return folded


def _final_status(transcript: Transcript) -> tuple[str, str]:
    task = transcript.task
    if task is not None and task.state == "auth-required":
        # Not completed: the task waits for credentials, and the status says what the agent asked.
        asked = " ".join(task.status_text.split())[:500]
        return Run.Status.AUTH_REQUIRED, f"The agent needs authorization: {asked}" if asked else (
            "The agent needs authorization before it goes on."
        )
    outcome = transcript.outcome
    if outcome is None:
        return Run.Status.COMPLETED, ""
    if outcome.kind == "interrupt" or transcript.pending_approvals:
        return Run.Status.INTERRUPTED, ""
    if outcome.kind == "error":
        return Run.Status.FAILED, (
            task_ending(task, outcome.message) or outcome.message or "The agent reported an error."
        )
    if outcome.kind == "cancelled":
        return Run.Status.CANCELLED, "The agent cancelled the run."
    return Run.Status.COMPLETED, ""


def _jsonable(value: Any) -> Any:
    return value if isinstance(value, dict | list | str | int | float | bool) or value is None else None
