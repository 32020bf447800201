"""Deciding an AG-UI interrupt sends the answer its responseSchema asks for, checked before it goes.

The agents are the shaped test agents (tests/support/shaped_agent.py): ``worded`` takes the string
"approved" or "rejected", ``reasoned`` an object with a decision and a reason; each fails a resume
that is not what it asked for, as a real agent validating its answer would.
"""

from __future__ import annotations

import html
import json

import pytest
from asgiref.sync import sync_to_async

from agents_ui.models import ApprovalRecord, Conversation, Run
from tests.factories import make_endpoint, make_user
from tests.support import shaped_agent
from tests.support.waiting import settle
from tests.views.test_thread_pages import Person

pytestmark = pytest.mark.django_db(transaction=True)

FIELD = 'answer-ask-publish-field:["reason"]'


def shaped_handler(name: str):
    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, shaped_agent.DECLARATIONS[name])
            return
        exchange.start_sse()
        for event in shaped_agent.events(exchange.request.json(), name):
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    return handler


@pytest.fixture
async def asking(fake_server):
    """``server, person, page, decide = await asking(name)``, its first run asking already."""

    async def start(name: str):
        server = await fake_server(shaped_handler(name))
        endpoint = await sync_to_async(make_endpoint)(slug=name, base_url=f"{server.url}/{name}")
        person = Person()
        await person.aforce_login(await sync_to_async(make_user)(perms=["approve_actions"]))
        assert (await person.post(f"/agents/{name}/send/", {"content": "publish it"})).status_code == 200
        await settle()

        async def page() -> str:
            conversation = await Conversation.objects.aget(endpoint=endpoint)
            # Unescaped: the form's field names hold JSON, and so does the agent's answer.
            return html.unescape((await person.get(f"/agents/{name}/c/{conversation.pk}/")).content.decode())

        async def decide(choice: str, **fields: str) -> str:
            run = await Run.objects.order_by("created_at").afirst()
            posted = {"decision-ask-publish": choice, **fields}
            response = await person.post(f"/runs/{run.pk}/decide/", posted)
            assert response.status_code == 200
            await settle()
            return response.content.decode()

        return server, person, page, decide

    return start


def resumed_payload(server):
    return json.loads(server.requests[-1].body)["resume"][0]["payload"]


@pytest.mark.parametrize(("choice", "word"), [("approve", "approved"), ("reject", "rejected")])
async def test_a_string_schema_is_answered_with_its_word(asking, choice, word):
    server, _, page, decide = await asking("worded")
    shown = await page()
    assert "data-approval-form" in shown
    assert 'value="edit"' not in shown  # a string takes no edited arguments
    await decide(choice)
    assert resumed_payload(server) == word
    resumed = await Run.objects.aget(request__kind="resume")
    assert resumed.status == Run.Status.COMPLETED, resumed.error
    assert f'Told: "{word}"' in await page()


async def test_what_the_schema_asks_besides_yes_or_no_is_a_form_and_is_checked(asking):
    server, _, page, decide = await asking("reasoned")
    shown = await page()
    assert f'name="{FIELD}"' in shown and "The agent also asks" in shown and "Why" in shown
    asked = len(server.requests)
    note = await decide("reject", **{FIELD: "no"})  # too short for the agent's schema
    assert "does not fit" in note and "reason" in note
    assert len(server.requests) == asked and not await ApprovalRecord.objects.aexists()
    await decide("reject", **{FIELD: "Not before Monday"})
    assert resumed_payload(server) == {"decision": "reject", "reason": "Not before Monday"}
    resumed = await Run.objects.aget(request__kind="resume")
    assert resumed.status == Run.Status.COMPLETED, resumed.error
    assert (await ApprovalRecord.objects.aget()).decision == ApprovalRecord.Decision.REJECTED
