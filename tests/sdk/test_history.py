"""The AG-UI history sent with every run, built from the folded transcripts of the thread's runs."""

from __future__ import annotations

from pathlib import Path

from ag_ui.core import (
    AssistantMessage,
    MessagesSnapshotEvent,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessage,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunAgentInput,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
    UserMessage,
)

from agents_ui.sdk import SseParser, parse_event
from agents_ui.sdk.agui.thread_messages import agui_history
from agents_ui.sdk.folding import fold, fold_thread


def assert_pairs_as_pydantic_ai_requires(history: list, *, resuming: bool) -> None:
    """pydantic-ai's rules for a history it is given (ui/ag_ui/_adapter.py, _agent_graph.py).

    A tool message answers a call made before it ("Tool call with ID ... not found in the history"),
    and once. Every call has its result, except on a resume: the calls of the last assistant turn
    with calls then await it ("... does not contain any unprocessed tool calls"). A new prompt after
    a call without a result is refused ("... contains unprocessed tool calls").
    """
    made: dict[str, int] = {}
    answered: set[str] = set()
    last_turn_with_calls = -1
    turn = 0  # consecutive assistant and reasoning messages are one model response
    for index, message in enumerate(history):
        if isinstance(message, AssistantMessage | ReasoningMessage):
            if index and not isinstance(history[index - 1], AssistantMessage | ReasoningMessage):
                turn += 1
            for call in getattr(message, "tool_calls", None) or ():
                made[call.id] = turn
                last_turn_with_calls = turn
        elif isinstance(message, ToolMessage):
            assert message.tool_call_id in made, f"{message.tool_call_id} answers no call before it"
            assert message.tool_call_id not in answered, f"{message.tool_call_id} is answered twice"
            answered.add(message.tool_call_id)
    waiting = {call_id for call_id in made if call_id not in answered}
    if resuming:
        assert waiting, "a resume needs the calls it answers"
        assert all(made[call_id] == last_turn_with_calls for call_id in waiting), waiting
    else:
        assert waiting == set(), f"calls without a result: {waiting}"
    ids = [message.id for message in history]
    assert len(ids) == len(set(ids)), "a message is sent twice"


def user(message_id: str, content: str) -> UserMessage:
    return UserMessage(id=message_id, content=content)


def text(message_id: str, words: str) -> list:
    return [
        TextMessageStartEvent(message_id=message_id, role="assistant"),
        TextMessageContentEvent(message_id=message_id, delta=words),
        TextMessageEndEvent(message_id=message_id),
    ]


# pydantic-ai with a `requires_approval` tool: a tool-only response, then the interrupt.
APPROVAL_RUN = [
    RunStartedEvent(thread_id="t", run_id="r1"),
    ToolCallStartEvent(tool_call_id="call_1", tool_call_name="send_email", parent_message_id="resp-1"),
    ToolCallArgsEvent(tool_call_id="call_1", delta='{"to": "a@b.com"}'),
    ToolCallEndEvent(tool_call_id="call_1"),
    RunFinishedEvent(
        thread_id="t",
        run_id="r1",
        outcome={
            "type": "interrupt",
            "interrupts": [{"id": "int-call_1", "reason": "tool_call", "toolCallId": "call_1"}],
        },
    ),
]
RESUME_RUN = [
    RunStartedEvent(thread_id="t", run_id="r2"),
    ToolCallResultEvent(message_id="res-1", tool_call_id="call_1", content="Sent to a@b.com"),
    *text("answer-2", "I sent it."),
    RunFinishedEvent(thread_id="t", run_id="r2"),
]


def test_the_resume_sends_the_call_the_interrupted_run_made():
    (interrupted,) = fold_thread([APPROVAL_RUN])
    history = agui_history([(user("user-1", "email a@b.com"), interrupted)], resuming=True)
    assert history == [
        UserMessage(id="user-1", content="email a@b.com"),
        AssistantMessage(
            id="resp-1",
            tool_calls=[
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "send_email", "arguments": '{"to": "a@b.com"}'},
                }
            ],
        ),
    ]
    assert_pairs_as_pydantic_ai_requires(history, resuming=True)


