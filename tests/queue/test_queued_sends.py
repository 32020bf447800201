"""Sending with separate run workers, as a web process sees it (no worker runs here): the run is
queued with the message and the page says where it stands; past the queue's bound the send is
refused (503, Retry-After) and the text stays; a stop of a queued run ends it; the embedded default
still drives the run in the web process. And the setting is refused on SQLite.

These run on the suite's SQLite database: the web side of the queue is plain ORM. The PostgreSQL
side (claims, leases, workers) is tests/queue/test_run_workers.py.
"""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import AsyncClient

from agents_ui.models import Message, Run
from agents_ui.monitoring.readings import queued_runs
from agents_ui.runs import queue
from agents_ui.runs.live import LIVE
from tests.factories import make_endpoint, make_user
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
async def person(fake_server):
    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, {"identity": {"name": "Quick"}, "transport": {"streaming": True}})
            return
        exchange.start_sse()
        for event in [
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
            {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
        ]:
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    server = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="quick", base_url=f"{server.url}/agent")
    client = HtmxClient()
    await client.aforce_login(await sync_to_async(make_user)())
    client.server = server
    return client


@pytest.fixture
def separate(settings):
    settings.AGENTS_UI_RUN_WORKERS = "separate"
    return settings


def test_separate_run_workers_are_refused_on_sqlite(settings):
    settings.AGENTS_UI_RUN_WORKERS = "separate"
    with pytest.raises(SystemCheckError, match=r"AGENTS_UI_RUN_WORKERS=separate needs PostgreSQL"):
        call_command("check")
    settings.AGENTS_UI_RUN_WORKERS = "embedded"
    call_command("check")


def test_run_worker_refuses_to_start_without_separate_run_workers():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="AGENTS_UI_RUN_WORKERS=separate"):
        call_command("run_worker")


async def test_a_send_queues_its_run_and_says_how_many_are_ahead(person, separate):
    first = await person.post("/agents/quick/send/", {"content": "First", "client_token": "a" * 32})
    assert first.status_code == 200 and "Queued: you are next." in first.content.decode()
    second = await person.post("/agents/quick/send/", {"content": "Second", "client_token": "b" * 32})
    assert "Queued: 1 ahead of you." in second.content.decode()
    assert not LIVE  # nothing driven by the web process
    runs = [r async for r in Run.objects.order_by("created_at")]
    assert [(r.status, r.worker, r.attempt) for r in runs] == [("pending", "", 0)] * 2
    assert [r.method for r in person.server.requests if r.method == "POST"] == []  # the agent not called
    # The same message submitted again (the composer's token): its first run, nothing new queued.
    again = await person.post("/agents/quick/send/", {"content": "First", "client_token": "a" * 32})
    assert again.status_code == 200 and await Run.objects.acount() == 2
    assert await sync_to_async(queue.ahead_of)(runs[1]) == 1
    assert await sync_to_async(queued_runs)() == {(): 2.0}  # the /metrics reading


async def test_past_the_queue_bound_a_send_is_refused_with_503_and_the_text_kept(person, separate):
    separate.AGENTS_UI_QUEUE_MAX = 1
    separate.AGENTS_UI_QUEUE_RETRY_AFTER = 7
    await person.post("/agents/quick/send/", {"content": "First"})
    refused = await person.post("/agents/quick/send/", {"content": "Second"})
    assert refused.status_code == 503 and refused["Retry-After"] == "7"
    assert refused["HX-Retarget"] == "#composer-errors"  # the composer keeps its text
    assert "Too many answers are waiting to start" in refused.content.decode()
    assert "try again in 7 seconds" in refused.content.decode()
    assert await Message.objects.filter(content="Second").aexists() is False

    plain = AsyncClient()
    await plain.aforce_login(await sync_to_async(make_user)())
    page = await plain.post("/agents/quick/send/", {"content": "Typed without JavaScript"})
    assert page.status_code == 503 and page["Retry-After"] == "7"
    assert "Typed without JavaScript" in page.content.decode()  # back in the composer


async def test_a_queued_run_stopped_from_the_page_is_never_started(person, separate):
    await person.post("/agents/quick/send/", {"content": "Never mind"})
    run = await Run.objects.aget()
    response = await person.post(f"/runs/{run.pk}/stop/")
    assert response.status_code == 204
    run = await Run.objects.aget()
    assert run.status == "cancelled" and run.error == "Stopped. The answer so far is kept."
    assert not await sync_to_async(lambda: queue.claim("w", 5))()  # nothing left to claim


async def test_the_embedded_default_drives_the_run_in_the_web_process(person, settings):
    assert settings.AGENTS_UI_RUN_WORKERS == "embedded"
    response = await person.post("/agents/quick/send/", {"content": "Hello"})
    assert "Queued" not in response.content.decode()
    await settle()
    run = await Run.objects.aget()
    assert run.status == "completed" and (run.attempt, run.worker) == (0, "")
    assert [r.method for r in person.server.requests] == ["GET", "POST"]
