"""A thread's runs folded together: what a later run says about an earlier run's calls lands there.

The streams are shaped as the real adapters send them (pydantic-ai, Google ADK and Microsoft Agent
Framework begin a resume with the TOOL_CALL_RESULT of the call the interrupted run opened;
LangGraph's resume carries it only in MESSAGES_SNAPSHOT).
"""

from __future__ import annotations

from pathlib import Path

from ag_ui.core import (
    MessagesSnapshotEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from agents_ui.sdk import SseParser, TranscriptBuilder, parse_event
from agents_ui.sdk.folding import fold_thread

INTERRUPT = {
    "type": "interrupt",
    "interrupts": [{"id": "int-call_1", "reason": "tool_call", "toolCallId": "call_1"}],
}


def call(call_id: str, name: str, args: str, parent: str | None = None) -> list:
    return [
        ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name, parent_message_id=parent),
        ToolCallArgsEvent(tool_call_id=call_id, delta=args),
        ToolCallEndEvent(tool_call_id=call_id),
    ]


def text(message_id: str, words: str) -> list:
    return [
        TextMessageStartEvent(message_id=message_id, role="assistant"),
        TextMessageContentEvent(message_id=message_id, delta=words),
        TextMessageEndEvent(message_id=message_id),
    ]


def interrupted_run() -> list:
    """pydantic-ai: a tool-only response asking for approval, then the interrupt outcome."""
    return [
        RunStartedEvent(thread_id="t", run_id="r1"),
        *call("call_1", "send_email", '{"to": "a@b.com"}', parent="resp-1"),
        RunFinishedEvent(thread_id="t", run_id="r1", outcome=INTERRUPT),
    ]


def resume_run() -> list:
    return [
        RunStartedEvent(thread_id="t", run_id="r2"),
        ToolCallResultEvent(message_id="res-1", tool_call_id="call_1", content="Sent to a@b.com"),
        *text("answer-2", "Done."),
        RunFinishedEvent(thread_id="t", run_id="r2"),
    ]


def test_a_resume_runs_result_lands_on_the_call_the_interrupted_run_opened():
    first, second = fold_thread([interrupted_run(), resume_run()])
    original = first.tool_calls["call_1"]
    assert (original.has_result, original.result) == (True, "Sent to a@b.com")
    assert original.args == {"to": "a@b.com"}
    # Not a second card in the resume run: the result is the original call's.
    assert second.tool_calls == {}
    assert second.answered_earlier == {"call_1": original}
    assert [(m.role, m.tool_call_id) for m in second.messages] == [("tool", "call_1"), ("assistant", None)]


def test_the_result_reaches_the_earlier_call_live_and_moves_its_revision():
    (first,) = fold_thread([interrupted_run()])
    before = first.revision
    builder = TranscriptBuilder(earlier=[first])
    for event in resume_run()[:2]:
        builder.apply(event)
    assert first.tool_calls["call_1"].result == "Sent to a@b.com"
    assert first.revision == before + 1  # a page showing the earlier run sees it changed


def test_a_reload_replays_the_thread_to_the_same_cards():
    runs = [interrupted_run(), resume_run()]
    live = fold_thread(runs)
    again = fold_thread(runs)
    assert again[0].tool_calls["call_1"].result == live[0].tool_calls["call_1"].result == "Sent to a@b.com"
    assert again[1].tool_calls == live[1].tool_calls == {}


def test_a_call_id_an_earlier_run_used_and_answered_is_a_new_call_of_the_later_run():
    # Scripted models (and some providers) number calls per run: AG-UI promises no uniqueness.
    first_run = [
        RunStartedEvent(thread_id="t", run_id="r1"),
        *call("call_1", "lookup", '{"q": "first"}'),
        ToolCallResultEvent(message_id="res-1", tool_call_id="call_1", content="one"),
        RunFinishedEvent(thread_id="t", run_id="r1"),
    ]
    second_run = [
        RunStartedEvent(thread_id="t", run_id="r2"),
        *call("call_1", "lookup", '{"q": "second"}'),
        ToolCallResultEvent(message_id="res-2", tool_call_id="call_1", content="two"),
        RunFinishedEvent(thread_id="t", run_id="r2"),
    ]
    first, second = fold_thread([first_run, second_run])
    assert (first.tool_calls["call_1"].args, first.tool_calls["call_1"].result) == ({"q": "first"}, "one")
    assert (second.tool_calls["call_1"].args, second.tool_calls["call_1"].result) == ({"q": "second"}, "two")
    assert second.answered_earlier == {}