def test_after_the_resume_the_call_goes_back_with_its_result_in_order():
    interrupted, resumed = fold_thread([APPROVAL_RUN, RESUME_RUN])
    history = agui_history([(user("user-1", "email a@b.com"), interrupted), (None, resumed)])
    history.append(user("user-2", "thanks"))
    assert [(m.role, m.id) for m in history] == [
        ("user", "user-1"),
        ("assistant", "resp-1"),
        ("tool", "res-1"),
        ("assistant", "answer-2"),
        ("user", "user-2"),
    ]
    assert history[1].tool_calls[0].id == history[2].tool_call_id == "call_1"
    assert history[2].content == "Sent to a@b.com" and history[3].content == "I sent it."
    assert_pairs_as_pydantic_ai_requires(history, resuming=False)
    # It is a valid RunAgentInput as it stands.
    RunAgentInput(
        thread_id="t", run_id="r3", messages=history, tools=[], context=[], state=None, forwarded_props=None
    )


def test_a_call_left_without_a_result_is_not_sent_before_a_new_message():
    # The person wrote again instead of deciding: the agent must not find a call awaiting a result.
    said = fold_thread([[*text("m1", "I will ask first."), *APPROVAL_RUN[1:4]]])
    history = agui_history([(user("user-1", "email a@b.com"), said[0])])
    history.append(user("user-2", "never mind"))
    assert [(m.role, m.id) for m in history] == [
        ("user", "user-1"),
        ("assistant", "m1"),
        ("user", "user-2"),
    ]
    assert history[1].tool_calls is None
    assert_pairs_as_pydantic_ai_requires(history, resuming=False)


def test_a_client_tools_answer_goes_right_after_the_call():
    # AG-UI's human-in-the-loop example: a frontend tool the client answers in the next run.
    steps = [
        ToolCallStartEvent(
            tool_call_id="steps-1", tool_call_name="generate_task_steps", parent_message_id="m1"
        ),
        ToolCallArgsEvent(tool_call_id="steps-1", delta='{"steps": []}'),
        ToolCallEndEvent(tool_call_id="steps-1"),
    ]
    (run,) = fold_thread([steps])
    answer = ToolMessage(id="answer-1", tool_call_id="steps-1", content='{"accepted": true}')
    history = agui_history([(user("user-1", "plan it"), run)], answers=[answer])
    assert [(m.role, m.id) for m in history] == [
        ("user", "user-1"),
        ("assistant", "m1"),
        ("tool", "answer-1"),
    ]
    assert_pairs_as_pydantic_ai_requires(history, resuming=False)


def test_a_client_tools_answer_stays_in_the_history_of_later_runs():
    # pydantic-ai and ADK never echo the answer: the product's own record of it opens that run.
    steps = [
        ToolCallStartEvent(
            tool_call_id="steps-1", tool_call_name="generate_task_steps", parent_message_id="m1"
        ),
        ToolCallEndEvent(tool_call_id="steps-1"),
    ]
    answer = ToolMessage(id="answer-1", tool_call_id="steps-1", content='{"accepted": true}')
    first, second = fold_thread([steps, text("m2", "Done.")])
    history = agui_history([(user("user-1", "plan it"), first), ([answer], second)])
    history.append(user("user-2", "thanks"))
    assert [(m.role, m.id) for m in history] == [
        ("user", "user-1"),
        ("assistant", "m1"),
        ("tool", "answer-1"),
        ("assistant", "m2"),
        ("user", "user-2"),
    ]
    assert_pairs_as_pydantic_ai_requires(history, resuming=False)


def test_an_answer_keeps_the_other_calls_of_its_turn():
    # Agent Framework asks for an approval and a confirm_changes client tool in one turn.
    both = [
        ToolCallStartEvent(tool_call_id="call_refund", tool_call_name="issue_refund", parent_message_id="m1"),
        ToolCallEndEvent(tool_call_id="call_refund"),
        ToolCallStartEvent(
            tool_call_id="confirm-1", tool_call_name="confirm_changes", parent_message_id="m1"
        ),
        ToolCallEndEvent(tool_call_id="confirm-1"),
    ]
    answer = ToolMessage(id="answer-1", tool_call_id="confirm-1", content='{"accepted": true}')
    history = agui_history([(user("user-1", "refund"), fold(both))], answers=[answer])
    assert [c.id for c in history[1].tool_calls] == ["call_refund", "confirm-1"]
    assert history[2] == answer


