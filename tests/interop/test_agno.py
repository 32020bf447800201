"""A real Agno agent, behind Agno's own AG-UI interface (AgentOS + AGUI), through the product's SDK.

The peer is tests/interop/agno/server.py: Agno 3.1.10's `Agent` with its `OpenAILike` model pointed
at a scripted chat-completions endpoint, `@tool(requires_confirmation=True)` tools, Agno's
`UserFeedbackTools` (`ask_user`) and the session state, in an `InMemoryDb`. Agno asks for a
person's confirmation and questions through tool calls, not AG-UI interrupts: the answers are
built as the product builds them, from the card's form (``answer_form`` / ``read_shaped``), and go
back as tool messages (docs/PROTOCOLS.md, "Confirmations and questions asked as a tool call").
The second half drives the product's own run pipeline (``start_run``) against the same peer.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from agents_ui.models import Conversation, Message, Run
from agents_ui.runs.event_log import replay
from agents_ui.runs.inputs import RunRequest, ToolAnswer
from agents_ui.runs.live import start_run
from agents_ui.sdk.agui.answer_forms import AGNO_CONFIRMATION, AnswerForm, answer_form, read_shaped
from agents_ui.sdk.agui.client_tools import CLIENT_TOOLS
from tests.factories import make_endpoint, make_user
from tests.interop import common
from tests.interop.driver import AgUiThread
from tests.interop.history import tool_answer

REFUND = common.refund_text(common.REFUND_ARGS["order_id"], common.REFUND_ARGS["amount"])
PLANNED = {"title": "Launch", "steps": [{"name": "Draft", "done": True}, {"name": "Ship", "done": True}]}
ASKED = "I have tools to execute, but I need user input."


@pytest.fixture
def url(peer_server) -> str:
    return peer_server("agno").url()


def thread(url: str) -> AgUiThread:
    """A thread as AG-UI's own client starts one: with an empty state (``initialState ?? {}``)."""
    return AgUiThread(url, state={})


async def ask(t: AgUiThread, text: str) -> tuple[Any, AnswerForm]:
    """Send ``text``; the run pauses on one call that the client must answer. Returns the call and
    the form the product draws for it (from the call and the words of the message holding it)."""
    run = await t.send(text, tools=list(CLIENT_TOOLS))
    assert run.transcript.outcome.kind == "success" and run.transcript.open_interrupts == []
    [call] = run.transcript.tool_calls.values()
    assert call.complete and not call.has_result and t.pending_call() == call.id
    said = run.transcript.message(call.parent_message_id)
    form = answer_form(call.name, call.args, said=said.text)
    assert form is not None and form.framework == "Agno"
    return call, form


async def answer(t: AgUiThread, call: Any, value: Any):
    sent = [*t.messages, tool_answer("answer-1", call.id, value)]
    return await t.send(messages=sent, tools=list(CLIENT_TOOLS))


async def test_text_streams_word_by_word_and_the_session_keeps_the_thread(url):
    t = thread(url)
    first = await t.send("hello")
    assert first.text == "Hello! How can I help?"
    assert first.transcript.outcome.kind == "success"
    assert first.types.count("TEXT_MESSAGE_CONTENT") == len("Hello! How can I help?".split(" "))
    # Agno reads only the last user message; the earlier answer comes from its own session.
    second = await t.send("hello again")
    assert second.text == "Hello again! I see 1 earlier answer(s)."


async def test_agnos_own_events_come_as_raw_and_break_nothing(url):
    run = await thread(url).send("hello")
    raw = [f for f in run.frames if f["type"] == "RAW"]
    assert raw and all(f["source"] == "agno" for f in raw)
    assert run.transcript.errors == []


async def test_a_tool_call_shows_its_arguments_and_result(url):
    run = await thread(url).send("what is the weather in Paris?")
    [call] = run.transcript.tool_calls.values()
    assert (call.name, call.args, call.complete) == ("get_weather", {"city": "Paris"}, True)
    assert json.loads(call.result) == common.WEATHER
    assert run.text.startswith("Done: ")


async def test_a_run_error_reaches_the_user(url):
    run = await thread(url).send("please fail")
    assert (run.transcript.outcome.kind, run.transcript.outcome.message) == ("error", common.FAILURE)


async def test_a_confirmation_is_drawn_as_approve_and_reject(url):
    t = thread(url)
    call, form = await ask(t, "refund my order A-1001")
    assert t.last.transcript.message(call.parent_message_id).text == AGNO_CONFIRMATION
    assert (call.name, call.args) == ("issue_refund", common.REFUND_ARGS)
    assert (form.kind, form.approve, form.reject, form.note_key) == (
        "confirm",
        {"accepted": True},
        {"accepted": False},
        "note",
    )


async def test_approve_runs_the_tool_and_its_result_lands_on_the_call(url):
    t = thread(url)
    call, form = await ask(t, "refund my order A-1001")
    value, problem = read_shaped(form, {"confirmed": "true"})
    assert (value, problem) == ({"accepted": True}, "")
    done = await answer(t, call, value)
    assert done.transcript.outcome.kind == "success"
    assert done.text == f"Done: {REFUND}"
    # Agno announces the call again, same id, with the tool's real result: the thread's card.
    assert json.loads(t.call(call.id).result) == REFUND
    assert (await t.send("hello")).text.startswith("Hello again! I see")


async def test_reject_with_a_reason_gives_agno_the_note_and_runs_nothing(url):
    t = thread(url)
    call, form = await ask(t, "refund my order A-1001")
    value, problem = read_shaped(form, {"confirmed": "false", "note": "Not this order."})
    assert (value, problem) == ({"accepted": False, "note": "Not this order."}, "")
    done = await answer(t, call, value)
    assert done.transcript.outcome.kind == "success"
    # Agno gives the model the note as the tool's result; the refund never ran.
    assert done.text == "Done: Not this order."
    assert REFUND not in json.dumps(done.frames)
    assert "TOOL_CALL_RESULT" not in done.types


