"""What declared fields change on the page and in what the product accepts: identity.metadata on the
identity card, a modality declared false refused where any other file is taken, interventions
while a run goes."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile

from agents_ui.decisions import decide
from agents_ui.models import Conversation, Message, Run
from agents_ui.sdk import TranscriptBuilder
from agents_ui.views.run_render import RunView, render_run
from tests.factories import make_endpoint, make_user
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle
from tests.views.test_conversation import PDF, PNG

pytestmark = pytest.mark.django_db(transaction=True)

DECLARATION = {
    "identity": {"name": "Reader", "metadata": {"region": "eu-west", "limits": {"daily": 100}}},
    "transport": {"streaming": True},
    "multimodal": {"input": {"file": True, "pdf": False}},
}
ANSWER = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


@pytest.fixture
async def person(fake_server):
    cache.clear()

    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, DECLARATION)
            return
        exchange.start_sse()
        for event in ANSWER:
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    agent = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="reader", base_url=f"{agent.url}/agent")
    client = HtmxClient()
    await client.aforce_login(await sync_to_async(make_user)(perms=["upload_files"]))
    yield client
    await settle()


async def test_the_identity_card_lists_the_declared_metadata(person):
    page = (await person.get("/agents/reader/")).content.decode()
    card = page[page.index("data-identity-metadata") :]
    assert '<dt>region</dt><dd><code class="raw-value">eu-west</code></dd>' in card
    assert '<dt>limits</dt><dd><code class="raw-value">{&quot;daily&quot;: 100}</code></dd>' in card


async def test_a_kind_declared_false_is_refused_where_any_other_file_is_taken(person):
    page = (await person.get("/agents/reader/")).content.decode()
    assert "Any file but PDF" in page
    refused = await person.post(
        "/agents/reader/send/",
        {"content": "Read", "attachment": SimpleUploadedFile("a.pdf", PDF, "application/pdf")},
    )
    assert "this agent says it cannot process application/pdf" in refused.content.decode()
    assert not await Message.objects.aexists()
    taken = await person.post(
        "/agents/reader/send/",
        {"content": "Look", "attachment": SimpleUploadedFile("a.png", PNG, "image/png")},
    )
    assert taken.status_code == 200 and await Message.objects.filter(role="user").aexists()


def test_only_the_kinds_not_ruled_out_are_taken_where_arbitrary_files_are_not():
    details = decide(capabilities={"multimodal": {"input": {"file": False, "video": False}}})
    allowed = decide(
        capabilities={"multimodal": {"input": {"file": False, "video": False}}}, overrides={"upload": "allow"}
    )["upload"].details
    assert details["upload"].hidden  # nothing it takes is declared
    assert allowed.accept == ("image/*", "audio/*", "application/pdf") and allowed.refuse == ()


@pytest.mark.parametrize(("interventions", "shown"), [(True, True), (False, False), (None, False)])
def test_a_running_run_says_when_the_agent_takes_interventions(interventions, shown):
    hitl = {} if interventions is None else {"interventions": interventions}
    plan = decide(capabilities={"transport": {"streaming": True}, "humanInTheLoop": hitl})
    conversation = Conversation.objects.create(user=make_user(), endpoint=make_endpoint(), title="t")
    run = Run.objects.create(conversation=conversation, request={}, status=Run.Status.RUNNING)
    run.conversation = conversation
    html = render_run(RunView(run, TranscriptBuilder().transcript, plan))
    assert ("This agent takes interventions: write what to change and press Change course" in html) is shown
