"""AgUiAgent and parse_event against in-process AG-UI servers."""

from __future__ import annotations

import asyncio
import logging
import socket

import httpx
import pytest
from ag_ui.core import (
    EventType,
    ReasoningMessageContentEvent,
    ReasoningStartEvent,
    RunAgentInput,
    RunFinishedEvent,
    TextMessageContentEvent,
    UserMessage,
)

from agents_ui.sdk import (
    AgentTimeoutError,
    AgentUnreachableError,
    AgUiAgent,
    InternalAgentError,
    ProtocolError,
    RunTooLargeError,
    afold,
    parse_event,
)
from agents_ui.sdk.agui.rules import RuleViolation
from agents_ui.sdk.errors import AgentError

from .fakes import Exchange, sse


def run_input(**kwargs) -> RunAgentInput:
    return RunAgentInput(
        thread_id="t1",
        run_id="r1",
        messages=[UserMessage(id="u1", content="hello")],
        **kwargs,
    )


async def collect(agent: AgUiAgent, **kwargs) -> list:
    return [event async for event in agent.run(run_input(**kwargs))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- parse_event ----------------------------------------------------------------------------------


def test_parse_event_fast_and_slow_path_give_the_same_event():
    fast = parse_event('{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}')
    slow = parse_event('{ "delta": "hi", "messageId": "m", "type": "TEXT_MESSAGE_CONTENT" }')
    assert isinstance(fast, TextMessageContentEvent)
    assert fast == slow
    assert fast.message_id == "m" and fast.delta == "hi"


@pytest.mark.parametrize(
    ("old", "new_type"),
    [
        ('{"type":"THINKING_START"}', ReasoningStartEvent),
        (
            '{"type":"THINKING_TEXT_MESSAGE_CONTENT","messageId":"r","delta":"hmm"}',
            ReasoningMessageContentEvent,
        ),
    ],
)
def test_thinking_events_are_mapped_to_reasoning(old, new_type):
    event = parse_event(old)
    assert isinstance(event, new_type)


def test_thinking_message_start_gets_the_reasoning_role():
    event = parse_event('{"type":"THINKING_TEXT_MESSAGE_START","messageId":"r"}')
    assert event.type == EventType.REASONING_MESSAGE_START
    assert event.role == "reasoning"


def test_unknown_event_type_is_skipped_and_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="agents_ui.sdk.agui"):
        assert parse_event('{"type":"FANCY_NEW_THING","x":1}') is None
    assert "FANCY_NEW_THING" in caplog.text


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ('{"type":"TEXT_MESSAGE_CONTENT","messageId":"m"', "not valid JSON"),
        ("not json", "not valid JSON"),
        ("[1, 2]", "string 'type'"),
        ('{"type":"TEXT_MESSAGE_CONTENT","messageId":"m"}', "delta"),
        ('{"messageId":"m","type":"RUN_STARTED"}', "threadId"),
    ],
)
def test_malformed_events_raise_protocol_error(data, fragment):
    with pytest.raises(ProtocolError) as info:
        parse_event(data)
    assert fragment in str(info.value)


# --- discovery ------------------------------------------------------------------------------------


async def test_declared_capabilities_accept_subagents_in_both_spellings(fake_server):
    declaration = {
        "identity": {"name": "Planner"},
        "reasoning": {"supported": True, "encrypted": False},
        "multiAgent": {"supported": True, "subAgents": [{"name": "researcher"}]},
        "humanInTheLoop": {"interrupts": True, "approveWithEdits": True},
    }

    async def handler(ex: Exchange) -> None:
        assert ex.request.path == "/agent/capabilities"
        assert ex.request.headers["accept"] == "application/json"
        ex.respond(200, declaration)

    server = await fake_server(handler)
    agent = AgUiAgent(f"{server.url}/agent/")
    result = await agent.discover()
    assert result.status == "declared"
    assert result.raw == declaration
    caps = result.declaration
    assert caps.identity.name == "Planner"
    assert caps.reasoning.supported is True and caps.reasoning.encrypted is False
    assert [s.name for s in caps.multi_agent.subagents] == ["researcher"]
    assert caps.human_in_the_loop.approve_with_edits is True
    # Absent means undeclared, not unsupported.
    assert caps.tools is None
    assert (await agent.get_capabilities()).identity.name == "Planner"


