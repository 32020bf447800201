"""One run's bounds: what it may store, how long it may take, how long the agent may stay silent."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from agents_ui.models import Conversation, Message, Run, RunEvent
from agents_ui.runs.live import start_run
from tests.factories import make_endpoint
from tests.runs.test_runs import new_turn

pytestmark = pytest.mark.django_db(transaction=True)

START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}


def frame(event: dict) -> str:
    return f"data: {json.dumps(event)}\n\n"


async def run_against(fake_server, handler, **endpoint_fields):
    agent = await fake_server(handler)
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{agent.url}/agent", **endpoint_fields)
    run = await new_turn(endpoint)
    started = time.monotonic()
    live = start_run(run)
    await asyncio.wait_for(live.task, 30)
    return await Run.objects.aget(pk=run.pk), time.monotonic() - started


async def test_a_never_ending_answer_stops_at_the_size_limit_and_says_why(fake_server, settings):
    settings.AGENTS_UI_RUN_MAX_BYTES = 200_000

    async def endless(exchange):
        exchange.start_sse()
        await exchange.send(frame(START))
        await exchange.send(frame({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}))
        while True:
            await exchange.send(
                frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x" * 1000})
            )

    run, _ = await run_against(fake_server, endless)
    assert run.status == Run.Status.FAILED
    assert run.error == "The agent sent more than 195 KB in one run; the answer was cut there."
    stored = [
        len(json.dumps(p)) async for p in RunEvent.objects.filter(run=run).values_list("payload", flat=True)
    ]
    assert 100_000 < sum(stored) <= 200_000
    answer = await Message.objects.aget(role="assistant")
    assert len(answer.content) > 100_000  # what the agent said before the limit is kept


async def test_an_agent_dripping_a_byte_at_a_time_meets_the_idle_limit(fake_server, settings):
    settings.AGENTS_UI_RUN_IDLE_SECONDS = 0.5

    async def drip(exchange):
        exchange.start_sse()
        await exchange.send(frame(START))
        for byte in 'data: {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}' * 100:
            await exchange.send(byte)
            await asyncio.sleep(0.05)  # bytes keep coming, never a whole event

    run, took = await run_against(fake_server, drip, read_timeout=1)
    assert run.status == Run.Status.FAILED
    assert "sent no complete event for 1 second" in run.error and took < 5


async def test_a_run_that_goes_on_and_on_meets_the_overall_limit(fake_server, settings):
    settings.AGENTS_UI_RUN_MAX_SECONDS = 1.0

    async def chatty(exchange):
        exchange.start_sse()
        await exchange.send(frame(START))
        await exchange.send(frame({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}))
        while True:
            await exchange.send(frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "more "}))
            await asyncio.sleep(0.05)

    run, took = await run_against(fake_server, chatty)
    assert run.status == Run.Status.FAILED
    assert "past its time limit of 1 second" in run.error
    assert 0.9 < took < 5
    assert (await Message.objects.aget(role="assistant")).content.startswith("more more")


async def test_a_huge_answer_shows_its_end_with_a_note_and_the_page_stays_small(fake_server, settings):
    settings.AGENTS_UI_RUN_MAX_BYTES = 3_000_000
    settings.AGENTS_UI_SHOWN_TEXT_CHARS = 20_000

    async def huge(exchange):
        exchange.start_sse()
        await exchange.send(frame(START))
        await exchange.send(frame({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}))
        for n in range(2000):
            await exchange.send(
                frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"{n:04} " * 200})
            )
        await exchange.send(frame({"type": "TEXT_MESSAGE_END", "messageId": "m"}))
        await exchange.send(frame({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}))

    run, _ = await run_against(fake_server, huge)
    assert run.status == Run.Status.COMPLETED
    conversation = await Conversation.objects.select_related("endpoint", "user").aget(pk=run.conversation_id)
    client = AsyncClient()
    await client.aforce_login(conversation.user)
    started = time.monotonic()
    page = (await client.get(conversation.get_absolute_url())).content.decode()
    assert time.monotonic() - started < 3
    assert "data-truncated" in page and "1980000 characters are not shown" in page
    assert "1999 1999" in page and "0000 0000" not in page
    assert len(page) < 200_000


def test_the_event_log_of_one_run_stops_at_its_size_whatever_client_fed_it(settings):
    from agents_ui.runs.live import LiveRun, RunLimitReached
    from agents_ui.sdk.agui.client import parse_event_object

    settings.AGENTS_UI_RUN_MAX_BYTES = 10_000
    live = LiveRun("run", "agui")
    delta = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x" * 900}
    live.apply(parse_event_object({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}))
    with pytest.raises(RunLimitReached, match="the most one run may store"):
        for _ in range(20):
            live.apply(parse_event_object(delta), json.dumps(delta))
    assert live.stored_bytes <= 10_000 and len(live.transcript.messages[0].text) == 900 * 10
