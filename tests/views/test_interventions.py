"""Changing the course of a running run (humanInTheLoop.interventions): the run stops keeping what it
said, and the correction goes as the next run on the same thread, with the whole history."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.core.cache import cache

from agents_ui.models import Conversation, Message, Run
from agents_ui.runs.live import CHANGED_COURSE, LIVE
from tests.factories import make_endpoint, make_user
from tests.support.htmx import HtmxClient
from tests.support.waiting import eventually, settle

pytestmark = pytest.mark.django_db(transaction=True)


def declaring(interventions: bool | None):
    hitl = {} if interventions is None else {"supported": True, "interventions": interventions}
    return {"transport": {"streaming": True}, "humanInTheLoop": hitl}


@pytest.fixture
def person_with(fake_server):
    async def make(declaration):
        cache.clear()
        runs: list[dict] = []

        async def handler(exchange):
            if exchange.request.method == "GET":
                exchange.respond(200, declaration)
                return
            body = exchange.request.json()
            runs.append(body)
            exchange.start_sse()
            for event in (
                {"type": "RUN_STARTED", "threadId": body["threadId"], "runId": body["runId"]},
                {"type": "TEXT_MESSAGE_START", "messageId": f"m{len(runs)}", "role": "assistant"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": f"m{len(runs)}", "delta": f"Pass {len(runs)}."},
            ):
                await exchange.send(f"data: {json.dumps(event)}\n\n")
            if len(runs) == 1:
                await exchange.disconnected.wait()  # the first pass goes on until stopped
                return
            for event in (
                {"type": "TEXT_MESSAGE_END", "messageId": f"m{len(runs)}"},
                {"type": "RUN_FINISHED", "threadId": body["threadId"], "runId": body["runId"]},
            ):
                await exchange.send(f"data: {json.dumps(event)}\n\n")

        agent = await fake_server(handler)
        await sync_to_async(make_endpoint)(slug="planner", base_url=f"{agent.url}/agent")
        client = HtmxClient()
        await client.aforce_login(await sync_to_async(make_user)())
        client.runs = runs
        return client

    return make


async def said(text: str) -> None:
    def saying() -> bool:
        live = next(iter(LIVE.values()), None)
        return bool(live and live.transcript.messages and text in live.transcript.messages[-1].text)

    await eventually(saying, what=f"the agent to say {text!r}")


async def test_a_change_of_course_stops_the_run_keeping_its_words_and_sends_the_correction(person_with):
    person = await person_with(declaring(True))
    page = (await person.get("/agents/planner/")).content.decode()
    assert "data-change-course" in page and 'name="intervene"' in page
    await person.post("/agents/planner/send/", {"content": "Plan the launch."})
    await said("Pass 1.")
    conversation = await Conversation.objects.select_related("endpoint").aget()

    sent = await person.post(
        "/agents/planner/send/",
        {"content": "Launch in May instead.", "conversation": str(conversation.pk), "intervene": "1"},
    )
    assert sent.status_code == 200 and "changed the course" in sent.content.decode()
    await settle()

    first, second = [r async for r in Run.objects.order_by("created_at")]
    assert first.status == Run.Status.CANCELLED and first.error == CHANGED_COURSE
    assert second.status == Run.Status.COMPLETED and second.request["intervention"] is True
    assert await Message.objects.filter(run=first, content="Pass 1.").aexists()  # what it said is kept
    # The next run is on the same thread, with the whole history and the correction last.
    history = person.runs[1]["messages"]
    assert person.runs[1]["threadId"] == person.runs[0]["threadId"]
    assert [(m["role"], m["content"]) for m in history] == [
        ("user", "Plan the launch."),
        ("assistant", "Pass 1."),
        ("user", "Launch in May instead."),
    ]
    reloaded = (await person.get(conversation.get_absolute_url())).content.decode()
    assert reloaded.count("changed the course") == 1 and CHANGED_COURSE in reloaded


@pytest.mark.parametrize("interventions", [False, None])
async def test_an_agent_that_does_not_say_it_takes_interventions_offers_no_change_of_course(
    person_with, interventions
):
    person = await person_with(declaring(interventions))
    page = (await person.get("/agents/planner/")).content.decode()
    assert "data-change-course" not in page
    await person.post("/agents/planner/send/", {"content": "Plan the launch."})
    await said("Pass 1.")
    conversation = await Conversation.objects.select_related("endpoint").aget()
    refused = await person.post(
        "/agents/planner/send/",
        {"content": "Launch in May instead.", "conversation": str(conversation.pk), "intervene": "1"},
    )
    assert "does not say it takes a change of course" in refused.content.decode()
    assert await Run.objects.acount() == 1 and (await Run.objects.aget()).status == Run.Status.RUNNING
    await person.post(f"/runs/{(await Run.objects.aget()).pk}/stop/")
    await settle()
