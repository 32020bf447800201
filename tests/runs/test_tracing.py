"""One OpenTelemetry trace per run (agents_ui/runs/tracing.py), read from an in-memory exporter:
the span tree and the GenAI conventions' attributes of AG-UI, external and A2A runs, and the
`traceparent` each agent receives."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from agents_ui.demo.registry import register_demo_agents
from agents_ui.endpoints.discovery import discover_one
from agents_ui.models import AgentEndpoint, Conversation, Message, Run
from agents_ui.runs import tracing
from agents_ui.runs.event_log import replay
from agents_ui.runs.inputs import RunRequest
from agents_ui.runs.live import live_run, start_run
from agents_ui.runs.protocols import adapter_for
from tests.conftest import CAPTURES
from tests.factories import make_endpoint, make_user
from tests.support.a2a_agent import A2ATestAgent
from tests.support.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)

LATEST = "gen_ai_latest_experimental"


@pytest.fixture
def spans(monkeypatch):
    """Runs traced into memory, in the latest GenAI conventions."""
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", f"http,{LATEST}")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(provider)
    yield exporter
    tracing.install(None)


def of_trace(exporter: InMemorySpanExporter, trace_id: str) -> list:
    return [s for s in exporter.get_finished_spans() if format(s.context.trace_id, "032x") == trace_id]


def root_of(found: list):
    [root] = [s for s in found if s.parent is None]
    return root


def children(found: list, parent) -> list:
    return [s for s in found if s.parent is not None and s.parent.span_id == parent.context.span_id]


async def turn(endpoint, text, conversation=None):
    def create():
        nonlocal conversation
        if conversation is None:
            conversation = Conversation.objects.create(user=make_user(), endpoint=endpoint, title=text)
        message = Message.objects.create(conversation=conversation, role=Message.Role.USER, content=text)
        run = Run.objects.create(
            conversation=conversation, request=RunRequest(message_id=message.pk).as_json()
        )
        run.conversation = conversation
        return run

    return await sync_to_async(create)()


async def finish(run, plan=None):
    live = start_run(run, plan)
    await asyncio.wait_for(live.task, timeout=15)
    return await Run.objects.select_related("conversation__endpoint", "conversation__user").aget(pk=run.pk)


async def demo_endpoint(live_url: str, slug: str) -> AgentEndpoint:
    endpoints = await sync_to_async(register_demo_agents)(live_url)
    [endpoint] = [e for e in endpoints if e.slug == slug]
    return endpoint


# --- AG-UI --------------------------------------------------------------------------------------------


async def test_an_agui_tool_call_and_its_approval_are_spans_of_the_runs_that_made_and_ended_them(
    live_url, spans
):
    endpoint = await demo_endpoint(live_url, "operations")
    first = await finish(await turn(endpoint, "Please send 120 EUR to the vendor"))
    assert first.status == Run.Status.INTERRUPTED, first.error
    assert len(first.trace_id) == 32  # stored: shown after a reload

    asked = of_trace(spans, first.trace_id)
    root = root_of(asked)
    assert root.name == "invoke_agent Operations Agent" and root.kind == SpanKind.CLIENT
    attributes = dict(root.attributes)
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.provider.name"] == "agui" and "gen_ai.system" not in attributes
    assert attributes["gen_ai.agent.name"] == "Operations Agent"
    assert attributes["gen_ai.agent.id"] == "operations"
    assert attributes["gen_ai.conversation.id"] == str(first.conversation_id)  # the AG-UI thread
    assert attributes["agents_ui.run.status"] == "interrupted"
    assert root.instrumentation_scope.schema_url == "https://opentelemetry.io/schemas/1.41.0"
    assert root.status.status_code == StatusCode.UNSET
    [waiting] = [e for e in root.events if e.name == "waiting_for_person"]
    [interrupt_id] = waiting.attributes["agents_ui.wait.request_ids"]
    [tool] = children(asked, root)
    assert tool.name == "execute_tool transfer_funds"
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.type"] == "extension"  # the agent runs it, once approved
    assert tool.attributes["gen_ai.tool.call.id"]

    transcript = await sync_to_async(replay)(first)
    decided = await adapter_for(endpoint).decide(
        first, transcript, {}, set(), {f"decision-{interrupt_id}": "approve"}, first.conversation.user
    )
    resumed = await finish(await Run.objects.select_related("conversation__endpoint").aget(pk=decided.run.pk))
    assert resumed.status == Run.Status.COMPLETED, resumed.error
    assert resumed.trace_id != first.trace_id  # one trace per run

    ended = of_trace(spans, resumed.trace_id)
    root = root_of(ended)
    assert root.attributes["agents_ui.run.kind"] == "resume"
    [wait] = [s for s in children(ended, root) if s.name.startswith("await_approval")]
    assert wait.name == "await_approval transfer_funds"
    assert wait.attributes["agents_ui.wait.outcome"] == "approved"
    assert wait.attributes["agents_ui.wait.request_id"] == interrupt_id
    assert wait.attributes["gen_ai.tool.call.id"] == tool.attributes["gen_ai.tool.call.id"]
    # From the end of the run that asked to the creation of the run that took the decision.
    assert first.finished_at.timestamp() <= wait.start_time / 1e9 <= wait.end_time / 1e9
    assert wait.end_time / 1e9 <= root.end_time / 1e9
    # The agent ran the tool once approved, in this run: its result came here.
    [ran] = [s for s in children(ended, root) if s.name == "execute_tool transfer_funds"]
    assert ran.attributes["agents_ui.tool.resumed"] is True
    assert ran.attributes["gen_ai.tool.call.id"] == tool.attributes["gen_ai.tool.call.id"]


def answering_capture(exchange_log: list):
    body = (CAPTURES / "starter-agentic_chat.sse").read_bytes()

    async def handler(exchange):
        exchange_log.append(exchange.request.headers)
        exchange.start_sse()
        await exchange.send(body)

    return handler


async def test_an_agui_agent_receives_the_run_spans_traceparent(fake_server, spans):
    seen: list = []
    server = await fake_server(answering_capture(seen))
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/agentic_chat", name="Chatty")
    run = await turn(endpoint, "hello")
    with tracing_provider(spans).get_tracer("test").start_as_current_span("POST /send/") as request:
        live = start_run(run)  # as the composer's request does
    await asyncio.wait_for(live.task, timeout=15)
    run = await Run.objects.aget(pk=run.pk)
    assert run.status == Run.Status.COMPLETED
    root = root_of(of_trace(spans, run.trace_id))
    # A trace of its own, linked to the request that started it.
    assert run.trace_id != format(request.get_span_context().trace_id, "032x")
    [link] = root.links
    assert link.context.span_id == request.get_span_context().span_id
    headers = {key.lower(): value for key, value in seen[0].items()}
    version, trace_id, parent_id, flags = headers["traceparent"].split("-")
    assert (version, trace_id) == ("00", run.trace_id) and int(flags, 16) & 1  # sampled
    assert parent_id == format(root.context.span_id, "016x")  # the invoke_agent span itself


async def test_an_agui_run_asked_again_after_a_cut_is_a_reconnect_span(fake_server, spans):
    from agents_ui.capabilities import read_agui
    from agents_ui.decisions import decide
    from tests.sdk.test_connection_strategy import cutting_agent

    handler, connections = cutting_agent(3)
    server = await fake_server(handler)
    endpoint = await sync_to_async(make_endpoint)(base_url=server.url)
    resumable = decide(profile=read_agui({"transport": {"streaming": True, "resumable": True}}))
    run = await finish(await turn(endpoint, "hello"), resumable)
    assert run.status == Run.Status.COMPLETED, run.error
    assert connections == [None, "3"]
    found = of_trace(spans, run.trace_id)
    [reconnect] = [s for s in children(found, root_of(found)) if s.name == "reconnect"]
    assert reconnect.kind == SpanKind.CLIENT
    assert reconnect.attributes["agents_ui.reconnect.attempt"] == 1
    assert reconnect.attributes["agents_ui.reconnect.last_event_id"] == "3"
    assert reconnect.attributes["http.response.status_code"] == 200


async def test_a_fault_in_tracing_never_fails_the_run(fake_server, spans, monkeypatch, caplog):
    body = (CAPTURES / "starter-human_in_the_loop.sse").read_bytes()

    async def handler(exchange):
        exchange.start_sse()
        await exchange.send(body)

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in tracing")

    monkeypatch.setattr(tracing.RunTrace, "_begin_tool", broken)
    server = await fake_server(handler)
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/hitl")
    run = await finish(await turn(endpoint, "plan it"))
    assert run.status == Run.Status.COMPLETED, run.error
    assert "tracing: RunTrace.observe failed" in caplog.text  # the fault happened, and was only logged
    assert root_of(of_trace(spans, run.trace_id)).name.startswith("invoke_agent")


async def test_a_failed_run_is_an_error_with_its_type(spans):
    endpoint = await sync_to_async(make_endpoint)(base_url="http://127.0.0.1:9/agent", connect_timeout=0.5)
    run = await finish(await turn(endpoint, "hello"))
    assert run.status == Run.Status.FAILED
    root = root_of(of_trace(spans, run.trace_id))
    assert root.status.status_code == StatusCode.ERROR
    assert root.attributes["error.type"] == "unreachable"  # the SDK error's code


async def test_without_the_opt_in_the_spans_keep_the_conventions_baseline_names(
    fake_server, spans, monkeypatch
):
    monkeypatch.delenv("OTEL_SEMCONV_STABILITY_OPT_IN")
    tracing.install(tracing_provider(spans))
    server = await fake_server(answering_capture([]))
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/agentic_chat")
    run = await finish(await turn(endpoint, "hello"))
    root = root_of(of_trace(spans, run.trace_id))
    assert root.attributes["gen_ai.system"] == "agui" and "gen_ai.provider.name" not in root.attributes
    assert root.instrumentation_scope.schema_url == "https://opentelemetry.io/schemas/1.36.0"


def tracing_provider(exporter):
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


async def test_with_tracing_off_a_run_has_no_trace(fake_server):
    assert not tracing.active() and tracing.exporters_configured() == []
    server = await fake_server(answering_capture(seen := []))
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/agentic_chat")
    run = await finish(await turn(endpoint, "hello"))
    assert run.status == Run.Status.COMPLETED and run.trace_id == ""
    assert "traceparent" not in {key.lower() for key in seen[0]}


def test_the_exporter_is_chosen_by_the_standard_variables(monkeypatch):
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    assert tracing.exporters_configured() == []
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    assert tracing.exporters_configured() == ["otlp"]
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    assert tracing.exporters_configured() == []
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console,otlp")
    assert tracing.exporters_configured() == ["console", "otlp"]
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert tracing.exporters_configured() == []


# --- external ------------------------------------------------------------------------------------------


async def test_an_external_run_times_its_tool_and_the_approval_it_waited_for(live_url, spans):
    endpoint = await demo_endpoint(live_url, "support-desk")
    run = await turn(endpoint, "I want a refund of 20 EUR for order 1234")
    live = start_run(run)

    def approval_asked():
        found = live_run(run.pk)
        return found.transcript if found is not None and found.transcript.pending_approvals else None

    transcript = await eventually(approval_asked, timeout=10)
    [approval_id] = [a.id for a in transcript.pending_approvals]
    user = await sync_to_async(lambda: run.conversation.user)()
    await adapter_for(endpoint).decide(
        run, transcript, {}, set(), {f"decision-{approval_id}": "approve"}, user
    )
    await asyncio.wait_for(live.task, timeout=15)
    run = await Run.objects.aget(pk=run.pk)
    assert run.status == Run.Status.COMPLETED, run.error

    found = of_trace(spans, run.trace_id)
    root = root_of(found)
    assert root.name == "invoke_agent Support Desk"
    assert root.attributes["gen_ai.provider.name"] == "external"
    conversation = await Conversation.objects.aget(pk=run.conversation_id)
    assert root.attributes["gen_ai.conversation.id"] == conversation.remote_id  # the agent's own id
    assert root.attributes["gen_ai.usage.input_tokens"] > 0
    assert root.attributes["gen_ai.usage.output_tokens"] > 0
    names = sorted(s.name for s in children(found, root))
    assert "await_approval issue_refund" in names and "execute_tool issue_refund" in names
    [wait] = [s for s in found if s.name == "await_approval issue_refund"]
    assert wait.attributes["agents_ui.wait.outcome"] == "approved"
    assert wait.attributes["agents_ui.wait.request_id"] == approval_id
    [refund] = [s for s in found if s.name == "execute_tool issue_refund"]
    assert refund.start_time <= wait.start_time and wait.end_time <= refund.end_time


async def test_an_external_approval_nobody_decided_is_a_wait_that_timed_out(live_url, spans, monkeypatch):
    from agents_ui.demo.external import support_desk

    monkeypatch.setattr(support_desk, "APPROVAL_TTL_SECONDS", 0.3)
    endpoint = await demo_endpoint(live_url, "support-desk")
    run = await finish(await turn(endpoint, "I want a refund of 20 EUR for order 1234"))
    found = of_trace(spans, run.trace_id)
    [wait] = [s for s in found if s.name == "await_approval issue_refund"]
    assert wait.attributes["agents_ui.wait.outcome"] == "timed_out"


# --- A2A -----------------------------------------------------------------------------------------------


@pytest.fixture
def a2a_agent():
    server = A2ATestAgent().start()
    yield server
    server.stop()


async def test_an_a2a_task_is_a_call_named_by_its_method_under_the_run(a2a_agent, spans):
    headers: list[dict] = []
    execute = a2a_agent.executor.execute

    async def recording(context, event_queue):
        headers.append(context.call_context.state.get("headers") or {})
        await execute(context, event_queue)

    a2a_agent.executor.execute = recording
    endpoint = await sync_to_async(make_endpoint)(
        protocol=AgentEndpoint.Protocol.A2A, base_url=a2a_agent.url, slug="echo", name="Echo"
    )
    await discover_one(endpoint, refresh=True)
    run = await finish(await turn(endpoint, "hello world"))
    assert run.status == Run.Status.COMPLETED, run.error
    conversation = await Conversation.objects.aget(pk=run.conversation_id)

    found = of_trace(spans, run.trace_id)
    root = root_of(found)
    assert root.attributes["gen_ai.provider.name"] == "a2a"
    assert root.attributes["gen_ai.conversation.id"] == conversation.remote_id  # the context id
    [call] = [s for s in children(found, root) if s.name == "SendStreamingMessage"]
    assert call.kind == SpanKind.CLIENT
    assert call.attributes["a2a.method.name"] == "SendStreamingMessage"
    assert call.attributes["a2a.task.state"] == "completed"
    assert call.attributes["a2a.task.id"]
    assert call.attributes["gen_ai.conversation.id"] == conversation.remote_id
    _, trace_id, _, _ = headers[0]["traceparent"].split("-")
    assert trace_id == run.trace_id


async def test_an_a2a_stream_followed_again_is_a_reconnect_span(spans):
    import json

    import httpx

    from agents_ui.models import CapabilitySnapshot
    from agents_ui.runs.a2a import a2a_events
    from agents_ui.sdk.a2a.client import A2AAgent
    from tests.a2a.test_a2a_runs import card_json, timezone_now

    sent: list[tuple[str, str]] = []

    def frame(result):
        return f"data: {json.dumps({'jsonrpc': '2.0', 'id': 1, 'result': result})}\n\n".encode()

    async def cut_after_the_task():
        yield frame({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}})
        raise httpx.ReadError("connection reset")

    async def the_rest():
        yield frame(
            {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}
        )

    def handler(request):
        sent.append((json.loads(request.content)["method"], request.headers.get("traceparent", "")))
        body = cut_after_the_task() if len(sent) == 1 else the_rest()
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    endpoint = await sync_to_async(make_endpoint)(
        protocol=AgentEndpoint.Protocol.A2A, base_url="http://agent.test", slug="echo", name="Echo"
    )
    await CapabilitySnapshot.objects.acreate(
        endpoint=endpoint, status="declared", content_hash="x", source="s", payload=card_json(),
        last_seen_at=timezone_now(),
    )  # fmt: skip
    run = await turn(endpoint, "hello")
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    traced = tracing.start(run, live := type("Live", (), {"decided": {}})())
    traced.instrument(client)
    traced.attach()
    try:
        async for _ in a2a_events(A2AAgent("http://agent.test", client=client), run, [], stream=True):
            pass
    finally:
        traced.detach()
        traced.span.end()
    assert live is not None
    found = of_trace(spans, traced.trace_id)
    root = root_of(found)
    [first, reconnect] = sorted(children(found, root), key=lambda s: s.start_time)
    assert first.name == "SendStreamingMessage" and first.attributes["a2a.task.state"] == "working"
    assert first.status.status_code == StatusCode.ERROR
    assert (
        reconnect.name == "reconnect"
        and "connection reset" in reconnect.attributes["agents_ui.reconnect.reason"]
    )
    [again] = children(found, reconnect)
    assert again.name == "SubscribeToTask" and again.attributes["a2a.task.state"] == "completed"
    assert [method for method, _ in sent] == ["SendStreamingMessage", "SubscribeToTask"]
    # Each request carries the span of its own call.
    assert sent[0][1].split("-")[2] == format(first.context.span_id, "016x")
    assert sent[1][1].split("-")[2] == format(again.context.span_id, "016x")


# --- a person's answer to a tool the client executes -----------------------------------------------


async def test_a_frontend_tool_and_the_answer_that_ended_its_wait(fake_server, spans):
    from tests.support.waiting import settle
    from tests.views.test_client_tools import browse, call_of, say

    client = await browse(fake_server)
    run = await say(client, "please ask me")
    call = await sync_to_async(call_of)(run)
    asked = of_trace(spans, run.trace_id)
    [tool] = [s for s in asked if s.name == "execute_tool ask_user"]
    assert tool.attributes["gen_ai.tool.type"] == "function"  # the product's own tool: the client runs it
    assert tool.parent.span_id == root_of(asked).context.span_id

    # Staff read the run's trace id in its technical detail; others do not.
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert run.trace_id not in page
    client.user.is_staff = True
    await client.user.asave()
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert f"Trace ID: {run.trace_id}" in page

    await client.post(f"/runs/{run.pk}/answer/", {"call": call.id, "answer": "Porto"})
    await settle()
    answered = await Run.objects.order_by("-created_at").afirst()
    ended = of_trace(spans, answered.trace_id)
    [wait] = children(ended, root_of(ended))
    assert wait.name == "await_tool_answer ask_user"
    assert wait.attributes["agents_ui.wait.outcome"] == "answered"
    assert wait.attributes["gen_ai.tool.call.id"] == call.id