def test_a_result_for_an_id_already_answered_is_not_put_on_the_earlier_call():
    first_run = [
        *call("call_1", "lookup", "{}"),
        ToolCallResultEvent(message_id="res-1", tool_call_id="call_1", content="one"),
    ]
    second_run = [ToolCallResultEvent(message_id="res-2", tool_call_id="call_1", content="two")]
    first, second = fold_thread([first_run, second_run])
    assert first.tool_calls["call_1"].result == "one"
    assert second.tool_calls["call_1"].result == "two" and second.answered_earlier == {}


def test_a_resume_announcing_the_open_call_again_continues_it():
    # LangGraph's resume streams the interrupted call anew (START, ARGS, END) before its result.
    again = [
        RunStartedEvent(thread_id="t", run_id="r2"),
        *call("call_1", "send_email", '{"to": "a@b.com"}'),
        ToolCallResultEvent(message_id="res-1", tool_call_id="call_1", content="Sent to a@b.com"),
    ]
    first, second = fold_thread([interrupted_run(), again])
    original = first.tool_calls["call_1"]
    assert original.result == "Sent to a@b.com"
    assert original.args_text == '{"to": "a@b.com"}'  # not streamed twice over
    assert second.tool_calls == {} and second.answered_earlier == {"call_1": original}
    assert second.errors == []


def events_of(path: Path) -> list:
    return [parse_event(frame.data) for frame in SseParser().feed(path.read_bytes())]


def test_langgraph_interrupt_and_resume_fold_as_one_thread(captures):
    first, second = fold_thread(
        [events_of(captures / "langgraph-interrupt.sse"), events_of(captures / "langgraph-resume.sse")]
    )
    sent = first.tool_calls["tc-1"]
    assert sent.name == "send_email" and sent.has_result
    assert sent.result == "sent {'to': 'a@b.com', 'subject': 'Hi', 'body': 'Hello (edited)'}"
    # The resume's snapshot repeats the whole conversation: only what is new belongs to it.
    assert [m.id for m in first.messages] == [
        "u1",
        "lc_run--01a22bbc-911e-7341-85d6-35f2a3311723",
        "ai-propose",
    ]
    assert [(m.role, m.tool_call_id) for m in second.messages] == [("tool", "tc-1"), ("assistant", None)]
    assert second.messages[1].text.startswith("Done: sent")
    assert second.tool_calls == {} and second.answered_earlier == {"tc-1": sent}
    assert second.state["status"] == "sent" and second.outcome.kind == "success" and second.errors == []


def test_a_snapshot_repeating_an_earlier_call_fills_in_its_arguments():
    # LangGraph's `task` call streams no TOOL_CALL_ARGS; a later snapshot lists its arguments.
    first_run = [
        ToolCallStartEvent(tool_call_id="task-1", tool_call_name="task", parent_message_id="ai-1"),
        ToolCallEndEvent(tool_call_id="task-1"),
    ]
    snapshot = MessagesSnapshotEvent(
        messages=[
            {
                "id": "ai-1",
                "role": "assistant",
                "toolCalls": [
                    {
                        "id": "task-1",
                        "type": "function",
                        "function": {"name": "task", "arguments": '{"description": "find flights"}'},
                    }
                ],
            },
            {"id": "tool-1", "role": "tool", "toolCallId": "task-1", "content": "3 flights"},
        ]
    )
    first, second = fold_thread([first_run, [snapshot]])
    task = first.tool_calls["task-1"]
    assert task.args == {"description": "find flights"} and task.result == "3 flights"
    assert second.tool_calls == {} and [m.id for m in second.messages] == ["tool-1"]


def test_a_repeated_snapshot_does_not_answer_an_earlier_call_twice():
    first, second = fold_thread(
        [
            [
                *call("c1", "lookup", "{}", parent="ai-1"),
                ToolCallResultEvent(message_id="res-1", tool_call_id="c1", content="one"),
            ],
            [
                MessagesSnapshotEvent(
                    messages=[
                        {"id": "res-9", "role": "tool", "toolCallId": "c1", "content": "again"},
                    ]
                )
            ],
        ]
    )
    assert first.tool_calls["c1"].result == "one"
    assert second.tool_calls == {} and second.answered_earlier == {}


def test_a_builder_nobody_keeps_is_freed_at_once_with_what_it_folded():
    import gc
    import weakref

    from ag_ui import core as ag

    from agents_ui.sdk.folding import TranscriptBuilder

    enabled = gc.isenabled()
    gc.disable()  # freed by its reference count alone, not by the cycle collector
    try:
        builder = TranscriptBuilder()
        builder.apply(ag.TextMessageStartEvent(message_id="m1", role="assistant"))
        builder.apply(ag.TextMessageContentEvent(message_id="m1", delta="hello"))
        assert builder.transcript.event_count == 2 and builder.transcript.messages
        gone, folded = weakref.ref(builder), weakref.ref(builder.agui)
        del builder
        assert gone() is None and folded() is None
    finally:
        if enabled:
            gc.enable()
