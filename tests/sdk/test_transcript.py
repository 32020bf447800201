"""The fold, on the real captures and on hand-made streams."""

from __future__ import annotations

from pathlib import Path

from ag_ui.core import (
    MessagesSnapshotEvent,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from agents_ui.sdk import SseParser, Transcript, TranscriptBuilder, fold, parse_event
from agents_ui.sdk.transcript import display_text


def fold_capture(path: Path) -> Transcript:
    parser = SseParser()
    events = [parse_event(frame.data) for frame in parser.feed(path.read_bytes())]
    assert not parser.has_partial_frame
    assert None not in events
    return fold(events)


def test_agentic_chat_streams_one_answer(captures):
    t = fold_capture(captures / "starter-agentic_chat.sse")
    assert [(m.role, m.text, m.complete) for m in t.messages] == [
        ("assistant", "counting down: 10  9  8  7  6  5  4  3  2  1  ✓", True)
    ]
    assert (t.thread_id, t.run_id) == ("t1", "r-agentic_chat")
    assert t.outcome.kind == "success"
    assert t.tool_calls == {} and t.state is None and t.errors == []
    assert t.observed.reasoning is False and t.observed.state_events is False


def test_generative_ui_applies_the_patches_in_order(captures):
    t = fold_capture(captures / "starter-agentic_generative_ui.sse")
    assert [s["status"] for s in t.state["steps"]] == ["completed"] * 10
    assert t.state["steps"][9]["description"] == "Step 10"
    assert t.observed.state_snapshots and t.observed.state_deltas
    assert t.messages == [] and t.errors == []


def test_generative_ui_state_after_some_deltas(captures):
    parser = SseParser()
    events = [
        parse_event(f.data)
        for f in parser.feed((captures / "starter-agentic_generative_ui.sse").read_bytes())
    ]
    t = fold(events[:5])  # RUN_STARTED, snapshot, three deltas
    assert [s["status"] for s in t.state["steps"]] == ["completed"] * 3 + ["pending"] * 7
    assert t.outcome is None  # still running


def test_human_in_the_loop_tool_call_arguments_parsed_once_complete(captures):
    t = fold_capture(captures / "starter-human_in_the_loop.sse")
    (call,) = t.tool_calls.values()
    assert call.name == "generate_task_steps" and call.complete
    assert len(call.args["steps"]) == 10
    assert call.args["steps"][0] == {"description": "Step 1", "status": "enabled"}
    assert call.args_text.startswith('{"steps":[')
    assert call.has_result is False


def test_predictive_state_updates(captures):
    t = fold_capture(captures / "starter-predictive_state_updates.sse")
    assert [c.name for c in t.tool_calls.values()] == ["write_document_local", "confirm_changes"]
    first, second = t.tool_calls.values()
    assert first.args == {
        "document": "Once upon a time, there was a dog named Rex. Rex was a very good dog. "
    }
    assert second.args == {}
    assert t.custom_events == [
        (
            "PredictState",
            [{"state_key": "document", "tool": "write_document_local", "tool_argument": "document"}],
        )
    ]


def test_langgraph_interrupt(captures):
    t = fold_capture(captures / "langgraph-interrupt.sse")
    assert [(m.id, m.role, m.text) for m in t.messages] == [
        ("u1", "user", "email a@b.com"),
        (
            "lc_run--01a22bbc-911e-7341-85d6-35f2a3311723",
            "assistant",
            "I will draft the email and ask you before sending it.",
        ),
        ("ai-propose", "assistant", ""),
    ]
    assert t.messages[2].tool_call_ids == ["tc-1"]
    assert t.tool_calls["tc-1"].name == "send_email"
    assert t.tool_calls["tc-1"].args == {"to": "a@b.com", "subject": "Hi", "body": "Hello"}
    assert t.state["status"] == "drafted"
    assert t.outcome.kind == "interrupt"
    (interrupt,) = t.open_interrupts
    assert interrupt.reason == "tool_call" and interrupt.tool_call_id == "tc-1"
    assert interrupt.message == "Send email to a@b.com?"
    assert "editedArgs" in interrupt.response_schema["properties"]
    assert t.observed.interrupts is True
    assert [s.name for s in t.steps] == ["chat", "propose", "approve"] and all(s.finished for s in t.steps)


def test_langgraph_resume_takes_the_tool_result_from_the_messages_snapshot(captures):
    t = fold_capture(captures / "langgraph-resume.sse")
    assert t.tool_calls["tc-1"].result == "sent {'to': 'a@b.com', 'subject': 'Hi', 'body': 'Hello (edited)'}"
    assert t.tool_calls["tc-1"].has_result
    assert [m.role for m in t.messages] == ["user", "assistant", "assistant", "tool", "assistant"]
    assert t.messages[3].tool_call_id == "tc-1"
    assert t.messages[-1].text.startswith("Done: sent")
    assert t.state["status"] == "sent"
    assert t.outcome.kind == "success" and t.open_interrupts == []


def test_invalid_patch_keeps_the_last_good_state():
    t = fold(
        [
            StateSnapshotEvent(snapshot={"a": 1, "items": []}),
            StateDeltaEvent(delta=[{"op": "replace", "path": "/a", "value": 2}]),
            StateDeltaEvent(
                delta=[
                    {"op": "add", "path": "/items/-", "value": "x"},
                    {"op": "remove", "path": "/does/not/exist"},
                ]
            ),
            StateDeltaEvent(delta=[{"op": "test", "path": "/a", "value": 99}]),
            StateDeltaEvent(delta=[{"op": "add", "path": "/b", "value": True}]),
        ]
    )
    assert t.state == {"a": 2, "items": [], "b": True}
    assert len(t.errors) == 2 and "JSON Patch" in t.errors[0]


def test_patch_does_not_mutate_the_callers_snapshot():
    snapshot = StateSnapshotEvent(snapshot={"a": 1})
    fold([snapshot, StateDeltaEvent(delta=[{"op": "replace", "path": "/a", "value": 2}])])
    assert snapshot.snapshot == {"a": 1}


def test_reasoning_plain_and_encrypted():
    t = fold(
        [
            ReasoningMessageStartEvent(message_id="r1", role="reasoning"),
            ReasoningMessageContentEvent(message_id="r1", delta="First, "),
            ReasoningMessageContentEvent(message_id="r1", delta="check."),
            ReasoningEncryptedValueEvent(subtype="message", entity_id="r2", encrypted_value="gAAAAB..."),
        ]
    )
    plain, secret = t.reasoning
    assert (plain.text, plain.encrypted) == ("First, check.", False)
    assert (secret.text, secret.encrypted, secret.encrypted_value) == ("", True, "gAAAAB...")
    assert t.observed.reasoning and t.observed.encrypted_reasoning


def test_subagent_tree_and_attribution():
    t = fold(
        [
            RunStartedEvent(thread_id="t", run_id="r"),
            SubagentStartedEvent(subagent_run_id="s1", name="researcher"),
            SubagentStartedEvent(subagent_run_id="s2", name="browser", parent_subagent_run_id="s1"),
            TextMessageStartEvent(message_id="m", role="assistant", subagent_run_id="s2"),
            TextMessageContentEvent(message_id="m", delta="found it", subagent_run_id="s2"),
            SubagentFinishedEvent(subagent_run_id="s2", result={"n": 3}),
            SubagentErrorEvent(subagent_run_id="s1", message="quota"),
            SubagentFinishedEvent(
                subagent_run_id="s3", outcome={"type": "suspended", "interruptIds": ["i1"]}
            ),
        ]
    )
    (root, orphan) = t.subagents
    assert (root.name, root.status, root.error) == ("researcher", "error", "quota")
    assert [(c.name, c.status, c.result) for c in root.children] == [("browser", "finished", {"n": 3})]
    assert (orphan.status, orphan.interrupt_ids) == ("suspended", ["i1"])
    assert t.messages[0].subagent_run_id == "s2" and t.messages[0].text == "found it"
    assert t.subagent("s2").parent_run_id == "s1"


def test_tool_result_event_and_bad_arguments():
    t = fold(
        [
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="calc"),
            ToolCallArgsEvent(tool_call_id="c1", delta='{"x": '),
            ToolCallEndEvent(tool_call_id="c1"),
            ToolCallResultEvent(message_id="tm", tool_call_id="c1", content="42"),
        ]
    )
    call = t.tool_calls["c1"]
    assert call.args is None and "not valid JSON" in call.args_error
    assert call.result == "42"
    assert t.messages[0].role == "tool" and t.messages[0].text == "42"


