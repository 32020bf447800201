"""/metrics: guarded by a token or networks (off without either), and its series move as runs happen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from agents_ui.endpoints.discovery import discover_one
from agents_ui.models import Conversation, Run
from agents_ui.monitoring import metrics
from agents_ui.monitoring.readings import waiting_for_person
from agents_ui.views.stream import EventStreamResponse
from tests.factories import make_endpoint, make_user
from tests.monitoring.scrape import value
from tests.runs.test_runs import finish, new_turn
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle

TOKEN = "scrape-token-for-tests"
ROOT = Path(__file__).resolve().parents[2]


def scrape(client: Client | None = None) -> str:
    response = (client or Client()).get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return response.content.decode()


@pytest.fixture
def guarded(settings):
    settings.AGENTS_UI_METRICS_TOKEN = TOKEN
    settings.AGENTS_UI_METRICS_NETWORKS = []
    return settings


def test_metrics_are_off_until_a_token_or_networks_are_set(settings, client):
    settings.AGENTS_UI_METRICS_TOKEN, settings.AGENTS_UI_METRICS_NETWORKS = "", []
    response = client.get("/metrics")
    assert response.status_code == 404
    assert b"agents_ui" not in response.content


def test_a_token_is_needed_when_one_is_set(guarded, client):
    assert client.get("/metrics").status_code == 401
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer not-it")
    assert wrong.status_code == 401 and wrong["WWW-Authenticate"].startswith("Bearer")
    assert "agents_ui_runs_started" in scrape(client)


def test_networks_let_in_only_their_addresses(settings):
    settings.AGENTS_UI_METRICS_TOKEN, settings.AGENTS_UI_METRICS_NETWORKS = "", ["10.0.0.0/8", "fd00::/8"]
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 403
    assert Client(REMOTE_ADDR="10.2.3.4").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="fd00::7").get("/metrics").status_code == 200


def test_with_both_a_scrape_needs_both(settings):
    settings.AGENTS_UI_METRICS_TOKEN, settings.AGENTS_UI_METRICS_NETWORKS = TOKEN, ["10.0.0.0/8"]
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}
    assert Client(REMOTE_ADDR="192.168.1.1").get("/metrics", **bearer).status_code == 403
    assert Client(REMOTE_ADDR="10.0.0.1").get("/metrics").status_code == 401
    assert Client(REMOTE_ADDR="10.0.0.1").get("/metrics", **bearer).status_code == 200


def test_metrics_answer_any_host_and_set_no_cookie(guarded, settings):
    settings.ALLOWED_HOSTS = ["agents.example.com"]
    response = Client().get("/metrics", HTTP_HOST="10.1.1.1:8000", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200 and not response.cookies


@pytest.mark.django_db(transaction=True)
async def test_runs_of_the_demo_agents_move_the_series(guarded, live_url):
    from agents_ui.demo.registry import register_demo_agents

    endpoints = {e.slug: e for e in await sync_to_async(register_demo_agents)(live_url)}
    before = await sync_to_async(scrape)()
    research = await finish(await new_turn(endpoints["research-assistant"], "What is a tide?"))
    support = await finish(await new_turn(endpoints["support-desk"], "My order is late"))
    after = await sync_to_async(scrape)()

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    for run, slug, protocol in [
        (research, "research-assistant", "agui"),
        (support, "support-desk", "external"),
    ]:
        assert run.status == Run.Status.COMPLETED, run.error
        assert moved("agents_ui_runs_started_total", agent=slug, protocol=protocol) == 1
        assert moved("agents_ui_runs_finished_total", agent=slug, protocol=protocol, outcome="completed") == 1
        assert moved("agents_ui_run_first_event_seconds_count", agent=slug) == 1
        assert moved("agents_ui_run_duration_seconds_count", agent=slug) == 1
        assert moved("agents_ui_run_events_total", agent=slug, protocol=protocol) == run.event_count > 0
        assert run.started_at <= run.first_event_at <= run.finished_at
    assert moved("agents_ui_event_writer_lag_seconds_count") >= 2
    # The external demo agent reports the tokens it used; they are kept with the run.
    # One entry per model (the external protocol sends one object): agents_ui/sdk/usage.py.
    (entry,) = support.usage
    assert entry["input_tokens"] > 0 and entry["output_tokens"] > 0


@pytest.mark.django_db(transaction=True)
async def test_a_failed_run_and_a_failed_discovery_are_counted(guarded):
    endpoint = await sync_to_async(make_endpoint)(base_url="http://127.0.0.1:9/agent", connect_timeout=0.5)
    labels = {"agent": endpoint.slug}
    before = await sync_to_async(scrape)()
    run = await finish(await new_turn(endpoint))
    discovery = await discover_one(endpoint, refresh=True)
    after = await sync_to_async(scrape)()
    assert run.status == Run.Status.FAILED and run.first_event_at is None
    assert value(after, "agents_ui_runs_finished_total", outcome="failed", **labels) == 1
    assert value(after, "agents_ui_run_first_event_seconds_count", **labels) == 0
    assert value(after, "agents_ui_discovery_failures_total", status=discovery.status, **labels) == 1
    assert value(before, "agents_ui_discovery_failures_total", **labels) == 0


def test_open_streams_count_from_the_response_made_to_it_closed():
    before = metrics.OPEN_STREAMS._value.get()

    async def frames():
        yield b"data: x\n\n"

    response = EventStreamResponse(frames(), content_type="text/event-stream")
    assert metrics.OPEN_STREAMS._value.get() == before + 1
    response.close()
    response.close()  # Django may close twice: counted once
    assert metrics.OPEN_STREAMS._value.get() == before


@pytest.mark.django_db
def test_conversations_waiting_for_a_person_are_read_from_the_database(guarded):
    endpoint = make_endpoint(slug="approver")
    conversation = Conversation.objects.create(user=make_user(), endpoint=endpoint)
    Run.objects.create(conversation=conversation, status=Run.Status.INTERRUPTED)
    assert waiting_for_person() == {("approver",): 1.0}
    assert value(scrape(), "agents_ui_runs_waiting_for_person", agent="approver") == 1
    Run.objects.create(conversation=conversation, status=Run.Status.COMPLETED)  # the person answered
    assert waiting_for_person() == {}


@pytest.mark.django_db(transaction=True)
async def test_a_send_past_the_agents_rate_counts_as_a_throttle_refusal(guarded, fake_server):
    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, {"custom": {"rateLimit": {"maxRequestsPerMinute": 1}}})
            return
        exchange.start_sse()
        for event in ({"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                      {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}):  # fmt: skip
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    agent = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="limited", base_url=f"{agent.url}/agent")
    client = HtmxClient()
    await client.aforce_login(await sync_to_async(make_user)())
    before = value(await sync_to_async(scrape)(), "agents_ui_throttle_refusals_total", agent="limited")
    first = await client.post("/agents/limited/send/", {"content": "one"})
    second = await client.post("/agents/limited/send/", {"content": "two"})
    assert "at most 1 messages a minute" not in first.content.decode()
    assert "at most 1 messages a minute" in second.content.decode()
    after = value(await sync_to_async(scrape)(), "agents_ui_throttle_refusals_total", agent="limited")
    assert after - before == 1
    await settle()


def test_several_worker_processes_are_summed_in_multiprocess_mode(tmp_path):
    """With PROMETHEUS_MULTIPROC_DIR, each process counts into files there and /metrics sums them."""
    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "project.settings",
    }
    count = (
        "import django; django.setup(); from agents_ui.monitoring import metrics; "
        "metrics.RUNS_STARTED.labels('planner', 'agui').inc(); metrics.OPEN_STREAMS.inc()"
    )
    for _ in range(2):
        subprocess.run([sys.executable, "-c", count], cwd=ROOT, env=env, check=True, timeout=60)
    read = (
        "import django; django.setup(); from agents_ui.monitoring import metrics; "
        "import sys; sys.stdout.write(metrics.exposition().decode())"
    )
    text = subprocess.run(
        [sys.executable, "-c", read],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert value(text, "agents_ui_runs_started_total", agent="planner", protocol="agui") == 2
    # Open streams are summed over live processes only: a worker that ended holds none open.
    assert value(text, "agents_ui_open_streams") == 0
