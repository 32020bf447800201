"""How a run's answer is read follows the agent's transport: one complete response, or a stream
resumed from the last event after a cut connection (transport.streaming, transport.resumable)."""

from __future__ import annotations

import asyncio
import json

import pytest
from ag_ui.core import RunAgentInput, UserMessage

from agents_ui.sdk import AgUiAgent, ProtocolError, sniff_mime_type

from .fakes import Exchange, sse

EVENTS = [
    {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "one "},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "two "},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "three"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
]


def run_input() -> RunAgentInput:
    return RunAgentInput(
        thread_id="t1",
        run_id="r1",
        state=None,
        messages=[UserMessage(id="u1", content="hello")],
        tools=[],
        context=[],
        forwarded_props=None,
    )


async def texts(agent: AgUiAgent, **kwargs) -> list[str]:
    found = []
    async for event, _ in agent.run_frames(run_input(), **kwargs):
        found.append(getattr(event, "delta", event.type.value))
    return found


def cutting_agent(cut_after: int, *, honour_last_event_id: bool = True, cuts: int = 1):
    """Sends EVENTS with ids 1..n; the first `cuts` connections are cut after `cut_after` events."""
    connections = []

    async def handler(exchange: Exchange) -> None:
        connections.append(exchange.request.headers.get("last-event-id"))
        last = exchange.request.headers.get("last-event-id")
        start = int(last) if last and honour_last_event_id else 0
        exchange.start_sse()
        for number, event in enumerate(EVENTS[start:], start=start + 1):
            if len(connections) <= cuts and number > cut_after:
                await exchange.send('data: {"type": "TEXT_MES')  # cut in the middle of a frame
                exchange.writer.transport.abort()
                return
            await exchange.send(sse(event, id=number))

    return handler, connections


async def test_a_resumable_stream_goes_on_from_the_last_event_after_a_cut(fake_server):
    handler, connections = cutting_agent(3)
    server = await fake_server(handler)
    found = await texts(AgUiAgent(server.url), resume=True)
    assert found == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "one ",
        "two ",
        "three",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert connections == [None, "3"]


async def test_an_event_the_agent_repeats_after_resuming_is_shown_once(fake_server):
    handler, connections = cutting_agent(4, honour_last_event_id=False)
    server = await fake_server(handler)
    found = await texts(AgUiAgent(server.url), resume=True)
    assert found.count("one ") == 1 and found.count("two ") == 1
    assert found[-1] == "RUN_FINISHED"
    assert connections == [None, "4"]


async def test_without_resumable_a_cut_stream_ends_the_run(fake_server):
    handler, connections = cutting_agent(3)
    server = await fake_server(handler)
    with pytest.raises(ProtocolError):
        await texts(AgUiAgent(server.url))
    assert connections == [None]


async def test_resuming_gives_up_after_a_few_cuts(fake_server):
    handler, connections = cutting_agent(2, cuts=100)
    server = await fake_server(handler)
    with pytest.raises(ProtocolError):
        await texts(AgUiAgent(server.url), resume=True)
    assert len(connections) == 4  # the first connection and three resumes


async def test_an_agent_that_does_not_stream_is_read_as_one_complete_response(fake_server):
    sent_everything = asyncio.Event()

    async def handler(exchange: Exchange) -> None:
        exchange.respond(200, EVENTS)
        sent_everything.set()

    server = await fake_server(handler)
    found = []
    async for event, _ in AgUiAgent(server.url).run_frames(run_input(), stream=False):
        assert sent_everything.is_set()
        found.append(event.type.value)
    assert found[0] == "RUN_STARTED" and found[-1] == "RUN_FINISHED"
    assert "application/json" in server.requests[0].headers["accept"]


async def test_a_complete_response_may_also_be_sse(fake_server):
    async def handler(exchange: Exchange) -> None:
        exchange.respond(200, "".join(sse(e) for e in EVENTS), {"Content-Type": "text/event-stream"})

    server = await fake_server(handler)
    assert (await texts(AgUiAgent(server.url), stream=False))[2:5] == ["one ", "two ", "three"]


async def test_a_complete_response_past_the_byte_bound_is_refused(fake_server):
    async def handler(exchange: Exchange) -> None:
        exchange.respond(200, json.dumps(EVENTS), {"Content-Type": "application/json"})

    server = await fake_server(handler)
    with pytest.raises(ProtocolError, match="larger"):
        await texts(AgUiAgent(server.url, max_total_bytes=100), stream=False)


# EBML header of a WebM file, as MediaRecorder writes one.
WEBM = (
    bytes.fromhex("1a45dfa39f4286810142f7810142f2810442f381084282847765626d42878104428581021853")
    + b"\x00" * 64
)


def test_a_webm_recording_labelled_audio_is_audio():
    assert sniff_mime_type(WEBM, "audio/webm;codecs=opus") == "audio/webm"
    assert sniff_mime_type(WEBM, "video/webm") == "video/webm"
    assert sniff_mime_type(WEBM) == "video/webm"