def test_chunks_and_live_folding():
    builder = TranscriptBuilder()
    builder.apply(TextMessageChunkEvent(message_id="m", role="assistant", delta="Hel"))
    assert builder.transcript.messages[0].text == "Hel"
    builder.apply(TextMessageChunkEvent(delta="lo"))
    assert builder.transcript.messages[0].text == "Hello"
    builder.apply(RunFinishedEvent(thread_id="t", run_id="r", outcome={"type": "cancelled"}))
    assert builder.transcript.outcome.kind == "cancelled"


def test_messages_snapshot_replaces_the_conversation():
    t = fold(
        [
            TextMessageStartEvent(message_id="old", role="assistant"),
            MessagesSnapshotEvent(messages=[{"id": "u", "role": "user", "content": "hi"}]),
        ]
    )
    assert [m.id for m in t.messages] == ["u"]


def test_text_read_from_an_offset_joins_only_what_follows_it():
    builder = TranscriptBuilder()
    builder.apply(TextMessageStartEvent(message_id="m", role="assistant"))
    deltas = [f"w{i} " for i in range(200)]
    for count, delta in enumerate(deltas, 1):
        builder.apply(TextMessageContentEvent(message_id="m", delta=delta))
        message = builder.transcript.messages[0]
        whole = "".join(deltas[:count])
        assert message.text_length == len(whole)
        for start in (0, 1, len(whole) // 2, len(whole) - len(delta), len(whole) - 1, len(whole)):
            assert message.text_since(start) == whole[start:]
    assert message.text == "".join(deltas) and message.text_since(5) == message.text[5:]


def test_the_revision_moves_for_everything_but_a_known_text_growing():
    builder = TranscriptBuilder()
    t = builder.transcript
    builder.apply(RunStartedEvent(thread_id="t", run_id="r"))
    builder.apply(TextMessageStartEvent(message_id="m", role="assistant"))
    builder.apply(ReasoningMessageStartEvent(message_id="r1", role="reasoning"))
    before = t.revision
    builder.apply(TextMessageContentEvent(message_id="m", delta="Hello"))
    builder.apply(ReasoningMessageContentEvent(message_id="r1", delta="Thinking"))
    assert t.revision == before  # only texts the view already knows grew
    builder.apply(TextMessageContentEvent(message_id="unknown", delta="x"))  # a new message, an error
    assert t.revision == before + 1
    builder.apply(StateSnapshotEvent(snapshot={"a": 1}))
    assert t.revision == before + 2
    builder.apply(MessagesSnapshotEvent(messages=[{"id": "s1", "role": "assistant", "content": "Hi"}]))
    builder.apply(TextMessageContentEvent(message_id="s1", delta=" there"))  # known from the snapshot
    assert t.revision == before + 3 and t.messages[0].text == "Hi there"


# --- Encrypted values attach to their entity (pydantic-ai, Google ADK) -----------------------------


def test_visible_reasoning_with_a_provider_signature_stays_visible():
    # pydantic-ai: the thinking streams, then REASONING_ENCRYPTED_VALUE carries its signature.
    signature = '{"signature": "sig-abc", "provider_name": "anthropic"}'
    t = fold(
        [
            ReasoningStartEvent(message_id="r1"),
            ReasoningMessageStartEvent(message_id="r1", role="reasoning"),
            ReasoningMessageContentEvent(message_id="r1", delta="Compare the two offers."),
            ReasoningMessageEndEvent(message_id="r1"),
            ReasoningEncryptedValueEvent(subtype="message", entity_id="r1", encrypted_value=signature),
            ReasoningEndEvent(message_id="r1"),
        ]
    )
    (entry,) = t.reasoning
    assert (entry.text, entry.encrypted, entry.encrypted_value) == (
        "Compare the two offers.",
        False,
        signature,
    )
    assert t.observed.reasoning is True and t.observed.encrypted_reasoning is False


def test_sealed_reasoning_is_the_one_with_no_text():
    # pydantic-ai, thinking with only a signature: REASONING_START, the value, REASONING_END.
    t = fold(
        [
            ReasoningStartEvent(message_id="r1"),
            ReasoningEncryptedValueEvent(subtype="message", entity_id="r1", encrypted_value="gAAAA"),
            ReasoningEndEvent(message_id="r1"),
        ]
    )
    (entry,) = t.reasoning
    assert (entry.text, entry.encrypted, entry.complete) == ("", True, True)
    assert t.observed.reasoning and t.observed.encrypted_reasoning


def test_an_encrypted_value_on_a_tool_result_is_not_reasoning():
    # pydantic-ai on a denied approval: the outcome rides on the tool message it belongs to.
    outcome = '{"pydantic_ai": {"outcome": "denied"}}'
    t = fold(
        [
            ToolCallResultEvent(message_id="res-1", tool_call_id="c1", content="The tool call was denied."),
            ReasoningEncryptedValueEvent(subtype="message", entity_id="res-1", encrypted_value=outcome),
        ]
    )
    assert t.reasoning == []
    assert t.observed.reasoning is False and t.observed.encrypted_reasoning is False
    assert t.message("res-1").encrypted_value == outcome


def test_an_encrypted_value_on_a_tool_call_is_kept_there_and_is_not_reasoning():
    # pydantic-ai carries a tool's kind, ADK a Gemini signature, on the call itself.
    t = fold(
        [
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="search", parent_message_id="m1"),
            ReasoningEncryptedValueEvent(
                subtype="tool-call", entity_id="c1", encrypted_value='{"pydantic_ai": {"tool_kind": "x"}}'
            ),
            ReasoningEncryptedValueEvent(subtype="tool-call", entity_id="c2", encrypted_value="c2-sig"),
            ToolCallStartEvent(tool_call_id="c2", tool_call_name="fetch", parent_message_id="m1"),
        ]
    )
    assert t.tool_calls["c1"].encrypted_value == '{"pydantic_ai": {"tool_kind": "x"}}'
    # A value for a call not begun yet waits for it, and invents no nameless card.
    assert t.tool_calls["c2"].encrypted_value == "c2-sig" and t.tool_calls["c2"].name == "fetch"
    assert t.reasoning == [] and t.observed.reasoning is False