@pytest.mark.parametrize("status", [404, 405])
async def test_no_discovery_route_means_unknown(fake_server, status):
    async def handler(ex: Exchange) -> None:
        ex.respond(status, "nope", {"Content-Type": "text/plain"})

    server = await fake_server(handler)
    agent = AgUiAgent(server.url)
    assert await agent.get_capabilities() is None
    assert (await agent.discover()).status == "none"


@pytest.mark.parametrize("body", [[1, 2], "a string", None])
async def test_a_body_that_is_not_an_object_means_no_discovery(fake_server, body):
    async def handler(ex: Exchange) -> None:
        ex.respond(200, body if body is not None else "null", {"Content-Type": "application/json"})

    server = await fake_server(handler)
    assert (await AgUiAgent(server.url).discover()).status == "none"


async def test_invalid_declaration_is_kept_as_invalid_not_a_crash(fake_server):
    declaration = {"reasoning": {"supported": "very much"}, "tools": {"items": [{"name": 3}]}}

    async def handler(ex: Exchange) -> None:
        ex.respond(200, declaration)

    server = await fake_server(handler)
    agent = AgUiAgent(server.url)
    result = await agent.discover()
    assert result.status == "invalid"
    assert result.raw == declaration
    assert result.declaration is None
    assert "reasoning.supported" in result.error
    with pytest.raises(ProtocolError, match="capability declaration is invalid"):
        await agent.get_capabilities()


async def test_discovery_is_dynamic(fake_server):
    tools: list[dict] = []

    async def handler(ex: Exchange) -> None:
        ex.respond(200, {"tools": {"supported": True, "items": list(tools)}})

    server = await fake_server(handler)
    agent = AgUiAgent(server.url)
    assert (await agent.get_capabilities()).tools.items == []
    tools.append({"name": "search", "description": "web search"})
    assert [t.name for t in (await agent.get_capabilities()).tools.items] == ["search"]


async def test_unreachable_agent():
    agent = AgUiAgent(f"http://127.0.0.1:{free_port()}")
    result = await agent.discover()
    assert result.status == "unreachable"
    assert result.error_code == "unreachable"
    with pytest.raises(AgentUnreachableError):
        await agent.get_capabilities()
    with pytest.raises(AgentUnreachableError):
        await collect(agent)