async def test_reject_without_a_reason(url):
    t = thread(url)
    call, form = await ask(t, "delete my old drafts")
    assert call.name == "delete_drafts"
    value, _ = read_shaped(form, {"confirmed": "false", "note": ""})
    assert value == {"accepted": False}
    done = await answer(t, call, value)
    assert done.transcript.outcome.kind == "success" and "deleted drafts" not in done.text


async def test_ask_user_is_answered_with_the_selections_agno_reads(url):
    t = thread(url)
    call, form = await ask(t, "plan a dinner")
    assert t.last.transcript.message(call.parent_message_id).text == ASKED
    # Agno's own ask_user (UserFeedbackTools), not the product's ask_user offered beside it.
    assert call.name == "ask_user" and "questions" in call.args
    assert form.kind == "feedback"
    cuisine, extras = form.fields
    assert (cuisine.label, cuisine.kind, extras.label, extras.kind) == (
        "Which cuisine?",
        "choice",
        "Which extras?",
        "multichoice",
    )
    data = {cuisine.name: json.dumps("Greek"), extras.name: json.dumps("Wine")}
    value, problem = read_shaped(form, data, lambda name: [data[name]] if name in data else [])
    assert problem == ""
    assert value == {"selections": {"Which cuisine?": ["Greek"], "Which extras?": ["Wine"]}}
    done = await answer(t, call, value)
    assert done.transcript.outcome.kind == "success"
    said = json.loads(done.text.removeprefix("Done: User feedback received: "))
    assert said == [
        {"question": "Which cuisine?", "selected": ["Greek"]},
        {"question": "Which extras?", "selected": ["Wine"]},
    ]


async def test_a_choice_agno_never_offered_is_refused_before_anything_is_sent(url):
    t = thread(url)
    _, form = await ask(t, "plan a dinner")
    cuisine, _ = form.fields
    value, problem = read_shaped(form, {cuisine.name: json.dumps("Sushi")}, lambda name: [])
    assert value is None and problem == "Which cuisine?: not one of the choices (Thai, Greek)."


async def test_state_streams_and_goes_on_in_the_next_run(url):
    t = thread(url)
    first = await t.send("update the state")
    assert first.transcript.state == {"plan": PLANNED}
    assert first.transcript.errors == []
    # The state goes back with the next run; Agno starts from it and reports it again.
    second = await t.send("hello")
    assert second.request.state == {"plan": PLANNED}
    assert second.transcript.state == {"plan": PLANNED}
    assert "STATE_SNAPSHOT" in second.types


async def test_without_a_state_from_the_client_agno_streams_none(url):
    """Why the product sends ``{}`` on a first run: Agno's interface streams the session state only
    to a client that sent one."""
    run = await AgUiThread(url).send("update the state")
    assert "STATE_SNAPSHOT" not in run.types and "STATE_DELTA" not in run.types
    assert run.transcript.state is None


# --- the product's own pipeline ---------------------------------------------------------------------

product = pytest.mark.django_db(transaction=True)


async def _say(endpoint, text: str, conversation: Conversation | None = None) -> Run:
    def create() -> Run:
        nonlocal conversation
        if conversation is None:
            conversation = Conversation.objects.create(user=make_user(), endpoint=endpoint, title=text)
        message = Message.objects.create(conversation=conversation, role=Message.Role.USER, content=text)
        request = RunRequest(message_id=message.pk).as_json()
        return Run.objects.create(conversation=conversation, request=request)

    return await _finish(await sync_to_async(create)())


async def _finish(run: Run) -> Run:
    await asyncio.wait_for(start_run(run).task, timeout=60)
    return await Run.objects.select_related("conversation__endpoint").aget(pk=run.pk)


async def _answer(run: Run) -> str:
    said = Message.objects.filter(run_id=run.pk, role=Message.Role.ASSISTANT)
    return "".join([m.content async for m in said])


@product
async def test_the_products_runs_keep_agnos_state_across_runs(peer_server):
    endpoint = await sync_to_async(make_endpoint)(base_url=peer_server("agno").url())
    first = await _say(endpoint, "update the state")
    assert first.status == Run.Status.COMPLETED, first.error
    assert first.state == {"plan": PLANNED}
    second = await _say(endpoint, "hello", first.conversation)
    assert second.status == Run.Status.COMPLETED, second.error
    assert second.state == {"plan": PLANNED}
    # Agno's session holds the thread: it counts the first run's answer.
    assert (await _answer(second)).startswith("Hello again! I see")


@product
async def test_the_product_sends_an_agno_confirmation_as_a_tool_message(peer_server):
    endpoint = await sync_to_async(make_endpoint)(base_url=peer_server("agno").url())
    run = await _say(endpoint, "refund my order A-1001")
    assert run.status == Run.Status.COMPLETED
    [call] = (await sync_to_async(replay)(run)).tool_calls.values()
    answer = ToolAnswer(
        id="answer-1", tool_call_id=call.id, content=json.dumps({"accepted": True}), tool_name=call.name,
        arguments=call.args_text, parent_message_id=call.parent_message_id or "",
    )  # fmt: skip

    def create() -> Run:
        return Run.objects.create(
            conversation=run.conversation,
            request=RunRequest(kind="answer", answers=(answer.as_json(),)).as_json(),
        )

    answered = await _finish(await sync_to_async(create)())
    assert answered.status == Run.Status.COMPLETED, answered.error
    assert await _answer(answered) == f"Done: {REFUND}"
