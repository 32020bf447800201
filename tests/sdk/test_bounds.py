"""What a hostile agent can send the clients, and the bound that stops each: time, bytes, nesting, links."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from ag_ui.core import RunAgentInput, UserMessage

from agents_ui.sdk import (
    AgUiAgent,
    ApprovalRequested,
    EventIdleTimeoutError,
    ExternalAgentClient,
    GroundingEvent,
    ProtocolError,
    RunCompleted,
    RunTimeLimitError,
    parse_capabilities,
    parse_event,
    parse_policy,
    safe_link,
)
from agents_ui.sdk.external.client import parse_external_frame
from agents_ui.sdk.limits import MAX_JSON_DEPTH, json_text_depth
from agents_ui.sdk.sse import INVALID_UTF8_NOTE, SseFrame

from .fakes import Exchange, sse

RUN_STARTED = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
RUN_FINISHED = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}
# Generous: each limit below is a fraction of a second, and the test only needs it to have been hit.
PATIENCE = 10


def run_input() -> RunAgentInput:
    return RunAgentInput(thread_id="t1", run_id="r1", messages=[UserMessage(id="u1", content="hi")])


def deep_text(levels: int) -> str:
    return '{"a":' * levels + "{}" + "}" * levels


def deep_value(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"a": value}
    return value


# --- Time: a drip, and a stream that never ends ------------------------------------------------------


async def test_a_drip_that_never_completes_an_event_is_cut_by_the_idle_limit(fake_server):
    async def drip(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse(RUN_STARTED))
        await ex.send('data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}')
        while not ex.disconnected.is_set():
            await ex.send(" ")  # bytes keep coming, so the read timeout never fires
            await asyncio.sleep(0.02)

    server = await fake_server(drip)
    agent = AgUiAgent(server.url, timeout=httpx.Timeout(PATIENCE), event_idle_timeout=0.3)
    received = []
    with pytest.raises(EventIdleTimeoutError) as cut:
        async with asyncio.timeout(PATIENCE):
            async for event in agent.run(run_input()):
                received.append(event.type.value)
    assert received == ["RUN_STARTED"]
    assert cut.value.code == "event_idle_timeout"
    assert cut.value.message == (
        "The agent sent no complete event for 0.3 seconds; the answer was cut there."
    )
    await asyncio.wait_for(server.exchanges[0].disconnected.wait(), PATIENCE)


async def test_events_that_never_end_are_cut_by_the_run_time_limit(fake_server):
    async def endless(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse(RUN_STARTED))
        await ex.send(sse({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}))
        while not ex.disconnected.is_set():
            await ex.send(sse({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "more "}))
            await asyncio.sleep(0.01)

    server = await fake_server(endless)
    agent = AgUiAgent(server.url, event_idle_timeout=0.2, run_time_limit=0.6)
    count = 0
    with pytest.raises(RunTimeLimitError) as cut:
        async with asyncio.timeout(PATIENCE):
            async for _ in agent.run(run_input()):
                count += 1
    # Every event came well within the idle limit: only the run's own limit could end it.
    assert count > 10
    assert cut.value.code == "run_time_limit"
    assert "time limit of 0.6 seconds" in cut.value.message


def policy_stream(pause: float):
    async def stream(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"runId": "r"}, event="run:started", id=1))
        approval = {
            "approvalId": "ap1",
            "publicName": "pay",
            "sideEffectClass": "financial",
            "expiresAt": "2030-01-01T00:00:00Z",
        }
        await ex.send(sse(approval, event="approval:requested", id=2))
        await asyncio.sleep(pause)  # the person deciding takes their time
        await ex.send(sse({"approvalId": "ap1", "decision": "approve"}, event="approval:resolved", id=3))
        await ex.send(sse({"runId": "r"}, event="run:completed", id=4))

    return stream


async def test_an_undecided_approval_holds_the_idle_limit_but_not_the_run_limit(fake_server):
    server = await fake_server(policy_stream(pause=0.6))
    client = ExternalAgentClient(server.url, event_idle_timeout=0.2)
    events = [e async for e in client.send_message("c1", "pay")]
    assert isinstance(events[1], ApprovalRequested) and isinstance(events[-1], RunCompleted)

    server = await fake_server(policy_stream(pause=PATIENCE))
    client = ExternalAgentClient(server.url, event_idle_timeout=0.2, run_time_limit=0.5)
    with pytest.raises(RunTimeLimitError):
        _ = [e async for e in client.send_message("c1", "pay")]


async def test_an_external_drip_is_cut_by_the_idle_limit(fake_server):
    async def drip(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"runId": "r"}, event="run:started", id=1))
        while not ex.disconnected.is_set():
            await ex.send(": still here\n\n")  # comments are bytes, never an event
            await asyncio.sleep(0.02)

    server = await fake_server(drip)
    client = ExternalAgentClient(server.url, event_idle_timeout=0.3)
    with pytest.raises(EventIdleTimeoutError):
        async with asyncio.timeout(PATIENCE):
            _ = [e async for e in client.send_message("c1", "hi")]


# --- Bytes: one frame that is not UTF-8 -------------------------------------------------------------


async def test_a_frame_that_is_not_utf8_costs_only_itself_and_the_run_says_so(fake_server):
    async def stream(ex: Exchange) -> None:
        ex.start_sse()
        # One write, so the good frames and the bad one arrive in the same read.
        await ex.send(
            sse(RUN_STARTED).encode()
            + sse({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}).encode()
            + b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\xff"}\n\n'
            + sse({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "kept"}).encode()
            + sse({"type": "TEXT_MESSAGE_END", "messageId": "m"}).encode()
            + sse(RUN_FINISHED).encode()
        )

    server = await fake_server(stream)
    notes: list[str] = []
    events = [e async for e in AgUiAgent(server.url).run(run_input(), notes=notes)]
    assert [e.type.value for e in events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert events[2].delta == "kept"
    assert notes == [INVALID_UTF8_NOTE]


# --- Nesting: declarations and events ---------------------------------------------------------------


async def test_a_declaration_nested_ten_thousand_deep_is_invalid_not_a_crash(fake_server):
    async def declare(ex: Exchange) -> None:
        ex.respond(
            200,
            '{"identity":{"name":"deep"},"custom":' + deep_text(10_000) + "}",
            {"Content-Type": "application/json"},
        )

    server = await fake_server(declare)
    result = await AgUiAgent(server.url).discover()
    assert result.status == "invalid"
    assert f"nested more than {MAX_JSON_DEPTH} levels deep" in result.error
    assert result.raw is None  # never kept, so never stored or rendered

    policy = await ExternalAgentClient(server.url).discover()
    assert policy.status == "invalid"
    assert f"nested more than {MAX_JSON_DEPTH} levels deep" in policy.error


def test_an_already_decoded_deep_declaration_is_refused_before_validation():
    with pytest.raises(ProtocolError, match="capability declaration is invalid: it is nested more than"):
        parse_capabilities({"custom": deep_value(10_000)})
    with pytest.raises(ProtocolError, match="nested more than"):
        parse_policy({"identity": {"name": "x"}, "custom": deep_value(10_000)})
    # A realistic declaration nests a few levels: fine.
    assert parse_capabilities({"custom": deep_value(MAX_JSON_DEPTH - 2)}).custom is not None


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 200, 10_000])
def test_an_event_nested_past_the_bound_is_a_protocol_error(levels):
    snapshot = deep_text(levels)
    type_first = '{"type":"STATE_SNAPSHOT","snapshot":' + snapshot + "}"
    type_last = '{"snapshot":' + snapshot + ',"type":"STATE_SNAPSHOT"}'
    for data in (type_first, type_last):
        with pytest.raises(ProtocolError, match=f"nested more than {MAX_JSON_DEPTH} levels deep"):
            parse_event(data)
    frame = SseFrame('{"type":"x","data":' + snapshot + "}", "module")
    with pytest.raises(ProtocolError, match="nested more than"):
        parse_external_frame(frame)


def test_an_event_within_the_bound_parses():
    event = parse_event('{"type":"STATE_SNAPSHOT","snapshot":' + deep_text(MAX_JSON_DEPTH - 2) + "}")
    assert event.snapshot["a"]["a"] is not None
    # Brackets inside strings are text, not nesting.
    assert parse_event(json.dumps({"type": "CUSTOM", "name": "n", "value": "[" * 10_000})).value


def test_json_text_depth_reads_brackets_outside_strings_in_one_pass():
    assert json_text_depth('[[1,"[[[["],{"a":[2]}]') == 3
    assert json_text_depth(json.dumps({"a": 'x\\"[[[', "b": [[]]})) == 3
    assert json_text_depth('"unterminated [[[') == 0
    # A hostile text of escapes and quotes is still read in one pass.
    assert json_text_depth('"\\' * 200_000) == 0


# --- Links from agents --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://docs.example/agent", "https://docs.example/agent"),
        ("http://docs.example", "http://docs.example"),
        ("javascript:alert(1)", None),
        ("JavaScript:alert(1)", None),
        ("java\tscript:alert(1)", None),
        ("data:text/html,<script>alert(1)</script>", None),
        ("//docs.example/agent", None),
        ("/relative", None),
        ("https://", None),
        ("https:docs.example", None),
        ("https://docs.example/ space", None),
        (42, None),
    ],
)
def test_only_absolute_http_links_from_agents_are_kept(url, shown):
    assert safe_link(url) == shown
    declared = parse_capabilities({"identity": {"name": "x", "documentationUrl": url}})
    assert declared.identity.documentation_url == shown
    grounding = GroundingEvent.model_validate({"sources": [{"title": "t", "url": url}]})
    assert grounding.sources[0].url == shown
