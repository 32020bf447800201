"""Frontend tools through the product (without a browser): offered to the agent, answered by the
person, and the answer sent back in the next run's history, right after the call it answers."""

from __future__ import annotations

import json
import uuid

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.core.cache import cache
from django.db import connection
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents_ui.capabilities import read_agui
from agents_ui.decisions import UserAbilities, decide
from agents_ui.display.run_view import RunView
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import (
    AgentEndpoint,
    ApprovalRecord,
    CapabilitySnapshot,
    Conversation,
    Message,
    Run,
    RunEvent,
)
from agents_ui.runs.event_log import replay
from agents_ui.runs.inputs import ToolAnswer
from agents_ui.runs.protocols.agui import offered_client_tools
from agents_ui.sdk import SseParser, fold, parse_event
from agents_ui.sdk.agui.client_tools import DISMISSED, client_tool, read_answer
from agents_ui.views.workspace import _turns
from tests.conftest import CAPTURES
from tests.factories import make_endpoint, make_user
from tests.support.client_tool_agent import declaration, script
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle

pytestmark = pytest.mark.django_db(transaction=True)
GENERIC = ["ask_user", "request_form", "confirm", "choose"]


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


def agent_for(mode: str):
    received: list[dict] = []

    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, declaration(mode))
            return
        run_input = exchange.request.json()
        received.append(run_input)
        exchange.start_sse()
        for event in script(run_input):
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    return handler, received


async def browse(fake_server, mode: str = "offers"):
    handler, received = agent_for(mode)
    server = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="helper-agent", base_url=f"{server.url}/agent")
    client = HtmxClient()
    client.user = await sync_to_async(make_user)()
    await client.aforce_login(client.user)
    client.received = received
    return client


async def say(client, text: str, conversation: Conversation | None = None) -> Run:
    form = {"content": text, **({"conversation": str(conversation.pk)} if conversation else {})}
    response = await client.post("/agents/helper-agent/send/", form)
    assert response.status_code == 200
    await settle()
    return await Run.objects.select_related("conversation__endpoint").order_by("-created_at").afirst()


def call_of(run: Run):
    [call] = replay(run).tool_calls.values()
    return call


@pytest.mark.parametrize(
    ("declared", "offered"),
    [({"tools": {"clientProvided": True}}, True), ({"tools": {"clientProvided": False}}, False),
     ({"tools": {"supported": True}}, True), ({}, True), (None, True)],
)  # fmt: skip
def test_the_generic_tools_are_offered_unless_the_agent_declares_it_takes_none(declared, offered):
    assert decide(profile=read_agui(declared)).offers_frontend_tools is offered


@pytest.mark.parametrize(("mode", "names"), [("offers", GENERIC), ("silent", GENERIC), ("refuses", [])])
async def test_a_run_offers_the_tools_as_the_declaration_says(fake_server, mode, names):
    client = await browse(fake_server, mode)
    await say(client, "hello")
    sent = client.received[-1]["tools"]
    assert [tool["name"] for tool in sent] == names
    assert all(tool["description"] and tool["parameters"]["type"] == "object" for tool in sent)
    run = await Run.objects.select_related("conversation").alatest("created_at")
    assert [tool.name for tool in await offered_client_tools(run)] == names


async def test_the_offer_is_decided_once_per_declaration_and_again_for_a_new_one():
    endpoint = await sync_to_async(make_endpoint)()
    conversation = await Conversation.objects.acreate(
        user=await sync_to_async(make_user)(), endpoint=endpoint
    )
    run = await Run.objects.acreate(conversation=conversation)

    async def declares(payload: dict, digest: str) -> None:
        await CapabilitySnapshot.objects.acreate(
            endpoint=endpoint, status="declared", content_hash=digest, source="x", payload=payload,
            last_seen_at=timezone.now(),
        )  # fmt: skip

    def offered_counting() -> tuple[list[str], int]:
        with CaptureQueriesContext(connection) as queries:
            names = [tool.name for tool in async_to_sync(offered_client_tools)(run)]
        return names, len(queries)

    digest = uuid.uuid4().hex
    await declares({"tools": {"clientProvided": False}}, digest)
    assert await sync_to_async(offered_counting)() == ([], 2)  # which is the last, then it whole
    assert await sync_to_async(offered_counting)() == ([], 1)  # remembered: which is the last only
    await declares({"tools": {"clientProvided": True}}, uuid.uuid4().hex)
    assert await sync_to_async(offered_counting)() == (GENERIC, 2)


