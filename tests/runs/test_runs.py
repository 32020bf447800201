"""Runs through the whole pipeline: an agent over real HTTP, the event log, the saved messages, the page.

The AG-UI captures of servers we did not write are served as they were recorded, and what a user
of those servers would see must be on the rendered page.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async

from agents_ui.decisions import Observations, UserAbilities, decide
from agents_ui.display.markdown import markdown_html
from agents_ui.display.run_view import RunView, render_run
from agents_ui.display.stream_diff import StreamRenderer
from agents_ui.models import ApprovalRecord, Conversation, Message, Run, RunEvent
from agents_ui.runs.history import thread_runs
from agents_ui.runs.inputs import RunRequest
from agents_ui.runs.live import start_run, stop_run
from tests.conftest import CAPTURES
from tests.factories import make_endpoint, make_user
from tests.support.waiting import until_live

pytestmark = pytest.mark.django_db(transaction=True)


def capture_agent(*names: str):
    """A fake AG-UI agent answering its n-th run with the n-th capture, byte for byte."""
    bodies = [(CAPTURES / name).read_bytes() for name in names]

    async def handler(exchange):
        body = bodies.pop(0)
        exchange.start_sse()
        for start in range(0, len(body), 700):  # in several chunks, as a network would
            await exchange.send(body[start : start + 700])

    return handler


async def new_turn(endpoint, text="hello", **request):
    def create():
        user = make_user()
        conversation = Conversation.objects.create(user=user, endpoint=endpoint, title=text)
        message = Message.objects.create(conversation=conversation, role=Message.Role.USER, content=text)
        run = Run.objects.create(
            conversation=conversation, request=RunRequest(message_id=message.pk, **request).as_json()
        )
        run.conversation = conversation
        return run

    return await sync_to_async(create)()


async def next_turn(run, **request):
    def create():
        new = Run.objects.create(conversation=run.conversation, request=RunRequest(**request).as_json())
        new.conversation = run.conversation
        return new

    return await sync_to_async(create)()


async def finish(run):
    live = start_run(run)
    await asyncio.wait_for(live.task, timeout=10)
    return await Run.objects.select_related("conversation__endpoint").aget(pk=run.pk)


def page_of(run, plan=None) -> str:
    plan = plan or decide()
    [transcript] = [t for r, t in thread_runs(run.conversation) if r.pk == run.pk]
    return render_run(RunView(run, transcript, plan))


async def test_a_streamed_answer_is_logged_saved_and_rendered(fake_server):
    server = await fake_server(capture_agent("starter-agentic_chat.sse"))
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/agentic_chat")
    run = await finish(await new_turn(endpoint))

    assert run.status == Run.Status.COMPLETED
    assert run.event_count == await RunEvent.objects.filter(run=run).acount() == 16
    saved = [m async for m in Message.objects.filter(run=run, role=Message.Role.ASSISTANT)]
    assert len(saved) == 1 and saved[0].content.startswith("counting down: 10")
    html = await sync_to_async(page_of)(run)
    assert "counting down: 10" in html
    # What the agent was sent: the conversation as AG-UI messages, on our thread id.
    sent = server.requests[0].json()
    assert sent["threadId"] == str(run.conversation_id)
    assert sent["messages"][0] == {"id": sent["messages"][0]["id"], "role": "user", "content": "hello"}


async def test_state_deltas_are_applied_in_order_and_kept_for_the_next_run(fake_server):
    server = await fake_server(capture_agent("starter-agentic_generative_ui.sse", "starter-agentic_chat.sse"))
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/gen_ui")
    run = await finish(await new_turn(endpoint))
    assert run.status == Run.Status.COMPLETED
    # A first run sends an empty state, as AG-UI's own client does (never null): some servers
    # stream state only to a client that sent some (Agno's AG-UI interface).
    assert server.requests[0].json()["state"] == {}
    steps = run.state["steps"]
    assert len(steps) == 10 and all(step["status"] == "completed" for step in steps)

    second = await finish(await next_turn(run))
    assert second.status == Run.Status.COMPLETED
    assert server.requests[1].json()["state"] == run.state  # the state goes back to the agent


async def test_tool_calls_with_streamed_arguments_render_parsed(fake_server):
    server = await fake_server(capture_agent("starter-human_in_the_loop.sse"))
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/hitl")
    run = await finish(await new_turn(endpoint))
    html = await sync_to_async(page_of)(run)
    assert 'data-tool-call="generate_task_steps"' in html
    assert "&quot;steps&quot;" in html  # the arguments, parsed and pretty-printed


async def test_predictive_state_capture_shows_both_tool_calls(fake_server):
    server = await fake_server(capture_agent("starter-predictive_state_updates.sse"))
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/predictive")
    run = await finish(await new_turn(endpoint))
    html = await sync_to_async(page_of)(run)
    assert 'data-tool-call="write_document_local"' in html
    assert 'data-tool-call="confirm_changes"' in html


async def test_langgraph_interrupt_then_resume_through_the_pipeline(fake_server):
    server = await fake_server(capture_agent("langgraph-interrupt.sse", "langgraph-resume.sse"))
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/langgraph")
    run = await finish(await new_turn(endpoint, text="email a@b.com"))
    assert run.status == Run.Status.INTERRUPTED

    plan = decide(observed=Observations(interrupts_seen=True))
    html = await sync_to_async(page_of)(run, plan)
    assert "I will draft the email and ask you before sending it." in html
    assert "Send email to a@b.com?" in html
    assert "send_email" in html
    assert 'name="edited-f1f37f4a1ec6f2baca4340cbf2403f93"' in html  # editedArgs in the schema: editable

    resume = [
        {
            "interruptId": "f1f37f4a1ec6f2baca4340cbf2403f93",
            "status": "resolved",
            "payload": {"approved": True, "editedArgs": {"to": "a@b.com", "subject": "Hi", "body": "Hi!"}},
        }
    ]
    second = await finish(await next_turn(run, kind="resume", resume=tuple(resume)))
    assert second.status == Run.Status.COMPLETED  # RUN_FINISHED without an outcome is a success
    assert server.requests[1].json()["resume"] == resume
    html = await sync_to_async(page_of)(second, plan)
    # The result arrives only inside MESSAGES_SNAPSHOT; earlier answers are not shown twice.
    assert "I will draft the email" not in html
    assert 'data-tool-call="send_email"' not in html
    answers = [m async for m in Message.objects.filter(conversation_id=run.conversation_id, role="assistant")]
    assert len({m.remote_id for m in answers}) == len(answers)


async def test_a_cut_stream_fails_clearly_and_keeps_what_was_said(fake_server):
    body = (CAPTURES / "starter-agentic_chat.sse").read_bytes()
    cut = body[: body.index(b"TEXT_MESSAGE_END") - 20]

    async def handler(exchange):
        exchange.start_sse()
        await exchange.send(cut)

    server = await fake_server(handler)
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/cut")
    run = await finish(await new_turn(endpoint))
    assert run.status == Run.Status.FAILED
    # Truncated: never a success, never an invented RUN_FINISHED (docs/PROTOCOLS.md 1.1a).
    assert run.error == "Interrupted: the agent's answer stopped before it finished."
    saved = [m async for m in Message.objects.filter(run=run)]
    assert saved and saved[0].content.startswith("counting down: 10")


async def test_an_unreachable_agent_fails_the_run_with_a_clear_message():
    endpoint = await sync_to_async(make_endpoint)(base_url="http://127.0.0.1:9/agent", connect_timeout=0.5)
    run = await finish(await new_turn(endpoint))
    assert run.status == Run.Status.FAILED
    assert run.error == "The agent cannot be reached."
    assert await Message.objects.filter(conversation_id=run.conversation_id, role="user").acount() == 1


async def test_stop_closes_the_upstream_connection_and_keeps_the_partial_answer(fake_server):
    async def slow(exchange):
        exchange.start_sse()
        await exchange.send('data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n')
        await exchange.send('data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n')
        for word in ["one ", "two ", "three "]:
            await exchange.send(
                json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": word}).join(
                    ["data: ", "\n\n"]
                )
            )
        await exchange.disconnected.wait()

    server = await fake_server(slow)
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/slow")
    run = await new_turn(endpoint)
    live = start_run(run)
    await until_live(live, lambda: live.transcript.messages and "three" in live.transcript.messages[0].text)
    assert await stop_run(run.pk)
    run = await Run.objects.aget(pk=run.pk)
    assert run.status == Run.Status.CANCELLED
    assert (await Message.objects.aget(run=run)).content == "one two three "
    await asyncio.wait_for(server.exchanges[0].disconnected.wait(), timeout=5)


async def test_one_write_keeps_many_runs_logs_and_sees_a_stop_from_another_process(fake_server):
    async def slow(exchange):
        exchange.start_sse()
        await exchange.send('data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n')
        await exchange.send('data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n')
        for word in ["one ", "two "]:
            await exchange.send(
                json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": word}).join(
                    ["data: ", "\n\n"]
                )
            )
        while not exchange.disconnected.is_set():  # then a word every 50 ms until stopped
            await exchange.send(
                json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "more "}).join(
                    ["data: ", "\n\n"]
                )
            )
            await asyncio.sleep(0.05)

    server = await fake_server(slow)
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/slow")
    runs = [await new_turn(endpoint, f"turn {i}") for i in range(3)]
    lives = [start_run(run) for run in runs]
    for live in lives:
        await until_live(
            live, lambda live=live: live.transcript.messages and "two" in live.transcript.messages[0].text
        )
    # Another server process stops the second run: only the database says so.
    await Run.objects.filter(pk=runs[1].pk).aupdate(status=Run.Status.CANCELLED)
    await asyncio.wait_for(lives[1].task, timeout=5)
    assert lives[1].status == Run.Status.CANCELLED
    assert not lives[0].done and not lives[2].done
    for run in (runs[0], runs[2]):
        assert await stop_run(run.pk)
    for live, run in zip(lives, runs, strict=True):
        stored = await Run.objects.aget(pk=run.pk)
        assert stored.status == Run.Status.CANCELLED
        seqs = [
            seq
            async for seq in RunEvent.objects.filter(run=run).order_by("seq").values_list("seq", flat=True)
        ]
        assert seqs == list(range(1, len(live.transcript.messages[0].text.split()) + 3))
        saved = await Message.objects.aget(run=run)
        assert saved.content == live.transcript.messages[0].text and saved.content.startswith("one two ")


def test_markdown_from_agents_cannot_run_anything():
    html = markdown_html(
        "Hi <script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)> **b**"
    )
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html
    assert "<strong>b</strong>" in html


async def test_the_stream_renders_the_growing_answer_and_replaces_only_what_changed(fake_server):
    frames = (CAPTURES / "starter-agentic_chat.sse").read_text().split("\n\n")

    async def paced(exchange):
        exchange.start_sse()
        for frame in frames:
            if frame.strip():
                await exchange.send(frame + "\n\n")
                await asyncio.sleep(0.01)

    server = await fake_server(paced)
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/chat")
    run = await new_turn(endpoint)
    live = start_run(run)
    renderer = StreamRenderer(RunView(run, live.transcript, decide(user=UserAbilities())))
    assert f'id="run-{run.pk}-body"' in renderer.first()
    fragments = []
    while not live.done:
        await asyncio.sleep(0.025)
        fragments.append(await sync_to_async(renderer.update)())
    tails = [f for f in fragments if 'class="md-tail" id="msg-' in f]
    assert len(tails) >= 3  # the answer grew in pieces, its tail rendered again at each
    assert "counting down" in "".join(fragments)
    assert 'class="msg msg-assistant"' in fragments[-1] or any("msg-text md" in f for f in fragments)


async def test_decisions_are_recorded_once(fake_server):
    server = await fake_server(capture_agent("starter-agentic_chat.sse"))
    endpoint = await sync_to_async(make_endpoint)(base_url=f"{server.url}/chat")
    run = await finish(await new_turn(endpoint))
    await ApprovalRecord.objects.acreate(run=run, request_id="i1", decision="approved")
    with pytest.raises(Exception, match=r"UNIQUE|unique|duplicate"):
        await ApprovalRecord.objects.acreate(run=run, request_id="i1", decision="rejected")


def test_the_writer_opens_a_new_connection_after_its_connection_fails():
    from django.db import connection

    from agents_ui.runs import live as runs
    from agents_ui.runs import writer

    user = make_user()
    conversation = Conversation.objects.create(user=user, endpoint=make_endpoint(), title="t")
    run = Run.objects.create(conversation=conversation, request={})
    live = runs.LiveRun(str(run.pk), "agui")

    def job(seq):
        return writer.WriteJob(live, [(seq, "RAW", "{}")], [], seq, set())

    def break_connection():
        connection.ensure_connection()
        connection.connection.close()  # as a database restart would leave it

    writer._WRITE_THREAD.submit(break_connection).result()
    with pytest.raises(Exception, match="closed"):
        writer._WRITE_THREAD.submit(writer._write_many, [job(1)]).result()
    assert writer._WRITE_THREAD.submit(writer._write_many, [job(1)], True).result() == (set(), set())
    assert list(RunEvent.objects.filter(run=run).values_list("seq", flat=True)) == [1]
    assert Run.objects.get(pk=run.pk).event_count == 1
