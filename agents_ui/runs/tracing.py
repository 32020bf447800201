"""Tracing: one OpenTelemetry trace per run, in the GenAI semantic conventions.

Off unless the standard OTEL_* variables name an exporter (docs/operations.md, "Tracing"). Then
`configure()`, at startup, installs the SDK's tracer provider and Django's request instrumentation;
otherwise nothing is installed, `start()` gives None, and a run pays one `is None` test per event.

A traced run is one `invoke_agent {agent}` CLIENT span (`RunTrace`), current while the run reads
its agent, so that every request to the agent carries its `traceparent` (W3C Trace Context, put
on the request by an httpx hook: the SDK stays free of Django and of tracing). Its children are
read off the transcript as it folds, whatever protocol brought it (`RunTrace.observe`): one
`execute_tool {tool}` span per tool call, one `await_approval {tool}` span per in-run approval,
and, in a run that takes a person's decision or answer to the agent, one `await_* {tool}` span
per wait it ends; a reconnect (AG-UI's Last-Event-ID, A2A's SubscribeToTask) is a `reconnect`
span, an A2A call a span named by its method (`a2a_call`).

Which version of the GenAI conventions the spans follow: OTEL_SEMCONV_STABILITY_OPT_IN, as the
conventions ask (`latest_conventions`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.utils import timezone
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from agents_ui.monitoring.runs import token_counts

if TYPE_CHECKING:
    import httpx

    from agents_ui.models import Run
    from agents_ui.runs.live import LiveRun
    from agents_ui.sdk.transcript import Transcript

logger = logging.getLogger(__name__)

SCOPE = "agents_ui.runs"
# The conventions followed by default (the baseline the opt-in rule names), and with the opt-in.
BASELINE_CONVENTIONS = "1.36.0"
LATEST_CONVENTIONS = "1.41.0"
OPT_IN = "gen_ai_latest_experimental"

# The one tracer runs use; None while tracing is off.
_tracer: trace.Tracer | None = None
_latest = False


def latest_conventions() -> bool:
    """Whether OTEL_SEMCONV_STABILITY_OPT_IN asks for the latest experimental GenAI conventions.

    The conventions' rule: without `gen_ai_latest_experimental` an instrumentation emits v1.36.0's
    names (the provider is `gen_ai.system`); with it, the latest ones only (`gen_ai.provider.name`).
    """
    values = os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN", "")
    return OPT_IN in {value.strip() for value in values.split(",")}


def exporters_configured() -> list[str]:
    """The span exporters the OTEL_* variables name ("otlp", "console"); none: tracing is off."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    named = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if named:
        return [name.strip() for name in named.split(",") if name.strip() and name.strip() != "none"]
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    return ["otlp"] if endpoint else []


def configure() -> bool:
    """Install the SDK's tracer provider when an exporter is configured (at startup, once)."""
    names = exporters_configured()
    if not names or _tracer is not None:
        return _tracer is not None
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over this default; OTEL_TRACES_SAMPLER and
    # OTEL_BSP_* are read by the provider and the batch processor themselves.
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "agents-ui"}))
    provider = TracerProvider(resource=resource)
    for name in names:
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            if os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf") != "http/protobuf":
                logger.warning("tracing: only OTLP over http/protobuf is installed; spans are sent with it")
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        elif name == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        else:
            logger.warning("tracing: unknown exporter %r in OTEL_TRACES_EXPORTER, ignored", name)
    trace.set_tracer_provider(provider)
    from opentelemetry.instrumentation.django import DjangoInstrumentor

    # Probes and scrapes come every few seconds: no trace of them unless asked for.
    excluded = os.environ.get("OTEL_PYTHON_DJANGO_EXCLUDED_URLS", "healthz,readyz,metrics")
    DjangoInstrumentor().instrument(excluded_urls=excluded)
    install(provider)
    return True


def install(provider: trace.TracerProvider | None) -> None:
    """Trace runs with `provider` (None: tracing off). Tests install one with an in-memory exporter."""
    global _tracer, _latest
    _latest = latest_conventions()
    # The scope's schema URL names the version of the conventions its spans follow.
    version = LATEST_CONVENTIONS if _latest else BASELINE_CONVENTIONS
    schema = f"https://opentelemetry.io/schemas/{version}"
    _tracer = provider.get_tracer(SCOPE, schema_url=schema) if provider is not None else None


