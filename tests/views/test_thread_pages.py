"""A thread of several runs on the page and in what the next run sends, from real servers' captures.

Each capture in tests/fixtures/interop is what a real framework's AG-UI adapter answered; the fake
agent answers the n-th run with the n-th capture, and sees what the product sends.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ag_ui.core import StateSnapshotEvent, ToolCallEndEvent, ToolCallResultEvent, ToolCallStartEvent
from asgiref.sync import sync_to_async
from django.template.loader import render_to_string
from django.test import AsyncClient

from agents_ui.decisions import Observations, UserAbilities
from agents_ui.decisions import decide as decide_plan
from agents_ui.endpoints.plans import remembered
from agents_ui.models import Conversation, Run
from agents_ui.runs.history import transcript_of
from agents_ui.sdk import TranscriptBuilder
from agents_ui.sdk.agui.client import parse_event_object
from agents_ui.views.run_render import RunView, StreamRenderer, dom_id
from tests.factories import make_endpoint, make_user
from tests.interop import common
from tests.support.waiting import settle

pytestmark = pytest.mark.django_db(transaction=True)

INTEROP = Path(__file__).resolve().parents[1] / "fixtures" / "interop"
REFUND = common.refund_text(common.REFUND_ARGS["order_id"], common.REFUND_ARGS["amount"])


def captures_agent(*names: str):
    bodies = [(INTEROP / name).read_bytes() for name in names]

    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(404, b"")
            return
        exchange.start_sse()
        await exchange.send(bodies.pop(0))

    return handler


class Person(AsyncClient):
    async def post(self, path, data=None, **extra):
        return await super().post(path, data, headers={"HX-Request": "true"}, **extra)


@pytest.fixture
async def thread(fake_server):
    """``server, person, say, page = await thread(*captures)``."""

    async def start(*names: str):
        server = await fake_server(captures_agent(*names))
        endpoint = await sync_to_async(make_endpoint)(slug="peer", base_url=f"{server.url}/agent")
        person = Person()
        await person.aforce_login(await sync_to_async(make_user)(perms=["approve_actions", "view_reasoning"]))

        async def say(text: str) -> None:
            conversation = await Conversation.objects.filter(endpoint=endpoint).afirst()
            data = {"content": text, **({"conversation": str(conversation.pk)} if conversation else {})}
            assert (await person.post("/agents/peer/send/", data)).status_code == 200
            await settle()

        async def page() -> str:
            conversation = await Conversation.objects.aget(endpoint=endpoint)
            response = await person.get(f"/agents/peer/c/{conversation.pk}/")
            assert response.status_code == 200
            return response.content.decode()

        return server, person, say, page

    return start


async def decide(person: Person) -> None:
    """Approve what the last run asks (the form's preselected choice)."""
    run = await Run.objects.order_by("-created_at").afirst()
    transcript = await sync_to_async(transcript_of)(run)
    chosen = {f"decision-{interrupt.id}": "approve" for interrupt in transcript.open_interrupts}
    response = await person.post(f"/runs/{run.pk}/decide/", chosen)
    assert response.status_code == 200
    await settle()


def run_sections(html: str) -> list[str]:
    """Each run's part of the page (the last one runs on to the end of the page)."""
    return html.split('<section class="run" ')[1:]


async def test_a_resume_sends_the_tool_calls_and_its_result_lands_on_the_original_card(thread):
    server, person, say, page = await thread(
        "pydantic-ai-refund-approve-1.sse",
        "pydantic-ai-refund-approve-2.sse",
        "pydantic-ai-refund-approve-3.sse",
    )
    await say("refund my order A-1001")
    await decide(person)
    # The resume sends the interrupted run's call, so the agent can take its result.
    resume = json.loads(server.requests[-1].body)
    [assistant] = [m for m in resume["messages"] if m["role"] == "assistant"]
    assert [c["id"] for c in assistant["toolCalls"]] == ["call_refund"]
    assert resume["resume"][0]["payload"] == {"approved": True}

    html = await page()
    first, second = run_sections(html)[:2]
    assert 'data-tool-call="issue_refund"' in first and REFUND in first
    assert "waiting for the result" not in html
    assert 'data-tool-call="issue_refund"' not in second  # shown once, on its own run
    # Decided: the asking run no longer reads as waiting, nor does the thread.
    assert "Waiting for a decision." not in first and "data-decided=" in first
    conversations = (await person.get("/conversations/")).content.decode()
    assert "Waiting for your decision" not in conversations

    await say("hello")
    sent = json.loads(server.requests[-1].body)["messages"]
    tool = [m for m in sent if m["role"] == "tool"]
    assert [(m["toolCallId"], m["content"]) for m in tool] == [("call_refund", REFUND)]


async def test_an_undecided_interrupt_still_flags_the_thread(thread):
    _, person, say, page = await thread("pydantic-ai-refund-approve-1.sse")
    await say("refund my order A-1001")
    assert "Waiting for a decision." in await page()
    assert "Waiting for your decision" in (await person.get("/conversations/")).content.decode()


async def test_a_tool_call_id_an_earlier_run_used_is_shown_again_with_its_own_card(thread):
    _, _, say, page = await thread("pydantic-ai-weather-1.sse", "pydantic-ai-weather-2.sse")
    await say("what is the weather in Paris?")
    await say("and again?")
    html = await page()
    cards = re.findall(r'<div class="tool-call" id="([^"]+)" data-tool-call="get_weather"', html)
    assert len(cards) == 2 and len(set(cards)) == 2


async def test_the_state_panel_shows_the_stored_state_on_load(thread):
    _, _, say, page = await thread("agent-framework-state-1.sse")
    await say("update the state")
    html = await page()
    document = re.search(r'<summary class="small">Raw JSON</summary><pre>(.*?)</pre>', html, re.S).group(1)
    assert "Ship" in document and document.strip() != "{}"


async def test_a_state_delta_before_any_snapshot_reads_without_python_internals(thread):
    _, _, say, page = await thread("adk-state-1.sse")
    await say("update the state")
    html = await page()
    assert "NoneType" not in html and "&lt;class" not in html
    assert (
        re.search(r'<summary class="small">Raw JSON</summary><pre>(.*?)</pre>', html, re.S).group(1).strip()
        != "{}"
    )


async def test_adk_confirmation_shows_the_call_it_asks_about(thread):
    _, _, say, page = await thread("adk-refund-approve-1.sse")
    await say("refund my order A-1001")
    html = await page()
    form = html[html.index("data-approval-form") :]
    legend = re.search(r"<legend>(.*?)</legend>", form, re.S).group(1)
    assert "issue_refund" in legend and "adk_request_confirmation" not in legend
    assert re.search(r'<dt class="mono">order_id</dt> <dd>A-1001</dd>', form)
    assert "originalFunctionCall" not in form
    assert "asks to confirm" in html  # the confirmation's own card names the call too


def capture_events(name: str) -> list:
    lines = (INTEROP / name).read_text().splitlines()
    return [parse_event_object(json.loads(line[5:])) for line in lines if line.startswith("data:")]


def stored_run(conversation: Conversation) -> Run:
    run = Run.objects.create(conversation=conversation, request={}, status=Run.Status.RUNNING)
    run.conversation = conversation
    return run


@pytest.fixture
def conversation():
    return Conversation.objects.create(user=make_user(), endpoint=make_endpoint(), title="t")


@pytest.mark.django_db(transaction=False)
def test_the_resume_fills_the_original_card_while_it_streams(conversation):
    plan = decide_plan(user=UserAbilities())
    asked, resumed = stored_run(conversation), stored_run(conversation)
    first = TranscriptBuilder().apply_all(capture_events("pydantic-ai-refund-approve-1.sse"))
    builder = TranscriptBuilder(earlier=[first])
    renderer = StreamRenderer(
        RunView(resumed, builder.transcript, plan), earlier=[RunView(asked, first, plan)]
    )
    renderer.first()
    assert renderer.earlier_fragments() == ""
    for event in capture_events("pydantic-ai-refund-approve-2.sse"):
        builder.apply(event)
    html = renderer.update() + renderer.earlier_fragments()
    card = dom_id("call", f"{asked.pk}:call_refund")
    assert f'<div class="tool-call" id="{card}" data-tool-call="issue_refund" hx-swap-oob="true">' in html
    assert REFUND in html
    assert renderer.earlier_fragments() == ""  # sent once


@pytest.mark.django_db(transaction=False)
def test_state_from_an_agent_that_never_declared_it_shows_the_panel_with_the_first_event(conversation):
    run = stored_run(conversation)
    builder = TranscriptBuilder()
    view = RunView(run, builder.transcript, decide_plan(user=UserAbilities()))
    assert not view.plan["state"].visible  # nothing declared: the page has the panel hidden
    renderer = StreamRenderer(view)
    builder.apply(StateSnapshotEvent(snapshot={"step": 1}))
    view.plan = decide_plan(user=UserAbilities(), observed=Observations(state_seen=True))
    html = renderer.state_fragment()
    assert html.lstrip().startswith('<section class="panel" id="state-panel" data-control="state"')
    assert 'hx-swap-oob="true"' in html and "&quot;step&quot;: 1" in html
    builder.apply(StateSnapshotEvent(snapshot={"step": 2}))
    fragment = renderer.state_fragment()
    assert fragment.startswith('<div id="state-document" class="state-document" hx-swap-oob="true">')


@pytest.mark.django_db(transaction=False)
def test_the_page_always_has_a_state_panel_for_the_stream_to_fill(conversation):
    html = render_to_string(
        "agents_ui/workspace.html#state", {"plan": decide_plan(user=UserAbilities()), "state": ""}
    )
    assert '<section class="panel" id="state-panel" hidden>' in html and 'id="state-document"' in html


@pytest.mark.django_db(transaction=False)
def test_a_text_tool_result_is_shown_without_json_quotes(conversation):
    run = stored_run(conversation)
    builder = TranscriptBuilder()
    builder.apply(ToolCallStartEvent(tool_call_id="c", tool_call_name="send"))
    builder.apply(ToolCallEndEvent(tool_call_id="c"))
    builder.apply(ToolCallResultEvent(message_id="r", tool_call_id="c", content='"Sent to Ada"'))
    view = RunView(run, builder.transcript, decide_plan(user=UserAbilities()))
    [item] = view.items()
    assert item["c"]["result"] == "Sent to Ada"


async def test_explain_follows_the_reasoning_a_run_shows(thread):
    _, person, _, _ = await thread("pydantic-ai-think-1.sse")
    response = await person.post("/agents/peer/send/", {"content": "think about it"})
    run_id = re.search(r'sse-connect="/runs/([0-9a-f-]+)/events/"', response.content.decode()).group(1)
    stream = await person.get(f"/runs/{run_id}/events/")
    body = b"".join([chunk async for chunk in stream.streaming_content]).decode()
    await settle()
    explain = body[body.index('id="explain-list"') :]
    reasoning = re.search(r'data-explain="reasoning" data-decision="(\w+)"', explain).group(1)
    assert reasoning == "shown"
    assert "Hidden until a run shows it" not in explain.split('data-explain="reasoning"')[1].split("</li>")[0]


@pytest.mark.django_db(transaction=False)
def test_sub_agents_a_run_shows_are_kept_as_evidence():
    transcript = TranscriptBuilder().apply_all(capture_events("langgraph-research-1.sse"))
    kept = remembered({"reasoning": True}, transcript.observed, ["researcher", "researcher"])
    assert kept["subagents"] is True and kept["subagent_names"] == ["researcher"] and kept["reasoning"]
    assert Observations.from_json(kept).subagents_seen
    assert remembered(kept, transcript.observed, ["researcher"]) is None  # nothing new


async def test_an_agent_answering_an_empty_declaration_reads_as_declaring_nothing(fake_server):
    bare = json.loads((INTEROP / "adk-bare-capabilities.json").read_text())
    assert bare == {}

    async def handler(exchange):
        exchange.respond(200, bare)

    server = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="bare", base_url=f"{server.url}/bare")
    person = Person()
    await person.aforce_login(await sync_to_async(make_user)())
    catalogue = (await person.get("/")).content.decode()
    card = catalogue[catalogue.index('data-agent="bare"') :]
    status = re.search(r'<span class="status small status-([\w-]+)"[^>]*>\s*([^<\n]*)', card)
    assert status.groups() == ("declares-nothing", "Declares nothing")