def test_an_encrypted_value_on_an_answer_already_said_goes_on_that_answer():
    t = fold(
        [
            TextMessageStartEvent(message_id="m1", role="assistant"),
            TextMessageContentEvent(message_id="m1", delta="Yes."),
            ReasoningEncryptedValueEvent(subtype="message", entity_id="m1", encrypted_value="blob"),
        ]
    )
    assert t.reasoning == [] and t.observed.reasoning is False
    assert t.messages[0].encrypted_value == "blob"


# --- MESSAGES_SNAPSHOT fills in what streaming left out (LangGraph) -------------------------------


def snapshot_with_call(call_id: str, name: str, arguments: str) -> MessagesSnapshotEvent:
    return MessagesSnapshotEvent(
        messages=[
            {
                "id": "ai-1",
                "role": "assistant",
                "content": "",
                "toolCalls": [
                    {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
                ],
            }
        ]
    )


def test_a_snapshot_gives_the_arguments_of_a_call_streamed_without_any():
    # LangGraph's `task` tool: START and END, no TOOL_CALL_ARGS; the arguments only in the snapshot.
    t = fold(
        [
            ToolCallStartEvent(tool_call_id="task-1", tool_call_name="task", parent_message_id="ai-1"),
            ToolCallEndEvent(tool_call_id="task-1"),
            snapshot_with_call("task-1", "task", '{"description": "book the hotel"}'),
        ]
    )
    task = t.tool_calls["task-1"]
    assert task.args == {"description": "book the hotel"} and task.args_error is None
    assert task.args_text == '{"description": "book the hotel"}'


def test_a_snapshot_keeps_the_arguments_that_streamed():
    t = fold(
        [
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="search"),
            ToolCallArgsEvent(tool_call_id="c1", delta='{"q": "streamed"}'),
            ToolCallEndEvent(tool_call_id="c1"),
            snapshot_with_call("c1", "search", '{"q": "summarised"}'),
        ]
    )
    assert t.tool_calls["c1"].args == {"q": "streamed"}


