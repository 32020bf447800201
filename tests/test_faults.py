"""Agents that misbehave: every fault of tests/support/fault_agent.py, met as a person would meet it.

For each fault: the person sees a clear message in place (on the live stream, which ends with
"done"), the run is marked with the reason, their message and what the agent said before the fault
are kept, memory stays bounded, and the next request to the server succeeds.
"""

from __future__ import annotations

import asyncio
import re
import tracemalloc
from collections.abc import Iterator

import pytest
from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.test import AsyncClient
from django.utils.html import escape

from agents_ui.endpoints.discovery import discover_one
from agents_ui.models import AgentEndpoint, CapabilitySnapshot, Message, Run, RunEvent
from agents_ui.runs.live import LIVE
from tests.factories import make_endpoint, make_user
from tests.support.fault_agent import SAID_BEFORE, FaultAgentServer
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle, until_live

pytestmark = pytest.mark.django_db(transaction=True)

# Short timeouts keep each fault to a second or so.
CONNECT_TIMEOUT = 0.5
READ_TIMEOUT = 0.5
# What one run may allocate at its peak, whatever the agent sends (the SSE frame limit is 4 MiB).
MEMORY_LIMIT = 64 * 1024 * 1024

FAILED, COMPLETED, CANCELLED = Run.Status.FAILED, Run.Status.COMPLETED, Run.Status.CANCELLED
CANNOT_READ = "The agent answered in a form this product cannot read."
# A stream that ends inside a run (docs/PROTOCOLS.md 1.1a): truncated, never a success.
TRUNCATED = "Interrupted: the agent's answer stopped before it finished."

# fault -> (final status, the message the person reads, whether the agent spoke before the fault)
FAULT_OUTCOMES = {
    "refuse": (FAILED, "The agent cannot be reached.", False),
    "hang-headers": (FAILED, "The agent did not answer in time.", False),
    "hang-mid-stream": (FAILED, "The agent did not answer in time.", True),
    "cut-mid-frame": (FAILED, TRUNCATED, True),
    "malformed-json": (FAILED, CANNOT_READ, True),
    "huge-frame": (FAILED, CANNOT_READ, True),
    "http-500": (FAILED, "The agent failed while answering.", False),
    "unsupported-capability": (FAILED, "The agent does not offer messages.", False),
    "rate-limited": (FAILED, "The agent is busy: too many requests. Try again in 30 seconds.", False),
    "no-finish": (FAILED, TRUNCATED, True),
    # docs/PROTOCOLS.md 1.1: an unknown event must not break a run; a bad patch keeps the last good state.
    "unknown-event": (COMPLETED, "", True),
    "invalid-patch": (COMPLETED, "did not follow its protocol, so it is left out", True),
    "drip?delay=0.002": (COMPLETED, "", True),
}


@pytest.fixture(scope="session")
def fault_agent() -> Iterator[FaultAgentServer]:
    server = FaultAgentServer().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


@pytest.fixture
async def person():
    user = await sync_to_async(make_user)()
    client = HtmxClient()
    await client.aforce_login(user)
    return client


async def fault_endpoint(fault_agent: FaultAgentServer, fault: str, **fields):
    name, _, query = fault.partition("?")
    fields = {"connect_timeout": CONNECT_TIMEOUT, "read_timeout": READ_TIMEOUT, **fields}
    slug = re.sub(r"[^a-z0-9-]", "-", f"fault-{name}")
    return await sync_to_async(make_endpoint)(slug=slug, base_url=fault_agent.url_for(name, query), **fields)


async def send(client: AsyncClient, slug: str, text: str) -> str:
    """Send a message through the composer; the id of the run that answers it."""
    response = await client.post(f"/agents/{slug}/send/", {"content": text})
    assert response.status_code == 200, response.content[:500]
    found = re.search(r'sse-connect="/runs/([0-9a-f-]+)/events/"', response.content.decode())
    assert found, response.content[:500]
    return found.group(1)


async def follow(client: AsyncClient, run_id: str, limit: float = 10) -> str:
    """The run's live stream as the browser reads it, to its end."""
    response = await client.get(f"/runs/{run_id}/events/")
    assert response["Content-Type"] == "text/event-stream"

    async def read() -> str:
        return b"".join([chunk async for chunk in response.streaming_content]).decode()

    return await asyncio.wait_for(read(), limit)


async def assert_next_request_works(client: AsyncClient, fault_agent: FaultAgentServer) -> None:
    assert (await client.get("/")).status_code == 200
    if not await AgentEndpoint.objects.filter(slug="fault-ok").aexists():
        await fault_endpoint(fault_agent, "ok")
    run_id = await send(client, "fault-ok", "And now?")
    stream = await follow(client, run_id)
    assert SAID_BEFORE in stream and stream.rstrip().endswith("event: done\ndata:")
    assert (await Run.objects.aget(pk=run_id)).status == COMPLETED


