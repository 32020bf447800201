"""The A2A client's bounds and error mapping, against answers no well-behaved agent gives."""

from __future__ import annotations

import httpx
import pytest

from agents_ui.endpoints.errors import describe
from agents_ui.sdk import errors
from agents_ui.sdk.a2a.client import A2AAgent, parse_card, pb, translate
from tests.support.a2a_agent import echo_card

CARD = echo_card("http://agent.test")


def agent_answering(handler, **bounds) -> A2AAgent:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return A2AAgent("http://agent.test", client=client, **bounds)


async def first_event(agent: A2AAgent, *, stream: bool = True):
    message = pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text="hi")])
    async for event in agent.send(CARD, message, stream=stream):
        return event
    return None


@pytest.mark.parametrize(
    ("status", "error", "says"),
    [
        (401, errors.InvalidRequestError, "refused this product's credentials"),
        (429, errors.RateLimitedError, "too many requests. Try again in 30 seconds"),
        (503, errors.InternalAgentError, "failed while answering"),
        (404, errors.NotFoundError, "no longer knows"),
    ],
)
async def test_http_errors_of_the_interface_become_the_products_messages(status, error, says):
    agent = agent_answering(lambda request: httpx.Response(status, headers={"Retry-After": "30"}))
    with pytest.raises(error) as caught:
        await first_event(agent, stream=False)
    assert says in describe(caught.value)


async def test_a_jsonrpc_error_of_the_spec_is_mapped_by_its_code():
    def handler(request):
        body = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "Task not found"}}
        return httpx.Response(200, json=body)

    with pytest.raises(errors.NotFoundError):
        await first_event(agent_answering(handler), stream=False)


async def test_an_endless_event_is_cut_at_the_runs_size_before_it_is_buffered():
    sent = 0

    async def endless():
        nonlocal sent
        yield b"data: "
        while sent < 50_000_000:
            sent += 65536
            yield b"x" * 65536

    def handler(request):
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=endless())

    with pytest.raises(errors.RunTooLargeError):
        await first_event(agent_answering(handler, max_total_bytes=1_000_000))
    assert sent < 2_000_000


async def test_a_silent_stream_is_cut_by_the_idle_bound():
    import asyncio

    async def silent():
        await asyncio.sleep(5)
        yield b""

    def handler(request):
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=silent())

    with pytest.raises(errors.EventIdleTimeoutError):
        await first_event(agent_answering(handler, event_idle_timeout=0.2))


def test_a_card_nested_too_deep_or_missing_its_name_is_refused():
    from agents_ui.sdk.limits import MAX_JSON_DEPTH

    deep: dict = {}
    node = deep
    for _ in range(MAX_JSON_DEPTH + 2):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(errors.ProtocolError, match="nested"):
        parse_card({"name": "a", "metadata": deep})
    with pytest.raises(errors.ProtocolError, match="name"):
        parse_card({"description": "d", "version": "1", "supportedInterfaces": [{"url": "http://a"}]})


def test_an_unknown_sdk_error_is_never_raised_raw():
    assert isinstance(translate(RuntimeError("boom")), errors.AgentError)