def test_a_snapshot_completes_a_call_still_streaming():
    t = fold(
        [
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="search"),
            ToolCallArgsEvent(tool_call_id="c1", delta='{"q": "hal'),
            snapshot_with_call("c1", "search", '{"q": "half"}'),
        ]
    )
    assert t.tool_calls["c1"].complete and t.tool_calls["c1"].args == {"q": "half"}


# --- Tool results are shown as text -----------------------------------------------------------------


def test_a_string_result_is_shown_without_json_quotes_and_kept_as_sent():
    t = fold(
        [
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="send"),
            ToolCallEndEvent(tool_call_id="c1"),
            ToolCallResultEvent(message_id="r1", tool_call_id="c1", content='"Sent to a@b.com"'),
            ToolCallStartEvent(tool_call_id="c2", tool_call_name="send"),
            ToolCallResultEvent(message_id="r2", tool_call_id="c2", content="Sent to c@d.com"),
        ]
    )
    assert t.tool_calls["c1"].result == '"Sent to a@b.com"'  # raw, as the agent sent it
    assert t.tool_calls["c1"].result_display == "Sent to a@b.com"
    assert t.tool_calls["c2"].result_display == "Sent to c@d.com"


def test_display_text_pretty_prints_documents_and_leaves_text_alone():
    assert display_text('{"b": 1, "a": [true]}') == '{\n  "a": [\n    true\n  ],\n  "b": 1\n}'
    assert display_text("42") == "42"
    assert display_text("sent {'to': 'a@b.com'}") == "sent {'to': 'a@b.com'}"  # not JSON: as it is
    assert display_text('"with \\"quotes\\""') == 'with "quotes"'
    assert display_text({"status": "ok"}) == '{\n  "status": "ok"\n}'
    assert display_text("") == ""


