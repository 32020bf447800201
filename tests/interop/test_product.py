"""The product's own run pipeline against real third-party AG-UI servers.

A conversation is driven as the product drives it (``start_run``: the product builds each
RunAgentInput, streams, logs and saves), against a real peer on loopback. What the peer answers
shows what the product sent: the scripted models count the earlier answers they were given.
"""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async

from agents_ui.decisions import UserAbilities, decide
from agents_ui.display.run_view import RunView, render_run
from agents_ui.models import ApprovalRecord, Conversation, Message, Run
from agents_ui.runs.event_log import replay
from agents_ui.runs.inputs import RunRequest, ToolAnswer
from agents_ui.runs.live import start_run
from tests.factories import make_endpoint, make_user
from tests.interop import common

pytestmark = pytest.mark.django_db(transaction=True)

REFUND = common.refund_text(common.REFUND_ARGS["order_id"], common.REFUND_ARGS["amount"])


async def _endpoint(url: str):
    return await sync_to_async(make_endpoint)(base_url=url)


async def _say(endpoint, text: str, conversation: Conversation | None = None) -> Run:
    def create() -> Run:
        nonlocal conversation
        if conversation is None:
            conversation = Conversation.objects.create(user=make_user(), endpoint=endpoint, title=text)
        message = Message.objects.create(conversation=conversation, role=Message.Role.USER, content=text)
        run = Run.objects.create(
            conversation=conversation, request=RunRequest(message_id=message.pk).as_json()
        )
        run.conversation = conversation
        return run

    return await _finish(await sync_to_async(create)())


async def _resume(run: Run, payload: dict) -> Run:
    interrupts = (await sync_to_async(replay)(run)).open_interrupts
    entries = tuple({"interruptId": i.id, "status": "resolved", "payload": payload} for i in interrupts)

    def create() -> Run:
        new = Run.objects.create(
            conversation=run.conversation, request=RunRequest(kind="resume", resume=entries).as_json()
        )
        new.conversation = run.conversation
        return new

    return await _finish(await sync_to_async(create)())


async def _finish(run: Run) -> Run:
    live = start_run(run)
    await asyncio.wait_for(live.task, timeout=60)
    finished = await Run.objects.select_related("conversation__endpoint").aget(pk=run.pk)
    finished.conversation = run.conversation
    return finished


async def _answer(run: Run) -> str:
    return "".join(
        [m.content async for m in Message.objects.filter(run_id=run.pk, role=Message.Role.ASSISTANT)]
    )


@pytest.fixture
async def pydantic_ai(peer_server):
    return await _endpoint(peer_server("pydantic-ai").url())


async def test_the_product_holds_a_text_conversation_with_pydantic_ai(pydantic_ai):
    first = await _say(pydantic_ai, "hello")
    assert first.status == Run.Status.COMPLETED
    assert await _answer(first) == "Hello! How can I help?"
    second = await _say(pydantic_ai, "hello again", first.conversation)
    assert await _answer(second) == "Hello again! I see 1 earlier answer(s)."


async def test_the_product_sends_the_tool_calls_of_earlier_turns(pydantic_ai):
    first = await _say(pydantic_ai, "what is the weather in Paris?")
    assert first.status == Run.Status.COMPLETED
    second = await _say(pydantic_ai, "hello", first.conversation)
    # The first run answered twice (the tool call, then the text): both must go back.
    assert await _answer(second) == "Hello again! I see 2 earlier answer(s)."


async def test_the_product_shows_a_pydantic_ai_approval(pydantic_ai):
    run = await _say(pydantic_ai, "refund my order A-1001")
    assert run.status == Run.Status.INTERRUPTED
    [interrupt] = (await sync_to_async(replay)(run)).open_interrupts
    assert (interrupt.id, interrupt.tool_call_id) == ("int-call_refund", "call_refund")


async def test_the_product_resumes_a_pydantic_ai_approval(pydantic_ai):
    run = await _say(pydantic_ai, "refund my order A-1001")
    resumed = await _resume(run, {"approved": True})
    assert resumed.status == Run.Status.COMPLETED, resumed.error
    assert (await sync_to_async(replay)(resumed)).tool_calls["call_refund"].result == REFUND


@pytest.mark.parametrize("peer", ["langgraph", "adk", "agent-framework", "strands"])
async def test_the_product_resumes_an_approval_where_the_server_keeps_the_thread(peer, peer_server):
    endpoint = await _endpoint(peer_server(peer).url())
    run = await _say(endpoint, "refund my order A-1001")
    assert run.status == Run.Status.INTERRUPTED
    resumed = await _resume(run, {"approved": True})
    assert resumed.status == Run.Status.COMPLETED, resumed.error
    assert REFUND in await _answer(resumed)


async def test_the_product_offers_its_client_tools_to_pydantic_ai_and_sends_the_answer_back(pydantic_ai):
    run = await _say(pydantic_ai, "plan the steps")
    assert run.status == Run.Status.COMPLETED
    call = (await sync_to_async(replay)(run)).tool_calls["call_ask"]
    assert call.name == "ask_user" and not call.has_result
    answer = ToolAnswer(
        id="answer-1", tool_call_id=call.id, content='{"answer": "Review"}', tool_name=call.name,
        arguments=call.args_text, parent_message_id=call.parent_message_id or "",
    )  # fmt: skip

    def create() -> Run:
        new = Run.objects.create(
            conversation=run.conversation,
            request=RunRequest(kind="answer", answers=(answer.as_json(),)).as_json(),
        )
        new.conversation = run.conversation
        return new

    answered = await _finish(await sync_to_async(create)())
    assert answered.status == Run.Status.COMPLETED, answered.error
    assert await _answer(answered) == 'Done: {"answer": "Review"}'


async def test_agent_framework_confirm_changes_is_answered_by_the_approval_it_asks_about(peer_server):
    endpoint = await _endpoint(peer_server("agent-framework").url())
    run = await _say(endpoint, "refund my order A-1001")
    transcript = await sync_to_async(replay)(run)
    [interrupt] = transcript.open_interrupts
    [confirm] = [c for c in transcript.tool_calls.values() if c.name == "confirm_changes"]
    plan = decide(user=UserAbilities(can_approve=True, can_upload=True, can_view_reasoning=True))
    view = RunView(run, transcript, plan)
    card = view.call_view(confirm)
    assert card.client.name == "confirm_changes" and card.decides == interrupt.id
    # One way to answer one question: the card decides, the approval form does not ask again.
    assert view.approval_forms() == [] and [a.id for a in view.approvals() if a.open] == [interrupt.id]
    page = await sync_to_async(render_run)(view)
    assert "data-approval-form" not in page and f'name="decision-{interrupt.id}" value="approve"' in page
    # Without the right to approve, the card decides nothing and the form says why.
    looking = RunView(run, transcript, plan, can_approve=False)
    assert not looking.call_view(confirm).decides and looking.approval_forms()
    resumed = await _resume(run, {"approved": True})
    assert resumed.status == Run.Status.COMPLETED, resumed.error
    assert REFUND in await _answer(resumed)
    record = await ApprovalRecord.objects.acreate(
        run=run, request_id=interrupt.id, tool_name="issue_refund", arguments={}, decision="approved"
    )
    card = RunView(run, transcript, plan, decided={interrupt.id: record}).call_view(confirm)
    assert card.answered and not card.decides and card.decision.label == "Approved"