def test_reasoning_goes_back_with_its_signature_before_the_answer():
    signature = '{"signature": "sig-abc"}'
    events = [
        ReasoningStartEvent(message_id="r1"),
        ReasoningMessageStartEvent(message_id="r1", role="reasoning"),
        ReasoningMessageContentEvent(message_id="r1", delta="Check the date."),
        ReasoningMessageEndEvent(message_id="r1"),
        ReasoningEncryptedValueEvent(subtype="message", entity_id="r1", encrypted_value=signature),
        ReasoningEndEvent(message_id="r1"),
        *text("m1", "Tuesday."),
    ]
    history = agui_history([(user("user-1", "when?"), fold(events))])
    assert history[1:] == [
        ReasoningMessage(id="r1", content="Check the date.", encrypted_value=signature),
        AssistantMessage(id="m1", content="Tuesday."),
    ]


def test_encrypted_values_go_back_on_the_entity_they_belong_to():
    outcome = '{"pydantic_ai": {"outcome": "denied"}}'
    events = [
        *text("m1", "Sending."),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="send", parent_message_id="m1"),
        ReasoningEncryptedValueEvent(subtype="tool-call", entity_id="c1", encrypted_value="kind"),
        ToolCallEndEvent(tool_call_id="c1"),
        ToolCallResultEvent(message_id="res-1", tool_call_id="c1", content="The tool call was denied."),
        ReasoningEncryptedValueEvent(subtype="message", entity_id="res-1", encrypted_value=outcome),
    ]
    history = agui_history([(user("user-1", "send"), fold(events))])
    assert [(m.role, m.id) for m in history] == [("user", "user-1"), ("assistant", "m1"), ("tool", "res-1")]
    assert history[1].content == "Sending." and history[1].tool_calls[0].encrypted_value == "kind"
    assert history[2].encrypted_value == outcome
    assert_pairs_as_pydantic_ai_requires(history, resuming=False)


def test_sealed_reasoning_named_after_the_answer_goes_back_on_the_answer():
    # The demo Cipher sends the value first, naming the answer that follows.
    events = [
        ReasoningEncryptedValueEvent(subtype="message", entity_id="m1", encrypted_value="blob"),
        *text("m1", "I thought privately."),
    ]
    history = agui_history([(user("user-1", "sign?"), fold(events))])
    assert history[1:] == [AssistantMessage(id="m1", content="I thought privately.", encrypted_value="blob")]


def test_sealed_reasoning_of_its_own_goes_back_as_a_reasoning_message():
    events = [
        ReasoningStartEvent(message_id="r1"),
        ReasoningEncryptedValueEvent(subtype="message", entity_id="r1", encrypted_value="blob"),
        ReasoningEndEvent(message_id="r1"),
        *text("m1", "Yes."),
    ]
    history = agui_history([(user("user-1", "sign?"), fold(events))])
    assert history[1:] == [
        ReasoningMessage(id="r1", content="", encrypted_value="blob"),
        AssistantMessage(id="m1", content="Yes."),
    ]


def events_of(path: Path) -> list:
    return [parse_event(frame.data) for frame in SseParser().feed(path.read_bytes())]


def langgraph_history(transcripts) -> list:
    return agui_history([(user("user-1", "email a@b.com"), transcripts[0]), (None, transcripts[1])])


