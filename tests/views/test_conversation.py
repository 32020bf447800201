"""Sending messages, following runs, deciding and rating, as the browser does it (without a browser)."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import AsyncClient

from agents_ui.models import Attachment, Conversation, Feedback, Message, Run
from tests.factories import make_endpoint, make_user
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle

pytestmark = pytest.mark.django_db(transaction=True)

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"  # noqa: E501
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"\x00" * 40

DECLARATION = {
    "identity": {"name": "Reader"},
    "transport": {"streaming": True},
    "multimodal": {"input": {"pdf": True}},
    "humanInTheLoop": {"feedback": True},
}
ANSWER = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "Read <b>it</b>."},
    {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


@pytest.fixture
async def agent(fake_server):
    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, DECLARATION)
            return
        exchange.start_sse()
        for event in ANSWER:
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    return await fake_server(handler)


@pytest.fixture
async def browser(agent):
    endpoint = await sync_to_async(make_endpoint)(slug="reader", base_url=f"{agent.url}/agent")
    user = await sync_to_async(make_user)(perms=["upload_files", "approve_actions", "view_reasoning"])
    client = HtmxClient()
    await client.aforce_login(user)
    client.endpoint, client.user, client.agent = endpoint, user, agent
    return client


async def test_the_message_is_saved_before_the_agent_is_called_and_the_answer_after(browser):
    response = await browser.post("/agents/reader/send/", {"content": "Summarise this"})
    assert response.status_code == 200
    body = response.content.decode()
    assert "Summarise this" in body and 'sse-connect="/runs/' in body
    conversation = await Conversation.objects.select_related("endpoint").aget()
    assert response["HX-Push-Url"] == conversation.get_absolute_url()
    assert await Message.objects.filter(role="user", content="Summarise this").aexists()
    await settle()
    answer = await Message.objects.aget(role="assistant")
    assert answer.content == "Read <b>it</b>."
    page = (await browser.get(conversation.get_absolute_url())).content.decode()
    assert "Read &lt;b&gt;it&lt;/b&gt;." in page  # the agent's HTML is text, never markup


async def test_a_send_updates_the_side_list_and_removes_the_empty_state_only_once(browser):
    first = (await browser.post("/agents/reader/send/", {"content": "Summarise this"})).content.decode()
    conversation = await Conversation.objects.select_related("endpoint").aget()
    # The new conversation shows in the side list at once, as the current one.
    assert 'id="conversation-list"' in first and 'hx-swap-oob="true"' in first
    assert f'href="{conversation.get_absolute_url()}" aria-current="page">Summarise this</a>' in first
    assert 'id="transcript-empty" hx-swap-oob="delete"' in first
    await settle()
    data = {"content": "And now?", "conversation": str(conversation.pk)}
    second = (await browser.post("/agents/reader/send/", data)).content.decode()
    # The page has no empty state any more: an out-of-band swap for it would find no target.
    assert "transcript-empty" not in second and 'id="conversation-list"' in second
    await settle()


async def test_following_a_finished_run_replays_it_and_closes(browser):
    await browser.post("/agents/reader/send/", {"content": "Hi"})
    await settle()
    run = await Run.objects.aget()
    response = await browser.get(f"/runs/{run.pk}/events/")
    assert response["Content-Type"] == "text/event-stream"
    stream = b"".join([chunk async for chunk in response.streaming_content]).decode()
    assert stream.count("event: update") == 1
    assert stream.rstrip().endswith("event: done\ndata:")
    assert "Read &lt;b&gt;it&lt;/b&gt;." in stream
    assert len(browser.agent.requests) == 2  # discovery and the one run: following never runs it again


@pytest.mark.parametrize(
    ("form", "problem"),
    [
        ({"content": "   "}, "Write a message first."),
        ({"content": "x" * 20001}, "the limit is 20,000"),
        (
            {"content": "Look", "attachment": SimpleUploadedFile("a.png", PNG, "image/png")},
            "not a type this agent",
        ),
        (
            {"content": "Look", "attachment": SimpleUploadedFile("fake.pdf", b"hello", "application/pdf")},
            "labelled",
        ),
        (
            {"content": "Look", "attachment": SimpleUploadedFile("empty.pdf", b"", "application/pdf")},
            "is empty",
        ),
        ({"content": "Hi", "subagent": "nobody"}, "Choose one of the sub-agents this agent has."),
    ],
)
async def test_refusals_are_clear_and_nothing_is_sent_or_saved(browser, form, problem):
    response = await browser.post("/agents/reader/send/", form)
    assert response["HX-Retarget"] == "#composer-errors"
    assert problem in response.content.decode()
    assert not await Message.objects.aexists()
    assert len(browser.agent.requests) == 1  # discovery only


async def test_without_javascript_a_refusal_rerenders_the_page_with_the_message_kept(browser):
    plain = AsyncClient()
    await plain.aforce_login(browser.user)
    upload = SimpleUploadedFile("fake.pdf", b"hello", "application/pdf")
    response = await plain.post("/agents/reader/send/", {"content": "My long question", "attachment": upload})
    assert response.status_code == 422
    body = response.content.decode()
    assert "My long question</textarea>" in body and "labelled" in body


async def test_an_accepted_pdf_reaches_the_agent_as_a_content_part(browser):
    upload = SimpleUploadedFile("brief.pdf", PDF, "application/pdf")
    await browser.post("/agents/reader/send/", {"content": "Read this", "attachment": upload})
    await settle()
    attachment = await Attachment.objects.aget()
    assert (attachment.name, attachment.mime_type, attachment.size) == (
        "brief.pdf",
        "application/pdf",
        len(PDF),
    )
    sent = browser.agent.requests[-1].json()["messages"][-1]["content"]
    assert sent[0] == {"type": "text", "text": "Read this"}
    assert sent[1]["type"] == "document" and sent[1]["source"]["mimeType"] == "application/pdf"
    assert sent[1]["metadata"]["filename"] == "brief.pdf"


async def test_a_user_without_the_upload_permission_cannot_send_files(browser):
    other = await sync_to_async(make_user)()
    client = HtmxClient()
    await client.aforce_login(other)
    upload = SimpleUploadedFile("brief.pdf", PDF, "application/pdf")
    response = await client.post("/agents/reader/send/", {"content": "Read", "attachment": upload})
    assert "permission" in response.content.decode()


async def test_feedback_is_kept(browser):
    await browser.post("/agents/reader/send/", {"content": "Hi"})
    await settle()
    run = await Run.objects.aget()
    response = await browser.post(f"/runs/{run.pk}/feedback/", {"message": "a1", "value": "up"})
    assert "helpful" in response.content.decode()
    assert (await Feedback.objects.aget()).value == "up"


async def test_other_peoples_runs_and_conversations_are_not_found(browser):
    await browser.post("/agents/reader/send/", {"content": "Private"})
    await settle()
    run = await Run.objects.select_related("conversation__endpoint").aget()
    stranger = AsyncClient()
    await stranger.aforce_login(await sync_to_async(make_user)())
    assert (await stranger.get(f"/runs/{run.pk}/events/")).status_code == 404
    assert (await stranger.get(run.conversation.get_absolute_url())).status_code == 404
    assert (await stranger.post(f"/runs/{run.pk}/stop/")).status_code == 404
    assert (await stranger.post(f"/runs/{run.pk}/decide/")).status_code == 404
    response = await stranger.post(
        "/agents/reader/send/", {"content": "x", "conversation": str(run.conversation_id)}
    )
    assert response.status_code == 404


async def test_an_event_stream_serves_its_frames_as_they_are_and_a_replaced_content_too():
    from agents_ui.views.stream import EventStreamResponse

    async def frames():
        yield b"event: update\ndata: <p>1</p>\n\n"
        yield b"event: done\ndata: \n\n"

    response = EventStreamResponse(frames(), content_type="text/event-stream")
    assert [part async for part in response] == [
        b"event: update\ndata: <p>1</p>\n\n",
        b"event: done\ndata: \n\n",
    ]
    response.streaming_content = iter(["text, as a middleware might set it"])  # a sync iterator
    with pytest.warns(Warning, match="synchronous iterators"):
        assert [part async for part in response] == [b"text, as a middleware might set it"]


REASONING_ANSWER = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "REASONING_START", "messageId": "why1"},
    {"type": "REASONING_MESSAGE_START", "messageId": "why1", "role": "reasoning"},
    {"type": "REASONING_MESSAGE_CONTENT", "messageId": "why1", "delta": "Thinking."},
    {"type": "REASONING_MESSAGE_END", "messageId": "why1"},
    {"type": "REASONING_END", "messageId": "why1"},
    *ANSWER[1:],
]


async def test_after_a_run_shows_reasoning_the_catalogue_card_shows_its_badge_on_the_next_load(
    fake_server,
):
    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, DECLARATION)  # declares no reasoning
            return
        exchange.start_sse()
        for event in REASONING_ANSWER:
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    agent = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="thinker", base_url=f"{agent.url}/agent")
    client = HtmxClient()
    await client.aforce_login(await sync_to_async(make_user)(perms=["view_reasoning"]))

    def card(page) -> str:
        return page.content.decode().split('data-agent="thinker"')[1].split("</article>")[0]

    assert "Reasoning" not in card(await client.get("/"))
    await client.post("/agents/thinker/send/", {"content": "Think"})
    await settle()
    assert "Reasoning" in card(await client.get("/"))


@pytest.mark.parametrize("htmx", [True, False])
async def test_a_rating_is_a_fragment_for_htmx_and_a_way_back_to_the_page_for_a_plain_form(browser, htmx):
    await browser.post("/agents/reader/send/", {"content": "Hi"})
    await settle()
    run = await Run.objects.select_related("conversation__endpoint").aget()
    client = browser if htmx else AsyncClient()
    if not htmx:
        await client.aforce_login(browser.user)
    response = await client.post(f"/runs/{run.pk}/feedback/", {"message": "a1", "value": "down"})
    if htmx:
        assert response.status_code == 200
        fragment = response.content.decode()
        assert fragment.strip().startswith('<form class="feedback"')
        assert 'title="Not helpful" aria-pressed="true"' in fragment
        assert "Thanks: marked not helpful." in fragment
    else:
        assert response.status_code == 302
        assert response["Location"] == run.conversation.get_absolute_url()
        page = (await client.get(response["Location"])).content.decode()
        assert "Thanks: marked not helpful." in page
    assert (await Feedback.objects.aget()).value == "down"


async def test_a_plain_form_post_to_decide_or_stop_goes_back_to_the_page(browser):
    await browser.post("/agents/reader/send/", {"content": "Hi"})
    await settle()
    run = await Run.objects.select_related("conversation__endpoint").aget()
    page = run.conversation.get_absolute_url()
    plain = AsyncClient()
    await plain.aforce_login(browser.user)
    decided = await plain.post(f"/runs/{run.pk}/decide/")
    assert (decided.status_code, decided["Location"]) == (302, page)
    assert "This request was already decided." in (await plain.get(page)).content.decode()
    stopped = await plain.post(f"/runs/{run.pk}/stop/")
    assert (stopped.status_code, stopped["Location"]) == (302, page)
    stopped = await plain.post("/agents/reader/stop/", {"conversation": str(run.conversation_id)})
    assert (stopped.status_code, stopped["Location"]) == (302, page)
    assert (await browser.post(f"/runs/{run.pk}/stop/")).status_code == 204


async def test_an_htmx_decision_with_nothing_open_says_so_in_the_forms_message_area(browser):
    await browser.post("/agents/reader/send/", {"content": "Hi"})
    await settle()
    run = await Run.objects.aget()
    response = await browser.post(f"/runs/{run.pk}/decide/")
    assert response.content.decode() == (
        f'<div id="run-{run.pk}-decision-errors" hx-swap-oob="innerHTML">'
        '<p class="alert alert-error small">This request was already decided.</p></div>'
    )
