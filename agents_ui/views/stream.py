"""Following a run: its transcript as Server-Sent Events of htmx out-of-band fragments."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.db import connections
from django.http import HttpRequest, StreamingHttpResponse
from django.utils import timezone

from agents_ui.capabilities import Observations
from agents_ui.capabilities.profile import NOTHING_SEEN
from agents_ui.decisions import UserAbilities
from agents_ui.display.activities import prior_surfaces
from agents_ui.display.run_view import RunView
from agents_ui.display.stream_diff import StreamRenderer
from agents_ui.endpoints.plans import PlanInputs, abilities_of, plan_inputs
from agents_ui.models import Run
from agents_ui.monitoring import metrics
from agents_ui.runs import queue
from agents_ui.runs.event_log import EventLogReader
from agents_ui.runs.fanout import fanout
from agents_ui.runs.history import decided_in, thought_seconds, thread_runs
from agents_ui.runs.live import LiveRun, live_run
from agents_ui.sdk.folding import TranscriptBuilder
from agents_ui.sdk.transcript import Transcript
from agents_ui.views.access import users_run_now
from agents_ui.views.client_tools import thread_answers
from agents_ui.views.inbox import count_fragment

# The browser gets at most this many swaps a second per run: a fast agent is coalesced, a slow
# one still shows each word as it comes, and the first word after a pause goes at once.
MIN_SWAP_INTERVAL = 1 / 30
# The page adds "What the agent said before is kept." where it said anything (run.html).
ORPHANED = "The server restarted while the agent was answering."


# A browser whose stream was cut (its web process stopped, the network went away) asks again this
# much later, saying the last frame it had (Last-Event-ID); the stream goes on from there.
RETRY_MS = 1000
# A cursor is the run's event seq the frame showed: a number, never longer than this.
CURSOR_DIGITS = 12
# A resumed stream waits at most this long for the database to hold the browser's cursor (the
# process it came from read the run's live Stream, a moment ahead of the event log).
CURSOR_WAIT_SECONDS = 5.0


def sse_frame(event: str, html: str, cursor: int | None = None, *, retry: bool = False) -> bytes:
    """One frame; `cursor` (the run's last event seq it shows) is its SSE id, which the browser
    sends back (Last-Event-ID, or the page's ``cursor`` parameter) when it connects again."""
    data = "\n".join(f"data: {line}" for line in (html.splitlines() or [""]))
    head = f"retry: {RETRY_MS}\n" if retry else ""
    if cursor is not None:
        head += f"id: {cursor}\n"
    return f"{head}event: {event}\n{data}\n\n".encode()


def stream_cursor(request: HttpRequest) -> int | None:
    """Where the browser's last stream of this run stopped: the seq of the last event it showed, or
    None for a stream from the page (or a cursor that is not one of ours)."""
    value = request.headers.get("Last-Event-ID") or request.GET.get("cursor") or ""
    value = value.strip()
    if not value.isdecimal() or not value.isascii() or len(value) > CURSOR_DIGITS:
        return None
    return int(value)


# The stream's last frame: the page's htmx closes the EventSource on it (sse-close), instead of
# reconnecting.
DONE_FRAME = sse_frame("done", "")


@login_required
async def run_events(request: HttpRequest, run_id: Any) -> StreamingHttpResponse:
    """The run as Server-Sent Events of htmx fragments. Following a run never starts it."""
    cursor = stream_cursor(request)
    user = await request.auser()
    live = live_run(run_id)  # followed from here on, even if it ends before the stream begins
    run, abilities, earlier_decided, earlier, thought = await sync_to_async(_opening)(
        user, run_id, driven_here=live is not None
    )
    inputs = await plan_inputs(run.conversation.endpoint, abilities)
    decided = dict(earlier_decided.get(run.pk, {}))
    if live is not None:  # decisions taken from now on land in the same dict
        live.decided.update(decided)
        decided = live.decided
    source = live.transcript if live else TranscriptBuilder().transcript
    plan = inputs.plan(source.observed)
    view = RunView(run, source, plan, can_approve=abilities.can_approve, decided=decided)
    view.staff = bool(getattr(await request.auser(), "is_staff", False))
    view.thought = thought
    # Earlier turns' A2UI surfaces, which this run's updates go on from (live: as the run folded them).
    view.a2ui_prior = (
        (lambda: prior_surfaces(live.builder.earlier)) if live else prior_surfaces([t for _, t in earlier])
    )
    renderer = StreamRenderer(view, timer=live, earlier_decided=earlier_decided)
    if live is not None:
        frames = _follow_live(live, run, view, renderer, inputs, await request.auser())
    else:
        answers = thread_answers([*(r for r, _ in earlier), run])
        renderer.earlier = [
            RunView(r, t, plan, decided=earlier_decided.get(r.pk, {}), answers=answers[r.pk])
            for r, t in earlier
        ]
        frames = _follow_stored(
            run, view, renderer, inputs, [t for _, t in earlier], await request.auser(), cursor
        )
    response = EventStreamResponse(frames, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


def _opening(
    user: Any, run_id: Any, *, driven_here: bool
) -> tuple[Run, UserAbilities, dict[Any, dict[str, Any]], list, int | None]:
    """What a stream starts from, read in one trip to a thread: the run (the user's, or not found),
    what the user may do, the decisions recorded on the conversation's runs (a resume's result lands
    on a card that shows what was decided), and for a run this process does not drive (finished, or
    driven elsewhere) the earlier runs it is folded with and how long the agent thought."""
    run = users_run_now(user, run_id)
    abilities = abilities_of(user)
    earlier_decided = decided_in(run.conversation)
    earlier = [] if driven_here else thread_runs(run.conversation, before=run)
    thought = None if driven_here else thought_seconds(run)
    # A stream may stay open for minutes: it must not hold a database connection meanwhile (the
    # request's thread keeps its own connection until the response ends).
    connections.close_all()
    return run, abilities, earlier_decided, earlier, thought


class EventStreamResponse(StreamingHttpResponse):
    """Server-Sent Events whose frames are bytes already: served as they come.

    StreamingHttpResponse passes each part through two more async generators on its way to the
    server (one to turn it into bytes); with hundreds of open streams that is a measurable share
    of the event loop, for nothing here. Counted as an open stream from made to closed (Django
    closes every response it served, whether the browser stayed to the end or left).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        metrics.OPEN_STREAMS.inc()
        self._counted = True

    def close(self) -> None:
        if self._counted:
            self._counted = False
            metrics.OPEN_STREAMS.dec()
        super().close()

    def __aiter__(self) -> AsyncIterator[bytes]:
        if not self.is_async:  # a middleware replaced the content: Django's way, then
            return super().__aiter__()
        return self._iterator


async def _follow_live(
    live: LiveRun, run: Run, view: RunView, renderer: StreamRenderer, inputs: PlanInputs, user: Any
) -> AsyncIterator[bytes]:
    changed = live.subscribe()
    # The page showed what earlier runs had seen: the explain panel follows this run's own evidence.
    observed = _observed_key(live.transcript)
    # Events may have come since the plan was made: the plan and `observed` must agree.
    view.plan = inputs.plan(live.transcript.observed)
    _follow_thread(live, renderer)
    try:
        explain = renderer.explain_fragment() if observed != NOTHING_SEEN else ""
        # A reconnect to the process that drives the run: the page is sent whole (its cursor is behind
        # the live transcript, which is not folded again to meet it).
        html = renderer.first() + explain + renderer.state_fragment()
        yield sse_frame("update", html, live.seq, retry=True)
        # The page as it was is not a swap of what the agent says: its first word goes at once.
        last = -MIN_SWAP_INTERVAL
        while not live.done:
            await changed.wait()
            # Idle for an interval: sent at once. Under pressure (the last swap was moments ago), what
            # arrives until the interval is over goes in the same swap.
            wait = MIN_SWAP_INTERVAL - (time.monotonic() - last)
            if wait > 0:
                await asyncio.sleep(wait)
            changed.clear()
            if live.done:
                run.status, run.error = live.status, live.error
                run.violation, run.protocol_warnings = live.violation, live.warnings
            now_observed = _observed_key(live.transcript)
            _follow_thread(live, renderer)
            if now_observed != observed:
                observed = now_observed
                view.plan = inputs.plan(live.transcript.observed)
                html = renderer.first() + renderer.explain_fragment()
            else:
                html = renderer.update()
            html += renderer.earlier_fragments() + renderer.state_fragment()
            if html:
                yield sse_frame("update", html, live.seq)
                last = time.monotonic()
        run.status, run.error = live.status, live.error
        # What the run left waiting on the person is counted in the header at once (not at its next poll).
        count = await sync_to_async(count_fragment)(user)
        run.violation, run.protocol_warnings = live.violation, live.warnings
        html = renderer.update() + renderer.earlier_fragments() + renderer.state_fragment() + count
        yield sse_frame("update", html, live.seq)
    finally:
        live.unsubscribe(changed)
    yield DONE_FRAME


def _follow_thread(live: LiveRun, renderer: StreamRenderer) -> None:
    """The earlier runs whose cards a resume fills in, once the live run has folded them."""
    runs = live.earlier_runs or []
    if len(renderer.earlier) == len(runs):
        return
    view = renderer.view
    # The person's answers too: a card this run fills in shows what was sent, as the page does.
    answers = thread_answers([*runs, view.run])
    renderer.earlier = [
        RunView(r, t, view.plan, decided=renderer.earlier_decided.get(r.pk, {}), answers=answers[r.pk])
        for r, t in zip(runs, live.builder.earlier, strict=False)
    ]


async def _follow_stored(
    run: Run,
    view: RunView,
    renderer: StreamRenderer,
    inputs: PlanInputs,
    earlier: list[Transcript],
    user: Any,
    cursor: int | None = None,
) -> AsyncIterator[bytes]:
    """A run this process is not driving: its event log, then what it says as it says it (the
    fan-out's Stream with Redis, the event log again without), until it ends.

    With a cursor (the browser's stream was cut, perhaps on another process), it goes on from
    there: nothing the browser shows is sent again, nothing after it is missed."""
    endpoint = run.conversation.endpoint
    log = EventLogReader(run.pk, endpoint.protocol, earlier=earlier)
    view.transcript = log.transcript
    resumed = cursor is not None and await _resume_at(cursor, log, renderer, inputs)
    tail = fanout().tail(log, min_interval=MIN_SWAP_INTERVAL)
    # No event for longer than the agent may stay silent: nobody is driving the run any more
    # (the server restarted mid-run). Say so, and keep what was said.
    # With separate run workers, a queued run waits its turn (its place is shown), and a run whose
    # worker stopped is ended by the workers' sweeper (runs.queue), not by its followers.
    separate = queue.separate()
    silence_limit = endpoint.read_timeout + 30
    first, last_progress = True, time.monotonic()
    observed = _observed_key(log.transcript)
    while True:
        if await tail.next():
            last_progress = time.monotonic()
        if tail.status_due():
            status = await (
                Run.objects.filter(pk=run.pk)
                .values_list("status", "error", "worker", "violation", "protocol_warnings")
                .afirst()
            )
            if status:
                run.status, run.error, worker, run.violation, run.protocol_warnings = status
                queued = separate and run.status == Run.Status.PENDING and not worker
                view.queued_ahead = await sync_to_async(queue.ahead_of)(run) if queued else None
        if run.is_finished and view.thought is None:
            # Nobody here timed the reasoning (the run was driven elsewhere, or ended between this
            # request's first look at it and its look for a live run): the event log says how long.
            view.thought = await sync_to_async(thought_seconds)(run, log.transcript)
        if (
            not separate
            and run.status not in Run.FINISHED
            and time.monotonic() - last_progress > silence_limit
        ):
            run.status, run.error = Run.Status.FAILED, ORPHANED
            await Run.objects.filter(pk=run.pk, status__in=[Run.Status.PENDING, Run.Status.RUNNING]).aupdate(
                status=run.status, error=run.error, finished_at=timezone.now()
            )
        view.plan = inputs.plan(log.transcript.observed)
        if first:
            html = (renderer.resume() + renderer.update()) if resumed else renderer.first()
        else:
            html = renderer.update()
        now_observed = _observed_key(log.transcript)
        if now_observed != observed:
            observed = now_observed
            html += renderer.explain_fragment()
        html += renderer.earlier_fragments() + renderer.state_fragment()
        if run.status in Run.FINISHED:  # what it left waiting is counted in the header at once
            html += await sync_to_async(count_fragment)(user)
        if html or first:
            yield sse_frame("update", html, log.last_seq, retry=first)
        first = False
        if run.status in Run.FINISHED:
            yield DONE_FRAME
            return


async def _resume_at(cursor: int, log: EventLogReader, renderer: StreamRenderer, inputs: PlanInputs) -> bool:
    """Fold the run's log up to the browser's cursor and give the renderer what the browser shows
    there (its HTML is not sent); False when the log does not reach the cursor in time (the page
    is then sent whole, which loses nothing either)."""
    deadline = time.monotonic() + CURSOR_WAIT_SECONDS
    while True:
        await sync_to_async(log.read)(upto=cursor)
        if log.last_seq >= cursor:
            break
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.1)
    view = renderer.view
    view.plan = inputs.plan(log.transcript.observed)
    renderer.first()
    renderer.earlier_fragments()
    renderer.state_fragment()
    return True


def _observed_key(transcript: Transcript) -> Observations:
    return Observations.of(transcript.observed)
