"""A2UI v1.0 through the product (without a browser): a v1.0 surface drawn in the conversation with
its ARIA, the agent's callRendererFunction refused and the refusal sent back with the next run as
`forwardedProps.a2uiMessages`, a button press sent as a v1.0 action, the tokens shown under the
answers; and the same page after a reload."""

from __future__ import annotations

import html
import json
import re

import pytest
from asgiref.sync import sync_to_async

from agents_ui.models import Run
from agents_ui.runs.event_log import replay
from agents_ui.sdk import a2ui
from tests.factories import make_endpoint, make_user
from tests.support.a2ui_v1_agent import DECLARATION, events
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle

pytestmark = pytest.mark.django_db(transaction=True)


def v1_agent():
    received: list[dict] = []

    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, DECLARATION)
            return
        payload = exchange.request.json()
        received.append(payload)
        exchange.start_sse()
        for event in events(payload):
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    return handler, received


async def latest() -> Run:
    return await Run.objects.select_related("conversation__endpoint").order_by("-created_at").afirst()


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


async def test_a_v1_surface_acts_replies_and_shows_its_tokens_after_a_reload(fake_server):
    handler, received = v1_agent()
    server = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="v1-desk", base_url=f"{server.url}/agent")
    client = HtmxClient()
    await client.aforce_login(await sync_to_async(make_user)())
    response = await client.post("/agents/v1-desk/send/", {"content": "a room"})
    assert response.status_code == 200
    await settle()
    run = await latest()
    assert run.status == Run.Status.COMPLETED, run.error
    # The agent declared A2UI v1.0: the catalogue offered names both versions.
    [context] = [c for c in received[-1]["context"] if c["description"] == a2ui.SCHEMA_CONTEXT_DESCRIPTION]
    assert set(json.loads(context["value"])["versions"]) == {"v0.9", "v1.0"}

    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert re.search(r'data-a2ui="Text" aria-live="polite"[^>]*>\s*<p>A room, in v1.0', page)
    assert 'name="a2ui:/form/name"' in page and "Book the room" in page
    assert "run 'openUrl' itself: refused" in html.unescape(page)
    usage = text(page[page.index("data-usage>") :].split("</p>")[0])
    assert "gpt-5 (openai): 1,234 tokens in (200 cached) · 567 out (50 reasoning)" in usage
    assert "small (local): 12 tokens in · out: not reported" in usage

    record = next(a for a in (await sync_to_async(replay)(run)).activities.values())
    form = {
        "activity": record.message_id,
        "surface": "booking",
        "a2ui-action": "send|/",
        "a2ui:/form/name": "Ada",
    }
    response = await client.post(f"/runs/{run.pk}/a2ui/", form)
    assert response.status_code == 200, response.content.decode()[:500]
    await settle()
    sent = received[-1]["forwardedProps"]
    assert sent["a2uiAction"]["version"] == "v1.0"
    assert sent["a2uiAction"]["userAction"]["context"] == {"name": "Ada", "room": "focus"}
    assert sent["a2uiClientDataModel"]["surfaces"]["booking"]["form"] == {"name": "Ada"}
    # The refusal of the agent's call goes back with the next run, as v1.0's renderer-to-agent message.
    [reply] = sent["a2uiMessages"]
    assert reply["version"] == "v1.0"
    assert reply["rendererFunctionResponse"]["functionCallId"] == "open-1"
    assert reply["rendererFunctionResponse"]["error"]["code"] == "INVALID_FUNCTION_CALL"

    second = await latest()
    assert second.status == Run.Status.COMPLETED
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert "Booked the focus room for Ada." in page and "data-a2ui-sent" in page
    assert "gpt-5 (openai): 40 tokens in · 8 out" in text(page)
    assert "a2uiMessages" not in json.dumps(second.request)  # replies are computed, never stored