def test_langgraph_interrupt_and_resume_go_back_as_one_history(captures):
    runs = [events_of(captures / "langgraph-interrupt.sse"), events_of(captures / "langgraph-resume.sse")]
    history = langgraph_history(fold_thread(runs))
    assert [(m.role, m.id) for m in history] == [
        ("user", "user-1"),  # the product's own message, not the agent's echo of it
        ("assistant", "lc_run--01a22bbc-911e-7341-85d6-35f2a3311723"),
        ("assistant", "ai-propose"),
        ("tool", "6318a64e-ead7-4965-816c-5ec3a6d2deef"),
        ("assistant", "0b24c982-2592-4f74-8f27-1bcd3abb6f46"),
    ]
    (send,) = history[2].tool_calls
    assert (send.id, send.function.name) == ("tc-1", "send_email")
    assert history[3].tool_call_id == "tc-1"
    assert_pairs_as_pydantic_ai_requires(history, resuming=False)
    # Runs folded one by one (no thread) repeat the conversation in their snapshots: sent once.
    assert langgraph_history([fold(events) for events in runs]) == history


def test_a_call_naming_no_message_is_a_message_of_its_own():
    # Google ADK names no parent message: AG-UI's client then makes the call its own message.
    events = [
        *text("m1", "Looking."),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="search"),
        ToolCallEndEvent(tool_call_id="c1"),
        ToolCallStartEvent(tool_call_id="c2", tool_call_name="search"),
        ToolCallEndEvent(tool_call_id="c2"),
        ToolCallResultEvent(message_id="res-1", tool_call_id="c1", content="hits"),
        ToolCallResultEvent(message_id="res-2", tool_call_id="c2", content="more"),
    ]
    history = agui_history([(user("user-1", "find"), fold(events))])
    assert [(m.role, m.id) for m in history] == [
        ("user", "user-1"),
        ("assistant", "m1"),
        ("assistant", "c1"),
        ("assistant", "c2"),
        ("tool", "res-1"),
        ("tool", "res-2"),
    ]
    assert history[1].tool_calls is None and [c.id for c in history[2].tool_calls] == ["c1"]
    assert_pairs_as_pydantic_ai_requires(history, resuming=False)


def test_a_result_kept_without_its_message_still_goes_back():
    # A later snapshot that no longer lists the streamed tool message: the call keeps its result.
    events = [
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="search", parent_message_id="m1"),
        ToolCallEndEvent(tool_call_id="c1"),
        ToolCallResultEvent(message_id="res-1", tool_call_id="c1", content="hits"),
        MessagesSnapshotEvent(messages=[{"id": "m2", "role": "assistant", "content": "Found it."}]),
    ]
    history = agui_history([(user("user-1", "find"), fold(events))])
    assert [(m.role, m.id) for m in history] == [
        ("user", "user-1"),
        ("assistant", "m1"),
        ("tool", "result-c1"),
        ("assistant", "m2"),
    ]
    assert history[2].content == "hits"
    assert_pairs_as_pydantic_ai_requires(history, resuming=False)


def test_a_snapshot_at_the_end_keeps_the_order_the_run_streamed():
    # LangGraph: the result streams under the call's id and is listed under another; reasoning of
    # a later step is not in the snapshot.
    events = [
        *text("m1", "Looking."),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="search", parent_message_id="m1"),
        ToolCallEndEvent(tool_call_id="c1"),
        ToolCallResultEvent(message_id="c1", tool_call_id="c1", content="hits"),
        ReasoningMessageStartEvent(message_id="r2", role="reasoning"),
        ReasoningMessageContentEvent(message_id="r2", delta="Two hits."),
        ReasoningMessageEndEvent(message_id="r2"),
        *text("m2", "Found two."),
        MessagesSnapshotEvent(
            messages=[
                {"id": "u1", "role": "user", "content": "find"},
                {
                    "id": "m1",
                    "role": "assistant",
                    "content": "Looking.",
                    "toolCalls": [
                        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
                    ],
                },
                {"id": "t-9", "role": "tool", "toolCallId": "c1", "content": "hits"},
                {"id": "m2", "role": "assistant", "content": "Found two."},
            ]
        ),
    ]
    history = agui_history([(user("user-1", "find"), fold(events))])
    assert [(m.role, m.id) for m in history] == [
        ("user", "user-1"),
        ("assistant", "m1"),
        ("tool", "t-9"),
        ("reasoning", "r2"),
        ("assistant", "m2"),
    ]
    assert_pairs_as_pydantic_ai_requires(history, resuming=False)