def test_every_protocol_lands_in_the_same_run_records():
    """AG-UI interrupts are approval requests, a tool result's images and audio are artifacts."""
    from ag_ui.core import AudioPart, DataSource, ImagePart, TextPart, UrlSource

    events = [
        RunStartedEvent(thread_id="t", run_id="r"),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="draw"),
        ToolCallEndEvent(tool_call_id="c1"),
        ToolCallResultEvent(
            message_id="m1",
            tool_call_id="c1",
            content=[
                TextPart(text="Two pictures."),
                ImagePart(source=UrlSource(value="https://img.example/sun.png", mime_type="image/png")),
                AudioPart(
                    source=DataSource(value="UklGRg==", mime_type="audio/wav"), metadata={"filename": "a.wav"}
                ),
            ],
        ),
        RunFinishedEvent(
            thread_id="t",
            run_id="r",
            outcome={
                "type": "interrupt",
                "interrupts": [
                    {"id": "i1", "reason": "ok", "toolCallId": "c1", "responseSchema": {"type": "object"}}
                ],
            },
        ),
    ]
    t = fold(events)
    (request,) = t.open_interrupts
    assert (request.kind, request.id, request.tool_call_id) == ("interrupt", "i1", "c1")
    assert request.response_schema == {"type": "object"} and t.approvals == {"i1": request}
    assert t.pending_approvals == [] and t.in_run_approvals == []  # answered by resuming, not in the run
    image, clip = t.artifacts.values()
    assert (image.id, image.media_types) == ("c1-media-1", ["image/png"])
    assert image.parts[0].url == "https://img.example/sun.png"
    assert (clip.name, clip.media_type, clip.parts[0].url, clip.remote) == ("a.wav", "audio/wav", "", False)
    assert t.observed.media and t.task is None