def active() -> bool:
    return _tracer is not None


def _never_fails_the_run[F: Callable[..., Any]](method: F) -> F:
    """Tracing never fails a run: what goes wrong in it is logged, and the run goes on."""
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def guarded_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await method(*args, **kwargs)
            except Exception:
                logger.exception("tracing: %s failed", method.__qualname__)
                return None

        return guarded_async  # type: ignore[return-value]

    @functools.wraps(method)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Exception:
            logger.exception("tracing: %s failed", method.__qualname__)
            return None

    return guarded  # type: ignore[return-value]


# --- the run's span --------------------------------------------------------------------------------


# A tool the product itself offers (ask, form, confirm, choose) is executed on the client's side.
def _client_tool_names() -> frozenset[str]:
    from agents_ui.sdk.agui.client_tools import CLIENT_TOOLS

    return frozenset(tool.name for tool in CLIENT_TOOLS)


# The span of the request that started each run, until the run's own trace begins (by run id).
_origins: dict[str, trace.SpanContext] = {}


def started_by_request(run_id: str) -> None:
    """Remember the current span (the request starting the run) for the run's span to link to: a
    run outlives its request, so it is a trace of its own."""
    if _tracer is not None:
        origin = trace.get_current_span().get_span_context()
        if origin.is_valid:
            if len(_origins) > 10_000:  # runs that never began (stopped before their first step)
                _origins.clear()
            _origins[run_id] = origin


def start(run: Run, live: LiveRun) -> RunTrace | None:
    """The run's trace, begun now; None while tracing is off."""
    if _tracer is None:
        return None
    return RunTrace(_tracer, run, live, _origins.pop(str(run.pk), None))


