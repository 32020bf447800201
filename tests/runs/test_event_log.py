"""The event log read back: one loop for a finished run's page and for a stream that follows it."""

from __future__ import annotations

import logging

import pytest
from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.test import AsyncClient

from agents_ui.models import Conversation, Run, RunEvent
from agents_ui.runs.event_log import EventLogReader, replay
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db(transaction=True)

EVENTS = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "Before "},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": 7},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "and after."},
    {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


def stored_run(user=None):
    endpoint = make_endpoint(base_url="http://127.0.0.1:9/agent", connect_timeout=0.2)
    conversation = Conversation.objects.create(user=user or make_user(), endpoint=endpoint, title="t")
    run = Run.objects.create(conversation=conversation, request={}, status=Run.Status.COMPLETED)
    RunEvent.objects.bulk_create(
        RunEvent(run=run, seq=seq, type=event["type"], payload=event) for seq, event in enumerate(EVENTS, 1)
    )
    run.conversation = conversation
    return run


def test_a_stored_event_that_no_longer_parses_is_skipped_with_a_warning_and_the_rest_is_shown(caplog):
    run = stored_run()
    with caplog.at_level(logging.WARNING, logger="agents_ui.runs.event_log"):
        transcript = replay(run)
    assert [m.text for m in transcript.messages] == ["Before and after."]
    assert "skipping stored event TEXT_MESSAGE_CONTENT" in caplog.text


def test_the_reader_goes_on_from_the_last_event_it_read():
    run = stored_run()
    reader = EventLogReader(run.pk, run.conversation.endpoint.protocol)
    assert reader.read(limit=3) == 3
    assert reader.transcript.messages[0].text == "Before "
    assert reader.read() == len(EVENTS) - 3
    assert reader.read() == 0
    assert reader.transcript.messages[0].text == "Before and after."


async def test_a_stream_following_a_stored_run_skips_the_same_event_and_says_so(caplog):
    cache.clear()
    user = await sync_to_async(make_user)()
    run = await sync_to_async(stored_run)(user)
    client = AsyncClient()
    await client.aforce_login(user)
    with caplog.at_level(logging.WARNING, logger="agents_ui.runs.event_log"):
        response = await client.get(f"/runs/{run.pk}/events/")
        stream = b"".join([chunk async for chunk in response.streaming_content]).decode()
    assert "Before and after." in stream
    assert "skipping stored event TEXT_MESSAGE_CONTENT" in caplog.text
