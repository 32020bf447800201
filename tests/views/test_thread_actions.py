"""Regenerate, retry and edit: the thread continues from there, and the agent gets that history."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.core.cache import cache

from agents_ui.models import Conversation, Feedback, Message, Run
from tests.factories import make_endpoint, make_user
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle

pytestmark = pytest.mark.django_db(transaction=True)

DECLARATION = {
    "identity": {"name": "Echo"},
    "transport": {"streaming": True},
    "humanInTheLoop": {"feedback": True},
}


def answer(text: str, message_id: str) -> list[dict]:
    return [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "REASONING_START", "messageId": f"why-{message_id}"},
        {"type": "REASONING_MESSAGE_START", "messageId": f"why-{message_id}", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": f"why-{message_id}", "delta": "Let me see."},
        {"type": "REASONING_MESSAGE_END", "messageId": f"why-{message_id}"},
        {"type": "REASONING_END", "messageId": f"why-{message_id}"},
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": text},
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "result": {"sources": SOURCES}},
    ]


SOURCES = [
    {"title": "Heat transfer", "url": "https://example.org/heat", "publisher": "Physics Today"},
    {"title": "A trick", "url": "javascript:alert(1)"},
]


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


@pytest.fixture
async def echo(fake_server):
    """Answers each run with what it was last told, and fails when told "fail"."""

    counter = iter(range(1, 1000))

    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, DECLARATION)
            return
        body = exchange.request.json()
        said = body["messages"][-1]["content"]
        if said == "fail":
            exchange.respond(500, {"error": "down"})
            return
        exchange.start_sse()
        count = next(counter) + 1
        for event in answer(f"You said {said} ({count})", f"a{count}"):
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    return await fake_server(handler)


@pytest.fixture
async def person(echo):
    await sync_to_async(make_endpoint)(slug="echo", base_url=f"{echo.url}/agent")
    user = await sync_to_async(make_user)(everyday=True)
    client = HtmxClient()
    await client.aforce_login(user)
    client.user, client.agent = user, echo
    return client


async def say(client, content, conversation=""):
    await client.post("/agents/echo/send/", {"content": content, "conversation": conversation})
    await settle()
    return await Conversation.objects.select_related("endpoint").alatest("created_at")


async def page(client, conversation):
    return (await client.get(conversation.get_absolute_url())).content.decode()


async def test_regenerate_answers_the_same_message_again_and_replaces_the_answer(person):
    thread = await say(person, "one")
    first = await Run.objects.aget()
    assert "Regenerate" in await page(person, thread)
    response = await person.post(f"/runs/{first.pk}/regenerate/")
    assert response["HX-Redirect"] == thread.get_absolute_url()
    await settle()
    html = await page(person, thread)
    assert "You said one (3)" in html and "You said one (2)" not in html
    assert html.count('class="msg msg-user"') == 1
    await first.arefresh_from_db()
    assert first.superseded_at is not None
    sent = person.agent.requests[-1].json()["messages"]
    assert [m["role"] for m in sent] == ["user"]  # the replaced answer is not history any more


async def test_editing_a_message_continues_the_thread_from_there(person):
    thread = await say(person, "one")
    await say(person, "two", str(thread.pk))
    await say(person, "three", str(thread.pk))
    second = (await sync_to_async(list)(Run.objects.order_by("created_at")))[1]
    response = await person.post(f"/runs/{second.pk}/edit/", {"content": "TWO"})
    assert response.status_code == 200
    await settle()
    html = await page(person, thread)
    assert "You said TWO" in html
    assert "You said two" not in html and "You said three" not in html and ">three<" not in html
    sent = [(m["role"], m["content"]) for m in person.agent.requests[-1].json()["messages"]]
    # The full AG-UI history up to the edited message (its reasoning too), nothing after it.
    assert sent == [
        ("user", "one"),
        ("reasoning", "Let me see."),
        ("assistant", "You said one (2)"),
        ("user", "TWO"),
    ]
    edited = await Message.objects.aget(content="TWO")
    assert edited.edited_from_id is not None
    assert "edited" in html


async def test_a_failed_run_can_be_tried_again(person):
    thread = await say(person, "fail")
    run = await Run.objects.aget()
    assert run.status == "failed"
    assert "Try again" in await page(person, thread)
    await person.post(f"/runs/{run.pk}/regenerate/")
    await settle()
    assert await Run.objects.filter(superseded_at__isnull=True).acount() == 1
    assert (await Run.objects.alatest("created_at")).request["message_id"] == run.request["message_id"]


async def test_an_empty_edit_is_refused_and_nothing_changes(person):
    thread = await say(person, "one")
    run = await Run.objects.aget()
    await person.post(f"/runs/{run.pk}/edit/", {"content": "  "})
    assert await Run.objects.acount() == 1
    assert "Write a message first." in await page(person, thread)


async def test_someone_elses_run_cannot_be_regenerated(person):
    await say(person, "one")
    run = await Run.objects.aget()
    other = HtmxClient()
    await other.aforce_login(await sync_to_async(make_user)(everyday=True))
    assert (await other.post(f"/runs/{run.pk}/regenerate/")).status_code == 404
    assert await Run.objects.acount() == 1


async def test_feedback_is_shown_after_a_reload_and_can_be_changed(person):
    thread = await say(person, "one")
    run = await Run.objects.aget()
    await person.post(f"/runs/{run.pk}/feedback/", {"message": "a2", "value": "up"})
    html = await page(person, thread)
    assert 'data-feedback="up"' in html and "You marked this helpful" in html
    await person.post(f"/runs/{run.pk}/feedback/", {"message": "a2", "value": "down"})
    assert 'data-feedback="down"' in await page(person, thread)
    assert await Feedback.objects.acount() == 1


async def test_reasoning_folds_once_answered_and_says_how_long_it_took(person):
    thread = await say(person, "one")
    html = await page(person, thread)
    assert 'data-reasoning-state="done"' in html
    assert "Thought for 1 s" in html  # at least a second, from the event log's times
    assert 'class="reasoning" data-reasoning-state="done" open' not in html


async def test_sources_of_a_result_are_cards_with_safe_links_only(person):
    thread = await say(person, "one")
    html = await page(person, thread)
    assert 'href="https://example.org/heat"' in html and "Physics Today" in html
    assert "A trick" in html and "javascript:" not in html


async def test_messages_carry_their_time(person):
    thread = await say(person, "one")
    html = await page(person, thread)
    assert html.count("<time datetime=") >= 2 and "just now" in html


async def test_a_stream_that_first_saw_the_run_running_says_how_long_it_thought(person, monkeypatch):
    """The run ended between the stream's first look at it and its look for a live run (the page
    opened its stream as the run ended, under load), or another process drove it: the stream reads
    the log to the end, and its last swap says how long the agent thought, not just "Reasoning"."""
    from agents_ui.views import stream

    await say(person, "one")
    run = await Run.objects.aget()
    looked = stream.users_run_now

    def seen_running(user, run_id):
        found = looked(user, run_id)
        found.status = Run.Status.RUNNING  # as read a moment before it ended
        return found

    monkeypatch.setattr(stream, "users_run_now", seen_running)
    response = await person.get(f"/runs/{run.pk}/events/")
    frames = b"".join([chunk async for chunk in response.streaming_content]).decode()
    assert "Thought for 1 s" in frames and ">Reasoning</summary>" not in frames
    assert frames.rstrip().endswith("event: done\ndata:")


async def test_the_time_thought_comes_from_the_event_log_and_survives_a_reload(person):
    thread = await say(person, "one")
    run = await Run.objects.aget()
    events = await sync_to_async(list)(run.events.order_by("seq"))
    start = events[0].received_at
    for event in events:
        later = 3 if event.type.startswith(("TEXT_MESSAGE", "RUN_FINISHED")) else 0
        await type(event).objects.filter(pk=event.pk).aupdate(received_at=start + timedelta(seconds=later))
    html = await page(person, thread)
    assert "Thought for 3 s" in html


# --- An external agent keeps its own history ---------------------------------------------------------

LEDGER_POLICY = {
    "identity": {"name": "Ledger"},
    "capabilities": {"messages": True, "conversations": True},
    "streamProfiles": ["runtime-standard-v1"],
    "defaultStreamProfile": "runtime-standard-v1",
}


@pytest.fixture
async def ledger(fake_server):
    """An external agent that answers with how many messages its own conversation holds."""
    held: dict[str, list[str]] = {}

    async def handler(exchange):
        path, method = exchange.request.path.split("?")[0], exchange.request.method
        if path.endswith("/policy"):
            exchange.respond(200, LEDGER_POLICY)
        elif path.endswith("/prepare"):
            negotiated = {"streamProfile": "runtime-standard-v1", "outputModuleTypes": []}
            exchange.respond(200, {"policy": LEDGER_POLICY, "negotiated": negotiated})
        elif path.endswith("/conversations") and method == "POST":
            conversation = f"conv-{len(held) + 1}"
            held[conversation] = []
            exchange.respond(201, {"id": conversation})
        elif path.endswith("/messages"):
            conversation = path.split("/")[-2]
            held[conversation].append(exchange.request.json()["content"])
            count = len(held[conversation])
            text, message = f"{conversation} holds {count}", f"{conversation}-m{count}"
            exchange.start_sse()
            for number, (name, data) in enumerate(
                [
                    ("run:started", {"runId": "r", "conversationId": conversation}),
                    ("message:started", {"messageId": message, "role": "assistant"}),
                    ("message:completed", {"messageId": message, "content": text}),
                    ("run:completed", {"runId": "r"}),
                ]
            ):
                await exchange.send(f"id: {number}\nevent: {name}\ndata: {json.dumps(data)}\n\n")
        else:
            exchange.respond(404, {"error": {"code": "not_found", "message": "no"}})

    server = await fake_server(handler)
    server.held = held
    return server


@pytest.fixture
async def ledger_person(ledger):
    await sync_to_async(make_endpoint)(slug="echo", protocol="external", base_url=f"{ledger.url}/agent")
    user = await sync_to_async(make_user)(everyday=True)
    client = HtmxClient()
    await client.aforce_login(user)
    client.user, client.agent = user, ledger
    return client


async def test_an_external_agent_starts_afresh_when_its_first_answer_is_made_again(ledger_person):
    thread = await say(ledger_person, "one")
    assert "conv-1 holds 1" in await page(ledger_person, thread)
    first = await Run.objects.aget()
    await ledger_person.post(f"/runs/{first.pk}/regenerate/")
    await settle()
    html = await page(ledger_person, thread)
    # A new conversation of its own: the agent holds only what the page shows.
    assert "conv-2 holds 1" in html and "conv-1 holds" not in html
    assert "starts a new conversation of its own" in html
    assert ledger_person.agent.held == {"conv-1": ["one"], "conv-2": ["one"]}


async def test_an_external_agent_that_cannot_be_rewound_is_said_to_remember(ledger_person):
    thread = await say(ledger_person, "one")
    await say(ledger_person, "two", str(thread.pk))
    html = await page(ledger_person, thread)
    # Said before going back: on the regenerate control and in the edit form.
    assert "past your first message it cannot be rewound" in html
    assert 'data-agent-history="kept"' in html
    second = await Run.objects.alatest("created_at")
    await ledger_person.post(f"/runs/{second.pk}/edit/", {"content": "TWO"})
    await settle()
    html = await page(ledger_person, thread)
    # Its own history still has the replaced turn, and the page says so.
    assert "conv-1 holds 3" in html
    assert "still remembers what was replaced here" in html
    assert ledger_person.agent.held == {"conv-1": ["one", "two", "TWO"]}


@pytest.fixture
def a2a_agent():
    from tests.support.a2a_agent import A2ATestAgent

    server = A2ATestAgent().start()
    yield server
    server.stop()


@pytest.fixture
async def a2a_person(a2a_agent):
    await sync_to_async(make_endpoint)(slug="echo", name="Echo", protocol="a2a", base_url=a2a_agent.url)
    user = await sync_to_async(make_user)(everyday=True)
    client = HtmxClient()
    await client.aforce_login(user)
    return client


async def test_an_a2a_agent_that_keeps_its_context_is_said_to_remember_too(a2a_person):
    thread = await say(a2a_person, "one")
    await say(a2a_person, "two", str(thread.pk))
    thread = await Conversation.objects.select_related("endpoint").aget(pk=thread.pk)
    assert thread.remote_id  # the agent's context id: it keeps the conversation
    html = await page(a2a_person, thread)
    # The same notes as for an external agent: its history cannot be rewound either.
    assert "past your first message it cannot be rewound" in html
    assert 'data-agent-history="kept"' in html
    second = await Run.objects.alatest("created_at")
    await a2a_person.post(f"/runs/{second.pk}/edit/", {"content": "TWO"})
    await settle()
    assert "still remembers what was replaced here" in await page(a2a_person, thread)
