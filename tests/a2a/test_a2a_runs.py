"""A2A agents end to end against an A2A server built with a2a-sdk (tests/support/a2a_agent.py):
the card read into a catalogue status and a plan, runs sent, folded, logged, replayed and stopped."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async

from agents_ui.decisions import UserAbilities
from agents_ui.display.run_view import RunView, render_run
from agents_ui.endpoints.catalogue import status_line
from agents_ui.endpoints.discovery import discover_one
from agents_ui.endpoints.plans import plan_inputs
from agents_ui.models import AgentEndpoint, Conversation, Message, Run, RunEvent
from agents_ui.runs.event_log import replay
from agents_ui.runs.inputs import RunRequest
from agents_ui.runs.live import start_run, stop_run
from tests.factories import make_endpoint, make_user
from tests.support.a2a_agent import A2ATestAgent
from tests.support.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent():
    server = A2ATestAgent().start()
    yield server
    server.stop()


def a2a_endpoint(url: str) -> AgentEndpoint:
    return make_endpoint(protocol=AgentEndpoint.Protocol.A2A, base_url=url, slug="echo", name="Echo")


async def turn(endpoint, text, conversation=None):
    def create():
        nonlocal conversation
        if conversation is None:
            conversation = Conversation.objects.create(user=make_user(), endpoint=endpoint, title=text)
        message = Message.objects.create(conversation=conversation, role=Message.Role.USER, content=text)
        run = Run.objects.create(
            conversation=conversation, request=RunRequest(message_id=message.pk).as_json()
        )
        run.conversation = conversation
        return run

    return await sync_to_async(create)()


async def finish(run, plan=None):
    live = start_run(run, plan)
    await asyncio.wait_for(live.task, timeout=15)
    return await Run.objects.select_related("conversation__endpoint").aget(pk=run.pk)


async def test_the_card_gives_a_declared_status_and_a_plan_read_field_by_field(agent):
    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    discovery = await discover_one(endpoint, refresh=True)
    assert discovery.status == "declared"
    assert discovery.source_url == f"{agent.url}/.well-known/agent-card.json"
    inputs = await plan_inputs(endpoint, UserAbilities(), discovery=discovery)
    plan = inputs.plan()
    assert plan.protocol == "a2a"
    profile = plan.profile
    assert profile.identity.name.value == "Echo Test Agent"
    assert profile.identity.documentation_url.value is None  # javascript: is never a link
    assert [s.name for s in profile.skills.value] == ["Echo", "Ask"]
    assert profile.skills.value[0].examples == ("Echo this",)
    assert [c.detail for c in profile.credentials.value] == ["header X-Api-Key"]
    upload = plan["upload"]
    assert upload.visible and upload.details.accept == ("text/plain", "image/png", "text/csv")
    assert profile.transport.streaming.origin.path == "capabilities.streaming"
    assert status_line(discovery, plan).key == "declared"


@pytest.mark.parametrize(
    ("server", "status", "line"),
    [
        ({"bindings": ("GRPC",)}, "unsupported", "unsupported"),
        ({"card_override": {"name": 3, "supportedInterfaces": "x"}}, "invalid", "invalid"),
    ],
)
async def test_a_card_that_fails_or_offers_no_usable_interface_has_its_own_status(server, status, line):
    agent = A2ATestAgent(**server).start()
    try:
        endpoint = await sync_to_async(a2a_endpoint)(agent.url)
        discovery = await discover_one(endpoint, refresh=True)
    finally:
        agent.stop()
    assert discovery.status == status
    assert status_line(discovery).key == line


async def test_an_unreachable_card_is_unreachable():
    endpoint = await sync_to_async(a2a_endpoint)("http://127.0.0.1:9")
    discovery = await discover_one(endpoint, refresh=True)
    assert discovery.status == "unreachable" and status_line(discovery).key == "unreachable"


async def test_a_streamed_task_is_folded_logged_and_replayed_the_same(agent):
    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    await discover_one(endpoint, refresh=True)
    run = await finish(await turn(endpoint, "hello world"))
    assert run.status == Run.Status.COMPLETED, run.error
    transcript = await sync_to_async(replay)(run)
    task = transcript.task
    assert task.state == "completed"
    assert transcript.artifacts["echo"].parts[0].text == "**Echo**: hello world."
    assert transcript.artifacts["stats"].parts[0].data == {"length": 11, "words": ["hello", "world"]}
    assert [m.text for m in transcript.messages] == ["Done echoing."]
    types = await sync_to_async(list)(RunEvent.objects.filter(run=run).values_list("type", flat=True))
    assert "a2a:artifact_update" in types and types[0] == "a2a:task"
    conversation = await Conversation.objects.aget(pk=run.conversation_id)
    assert conversation.remote_id == task.context_id  # the context keeps the conversation together

    inputs = await plan_inputs(endpoint, UserAbilities())
    page = await sync_to_async(render_run)(RunView(run, transcript, inputs.plan()))
    assert "<strong>Echo</strong>: hello world." in page and "application/json" in page
    assert 'data-state-key="words"' in page


async def test_an_answer_to_input_required_continues_the_same_task(agent):
    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    await discover_one(endpoint, refresh=True)
    first = await finish(await turn(endpoint, "ask me"))
    asked = await sync_to_async(replay)(first)
    assert asked.task.state == "input-required" and first.status == Run.Status.COMPLETED
    assert [m.text for m in asked.messages] == ["Which colour?"]
    conversation = await Conversation.objects.select_related("endpoint").aget(pk=first.conversation_id)
    second = await finish(await turn(endpoint, "blue", conversation))
    answered = await sync_to_async(replay)(second)
    assert answered.task.task_id == asked.task.task_id and answered.task.state == "completed"
    assert [m.text for m in answered.messages] == ["Noted: blue."]
    sent = agent.executor.received[-1]
    assert sent.task_id == asked.task.task_id and sent.context_id == asked.task.context_id


@pytest.mark.parametrize(
    ("text", "status", "says"),
    [
        ("fail", Run.Status.FAILED, "The task failed: The echo chamber collapsed."),
        ("reject", Run.Status.FAILED, "The agent declined the task: Not my kind of request."),
    ],
)
async def test_a_failed_or_rejected_task_says_why(agent, text, status, says):
    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    await discover_one(endpoint, refresh=True)
    run = await finish(await turn(endpoint, text))
    assert run.status == status and run.error == says


async def test_auth_required_says_what_is_needed(agent):
    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    await discover_one(endpoint, refresh=True)
    run = await finish(await turn(endpoint, "auth"))
    transcript = await sync_to_async(replay)(run)
    inputs = await plan_inputs(endpoint, UserAbilities())
    page = await sync_to_async(render_run)(RunView(run, transcript, inputs.plan()))
    assert "Sign in with an API key first." in page and "header X-Api-Key" in page
    # A status of its own, not a completed run: what the agent asked, kept with the run.
    assert run.status == Run.Status.AUTH_REQUIRED and run.is_finished
    assert run.error == "The agent needs authorization: Sign in with an API key first."
    assert 'data-run-status="auth-required"' in page and "data-needs-auth" in page

    # The next message continues the same task, as for input-required.
    conversation = await Conversation.objects.select_related("endpoint").aget(pk=run.conversation_id)
    second = await finish(await turn(endpoint, "here is my key", conversation))
    going_on = await sync_to_async(replay)(second)
    assert second.status == Run.Status.COMPLETED
    assert going_on.task.task_id == transcript.task.task_id and going_on.task.state == "completed"
    assert agent.executor.received[-1].task_id == transcript.task.task_id


async def test_stop_cancels_the_task_at_the_agent(agent):
    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    await discover_one(endpoint, refresh=True)
    run = await turn(endpoint, "slow")
    live = start_run(run)
    await eventually(
        lambda: live.transcript.task and live.transcript.artifacts, what="the slow task's first artifact"
    )
    assert await stop_run(run.pk)
    await asyncio.wait_for(live.task, timeout=10)
    stopped = await Run.objects.aget(pk=run.pk)
    assert stopped.status == Run.Status.CANCELLED
    assert agent.executor.canceled == [live.transcript.task.task_id]


async def test_a_card_without_streaming_gets_one_complete_answer():
    agent = A2ATestAgent(streaming=False).start()
    try:
        endpoint = await sync_to_async(a2a_endpoint)(agent.url)
        await discover_one(endpoint, refresh=True)
        inputs = await plan_inputs(endpoint, UserAbilities())
        run = await finish(await turn(endpoint, "hi there"), inputs.plan())
    finally:
        agent.stop()
    types = await sync_to_async(list)(RunEvent.objects.filter(run=run).values_list("type", flat=True))
    assert types == ["a2a:task"] and run.status == Run.Status.COMPLETED
    transcript = await sync_to_async(replay)(run)
    assert "".join(p.text for p in transcript.artifacts["echo"].parts) == "**Echo**: hi there."


async def test_a_file_artifact_downloads_and_a_sent_file_reaches_the_agent(agent, client):
    from agents_ui.models import Attachment

    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    await discover_one(endpoint, refresh=True)
    run = await turn(endpoint, "see attached")

    def attach():
        message = Message.objects.get(pk=run.request["message_id"])
        Attachment.objects.create(
            message=message, name="list.csv", mime_type="text/csv", size=4, data=b"a,b\n"
        )

    await sync_to_async(attach)()
    run = await finish(run)
    assert agent.executor.received[-1].parts[1].filename == "list.csv"
    user = await sync_to_async(lambda: run.conversation.user)()
    await sync_to_async(client.force_login)(user)
    response = await sync_to_async(client.get)(f"/runs/{run.pk}/artifacts/files/0/")
    assert response.status_code == 200 and response.content == b"id,name\n1,echo\n"
    assert response["Content-Type"] == "application/octet-stream"
    assert 'filename="echo.csv"' in response["Content-Disposition"]
    # The same headers as every artifact: saved, never sniffed, sandboxed if opened.
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"
    missing = await sync_to_async(client.get)(f"/runs/{run.pk}/artifacts/files/9/")
    assert missing.status_code == 404


async def test_the_demo_trip_planner_asks_then_streams_an_itinerary_and_a_budget(live_url):
    from agents_ui.demo.registry import register_demo_agents

    endpoints = await sync_to_async(register_demo_agents)(live_url)
    [endpoint] = [e for e in endpoints if e.protocol == AgentEndpoint.Protocol.A2A]
    discovery = await discover_one(endpoint, refresh=True)
    assert discovery.status == "declared", discovery.error
    plan = (await plan_inputs(endpoint, UserAbilities(), discovery=discovery)).plan()
    assert [s.id for s in plan.profile.skills.value] == ["plan-trip", "packing-list", "book-hotel"]
    first = await finish(await turn(endpoint, "Plan a trip"), plan)
    asked = await sync_to_async(replay)(first)
    assert asked.task.state == "input-required", first.error
    conversation = await Conversation.objects.select_related("endpoint").aget(pk=first.conversation_id)
    second = await finish(await turn(endpoint, "Lisbon", conversation), plan)
    done = await sync_to_async(replay)(second)
    assert done.task.task_id == asked.task.task_id and done.task.state == "completed"
    assert done.artifacts["itinerary"].parts[0].text.startswith("# Lisbon in two days")
    assert done.artifacts["budget"].parts[0].data["destination"] == "Lisbon"


async def test_the_catalogue_card_names_the_skills_and_says_the_agent_may_ask(agent):
    from agents_ui.endpoints.catalogue import entry_for

    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    discovery = await discover_one(endpoint, refresh=True)
    card = entry_for(
        endpoint, discovery, (await plan_inputs(endpoint, UserAbilities(), discovery=discovery)).plan()
    )
    labels = [b.label for b in card.badges]
    assert "2 skills: Echo, Ask" in labels and "Asks the person" in labels
    assert {"skills", "asks", "uploads"} <= set(card.filters)


async def test_the_workspace_offers_the_skills_with_their_examples_and_sends_the_chosen_one(agent, client):
    from django.urls import reverse

    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    await discover_one(endpoint, refresh=True)
    user = await sync_to_async(make_user)(perms=["upload_files"])
    await sync_to_async(client.force_login)(user)
    page = (await sync_to_async(client.get)(reverse("workspace", kwargs={"slug": "echo"}))).content.decode()
    assert 'name="skill"' in page and 'data-skill-prompt="Echo this"' in page
    assert 'data-input-modes="text/plain"' in page  # the "ask" skill takes no files
    response = await sync_to_async(client.post)(
        reverse("send-message", kwargs={"slug": "echo"}), {"content": "hi", "skill": "nope"}
    )
    assert "Choose one of the skills this agent names." in response.content.decode()


def card_json(**changes):
    from google.protobuf.json_format import MessageToDict

    from tests.support.a2a_agent import echo_card

    card = MessageToDict(echo_card("http://agent.test"))
    card.update(changes)
    return card


def test_a_skill_removed_from_the_card_is_one_line_and_hiding_the_chooser_is_breaking():
    from agents_ui.snapshot_diff import Declaration, diff_declarations

    old = Declaration("a2a", "declared", card_json())
    new = Declaration("a2a", "declared", card_json(skills=[]))
    diff = diff_declarations(old, new)
    assert [(c.path, c.kind) for c in diff.items_removed] == [
        ("skills[echo]", "removed"),
        ("skills[ask]", "removed"),
    ]
    assert [c.name for c in diff.hidden_controls] == ["skills"]
    assert all(c.breaking for c in diff.items_removed)


def test_the_admin_shows_the_credentials_the_card_requires(client):
    from django.utils import timezone

    from agents_ui.models import CapabilitySnapshot

    client.force_login(make_user(superuser=True))
    endpoint = a2a_endpoint("http://agent.test")
    CapabilitySnapshot.objects.create(
        endpoint=endpoint,
        status="declared",
        content_hash="x",
        source="s",
        payload=card_json(),
        last_seen_at=timezone.now(),
    )
    page = client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/").content.decode()
    assert "<code>key</code>: api-key (header X-Api-Key)" in page


def test_a_stopped_task_shows_as_canceled_and_data_keeps_whole_numbers():
    from agents_ui.display.task import task_view
    from agents_ui.sdk.a2a.fold import whole_numbers
    from agents_ui.sdk.transcript import TaskStatus

    working = TaskStatus(task_id="t", state="working", progress=["busy"])
    assert task_view(working)["label"] == "Working" and task_view(working)["progress"] == "busy"
    stopped = task_view(working, stopped=True)
    assert stopped["label"] == "Canceled" and stopped["progress"] == ""
    asking = TaskStatus(task_id="t", state="input-required")
    assert task_view(asking, stopped=True)["asks"]  # a task waiting for the person was not canceled
    assert whole_numbers({"days": 2.0, "rate": 0.5, "list": [1.0]}) == {"days": 2, "rate": 0.5, "list": [1]}


async def test_a_stream_cut_before_the_task_ended_is_followed_again_not_sent_again():
    import json

    import httpx

    from agents_ui.models import CapabilitySnapshot
    from agents_ui.runs.a2a import a2a_events
    from agents_ui.sdk.a2a.client import A2AAgent
    from agents_ui.sdk.folding import TranscriptBuilder

    methods: list[str] = []

    def frame(result):
        return f"data: {json.dumps({'jsonrpc': '2.0', 'id': 1, 'result': result})}\n\n".encode()

    task = {"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}}
    done = {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}

    async def cut_after_the_task():
        yield frame(task)
        raise httpx.ReadError("connection reset")

    async def the_rest():
        yield frame(done)

    def handler(request):
        methods.append(json.loads(request.content)["method"])
        body = cut_after_the_task() if len(methods) == 1 else the_rest()
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    endpoint = await sync_to_async(a2a_endpoint)("http://agent.test")
    await CapabilitySnapshot.objects.acreate(
        endpoint=endpoint,
        status="declared",
        content_hash="x",
        source="s",
        payload=card_json(),
        last_seen_at=timezone_now(),
    )
    run = await turn(endpoint, "hello")
    agent = A2AAgent("http://agent.test", client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    builder = TranscriptBuilder()
    async for event in a2a_events(agent, run, [], stream=True):
        builder.apply(event)
    assert methods == ["SendStreamingMessage", "SubscribeToTask"]
    assert builder.transcript.task.state == "completed"


def timezone_now():
    from django.utils import timezone

    return timezone.now()


def test_the_admin_compares_two_agent_cards(client):
    from django.utils import timezone

    from agents_ui.models import CapabilitySnapshot

    client.force_login(make_user(superuser=True))
    endpoint = a2a_endpoint("http://agent.test")
    old, new = (
        CapabilitySnapshot.objects.create(
            endpoint=endpoint,
            status="declared",
            content_hash=digest,
            source="s",
            payload=payload,
            last_seen_at=timezone.now(),
        )
        for digest, payload in (("a", card_json()), ("b", card_json(skills=[])))
    )
    history = client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/history-of-declarations/")
    assert history.status_code == 200 and "Echo Test Agent" in history.content.decode()
    page = client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/diff/?a={old.pk}&b={new.pk}").content
    text = page.decode()
    assert "skills[echo]" in text and "skills[ask]" in text
    assert "Skill chooser" in text


@pytest.mark.parametrize("mode", ["text/plain", "text"])
def test_a_text_plain_input_mode_takes_text_files(mode):
    from agents_ui.capabilities.readers.a2a import read

    card = card_json(
        defaultInputModes=[mode],
        skills=[{"id": "notes", "name": "Notes", "description": "", "tags": ["n"], "inputModes": [mode]}],
    )
    plan = decide_from(read(card))
    upload = plan["upload"]
    assert upload.visible and upload.details.accept == ("text/plain",)
    assert plan["skills"].details.accepts == (("notes", "text/plain"),)


def decide_from(profile):
    from agents_ui.decisions import decide

    return decide(profile=profile)


def test_a_text_file_goes_as_a_named_text_part_and_any_other_file_as_bytes():
    from agents_ui.runs.a2a import file_part

    text = file_part("notes.txt", "text/plain; charset=utf-8", b"socks\nhat\n")
    assert (text.text, text.filename, text.media_type) == ("socks\nhat\n", "notes.txt", "text/plain")
    assert text.WhichOneof("content") == "text"
    not_utf8 = file_part("old.txt", "text/plain", b"\xff\xfe")
    assert not_utf8.WhichOneof("content") == "raw" and not_utf8.raw == b"\xff\xfe"
    csv = file_part("list.csv", "text/csv", b"a,b\n")
    assert csv.WhichOneof("content") == "raw" and csv.media_type == "text/csv"
