"""The fold and the history on what real framework adapters sent (tests/fixtures/interop).

Each capture is a thread of runs against a real AG-UI server built with the framework's own adapter
(pydantic-ai, LangGraph, Google ADK, Microsoft Agent Framework), with the request each run was
sent: the history AG-UI's own client keeps. Call ids are the scripted models' own, the same in
every run of a thread.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ag_ui.core import AssistantMessage, RunAgentInput, ToolMessage, UserMessage

from agents_ui.sdk import SseParser, parse_event
from agents_ui.sdk.agui.thread_messages import agui_history
from agents_ui.sdk.folding import fold, fold_thread
from agents_ui.sdk.transcript import Transcript
from tests.sdk.test_history import assert_pairs_as_pydantic_ai_requires

INTEROP = Path(__file__).resolve().parents[1] / "fixtures" / "interop"
FRAMEWORKS = ["pydantic-ai", "langgraph", "adk", "agent-framework"]


def runs_of(thread: str) -> list[list]:
    files = sorted(INTEROP.glob(f"{thread}-[0-9].sse"))
    assert files, f"no capture of {thread} in {INTEROP}"
    return [[parse_event(frame.data) for frame in SseParser().feed(path.read_bytes())] for path in files]


def request_of(thread: str, step: int) -> RunAgentInput:
    return RunAgentInput.model_validate_json((INTEROP / f"{thread}-{step}.request.json").read_text())


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_after_an_approval_the_result_is_on_the_card_the_interrupted_run_opened(framework):
    interrupted, resumed, _ = fold_thread(runs_of(f"{framework}-refund-approve"))
    assert interrupted.outcome.kind == "interrupt"
    refund = interrupted.tool_calls["call_refund"]
    assert refund.name == "issue_refund" and refund.has_result
    assert "Refunded 42.5 EUR on order A-1001." in refund.result_display
    # No second card in the resume run (LangGraph streams the call anew, the others only its result).
    assert "call_refund" not in resumed.tool_calls
    assert resumed.answered_earlier == {"call_refund": refund}
    assert resumed.errors == []


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_call_id_used_again_in_the_next_run_is_a_card_of_that_run(framework):
    first, second = fold_thread(runs_of(f"{framework}-weather"))
    for run in (first, second):
        weather = run.tool_calls["call_weather"]
        assert weather.has_result and weather.args == {"city": "Paris"}
    assert first.tool_calls["call_weather"] is not second.tool_calls["call_weather"]
    assert second.answered_earlier == {}


def test_a_denied_approval_invents_no_reasoning():
    # pydantic-ai sends the denial's outcome as an encrypted value on the tool message.
    interrupted, rejected = fold_thread(runs_of("pydantic-ai-refund-reject"))
    assert rejected.reasoning == [] and rejected.observed.reasoning is False
    (result,) = [m for m in rejected.messages if m.role == "tool"]
    assert "denied" in result.encrypted_value
    assert interrupted.tool_calls["call_refund"].has_result


@pytest.mark.parametrize("framework", ["pydantic-ai", "langgraph", "agent-framework"])
def test_reasoning_with_a_signature_stays_readable(framework):
    thought = fold(runs_of(f"{framework}-think")[0])
    (entry,) = thought.reasoning
    assert entry.text.startswith("The user asked me to think.")
    assert entry.encrypted is False and entry.encrypted_value
    assert thought.observed.reasoning is True and thought.observed.encrypted_reasoning is False


def test_langgraphs_task_call_gets_its_arguments_from_the_snapshot():
    # The sub-agent's `task` call streams START and END only.
    (research, _) = fold_thread(runs_of("langgraph-research"))
    task = research.tool_calls["call_task"]
    assert task.args["description"] == "Find the launch date."
    assert task.result_display == "The launch is on Friday."


def history_before(thread: str, step: int) -> tuple[list, RunAgentInput]:
    """The history the product builds for run ``step`` of a thread, and what that run was sent."""
    transcripts: list[Transcript] = fold_thread(runs_of(thread)[: step - 1])
    # What the client sent to open each run: the person's message, or a client tool's answer,
    # which no run said before it.
    sent_before: set[str] = set()
    openings = []
    for index in range(1, step + 1):
        said = {m.id for t in transcripts[: index - 1] for m in t.messages if m.role != "user"}
        sent = request_of(thread, index).messages
        openings.append(
            [m for m in sent if m.id not in sent_before | said and isinstance(m, UserMessage | ToolMessage)]
        )
        sent_before.update(m.id for m in sent)
    request = request_of(thread, step)
    next_user = [m for m in openings[-1] if isinstance(m, UserMessage)]
    answers = [m for m in openings[-1] if isinstance(m, ToolMessage)]
    history = agui_history(
        zip(openings, transcripts, strict=False), resuming=bool(request.resume), answers=answers
    )
    return history + next_user, request


@pytest.mark.parametrize(
    ("thread", "step"),
    [
        ("pydantic-ai-refund-approve", 2),
        ("pydantic-ai-refund-approve", 3),
        ("pydantic-ai-refund-reject", 2),
        ("pydantic-ai-think", 2),
        ("pydantic-ai-steps", 2),
        ("pydantic-ai-weather", 2),
        ("langgraph-refund-approve", 2),
        ("langgraph-refund-approve", 3),
        ("langgraph-weather", 2),
        ("langgraph-research", 2),
        ("adk-refund-approve", 2),
        ("adk-weather", 2),
        ("agent-framework-refund-approve", 2),
        ("agent-framework-steps", 2),
        ("agent-framework-think", 2),
    ],
)
def test_the_history_is_the_one_ag_ui_s_own_client_sends(thread, step):
    history, request = history_before(thread, step)
    dump = [m.model_dump(by_alias=True, exclude_none=True) for m in history]
    assert dump == [m.model_dump(by_alias=True, exclude_none=True) for m in request.messages]
    assert_pairs_as_pydantic_ai_requires(history, resuming=bool(request.resume))


def test_a_call_no_one_answered_is_left_out_before_a_new_message():
    # ADK's confirmation call never gets a result; AG-UI's client sends it on, dangling.
    history, request = history_before("adk-refund-approve", 3)
    dangling = [
        m
        for m in request.messages
        if isinstance(m, AssistantMessage)
        and m.tool_calls
        and m.tool_calls[0].function.name == "adk_request_confirmation"
    ]
    assert len(dangling) == 1
    assert [m.id for m in history] == [m.id for m in request.messages if m is not dangling[0]]
    assert_pairs_as_pydantic_ai_requires(history, resuming=False)


def test_langgraph_reasoning_is_sent_back_where_its_snapshot_dropped_it():
    history, request = history_before("langgraph-think", 2)
    assert [m.role for m in request.messages] == ["user", "assistant", "user"]
    assert [m.role for m in history] == ["user", "reasoning", "assistant", "user"]
    assert history[1].encrypted_value and history[1].content.startswith("The user asked me to think.")