async def test_an_answer_goes_back_after_the_call_it_answers_and_shows_on_the_card(fake_server):
    client = await browse(fake_server)
    run = await say(client, "please ask me")
    assert run.status == Run.Status.COMPLETED
    call = await sync_to_async(call_of)(run)
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert 'data-answer-state="awaiting"' in page and "Which city should the trip start from?" in page

    response = await client.post(f"/runs/{run.pk}/answer/", {"call": call.id, "answer": "Porto"})
    assert response.status_code == 200
    assert 'data-answer-state="answered"' in response.content.decode()
    await settle()
    sent = client.received[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["toolCalls"][0]["id"] == call.id
    assert sent[1]["toolCalls"][0]["function"]["name"] == "ask_user"
    assert sent[2] == {
        "id": sent[2]["id"],
        "role": "tool",
        "toolCallId": call.id,
        "content": '{"answer": "Porto"}',
    }
    answered = await Run.objects.order_by("-created_at").afirst()
    assert answered.request["kind"] == "answer" and answered.status == Run.Status.COMPLETED
    assert await Message.objects.filter(run_id=answered.pk, content='Thanks: {"answer": "Porto"}').aexists()
    # The answer is in the new run's log: the agent never echoes it.
    assert await RunEvent.objects.filter(run=answered, type="TOOL_CALL_RESULT").aexists()
    answered.conversation = run.conversation
    assert (await sync_to_async(replay)(answered)).tool_calls[call.id].result == '{"answer": "Porto"}'

    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert 'data-answer-state="answered"' in page and "awaiting" not in page
    again = await client.post(f"/runs/{run.pk}/answer/", {"call": call.id, "answer": "Lisbon"})
    assert "can no longer be answered" in again.content.decode()
    assert await Run.objects.acount() == 2


async def test_an_answer_that_does_not_fit_is_refused_and_nothing_is_sent(fake_server):
    client = await browse(fake_server)
    run = await say(client, "show me the form")
    call = await sync_to_async(call_of)(run)
    names = {f.path[0]: f.name for f in client_tool(call.name, call.args).fields}
    response = await client.post(
        f"/runs/{run.pk}/answer/", {"call": call.id, names["name"]: "Ada", names["guests"]: "99"}
    )
    assert "The form does not fit: guests: 99 is greater than the maximum of 12" in response.content.decode()
    assert await Run.objects.acount() == 1


async def test_an_unknown_call_left_without_a_result_is_answered_as_json_or_dismissed(fake_server):
    client = await browse(fake_server)
    run = await say(client, "plan the steps")
    call = await sync_to_async(call_of)(run)
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert 'data-client-tool="other"' in page and "generate_task_steps" in page and "Draft" in page
    bad = await client.post(f"/runs/{run.pk}/answer/", {"call": call.id, "answer": "{oops", "format": "json"})
    assert "not valid JSON" in bad.content.decode()

    await client.post(f"/runs/{run.pk}/answer/", {"call": call.id, "action": "dismiss"})
    await settle()
    assert client.received[-1]["messages"][-1]["content"] == DISMISSED
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert 'data-answer-state="dismissed"' in page and f"Thanks: {DISMISSED}" in page


async def test_an_unknown_call_is_answered_with_its_arguments_as_the_person_edited_them(fake_server):
    client = await browse(fake_server)
    run = await say(client, "plan the steps")
    call = await sync_to_async(call_of)(run)
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert "data-checklist" in page and 'name="shape:[&quot;steps&quot;]"' in page
    await client.post(f"/runs/{run.pk}/answer/", {"call": call.id, "format": "shaped"})
    await settle()
    sent = json.loads(client.received[-1]["messages"][-1]["content"])
    assert sent == {"steps": [{"description": "Draft", "status": "disabled"}]}


async def test_an_agno_confirmation_is_approved_with_accepted_true_or_rejected_with_a_note(fake_server):
    client = await browse(fake_server)
    run = await say(client, "seek approval")
    call = await sync_to_async(call_of)(run)
    assert call.name == "delete_drafts"
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert 'data-confirm-convention="Agno"' in page and "Approve" in page and "Reject" in page
    await client.post(f"/runs/{run.pk}/answer/", {"call": call.id, "format": "shaped", "confirmed": "true"})
    await settle()
    assert json.loads(client.received[-1]["messages"][-1]["content"]) == {"accepted": True}

    run = await say(client, "seek approval", run.conversation)
    call = await sync_to_async(call_of)(run)
    form = {"call": call.id, "format": "shaped", "confirmed": "false", "note": "Keep them a week"}
    await client.post(f"/runs/{run.pk}/answer/", form)
    await settle()
    sent = json.loads(client.received[-1]["messages"][-1]["content"])
    assert sent == {"accepted": False, "note": "Keep them a week"}


async def test_a_declared_tools_enums_are_choices_checked_on_the_server(fake_server):
    client = await browse(fake_server, "declares")
    run = await say(client, "triage this")
    call = await sync_to_async(call_of)(run)
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert 'data-choice="schema"' in page and "IT desk" in page and 'value="&quot;critical&quot;"' in page
    form = {"call": call.id, "format": "shaped", 'shape:["priority"]': '"urgent"'}
    refused = await client.post(f"/runs/{run.pk}/answer/", form)
    assert "Priority: not one of the choices (low, normal, high, critical)." in refused.content.decode()
    assert await Run.objects.acount() == 1
    chosen = {'shape:["priority"]': '"critical"', 'shape:["team"]': '"it"', 'shape:["labels"]': '"customer"'}
    form = {**form, **chosen}
    await client.post(f"/runs/{run.pk}/answer/", form)
    await settle()
    sent = json.loads(client.received[-1]["messages"][-1]["content"])
    assert sent == {
        "title": "Printer on fire",
        "priority": "critical",
        "team": "it",
        "labels": ["customer"],
        "site": "Oslo",
    }


async def test_the_same_call_without_a_declared_schema_keeps_its_text_inputs(fake_server):
    client = await browse(fake_server)
    run = await say(client, "triage this")
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert "data-shaped-form" in page and "data-choice" not in page


async def test_a_call_of_an_earlier_turn_can_no_longer_be_answered(fake_server):
    client = await browse(fake_server)
    run = await say(client, "please ask me")
    await say(client, "hello", run.conversation)
    call = await sync_to_async(call_of)(run)
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert "awaiting" not in page
    response = await client.post(f"/runs/{run.pk}/answer/", {"call": call.id, "answer": "Porto"})
    assert "The conversation went on" in response.content.decode()


async def test_a_call_id_used_again_in_a_later_run_is_a_new_call_to_answer(fake_server):
    client = await browse(fake_server)
    run = await say(client, "ask me again")
    await client.post(f"/runs/{run.pk}/answer/", {"call": "call-again", "answer": "Porto"})
    await settle()
    later = await say(client, "ask me again", run.conversation)
    conversation = await Conversation.objects.select_related("endpoint").aget()
    plan = (await plan_inputs(conversation.endpoint, await user_abilities(client.user))).plan()
    turns = await sync_to_async(_turns)(conversation, plan, True)
    views = {view.run.pk: view for _, view in turns}
    first, last = views[run.pk], views[later.pk]
    assert first.call_view(first.transcript.tool_calls["call-again"]).answered
    assert last.call_view(last.transcript.tool_calls["call-again"]).awaiting
    response = await client.post(f"/runs/{later.pk}/answer/", {"call": "call-again", "answer": "Lisbon"})
    assert response.status_code == 200
    await settle()
    assert client.received[-1]["messages"][-1]["content"] == '{"answer": "Lisbon"}'


async def test_calls_made_together_are_answered_together(fake_server):
    client = await browse(fake_server)
    run = await say(client, "ask me both")
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert page.count('data-answer-state="awaiting"') == 2
    kept = await client.post(f"/runs/{run.pk}/answer/", {"call": "call-ask", "answer": "Porto"})
    assert 'data-answer-state="kept"' in kept.content.decode()
    assert await Run.objects.acount() == 1  # nothing goes to the agent while a call still waits
    again = await client.post(f"/runs/{run.pk}/answer/", {"call": "call-ask", "answer": "Lisbon"})
    assert "not waiting for an answer" in again.content.decode()
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert page.count('data-answer-state="kept"') == 1 and page.count('data-answer-state="awaiting"') == 1

    both = await client.post(f"/runs/{run.pk}/answer/", {"call": "call-confirm", "confirmed": "true"})
    assert both.content.decode().count('data-answer-state="answered"') == 2
    await settle()
    sent = client.received[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in sent[1]["toolCalls"]] == ["call-ask", "call-confirm"]
    assert [m["toolCallId"] for m in sent[2:]] == ["call-ask", "call-confirm"]
    assert "kept" not in json.dumps((await Run.objects.order_by("-created_at").afirst()).request)
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert page.count('data-answer-state="answered"') == 2
    assert 'Thanks: {"answer": "Porto"} and {"confirmed": true}' in page


def answer(call_id: str, parent: str = "") -> dict:
    return ToolAnswer(
        id=f"answer-{call_id}", tool_call_id=call_id, content='{"confirmed": true}', tool_name="confirm",
        arguments='{"summary": "Go?"}', parent_message_id=parent,
    ).as_json()  # fmt: skip


INTEROP = CAPTURES.parent / "interop"


def capture_view(path, status: str, protocol: str = "agui") -> RunView:
    parser = SseParser()
    transcript = fold([parse_event(frame.data) for frame in parser.feed(path.read_bytes())])
    run = Run(status=status, conversation=Conversation(endpoint=AgentEndpoint(protocol=protocol)))
    # The plan says whether the client answers the agent's calls (an external agent's are its own).
    plan = decide(policy={"identity": {"name": "Desk"}}) if protocol == "external" else None
    return RunView(run, transcript, plan=plan)


@pytest.mark.parametrize(
    ("path", "name"),
    [
        (CAPTURES / "starter-human_in_the_loop.sse", "generate_task_steps"),  # the AG-UI dojo
        (INTEROP / "adk-steps-1.sse", "generate_task_steps"),
        (INTEROP / "pydantic-ai-steps-1.sse", "generate_task_steps"),  # pendingToolCallIds
        (INTEROP / "langgraph-steps-1.sse", "generate_task_steps"),
        (INTEROP / "agent-framework-steps-1.sse", "generate_task_steps"),
    ],
)
def test_a_call_a_real_agent_left_for_the_client_can_be_answered_with_its_arguments_shown(path, name):
    view = capture_view(path, Run.Status.COMPLETED)
    [call] = [c for c in view.transcript.tool_calls.values() if c.name == name]
    shown = view.call_view(call)
    assert shown.awaiting and shown.client is None and shown.has_args
    assert '"steps"' in shown.args


def test_agnos_confirmation_is_recognised_in_its_real_stream_and_its_questions_drawn():
    # Captured from Agno 3.1.10's own AG-UI interface (tests/fixtures/agui-captures/README.md).
    view = capture_view(CAPTURES / "agno-confirm-1.sse", Run.Status.COMPLETED)
    [call] = view.transcript.tool_calls.values()
    shown = view.call_view(call)
    assert call.name == "delete_drafts" and shown.awaiting and shown.client is None
    assert shown.shaped.kind == "confirm" and shown.shaped.framework == "Agno"
    context = {"call": shown, "run": Run(pk=uuid.uuid4()), "rv": view}
    html = render_to_string("agents_ui/client_tools/card.html", context)
    assert 'data-confirm-convention="Agno"' in html and "Reason, if you reject" in html

    view = capture_view(CAPTURES / "agno-feedback-1.sse", Run.Status.COMPLETED)
    [call] = view.transcript.tool_calls.values()
    form = view.call_view(call).shaped
    assert form.kind == "feedback" and [f.label for f in form.fields] == ["Which cuisine?", "Which extras?"]
    assert [f.kind for f in form.fields] == ["choice", "multichoice"]


def test_a_call_of_a_run_an_approval_holds_is_left_to_the_approval():
    # Agent Framework's confirm_changes and ADK's adk_request_confirmation never get a result.
    for path in (INTEROP / "agent-framework-refund-approve-1.sse", INTEROP / "adk-refund-approve-1.sse"):
        view = capture_view(path, Run.Status.INTERRUPTED)
        assert not any(view.call_view(c).awaiting for c in view.transcript.tool_calls.values())
        view.run.status = Run.Status.COMPLETED  # even where the run is taken for completed
        assert not any(view.call_view(c).awaiting for c in view.transcript.tool_calls.values())


def test_an_external_agents_call_is_its_own_to_finish():
    view = capture_view(CAPTURES / "starter-human_in_the_loop.sse", Run.Status.COMPLETED, protocol="external")
    assert not any(view.call_view(c).awaiting for c in view.transcript.tool_calls.values())
    running = capture_view(CAPTURES / "starter-human_in_the_loop.sse", Run.Status.RUNNING)
    assert not any(running.call_view(c).awaiting for c in running.transcript.tool_calls.values())


# --- Microsoft Agent Framework's confirm_changes -----------------------------------------------------


def confirm_changes_view(run_status: str, decided: dict | None = None) -> tuple[RunView, object]:
    """Agent Framework's refund: an approval interrupt and its own confirm_changes for the same call."""
    parser = SseParser()
    path = INTEROP / "agent-framework-refund-approve-1.sse"
    transcript = fold([parse_event(frame.data) for frame in parser.feed(path.read_bytes())])
    run = Run.objects.create(
        conversation=Conversation.objects.create(user=make_user(), endpoint=make_endpoint(), title="t"),
        request={},
        status=run_status,
    )
    plan = decide(user=UserAbilities(can_approve=True, can_upload=True, can_view_reasoning=True))
    view = RunView(run, transcript, plan, decided=decided or {})
    [call] = [c for c in transcript.tool_calls.values() if c.name == "confirm_changes"]
    return view, call


def card_html(view: RunView, call) -> str:
    return render_to_string("agents_ui/run.html#tool-call", view.context(call=view.call_view(call)))


def test_confirm_changes_is_a_confirm_card_that_decides_the_approval_naming_the_same_call():
    view, call = confirm_changes_view(Run.Status.INTERRUPTED)
    [interrupt] = view.transcript.open_interrupts
    shown = view.call_view(call)
    assert shown.client.name == "confirm_changes" and not shown.awaiting
    # Agent Framework refuses a tool message while its approval waits: the card decides the interrupt.
    assert shown.decides == interrupt.id and interrupt.tool_call_id == "call_refund"
    html = card_html(view, call)
    assert f'name="decision-{interrupt.id}" value="approve"' in html
    assert f"/runs/{view.run.pk}/decide" in html.replace("decide/", "decide")
    assert "issue_refund" in html and "A-1001" in html and "waiting for the result" not in html


def test_confirm_changes_is_the_one_way_to_answer_its_approval():
    view, call = confirm_changes_view(Run.Status.INTERRUPTED)
    [interrupt] = view.transcript.open_interrupts
    # The approval form does not ask the same question again; the decision is still recorded from
    # the interrupt's own call and arguments.
    assert view.approval_forms() == []
    assert [(a.id, a.tool) for a in view.approvals() if a.open] == [(interrupt.id, "issue_refund")]
    page = render_to_string("agents_ui/run.html#run", view.context())
    assert "data-approval-form" not in page and f'id="{view.dom}-decision-errors"' in page
    # Edited arguments, where the interrupt takes them, are offered on the card.
    editing = RunView(
        view.run,
        view.transcript,
        decide(
            capabilities={"humanInTheLoop": {"supported": True, "approvals": True, "approveWithEdits": True}},
            user=UserAbilities(can_approve=True),
        ),
    )
    edit_card = card_html(editing, call)
    assert f'name="decision-{interrupt.id}" value="edit"' in edit_card and "A-1001" in edit_card
    # Without the right to approve, the card decides nothing and the form says why.
    looking = RunView(view.run, view.transcript, view.plan, can_approve=False)
    assert not looking.call_view(call).decides and looking.approval_forms()
    assert "Decided with the agent's approval request" in card_html(looking, call)


def test_a_decided_confirm_changes_reads_as_answered_not_waiting():
    view, call = confirm_changes_view(Run.Status.INTERRUPTED)
    [interrupt] = view.transcript.open_interrupts
    record = ApprovalRecord.objects.create(
        run=view.run, request_id=interrupt.id, tool_name="issue_refund", arguments={}, decision="rejected",
        decided_by=view.run.conversation.user,
    )  # fmt: skip
    view.decided = {interrupt.id: record}
    shown = view.call_view(call)
    assert shown.answered and not shown.decides and shown.decision.label == "Rejected"
    html = card_html(view, call)
    assert 'data-answer-state="answered"' in html and "Declined" in html and "<form" not in html


def test_confirm_changes_alone_is_answered_as_agent_framework_reads_a_confirmation():
    args = {
        "function_name": "issue_refund",
        "function_call_id": "call_refund",
        "function_arguments": {"order_id": "A-1001"},
        "steps": [{"description": "Execute issue_refund", "status": "enabled"}],
    }
    tool = client_tool("confirm_changes", args)
    assert read_answer(tool, {"confirmed": "true"}) == (
        {"accepted": True, "steps": [{"description": "Execute issue_refund", "status": "enabled"}]},
        "",
    )
    assert read_answer(tool, {"confirmed": "false"})[0] == {
        "accepted": False,
        "steps": [{"description": "Execute issue_refund", "status": "disabled"}],
    }
    assert read_answer(tool, {})[1] == "Choose yes or no."
    assert client_tool("confirm_changes", {"steps": "all"}) is None  # not its shape: any other call
