"""What an untrusted agent or a curious user must not get from the product's pages."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group
from django.test import AsyncClient

from agents_ui.models import ApprovalRecord, Conversation, Message, Run
from agents_ui.templatetags.agents_ui_tags import agent_link
from tests.factories import make_endpoint, make_user
from tests.support.htmx import htmx_post
from tests.support.waiting import settle

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "Once."},
    {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


def agent_declaring(declaration: dict):
    calls: list[str] = []

    async def handler(exchange):
        calls.append(exchange.request.method)
        if exchange.request.method == "GET":
            exchange.respond(200, declaration)
            return
        exchange.start_sse()
        for event in ANSWER:
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    return handler, calls


# --- Preview ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["disabled", "restricted"])
async def test_preview_never_sends_to_an_agent_the_user_could_not_otherwise_use(fake_server, kind):
    handler, calls = agent_declaring({"identity": {"name": "Draft"}})
    agent = await fake_server(handler)
    endpoint = await sync_to_async(make_endpoint)(
        slug="draft", base_url=f"{agent.url}/agent", enabled=kind != "disabled"
    )
    if kind == "restricted":
        group = await Group.objects.acreate(name="Finance")
        await endpoint.allowed_groups.aadd(group)
    staff = await sync_to_async(make_user)(staff=True, perms=["view_agentendpoint"])
    client = AsyncClient()
    await client.aforce_login(staff)

    page = (await client.get("/agents/draft/?preview=1")).content.decode()
    assert "Sending is off in preview." in page and "data-sending-off" in page
    assert re.search(
        r'<button type="submit" class="button button-primary send-button" data-send\s+disabled', page
    )

    assert 'action="/agents/draft/send/?preview=1"' in page  # a send says why, never "not found"
    response = await htmx_post(client, "/agents/draft/send/?preview=1", {"content": "Hello with your key"})
    assert response.status_code == 200 and "sending is off in preview" in response.content.decode()
    assert (await htmx_post(client, "/agents/draft/send/", {"content": "Hello"})).status_code == 404
    plain = await client.post("/agents/draft/send/?preview=1", {"content": "Hello"})
    assert plain.status_code == 422 and "sending is off in preview" in plain.content.decode()
    assert "POST" not in calls
    assert not await Message.objects.aexists() and not await Run.objects.aexists()


async def test_preview_of_an_agent_the_user_may_use_sends_as_usual(fake_server):
    handler, calls = agent_declaring({"identity": {"name": "Open"}})
    agent = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="open", base_url=f"{agent.url}/agent")
    staff = await sync_to_async(make_user)(staff=True, perms=["view_agentendpoint"])
    client = AsyncClient()
    await client.aforce_login(staff)
    page = (await client.get("/agents/open/?preview=1")).content.decode()
    assert "data-sending-off" not in page
    response = await htmx_post(client, "/agents/open/send/?preview=1", {"content": "Hi"})
    assert response.status_code == 200 and "sse-connect" in response.content.decode()
    await settle()
    assert "POST" in calls


# --- One answer per composed message -------------------------------------------------------------------


async def test_a_message_submitted_twice_is_answered_once(fake_server):
    handler, calls = agent_declaring({"identity": {"name": "Once"}})
    agent = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="once", base_url=f"{agent.url}/agent")
    user = await sync_to_async(make_user)()
    client = AsyncClient()
    await client.aforce_login(user)
    page = (await client.get("/agents/once/")).content.decode()
    token = re.search(r'name="client_token" id="client-token" value="([^"]+)"', page).group(1)

    first, second = await asyncio.gather(
        htmx_post(client, "/agents/once/send/", {"content": "Only once", "client_token": token}),
        htmx_post(client, "/agents/once/send/", {"content": "Only once", "client_token": token}),
    )
    again = await htmx_post(client, "/agents/once/send/", {"content": "Only once", "client_token": token})
    await settle()
    run = await Run.objects.aget()
    for response in (first, second, again):
        assert response.status_code == 200
        assert f'data-run="{run.pk}"' in response.content.decode()
    assert await Message.objects.filter(role="user").acount() == 1
    assert await Conversation.objects.acount() == 1
    assert calls.count("POST") == 1
    # Each answer hands the composer a new token, so the next message is a new one.
    fresh = re.search(r'id="client-token" value="([^"]+)" hx-swap-oob', first.content.decode()).group(1)
    assert fresh != token
    conversation = await Conversation.objects.aget()
    await htmx_post(
        client,
        "/agents/once/send/",
        {"content": "Next", "client_token": fresh, "conversation": conversation.pk},
    )
    await settle()
    assert await Run.objects.acount() == 2


async def test_another_users_token_gets_nothing_of_theirs(fake_server):
    handler, _ = agent_declaring({"identity": {"name": "Once"}})
    agent = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="once", base_url=f"{agent.url}/agent")
    owner, other = await sync_to_async(make_user)(), await sync_to_async(make_user)()
    client = AsyncClient()
    await client.aforce_login(owner)
    await htmx_post(client, "/agents/once/send/", {"content": "Private words", "client_token": "tok-1"})
    await settle()
    await client.aforce_login(other)
    response = await htmx_post(client, "/agents/once/send/", {"content": "x", "client_token": "tok-1"})
    assert "Private words" not in response.content.decode()
    assert await Run.objects.acount() == 1


# --- Agent links -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "java\tscript:alert(1)",
     "data:text/html,<script>alert(1)</script>", "vbscript:x", "//evil.example/x", "/relative", "https:"],
)  # fmt: skip
def test_only_http_links_from_agents(url):
    assert agent_link(url) == ""


def test_http_links_from_agents_are_kept():
    assert agent_link("https://docs.example.com/a?b=1") == "https://docs.example.com/a?b=1"
    assert agent_link("http://docs.example.com") == "http://docs.example.com"


async def test_a_javascript_documentation_url_is_never_a_link(fake_server):
    handler, _ = agent_declaring(
        {"identity": {"name": "Sly", "documentationUrl": "javascript:alert(document.cookie)"}}
    )
    agent = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="sly", base_url=f"{agent.url}/agent")
    client = AsyncClient()
    await client.aforce_login(await sync_to_async(make_user)())
    page = (await client.get("/agents/sly/")).content.decode()
    assert 'href="javascript:' not in page and ">Documentation</a>" not in page


# --- Invalid declarations -------------------------------------------------------------------------------


async def test_the_invalid_declaration_reason_is_for_staff_only_on_the_catalogue(fake_server):
    handler, _ = agent_declaring({"identity": "not an object", "secretDetail": 1})
    agent = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="bad", name="Bad agent", base_url=f"{agent.url}/agent")
    client = AsyncClient()
    await client.aforce_login(await sync_to_async(make_user)())
    card = (await client.get("/")).content.decode()
    assert "Invalid declaration" in card
    status = re.search(r'<span class="status small status-invalid"([^>]*)>', card).group(1)
    assert "title=" not in status and "data-technical" not in card

    await client.aforce_login(await sync_to_async(make_user)(staff=True))
    card = (await client.get("/")).content.decode()
    detail = re.search(r"<details[^>]*data-technical>.*?<pre>(.*?)</pre>", card, re.S).group(1)
    assert "identity" in detail, "staff read why, folded under Technical detail"


# --- Agents' schemas for edited arguments -----------------------------------------------------------


def asking_agent(edited_schema: dict):
    interrupt = {
        "id": "ask-1", "reason": "tool_call", "message": "Send it?", "toolCallId": "tc",
        "responseSchema": {"type": "object", "properties": {"approved": {}, "editedArgs": edited_schema}},
    }  # fmt: skip
    first = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
        {"type": "TOOL_CALL_START", "toolCallId": "tc", "toolCallName": "send"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "tc", "delta": '{"to": "a"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "tc"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1",
         "outcome": {"type": "interrupt", "interrupts": [interrupt]}},
    ]  # fmt: skip

    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, {"humanInTheLoop": {"interrupts": True, "approvals": True}})
            return
        exchange.start_sse()
        for event in first:
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    return handler


async def interrupted(fake_server, edited_schema: dict):
    agent = await fake_server(asking_agent(edited_schema))
    await sync_to_async(make_endpoint)(slug="asks", base_url=f"{agent.url}/agent")
    client = AsyncClient()
    await client.aforce_login(await sync_to_async(make_user)(perms=["approve_actions"]))
    await htmx_post(client, "/agents/asks/send/", {"content": "Go"})
    await settle()
    return client, await Run.objects.aget()


async def test_an_edit_schema_naming_a_local_server_is_never_fetched(fake_server):
    fetched = []

    async def local_service(exchange):
        fetched.append(exchange.request.url)
        exchange.respond(200, {"type": "string", "pattern": "^never$"})

    local = await fake_server(local_service)
    client, run = await interrupted(fake_server, {"$ref": f"{local.url}/secret.json"})
    answer = await htmx_post(
        client, f"/runs/{run.pk}/decide/", {"decision-ask-1": "edit", "edited-ask-1": '{"to": "b"}'}
    )
    body = answer.content.decode()
    assert "do not fit" in body and "never fetched" in body
    assert fetched == []
    assert await Run.objects.acount() == 1  # nothing was resumed


async def test_a_catastrophic_pattern_in_an_edit_schema_does_not_stall_the_server(fake_server):
    schema = {"type": "object", "properties": {"to": {"type": "string", "pattern": "^(a+)+$"}}}
    client, run = await interrupted(fake_server, schema)
    loop = asyncio.get_running_loop()
    started = loop.time()
    answer = await htmx_post(
        client,
        f"/runs/{run.pk}/decide/",
        {"decision-ask-1": "edit", "edited-ask-1": json.dumps({"to": "a" * 40 + "!"})},
    )
    assert loop.time() - started < 3  # on Python's own engine this pattern backtracks for hours
    assert "do not fit" in answer.content.decode()
    assert await Run.objects.acount() == 1


async def test_edited_arguments_nested_too_deeply_are_refused_in_words(fake_server):
    client, run = await interrupted(fake_server, {"type": "object"})
    answer = await htmx_post(
        client,
        f"/runs/{run.pk}/decide/",
        {"decision-ask-1": "edit", "edited-ask-1": "[" * 100_000 + "]" * 100_000},
    )
    assert answer.status_code == 200
    body = answer.content.decode()
    assert "not valid JSON" in body or "do not fit" in body


@pytest.mark.parametrize("posted", [{}, {"decision-ask-1": "yes please"}])
async def test_a_decision_nobody_chose_decides_nothing(fake_server, posted):
    client, run = await interrupted(fake_server, {"type": "object"})
    answer = await htmx_post(client, f"/runs/{run.pk}/decide/", posted)
    assert "Choose approve or reject for each request." in answer.content.decode()
    assert not await ApprovalRecord.objects.aexists()
    assert await Run.objects.acount() == 1