@pytest.mark.parametrize("fault", list(FAULT_OUTCOMES))
async def test_each_fault_is_survived(fault_agent, person, record_property, fault):
    record_property("fault", fault.partition("?")[0])
    status, message, spoke = FAULT_OUTCOMES[fault]
    endpoint = await fault_endpoint(fault_agent, fault)
    question = f"What happens with {fault}?"

    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        run_id = await send(person, endpoint.slug, question)
        stream = await follow(person, run_id)
        await settle()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    # The person sees the outcome in place, and the stream closes.
    assert stream.rstrip().endswith("event: done\ndata:"), stream[-500:]
    assert re.findall(r'data-run-status="(\w+)"', stream)[-1] == status
    if message:
        assert escape(message) in stream
    # The run is marked with the reason.
    run = await Run.objects.aget(pk=run_id)
    assert run.status == status
    if status == FAILED:
        assert run.error == message
    # Nothing said is lost: the question, and what the agent said before the fault.
    assert await Message.objects.filter(
        conversation_id=run.conversation_id, role="user", content=question
    ).aexists()
    said = [m.content async for m in Message.objects.filter(run_id=run_id, role="assistant")]
    assert said == ([SAID_BEFORE] if spoke else [])
    # Memory stays bounded, whatever the agent sent.
    assert peak - base < MEMORY_LIMIT, f"peak {peak - base:,} bytes"
    await assert_next_request_works(person, fault_agent)


async def test_a_50_mb_frame_is_refused_without_being_buffered(fault_agent, person, record_property):
    record_property("fault", "huge-frame")
    endpoint = await fault_endpoint(fault_agent, "huge-frame")
    tracemalloc.start()
    try:
        run_id = await send(person, endpoint.slug, "Big?")
        await settle()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    run = await Run.objects.aget(pk=run_id)
    assert run.status == FAILED and run.error == CANNOT_READ
    assert peak < 16 * 1024 * 1024, f"peak {peak:,} bytes: the frame was buffered"


async def test_one_byte_per_second_keeps_the_server_answering_and_can_be_stopped(
    fault_agent, person, record_property
):
    record_property("fault", "drip")
    opening = len(
        b"".join(
            f"data: {e}\n\n".encode()
            for e in (
                '{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}',
                '{"type": "TEXT_MESSAGE_START", "messageId": "before", "role": "assistant"}',
                f'{{"type": "TEXT_MESSAGE_CONTENT", "messageId": "before", "delta": "{SAID_BEFORE}"}}',
                '{"type": "TEXT_MESSAGE_END", "messageId": "before"}',
            )
        )
    )
    # The agent is never silent for longer than the idle timeout: it is slow, not dead.
    endpoint = await fault_endpoint(fault_agent, f"drip?delay=1&fast={opening}", read_timeout=5)
    run_id = await send(person, endpoint.slug, "Slowly?")
    live = LIVE[run_id]
    await until_live(
        live, lambda: live.transcript.messages and live.transcript.messages[0].text == SAID_BEFORE, timeout=5
    )
    started = asyncio.get_running_loop().time()
    assert (await person.get("/")).status_code == 200  # the server is not held up by the drip
    assert (await person.post(f"/runs/{run_id}/stop/")).status_code == 204
    assert asyncio.get_running_loop().time() - started < 3
    await settle()
    run = await Run.objects.aget(pk=run_id)
    assert run.status == CANCELLED and "kept" in run.error
    assert [m.content async for m in Message.objects.filter(run_id=run_id, role="assistant")] == [SAID_BEFORE]
    stream = await follow(person, run_id)
    assert 'data-run-status="cancelled"' in stream and stream.rstrip().endswith("event: done\ndata:")


async def test_a_10_mb_declaration_is_invalid_with_a_clear_reason(fault_agent, person, record_property):
    record_property("fault", "huge-declaration")
    endpoint = await fault_endpoint(fault_agent, "huge-declaration", read_timeout=5)
    tracemalloc.start()
    try:
        discovery = await discover_one(endpoint, refresh=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert discovery.status in (CapabilitySnapshot.Status.INVALID, CapabilitySnapshot.Status.UNREACHABLE)
    assert "larger than" in discovery.error
    assert discovery.raw is None
    assert peak < MEMORY_LIMIT
    # The pages that show it still work, and the agent can still be used.
    assert (await person.get("/")).status_code == 200
    assert (await person.get(f"/agents/{endpoint.slug}/")).status_code == 200
    run_id = await send(person, endpoint.slug, "Still there?")
    await settle()
    assert (await Run.objects.aget(pk=run_id)).status == COMPLETED


async def test_the_fault_agent_is_not_part_of_the_product(client):
    from django.urls import resolve
    from django.urls.exceptions import Resolver404

    from agents_ui.demo.registry import DEMO_AGENTS_BY_SLUG

    with pytest.raises(Resolver404):
        resolve("/fault/ok/")
    assert not any("fault" in slug for slug in DEMO_AGENTS_BY_SLUG)


@pytest.mark.parametrize("fault", ["ok", "drip?delay=0.002"])
async def test_a_write_the_database_refuses_is_retried_and_nothing_is_lost(
    fault_agent, person, monkeypatch, record_property, fault
):
    """Under load SQLite may stay locked past its busy timeout: the batch is kept and written later."""
    record_property("fault", "database-busy")
    from django.db import OperationalError

    from agents_ui.runs import writer

    real_write, refusals = writer._write_many, [1]

    def busy_once(*args):
        if refusals:
            refusals.pop()
            raise OperationalError("database is locked")
        return real_write(*args)

    monkeypatch.setattr(writer, "_write_many", busy_once)
    endpoint = await fault_endpoint(fault_agent, fault)
    run_id = await send(person, endpoint.slug, "Busy?")
    stream = await follow(person, run_id)
    await settle()
    assert not refusals  # the database did refuse a write
    run = await Run.objects.aget(pk=run_id)
    assert run.status == COMPLETED and 'data-run-status="completed"' in stream
    assert await RunEvent.objects.filter(run_id=run_id).acount() == run.event_count == 5
    assert [m.content async for m in Message.objects.filter(run_id=run_id, role="assistant")] == [SAID_BEFORE]
