"""Token usage on the answer and in the admin: a run's reported usage under its answer (read back
from the event log, as a reload draws it), summed per conversation on the run's admin page and per
agent on its health page; a count no run reported reads "not reported", never 0."""

from __future__ import annotations

import json
import re

import pytest
from ag_ui.core import RunErrorEvent, RunFinishedEvent, RunStartedEvent, TextMessageChunkEvent, TokenUsage
from django.test import Client
from django.utils import timezone

from agents_ui.models import Conversation, Message, Run, RunEvent
from agents_ui.runs.event_log import event_record
from agents_ui.sdk.usage import stored
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db

GPT = TokenUsage(
    provider="openai",
    model="gpt-5",
    input_tokens=1234,
    output_tokens=567,
    cached_input_tokens=200,
    reasoning_tokens=50,
)


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def turn(conversation: Conversation, usage: list[TokenUsage] | None, *, failed: bool = False) -> Run:
    message = Message.objects.create(conversation=conversation, role="user", content="How much?")
    status = Run.Status.FAILED if failed else Run.Status.COMPLETED
    run = Run.objects.create(
        conversation=conversation,
        status=status,
        request={"kind": "message", "message_id": message.pk},
        usage=stored(usage),
    )
    end = (
        RunErrorEvent(message="The model gave up.", usage=usage)
        if failed
        else RunFinishedEvent(thread_id="t", run_id=str(run.pk), usage=usage)
    )
    events = [
        RunStartedEvent(thread_id="t", run_id=str(run.pk)),
        TextMessageChunkEvent(message_id=f"m-{run.pk}", role="assistant", delta="Here is the answer."),
        end,
    ]
    for seq, event in enumerate(events, start=1):
        kind, payload = event_record(event)
        RunEvent.objects.create(run=run, seq=seq, type=kind, payload=json.loads(payload))
    return run


@pytest.fixture
def owner():
    return make_user(username="owner")


@pytest.fixture
def thread(owner):
    endpoint = make_endpoint(
        slug="desk", name="Desk", base_url="http://127.0.0.1:9/agent", connect_timeout=0.2
    )
    return Conversation.objects.create(user=owner, endpoint=endpoint, title="Costs")


def page(owner, conversation: Conversation) -> str:
    client = Client()
    client.force_login(owner)
    response = client.get(f"/agents/{conversation.endpoint.slug}/c/{conversation.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def usage_of(html: str, run: Run) -> str:
    status = html[html.index(f'id="run-{run.pk}-status"') :]
    found = re.search(r'<p class="run-usage[^>]*data-usage>.*?</p>', status, re.S)
    return text(found.group(0)) if found else ""


def test_the_answer_shows_each_models_tokens_with_their_parts_after_a_reload(owner, thread):
    run = turn(thread, [GPT, TokenUsage(model="small", output_tokens=9)])
    shown = usage_of(page(owner, thread), run)
    assert "gpt-5 (openai): 1,234 tokens in (200 cached) · 567 out (50 reasoning)" in shown
    assert "small: tokens in: not reported · 9 out" in shown


def test_a_failed_run_shows_what_it_spent_and_a_run_that_reported_nothing_shows_no_line(owner, thread):
    failed = turn(thread, [TokenUsage(model="m", input_tokens=40)], failed=True)
    silent = turn(thread, None)
    html = page(owner, thread)
    assert usage_of(html, failed) == "m: 40 tokens in · out: not reported"
    assert usage_of(html, silent) == ""
    assert not re.search(r"\b0 tokens", html)


def test_the_run_admin_sums_the_conversation_per_model(admin_client, thread):
    first = turn(thread, [GPT])
    turn(thread, [TokenUsage(provider="openai", model="gpt-5", input_tokens=6, output_tokens=3)])
    turn(thread, None)
    html = text(admin_client.get(f"/admin/agents_ui/run/{first.pk}/change/").content.decode())
    assert "gpt-5 (openai): 1,234 tokens in (200 cached) · 567 out (50 reasoning)" in html  # this run
    assert "gpt-5 (openai): 1,240 tokens in (200 cached) · 570 out (50 reasoning)" in html  # its conversation
    assert "2 of its 3 runs reported usage." in html
    listing = text(admin_client.get("/admin/agents_ui/run/").content.decode())
    assert "not reported" in listing and "6 tokens in · 3 out" in listing


def test_the_health_page_sums_the_agent_per_model_and_says_not_reported(admin_client, thread):

    for usage in ([GPT], [TokenUsage(model="small", input_tokens=5)]):
        run = turn(thread, usage)
        Run.objects.filter(pk=run.pk).update(started_at=timezone.now(), finished_at=timezone.now())
    html = admin_client.get(f"/admin/agents_ui/agentendpoint/{thread.endpoint.pk}/health/").content.decode()
    usage = text(re.search(r'<ul class="agent-health-usage".*?</ul>', html, re.S).group(0))
    assert "gpt-5 (openai): 1,234 tokens in (200 cached) · 567 out (50 reasoning)" in usage
    assert "small: 5 tokens in · out: not reported" in usage
    cells = re.findall(r'<td data-cell="tokens">([^<]*)</td>', html)
    assert "1,239" in cells and "567" in cells and "0" not in cells