async def test_discovery_server_error_is_unreachable_and_raises_typed(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.respond(503, "down", {"Content-Type": "text/plain"})

    server = await fake_server(handler)
    agent = AgUiAgent(server.url)
    assert (await agent.discover()).status == "unreachable"
    with pytest.raises(InternalAgentError):
        await agent.get_capabilities()


async def test_discovery_timeout(fake_server):
    async def handler(ex: Exchange) -> None:
        await asyncio.sleep(5)

    server = await fake_server(handler)
    agent = AgUiAgent(server.url, timeout=httpx.Timeout(2.0, read=0.2))
    with pytest.raises(AgentTimeoutError):
        await agent.get_capabilities()


# --- runs -----------------------------------------------------------------------------------------


async def test_run_posts_the_input_and_replays_a_capture(fake_server, captures):
    body = (captures / "starter-agentic_chat.sse").read_bytes()

    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        # Odd chunk sizes so frames straddle reads.
        for i in range(0, len(body), 37):
            await ex.send(body[i : i + 37])

    server = await fake_server(handler)
    agent = AgUiAgent(server.url, headers={"Authorization": "Bearer s3cret"})
    transcript = await afold(agent.run(run_input()))
    request = server.requests[0]
    assert request.method == "POST"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["authorization"] == "Bearer s3cret"
    sent = request.json()
    assert sent["threadId"] == "t1" and sent["runId"] == "r1"
    assert sent["protocolVersion"] == "1.1"
    assert sent["messages"] == [{"id": "u1", "role": "user", "content": "hello"}]
    assert transcript.messages[0].text == "counting down: 10  9  8  7  6  5  4  3  2  1  ✓"
    assert transcript.outcome.kind == "success"


async def test_non_2xx_before_the_stream_is_an_error(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.respond(500, {"error": {"code": "internal", "message": "boom"}})

    server = await fake_server(handler)
    with pytest.raises(InternalAgentError, match="boom"):
        await collect(AgUiAgent(server.url))


async def test_wrong_content_type_is_a_protocol_error(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.respond(200, "<html>login</html>", {"Content-Type": "text/html"})

    server = await fake_server(handler)
    with pytest.raises(ProtocolError, match="text/html"):
        await collect(AgUiAgent(server.url))


async def test_stream_cut_mid_frame_yields_what_arrived_then_raises(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))
        await ex.send('data: {"type":"TEXT_MESSAGE_START","messageId":"m1","ro')

    server = await fake_server(handler)
    received = []
    with pytest.raises(ProtocolError, match="in the middle of a frame without a terminal event"):
        async for event in AgUiAgent(server.url).run(run_input()):
            received.append(event)
    assert [e.type for e in received] == [EventType.RUN_STARTED]


async def test_stream_ending_without_run_finished_raises(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))

    server = await fake_server(handler)
    with pytest.raises(ProtocolError, match="ended without a terminal event"):
        await collect(AgUiAgent(server.url))


async def test_run_error_ends_the_run_normally(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))
        await ex.send(sse({"type": "RUN_ERROR", "message": "model overloaded", "code": "overloaded"}))

    server = await fake_server(handler)
    transcript = await afold(AgUiAgent(server.url).run(run_input()))
    assert transcript.outcome.kind == "error"
    assert transcript.outcome.message == "model overloaded"
    assert transcript.messages == []


async def test_an_event_after_run_error_breaks_a_rule_and_keeps_what_came_before(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))
        await ex.send(sse({"type": "RUN_ERROR", "message": "model overloaded", "code": "overloaded"}))
        await ex.send(sse({"type": "TEXT_MESSAGE_START", "messageId": "late"}))

    server = await fake_server(handler)
    seen = []
    with pytest.raises(RuleViolation, match="already errored with 'RUN_ERROR'") as caught:
        async for event in AgUiAgent(server.url).run(run_input()):
            seen.append(event.type.value)
    assert seen == ["RUN_STARTED", "RUN_ERROR"]
    assert caught.value.spec == "events/lifecycle"
    assert '"messageId":"late"' in caught.value.raw.replace(" ", "")


async def test_malformed_json_in_the_stream_raises(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))
        await ex.send("data: {not json}\n\n")

    server = await fake_server(handler)
    with pytest.raises(ProtocolError, match="not valid JSON"):
        await collect(AgUiAgent(server.url))


async def test_oversized_frame_raises(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))
        big = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x" * 5000}
        await ex.send(sse(big))
        await ex.send(sse({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}))

    server = await fake_server(handler)
    with pytest.raises(ProtocolError, match="exceeded 1024 bytes"):
        await collect(AgUiAgent(server.url, max_frame_bytes=1024))


async def test_total_size_limit(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))
        for _ in range(100):
            await ex.send(sse({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "y" * 100}))

    server = await fake_server(handler)
    with pytest.raises(RunTooLargeError, match="more than 4 KB in one run; the answer was cut there"):
        await collect(AgUiAgent(server.url, max_total_bytes=4096))