class RunTrace:
    """One run's `invoke_agent` span and its children, read off the run's transcript as it folds."""

    def __init__(
        self, tracer: trace.Tracer, run: Run, live: LiveRun, origin: trace.SpanContext | None = None
    ) -> None:
        conversation = run.conversation
        endpoint = conversation.endpoint
        self.tracer, self.live = tracer, live
        name = endpoint.name or endpoint.slug
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            ("gen_ai.provider.name" if _latest else "gen_ai.system"): endpoint.protocol,
            "gen_ai.agent.name": name,
            "gen_ai.agent.id": endpoint.slug,
            "agents_ui.run.id": str(run.pk),
            "agents_ui.run.kind": str((run.request or {}).get("kind") or "message"),
        }
        if endpoint.description:
            attributes["gen_ai.agent.description"] = endpoint.description[:500]
        # The agent's own id of the conversation where it keeps one (external, A2A), else the thread's.
        attributes["gen_ai.conversation.id"] = conversation.remote_id or conversation.thread_id
        links = [trace.Link(origin, {"agents_ui.link": "started_by"})] if origin else None
        self.span = tracer.start_span(
            f"invoke_agent {name}",
            # A root of its own, whatever the context: one trace per run.
            context=otel_context.Context(),
            kind=SpanKind.CLIENT,
            attributes=attributes,
            links=links,
        )
        self.context = trace.set_span_in_context(self.span)
        self.trace_id = format(self.span.get_span_context().trace_id, "032x")
        self._token: object | None = None
        self._tools: dict[str, Span] = {}  # open execute_tool spans, by call id
        self._seen_tools: set[str] = set()
        self._approvals: dict[str, Span] = {}  # open in-run waits, by request id
        self._seen_approvals: set[str] = set()
        self._client_tools = _client_tool_names()
        self._client_calls: set[str] = set()
        self._resumed_tools: set[str] = set()
        self._began = time.time_ns()
        self._reconnects = 0
        self._reconnect: Span | None = None
        self.failure: BaseException | None = None
        self._error_type = ""

    # The run span is current while the run reads its agent: its requests carry it.
    def attach(self) -> None:
        self._token = otel_context.attach(self.context)

    def detach(self) -> None:
        if self._token is not None:
            otel_context.detach(self._token)  # type: ignore[arg-type]
            self._token = None

    def child(self, name: str, *, kind: SpanKind = SpanKind.INTERNAL, start_time: int | None = None,
              attributes: dict[str, Any] | None = None) -> Span:  # fmt: skip
        return self.tracer.start_span(
            name, context=self.context, kind=kind, start_time=start_time, attributes=attributes
        )

    # --- the agent's requests ----------------------------------------------------------------------

    @_never_fails_the_run
    def instrument(self, client: httpx.AsyncClient) -> None:
        """Every request of the run's client carries the current span as `traceparent`; one that
        asks the agent to go on after a cut (Last-Event-ID) is a reconnect span of its own."""

        @_never_fails_the_run
        async def on_request(request: httpx.Request) -> None:
            last_id = request.headers.get("last-event-id")
            if last_id is None:
                propagate.inject(request.headers)
                return
            self._end_reconnect()
            self._reconnects += 1
            attributes = {
                "agents_ui.reconnect.attempt": self._reconnects,
                "agents_ui.reconnect.last_event_id": last_id,
            }
            self._reconnect = self.child("reconnect", kind=SpanKind.CLIENT, attributes=attributes)
            propagate.inject(request.headers, context=trace.set_span_in_context(self._reconnect))

        @_never_fails_the_run
        async def on_response(response: httpx.Response) -> None:
            if self._reconnect is not None:
                self._reconnect.set_attribute("http.response.status_code", response.status_code)
                if response.status_code >= 400:
                    _fail(self._reconnect, str(response.status_code))
                self._end_reconnect()

        client.event_hooks["request"] = [*client.event_hooks["request"], on_request]
        client.event_hooks["response"] = [*client.event_hooks["response"], on_response]

    def _end_reconnect(self) -> None:
        if self._reconnect is not None:
            self._reconnect.end()
            self._reconnect = None

    # --- what the transcript shows, as it folds ----------------------------------------------------

    @_never_fails_the_run
    def observe(self, transcript: Transcript) -> None:
        """After each event: tool calls and approvals begun or ended since the last one."""
        calls = transcript.tool_calls
        if len(calls) != len(self._seen_tools):
            for call_id, call in calls.items():
                if call_id not in self._seen_tools:
                    self._seen_tools.add(call_id)
                    self._begin_tool(call_id, call.name)
        for call_id, span in list(self._tools.items()):
            call = calls.get(call_id)
            if call is None:
                continue
            if call.has_result or call.result_error:
                self._end_tool(call_id, span, call)
            elif call.complete and call_id in self._client_calls:
                # A tool the client executes: the agent's part ends with its arguments; the
                # person's answer is a wait of the run that takes it to the agent.
                del self._tools[call_id]
                span.end()
        if len(transcript.answered_earlier) != len(self._resumed_tools):
            self._resumed(transcript)
        approvals = transcript.approvals
        if len(approvals) != len(self._seen_approvals) or self._approvals:
            self._follow_approvals(transcript)

    def _begin_tool(self, call_id: str, name: str, start_time: int | None = None) -> None:
        kind = "function" if name in self._client_tools else "extension"
        if kind == "function":
            self._client_calls.add(call_id)
        self._tools[call_id] = self.child(
            f"execute_tool {name}".strip(),
            start_time=start_time,
            attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call_id, "gen_ai.tool.type": kind,
            },
        )  # fmt: skip

    def _resumed(self, transcript: Transcript) -> None:
        """A call an earlier run opened and this one gave the result of: the agent's tool ran after
        the decision that resumed it (since this run began); a client tool's answer is a wait."""
        for call_id, call in transcript.answered_earlier.items():
            if call_id in self._resumed_tools:
                continue
            self._resumed_tools.add(call_id)
            if call.name in self._client_tools:
                continue
            self._begin_tool(call_id, call.name, start_time=self._began)
            self._tools[call_id].set_attribute("agents_ui.tool.resumed", True)
            self._end_tool(call_id, self._tools[call_id], call)

    def _end_tool(self, call_id: str, span: Span, call: Any) -> None:
        del self._tools[call_id]
        status = (call.status or "").lower()
        if call.result_error or status in ("error", "failed", "denied", "rejected", "cancelled", "timeout"):
            _fail(span, status or "tool_error")
        span.end()

    def _follow_approvals(self, transcript: Transcript) -> None:
        for request_id, request in transcript.approvals.items():
            if request_id not in self._seen_approvals:
                self._seen_approvals.add(request_id)
                # An interrupt ends the run: the run that takes the decision times its wait.
                if request.pending and request.kind == "in-run":
                    self._approvals[request_id] = self._wait_span(
                        "approval", request.name or "", request_id, request.tool_call_id or ""
                    )
            span = self._approvals.get(request_id)
            if span is not None and not request.pending:
                del self._approvals[request_id]
                span.set_attribute("agents_ui.wait.outcome", self._in_run_outcome(request))
                span.end()

    def _in_run_outcome(self, request: Any) -> str:
        record = self.live.decided.get(request.id)
        if record is not None:
            return _outcome(record.decision)
        expires = _moment(request.expires_at)
        if expires is not None and expires <= timezone.now():
            return "timed_out"  # nobody decided here: the agent gave up waiting
        return "approved" if str(request.decision).lower().startswith("approv") else "rejected"

    def _wait_span(
        self, kind: str, tool: str, request_id: str, call_id: str, start_time: int | None = None
    ) -> Span:
        attributes = {"agents_ui.wait.kind": kind, "agents_ui.wait.request_id": request_id}
        if tool:
            attributes["gen_ai.tool.name"] = tool
        if call_id:
            attributes["gen_ai.tool.call.id"] = call_id
        name = f"await_{'approval' if kind == 'approval' else 'tool_answer'}"
        return self.child(f"{name} {tool}".strip(), start_time=start_time, attributes=attributes)

    @_never_fails_the_run
    async def waited(self, run: Run, earlier: Sequence[tuple[Run, Transcript]]) -> None:
        """The waits this run ends: a decision on the interrupts, or answers to the client's tool
        calls, the run before it left open (from its end to this run's creation)."""
        request = run.request or {}
        kind = request.get("kind")
        if kind not in ("resume", "answer") or not earlier:
            return
        before, transcript = earlier[-1]
        began = before.finished_at or before.created_at
        start, end = _nanos(began), _nanos(run.created_at)
        if kind == "answer":
            from agents_ui.runs.inputs import ToolAnswer

            for answer in (ToolAnswer.from_json(data) for data in request.get("answers") or ()):
                call = transcript.tool_calls.get(answer.tool_call_id)
                tool = answer.tool_name or (call.name if call else "")
                span = self._wait_span("tool_answer", tool, answer.tool_call_id, answer.tool_call_id, start)
                span.set_attribute("agents_ui.wait.outcome", "dismissed" if answer.dismissed else "answered")
                span.end(end_time=end)
            return
        from agents_ui.models import ApprovalRecord

        ids = [
            str(entry.get("interruptId")) for entry in request.get("resume") or () if isinstance(entry, dict)
        ]
        records = {
            record.request_id: record
            async for record in ApprovalRecord.objects.filter(run=before, request_id__in=ids)
        }
        for request_id in ids:
            record = records.get(request_id)
            approval = transcript.approvals.get(request_id)
            call_id = (approval.tool_call_id if approval else "") or ""
            call = transcript.tool_calls.get(call_id)
            tool = (record.tool_name if record else "") or (approval.name if approval else "") or ""
            span = self._wait_span(
                "approval",
                tool or (call.name if call else ""),
                request_id,
                call_id,
                start_time=start,
            )
            span.set_attribute("agents_ui.wait.outcome", _outcome(record.decision) if record else "answered")
            span.end(end_time=end)

    # --- the end ---------------------------------------------------------------------------------

    def fail(self, exc: BaseException, error_type: str = "") -> None:
        """What ended the run in failure; `error_type` names it where its class does not say."""
        self.failure, self._error_type = exc, error_type

    @_never_fails_the_run
    def finish(self, live: LiveRun) -> None:
        """End the run's span and whatever of its children is still open."""
        transcript = live.transcript
        self._end_reconnect()
        for span in [*self._tools.values(), *self._approvals.values()]:
            span.end()
        self._tools.clear()
        self._approvals.clear()
        span = self.span
        span.set_attribute("agents_ui.run.status", str(live.status))
        thread = (transcript.task.context_id if transcript.task else "") or transcript.thread_id
        if thread:
            span.set_attribute("gen_ai.conversation.id", thread)
        tokens = token_counts(transcript.usage) or {}
        for kind in ("input_tokens", "output_tokens"):
            if kind in tokens:
                span.set_attribute(f"gen_ai.usage.{kind}", tokens[kind])
        if transcript.outcome is not None and transcript.outcome.kind == "interrupt":
            span.add_event("waiting_for_person", {"agents_ui.wait.request_ids": list(transcript.approvals)})
        if live.status == "failed":
            _fail(span, self._error_type or _error_type(self.failure, transcript), live.error)
            if self.failure is not None:
                span.record_exception(self.failure)
        span.end()


