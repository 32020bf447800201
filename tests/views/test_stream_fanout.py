"""A run's event stream served by a process that does not drive it, with Redis: the words come
from the run's Stream as they are said, before the database has them; without Redis, from the
database."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from agents_ui.models import Run
from agents_ui.runs.fanout import CONTROL_CHANNEL, RedisFanout, fanout
from tests.runs.test_fanout import answer, new_run, store
from tests.support.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


async def read_frames(response, frames: list[str]) -> None:
    async for chunk in response.streaming_content:
        frames.append(chunk.decode())


async def test_a_run_driven_elsewhere_streams_from_redis_before_the_database_has_it(redis_server):
    run = await sync_to_async(new_run)()
    records = answer(120)
    driver = RedisFanout(redis_server.url)  # the other process, with connections of its own
    client = AsyncClient()
    await client.aforce_login(await sync_to_async(lambda: run.conversation.user)())
    await store(run, records[:2])  # begun: the message has started
    response = await client.get(f"/runs/{run.pk}/events/")
    assert response["Content-Type"] == "text/event-stream"
    frames: list[str] = []
    reading = asyncio.create_task(read_frames(response, frames))
    await eventually(lambda: frames)  # the page as stored so far
    for seq, type_, payload in records[2:-1]:
        driver.publish(str(run.pk), seq, type_, payload)
        await asyncio.sleep(0.002)
    # Every word reached the page while the database still has only the first two events.
    await eventually(lambda: "w119" in "".join(frames), timeout=20)
    assert not any("event: done" in frame for frame in frames)
    assert await Run.objects.filter(pk=run.pk).values_list("event_count", flat=True).aget() == 0
    page = "".join(frames)
    assert [i for i in range(120) if not re.search(rf"\bw{i}\b", page)] == []
    # The run ends: its end is stored, then said on the Stream; the page closes with the done frame.
    await store(run, records[2:])
    await Run.objects.filter(pk=run.pk).aupdate(status=Run.Status.COMPLETED, event_count=len(records))
    driver.ended(str(run.pk), len(records))
    await asyncio.wait_for(reading, timeout=20)
    assert frames[-1] == "event: done\ndata: \n\n"
    await driver.aclose()
    await fanout().aclose()  # the view's, in this event loop


async def test_without_redis_a_run_driven_elsewhere_is_read_from_the_database(settings):
    settings.AGENTS_UI_FANOUT_URL = ""
    run = await sync_to_async(new_run)()
    records = answer(5)
    client = AsyncClient()
    await client.aforce_login(await sync_to_async(lambda: run.conversation.user)())
    response = await client.get(f"/runs/{run.pk}/events/")
    frames: list[str] = []
    reading = asyncio.create_task(read_frames(response, frames))
    await eventually(lambda: frames)
    await store(run, records)
    await Run.objects.filter(pk=run.pk).aupdate(status=Run.Status.COMPLETED, event_count=len(records))
    await asyncio.wait_for(reading, timeout=20)
    page = "".join(frames)
    assert all(re.search(rf"\bw{i}\b", page) for i in range(5)) and frames[-1] == "event: done\ndata: \n\n"


async def test_the_composers_stop_reaches_a_run_driven_elsewhere_and_records_it(redis_server):
    run = await sync_to_async(new_run)()
    listener = RedisFanout(redis_server.url)
    pubsub = listener.redis.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(CONTROL_CHANNEL)
    client = AsyncClient()
    await client.aforce_login(await sync_to_async(lambda: run.conversation.user)())
    slug = await sync_to_async(lambda: run.conversation.endpoint.slug)()
    response = await client.post(f"/agents/{slug}/stop/", {"conversation": str(run.conversation_id)})
    assert response.status_code == 302
    async with asyncio.timeout(10):
        while (message := await pubsub.get_message(timeout=1.0)) is None:
            pass
    assert json.loads(message["data"]) == {"kind": "stop", "reason": "", "run": str(run.pk)}
    stored = await Run.objects.aget(pk=run.pk)  # the record, which the driver's writer reads too
    assert (stored.status, stored.error) == (Run.Status.CANCELLED, "Stopped. The answer so far is kept.")
    await pubsub.aclose()
    await listener.aclose()
    await fanout().aclose()