async def test_unknown_and_thinking_events_in_a_stream(fake_server, caplog):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(": keep-alive comment\n\n")
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))
        await ex.send(sse({"type": "SOMETHING_FROM_THE_FUTURE", "x": 1}))
        await ex.send(sse({"type": "THINKING_START"}))
        await ex.send(sse({"type": "THINKING_TEXT_MESSAGE_START", "messageId": "th"}))
        await ex.send(
            sse({"type": "THINKING_TEXT_MESSAGE_CONTENT", "messageId": "th", "delta": "let me see"})
        )
        await ex.send(sse({"type": "THINKING_TEXT_MESSAGE_END", "messageId": "th"}))
        await ex.send(sse({"type": "THINKING_END"}))
        await ex.send(sse({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}))

    server = await fake_server(handler)
    warnings: list[str] = []
    transcript = await afold(AgUiAgent(server.url).run(run_input(), warnings=warnings))
    assert any("SOMETHING_FROM_THE_FUTURE" in w for w in warnings)
    assert any("THINKING_START" in w for w in warnings)
    assert transcript.observed.reasoning is True
    assert [(r.id, r.text) for r in transcript.reasoning] == [("th", "let me see")]
    assert transcript.outcome.kind == "success"


async def test_idle_timeout_between_events(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))
        await asyncio.sleep(5)

    server = await fake_server(handler)
    agent = AgUiAgent(server.url, timeout=httpx.Timeout(2.0, read=0.3))
    received = []
    with pytest.raises(AgentTimeoutError):
        async for event in agent.run(run_input()):
            received.append(event)
    assert len(received) == 1


async def test_closing_the_iterator_closes_the_connection(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))
        await asyncio.wait_for(ex.disconnected.wait(), 5)

    server = await fake_server(handler)
    async with httpx.AsyncClient() as client:
        events = AgUiAgent(server.url, client=client).run(run_input())
        first = await anext(events)
        assert first.type == EventType.RUN_STARTED
        await events.aclose()
        await asyncio.wait_for(server.exchanges[0].disconnected.wait(), 2)
    assert server.exchanges[0].disconnected.is_set()


async def test_errors_never_carry_credentials(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.respond(401, "unauthorized", {"Content-Type": "text/plain"})

    server = await fake_server(handler)
    with pytest.raises(AgentError) as info:
        await collect(AgUiAgent(server.url, headers={"Authorization": "Bearer top-secret-token"}))
    assert info.value.code == "http_401"
    assert "top-secret-token" not in str(info.value)
    assert "top-secret-token" not in repr(
        AgUiAgent(server.url, headers={"Authorization": "top-secret-token"})
    )


async def test_interrupt_then_resume_against_the_langgraph_captures(fake_server, captures):
    bodies = [
        (captures / "langgraph-interrupt.sse").read_bytes(),
        (captures / "langgraph-resume.sse").read_bytes(),
    ]

    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(bodies[len(server.requests) - 1])

    server = await fake_server(handler)
    agent = AgUiAgent(server.url)
    first = await afold(agent.run(run_input()))
    (interrupt,) = first.open_interrupts
    assert interrupt.tool_call_id == "tc-1"
    resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": {"approved": True}}]
    second = await afold(
        agent.run(RunAgentInput(thread_id="lg-t1", run_id="lg-r2", messages=[], resume=resume))
    )
    assert server.requests[1].json()["resume"] == resume
    assert second.tool_calls["tc-1"].result.startswith("sent ")
    assert isinstance(second.outcome, object) and second.outcome.kind == "success"
    assert RunFinishedEvent  # the outcome came from ag_ui's own event type


async def test_a_stream_held_open_after_the_terminal_event_ends_the_run_with_its_outcome(fake_server):
    async def handler(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}))
        await ex.send(sse({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}))
        await asyncio.sleep(60)  # the producer never closes the connection

    server = await fake_server(handler)
    agent = AgUiAgent(server.url, timeout=httpx.Timeout(30, read=0.5))
    transcript = await asyncio.wait_for(afold(agent.run(run_input())), 20)
    assert transcript.outcome.kind == "success"