def _fail(span: Span, error_type: str, description: str = "") -> None:
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, description[:300] or None))


def _error_type(exc: BaseException | None, transcript: Transcript) -> str:
    """A low-cardinality name of how the run failed (the conventions' error.type)."""
    from agents_ui.sdk import AgentError

    if isinstance(exc, AgentError):
        return exc.code
    if exc is not None:
        return type(exc).__qualname__
    outcome = transcript.outcome
    if outcome is not None and outcome.code:
        return str(outcome.code)[:64]
    task = transcript.task
    if task is not None and task.state in ("failed", "rejected"):
        return f"task_{task.state}"
    return "agent_error"


def _outcome(decision: str) -> str:
    """An ApprovalRecord's decision as a wait's outcome."""
    return {"approved": "approved", "approved_with_edits": "edited", "rejected": "rejected"}.get(
        decision, decision
    )


def _moment(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else timezone.make_aware(moment)


def _nanos(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1_000_000_000)


# --- A2A ------------------------------------------------------------------------------------------


class A2ACall:
    """One A2A call, a CLIENT span named by its method, current while it runs (its requests carry it)."""

    def __init__(self, method: str, task_id: str) -> None:
        assert _tracer is not None
        self.span = _tracer.start_span(
            method, kind=SpanKind.CLIENT, attributes={"a2a.method.name": method, "rpc.method": method}
        )
        if task_id:
            self.span.set_attribute("a2a.task.id", task_id)
        self._use = trace.use_span(
            self.span, end_on_exit=True, record_exception=False, set_status_on_exception=False
        )

    def __enter__(self) -> A2ACall:
        self._use.__enter__()
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, Exception):  # a stop (CancelledError) or a closed stream is no error
            from agents_ui.sdk import AgentError

            _fail(self.span, exc.code if isinstance(exc, AgentError) else type(exc).__qualname__, str(exc))
        self._use.__exit__(kind, exc, tb)

    def observe(self, task_id: str, context_id: str, state: int) -> None:
        """What a StreamResponse says of the task: its id, its state, its context (the conversation)."""
        from agents_ui.sdk.a2a.fold import STATE_NAMES

        if task_id:
            self.span.set_attribute("a2a.task.id", task_id)
        if context_id:
            self.span.set_attribute("gen_ai.conversation.id", context_id)
        if state and (name := STATE_NAMES.get(state)):
            self.span.set_attribute("a2a.task.state", name)


def a2a_call(method: str, task_id: str = "") -> A2ACall | contextlib.nullcontext[None]:
    """A span for an A2A call (`SendStreamingMessage`, `SubscribeToTask`, `CancelTask`...), or
    nothing while tracing is off."""
    return contextlib.nullcontext() if _tracer is None else A2ACall(method, task_id)


@contextlib.contextmanager
def reconnect(reason: str) -> Iterator[None]:
    """A `reconnect` span around following a run again after its connection was cut."""
    if _tracer is None:
        yield
        return
    with _tracer.start_as_current_span(
        "reconnect", kind=SpanKind.INTERNAL, attributes={"agents_ui.reconnect.reason": reason[:300]}
    ):
        yield
