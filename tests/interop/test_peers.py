"""Real third-party AG-UI servers through the product's SDK: what a user of each one must see.

Every peer is its framework's own PyPI adapter over a scripted model (tests/interop/<peer>/server.py),
started on loopback. Each run is read with ``AgUiAgent`` and folded with ``TranscriptBuilder``; the
thread's history goes back as AG-UI's own client keeps it. A test that meets a defect the product
still has is marked xfail(strict) for the peers that show it, naming the defect: it passes, and so
fails, once that defect is fixed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from agents_ui.sdk import ToolCallRecord, Transcript
from agents_ui.sdk.agui.client_tools import CLIENT_TOOLS
from tests.interop import common
from tests.interop.capture import EDIT, REJECT, REJECT_PLAIN, STEPS_ANSWER, STEPS_TOOL
from tests.interop.driver import AgUiThread
from tests.interop.history import tool_answer

REFUND = common.refund_text(common.REFUND_ARGS["order_id"], common.REFUND_ARGS["amount"])
EDITED = common.refund_text(EDIT["editedArgs"]["order_id"], EDIT["editedArgs"]["amount"])


@dataclass(frozen=True)
class Profile:
    """What differs between the peers, for the tests that every peer must pass."""

    peer: str
    endpoint: str = "default"
    # The result the refund tool gives on a rejection, and after an edit.
    rejected: str = "Not this order."
    edited: str = EDITED
    # The tool call the approval interrupt names, its reason, and whether it says what it accepts.
    approval_tool: str = "issue_refund"
    interrupt_reason: str = "tool_call"
    response_schema: bool = True
    # ADK wraps a tool's return value as {"result": ...}; Strands sends it as JSON (a string quoted).
    wrapped_results: bool = False
    json_results: bool = False
    # Whether the provider's reasoning signature reaches the client (ADK keeps it in its session).
    signed_reasoning: bool = True
    # How a person's rejection is sent (Agent Framework's schema allows no `reason`).
    reject: tuple[tuple[str, object], ...] = tuple(REJECT.items())
    # What the user reads when the model fails (Agent Framework hides the exception's text).
    failure: str = common.FAILURE
    # Peers that show a defect: the defect's name -> why the test fails today.
    defects: tuple[tuple[str, str], ...] = ()

    def result(self, content: str) -> str:
        """A tool result as the tool returned it."""
        if self.wrapped_results:
            value = json.loads(content)
            return value["result"] if "result" in value else json.dumps(value)
        if self.json_results:
            value = json.loads(content)
            return value if isinstance(value, str) else json.dumps(value)
        return content

    @property
    def id(self) -> str:
        return self.peer if self.endpoint == "default" else f"{self.peer}-{self.endpoint}"


PROFILES = [
    Profile("pydantic-ai"),
    Profile("pydantic-ai", "store"),
    Profile(
        "langgraph",
        rejected="Refund declined: Not this order.",
    ),
    Profile(
        "adk",
        rejected=json.dumps({"error": "This tool call is rejected."}),
        edited=REFUND,  # require_confirmation=True runs the call as the model made it
        approval_tool="adk_request_confirmation",
        interrupt_reason="confirmation",
        response_schema=False,
        wrapped_results=True,
        signed_reasoning=False,
    ),
    Profile(
        "agent-framework",
        rejected="Error: Tool call invocation was rejected by user.",
        reject=tuple(REJECT_PLAIN.items()),
        failure="An internal error has occurred while streaming events.",
    ),
    Profile(
        "strands",
        rejected="User denied approval for 'issue_refund'.",
        edited=REFUND,  # interrupt_on_call takes yes or no: the call runs as the model made it
        response_schema=False,
        json_results=True,
        signed_reasoning=False,
    ),
]


AGENT_FRAMEWORK = next(p for p in PROFILES if p.peer == "agent-framework")


@pytest.fixture(params=PROFILES, ids=[p.id for p in PROFILES])
def peer(request, peer_server) -> tuple[Profile, str]:
    profile: Profile = request.param
    return profile, peer_server(profile.peer).url(profile.endpoint)


def defect(request, profile: Profile, name: str) -> None:
    """Expect this test to fail for this peer while the product has the named defect."""
    for known, reason in profile.defects:
        if known == name:
            request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


def call_named(transcript: Transcript, name: str) -> ToolCallRecord:
    [call] = [c for c in transcript.tool_calls.values() if c.name == name]
    return call


async def test_text_streams_and_a_second_message_sees_the_first(peer):
    _, url = peer
    t = AgUiThread(url)
    first = await t.send("hello")
    assert first.text == "Hello! How can I help?"
    assert first.transcript.outcome.kind == "success"
    second = await t.send("hello again")
    assert second.text == "Hello again! I see 1 earlier answer(s)."


async def test_reasoning_streams_and_its_signature_is_kept_to_send_back(peer):
    profile, url = peer
    t = AgUiThread(url)
    run = await t.send("think about it")
    [entry] = run.transcript.reasoning
    assert entry.text == "The user asked me to think. A short answer will do."
    assert bool(entry.encrypted_value) is profile.signed_reasoning  # the provider's signature, opaque
    assert run.text == "I thought about it: the answer is 42."
    # Sent back on the reasoning message (where the history keeps one), the next run is accepted.
    kept = [m for m in t.messages if m["role"] == "reasoning"]
    assert all(m.get("encryptedValue") == entry.encrypted_value for m in kept)
    assert (await t.send("hello")).text.startswith("Hello again!")


async def test_signed_reasoning_stays_visible(peer, request):
    profile, url = peer
    defect(request, profile, "signed-reasoning")
    run = await AgUiThread(url).send("think about it")
    [entry] = run.transcript.reasoning
    assert entry.text and not entry.encrypted  # the product hides an entry marked encrypted


async def test_tool_call_shows_its_arguments_and_result(peer):
    _, url = peer
    run = await AgUiThread(url).send("what is the weather in Paris?")
    call = call_named(run.transcript, "get_weather")
    assert (call.args, call.complete) == ({"city": "Paris"}, True)
    assert json.loads(call.result) == common.WEATHER
    assert json.loads(run.text.removeprefix("Done: ")) == common.WEATHER


async def test_a_later_run_may_reuse_a_tool_call_id(peer):
    _, url = peer
    t = AgUiThread(url)
    first = await t.send("what is the weather in Paris?")
    second = await t.send("and the weather now?")
    # AG-UI does not promise ids unique across runs; these peers send the same id again.
    assert set(second.transcript.tool_calls) == set(first.transcript.tool_calls)
    assert call_named(second.transcript, "get_weather").has_result


async def test_state_reaches_the_user(peer):
    _, url = peer
    run = await AgUiThread(url).send("update the state")
    expected = json.loads(json.dumps(common.PLAN_STATE))
    expected["plan"]["steps"][1]["done"] = True
    assert run.transcript.state["plan"] == expected["plan"]


async def test_every_state_event_applies(peer, request):
    profile, url = peer
    defect(request, profile, "state-delta-first")
    run = await AgUiThread(url).send("update the state")
    assert run.transcript.errors == []


async def test_a_run_error_reaches_the_user(peer):
    profile, url = peer
    run = await AgUiThread(url).send("please fail")
    assert (run.transcript.outcome.kind, run.transcript.outcome.message) == ("error", profile.failure)


async def test_a_client_tool_is_called_and_its_answer_goes_back(peer):
    _, url = peer
    t = AgUiThread(url)
    run = await t.send("plan the steps", tools=[STEPS_TOOL])
    call = call_named(run.transcript, common.CLIENT_TOOL)
    assert call.args == {"steps": [{"description": "Draft", "status": "enabled"}]}
    assert not call.has_result and run.transcript.outcome.kind == "success"
    answer = tool_answer("answer-1", t.pending_call(), STEPS_ANSWER)
    done = await t.send(messages=[*t.messages, answer], tools=[STEPS_TOOL])
    assert done.text == "Done: " + json.dumps(STEPS_ANSWER)


async def test_the_products_ask_user_tool_is_called_through_the_frameworks_own_mechanism(peer):
    """Offered Agents UI's generic tools, the agent asks through ``ask_user``; the person's answer
    goes back as a tool message and the agent's follow-up uses it."""
    _, url = peer
    t = AgUiThread(url)
    run = await t.send("plan the steps", tools=list(CLIENT_TOOLS))
    call = call_named(run.transcript, common.ASK_TOOL)
    assert (call.id, call.args) == (common.ASK_CALL_ID, common.ASK_ARGS)
    assert not call.has_result and run.transcript.outcome.kind == "success"
    answer = tool_answer("answer-1", t.pending_call(), {"answer": "Review"})
    done = await t.send(messages=[*t.messages, answer], tools=list(CLIENT_TOOLS))
    assert done.text == 'Done: {"answer": "Review"}'
    assert (await t.send("hello", tools=list(CLIENT_TOOLS))).text.startswith("Hello again! I see")


async def test_without_the_client_tool_the_agent_says_so(peer):
    _, url = peer
    run = await AgUiThread(url).send("plan the steps")
    assert run.transcript.tool_calls == {}
    assert common.CLIENT_TOOL in run.text


async def _refund_interrupt(t: AgUiThread, profile: Profile) -> ToolCallRecord:
    """Ask for a refund; the run ends asking for approval. Returns the refund's tool call."""
    run = await t.send("refund my order A-1001")
    [interrupt] = run.transcript.open_interrupts
    call = call_named(run.transcript, "issue_refund")
    assert interrupt.reason == profile.interrupt_reason
    assert run.transcript.tool_calls[interrupt.tool_call_id].name == profile.approval_tool
    if profile.response_schema:
        assert set(interrupt.response_schema["properties"]) >= {"approved", "editedArgs"}
    assert (call.args, call.has_result) == (common.REFUND_ARGS, False)
    return call


async def test_approve_resumes_and_the_result_lands_on_the_original_call(peer):
    profile, url = peer
    t = AgUiThread(url)
    original = await _refund_interrupt(t, profile)
    resumed = await t.decide({"approved": True})
    assert resumed.text == f"Done: {REFUND}"
    # The resume run carries the result of the call the interrupted run opened.
    assert profile.result(resumed.transcript.tool_calls[original.id].result) == REFUND
    call = t.call(original.id)
    assert (call.name, profile.result(call.result)) == ("issue_refund", REFUND)
    # A second message after the resume: the history with toolCalls and the tool message is accepted.
    assert (await t.send("hello")).text.startswith("Hello again! I see")


async def test_the_thread_keeps_the_original_arguments_after_the_resume(peer, request):
    profile, url = peer
    defect(request, profile, "resume-reopens-call")
    t = AgUiThread(url)
    original = await _refund_interrupt(t, profile)
    await t.decide({"approved": True})
    call = t.call(original.id)
    assert (call.args, call.args_error) == (common.REFUND_ARGS, None)
    assert json.loads(call.args_text) == common.REFUND_ARGS


async def test_edit_runs_the_tool_with_the_edited_arguments(peer):
    profile, url = peer
    t = AgUiThread(url)
    original = await _refund_interrupt(t, profile)
    resumed = await t.decide(EDIT)
    assert resumed.text == f"Done: {profile.edited}"
    assert profile.result(t.call(original.id).result) == profile.edited


async def test_reject_answers_the_original_call(peer):
    profile, url = peer
    t = AgUiThread(url)
    original = await _refund_interrupt(t, profile)
    resumed = await t.decide(dict(profile.reject))
    assert profile.rejected in resumed.text
    assert profile.result(t.call(original.id).result) == profile.rejected


async def test_reject_invents_no_reasoning(peer, request):
    profile, url = peer
    defect(request, profile, "sealed-tool-result")
    t = AgUiThread(url)
    await _refund_interrupt(t, profile)
    resumed = await t.decide(dict(profile.reject))
    assert resumed.transcript.reasoning == []
    assert not resumed.transcript.observed.reasoning


# --- what only some frameworks do -------------------------------------------------------------------


@pytest.fixture(params=["default", "store"], ids=["client-history", "server-store"])
def pydantic_ai(request, peer_server) -> str:
    return peer_server("pydantic-ai").url(request.param)


async def test_pydantic_ai_marks_a_rejection_on_the_tool_message(pydantic_ai):
    t = AgUiThread(pydantic_ai)
    await _refund_interrupt(t, PROFILES[0])
    resumed = await t.decide(REJECT)
    # The resume run begins with the result of the call the interrupted run opened.
    assert resumed.types[:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"]
    # The denial's marker names the tool message; it goes back on that message.
    [tool_message] = [m for m in t.messages if m["role"] == "tool"]
    assert json.loads(tool_message["encryptedValue"]) == {"pydantic_ai": {"outcome": "denied"}}
    assert (await t.send("hello")).text.startswith("Hello again!")


async def test_pydantic_ai_reports_the_client_tool_as_pending(pydantic_ai):
    run = await AgUiThread(pydantic_ai).send("plan the steps", tools=[STEPS_TOOL])
    assert run.transcript.outcome.pending_tool_call_ids == ["call_steps"]


async def test_pydantic_ai_store_mode_resumes_with_no_messages(peer_server):
    t = AgUiThread(peer_server("pydantic-ai").url("store"))
    await _refund_interrupt(t, PROFILES[1])
    resumed = await t.decide({"approved": True}, messages=[])
    assert resumed.text == f"Done: {REFUND}"


async def test_langgraph_sub_agent_is_attributed(peer_server):
    t = AgUiThread(peer_server("langgraph").url())
    run = await t.send("research the launch date")
    [node] = run.transcript.subagents
    task = call_named(run.transcript, "task")
    assert (node.name, node.description, node.parent_tool_call_id, node.status) == (
        "researcher",
        "Find the launch date.",
        task.id,
        "finished",
    )
    said = [m for m in run.transcript.messages if m.subagent_run_id == node.run_id]
    assert [m.text for m in said] == ["The launch is on Friday."]
    assert task.result == "The launch is on Friday."
    assert run.text.endswith("Done: The launch is on Friday.")


async def test_langgraph_task_arguments_come_from_the_messages_snapshot(peer_server):
    run = await AgUiThread(peer_server("langgraph").url()).send("research the launch date")
    assert "TOOL_CALL_ARGS" not in [
        f["type"] for f in run.frames if f.get("toolCallId") == "call_task"
    ]  # what the peer sends
    assert call_named(run.transcript, "task").args == {
        "description": "Find the launch date.",
        "subagent_type": "researcher",
    }


async def test_adk_confirmation_wraps_the_original_call(peer_server):
    run = await AgUiThread(peer_server("adk").url()).send("refund my order A-1001")
    [interrupt] = run.transcript.open_interrupts
    confirmation = run.transcript.tool_calls[interrupt.tool_call_id]
    original = call_named(run.transcript, "issue_refund")
    assert confirmation.args["originalFunctionCall"] == {
        "id": original.id,
        "name": "issue_refund",
        "args": common.REFUND_ARGS,
    }
    assert interrupt.response_schema is None
    assert interrupt.metadata["adk"]["originalFunctionCall"]["id"] == original.id


async def test_adk_state_delta_comes_before_any_snapshot(peer_server):
    run = await AgUiThread(peer_server("adk").url()).send("update the state")
    types = run.types
    assert types.index("STATE_DELTA") < types.index("STATE_SNAPSHOT")
    [delta] = [f for f in run.frames if f["type"] == "STATE_DELTA"]
    assert delta["delta"][0]["op"] == "add" and delta["delta"][0]["path"] == "/plan"


async def test_adk_serves_its_capabilities_and_an_empty_object_when_it_has_none(peer_server):
    from agents_ui.sdk import AgUiAgent

    handle = peer_server("adk")
    declared = await AgUiAgent(handle.url()).discover()
    assert declared.status == "declared"
    assert declared.declaration.tools.client_provided is True
    assert declared.declaration.human_in_the_loop.approvals is True
    bare = await AgUiAgent(handle.url("bare")).discover()
    # `{}` validates as a declaration of nothing: every field absent.
    assert (bare.status, bare.raw) == ("declared", {})
    assert bare.declaration.model_dump(exclude_none=True) == {}


async def test_agent_framework_asks_through_an_interrupt_and_its_own_confirm_changes_tool(peer_server):
    run = await AgUiThread(peer_server("agent-framework").url()).send("refund my order A-1001")
    [interrupt] = run.transcript.open_interrupts
    assert interrupt.id.startswith("af-call-") and interrupt.tool_call_id == "call_refund"
    assert set(interrupt.response_schema["properties"]) == {
        "approved",
        "accepted",
        "order_id",
        "amount",
        "editedArgs",
    }
    assert interrupt.response_schema["additionalProperties"] is False
    confirm = call_named(run.transcript, "confirm_changes")
    assert confirm.args["function_call_id"] == "call_refund" and not confirm.has_result
    [(name, value)] = run.transcript.custom_events
    assert name == "function_approval_request" and value["function_call"]["call_id"] == "call_refund"


async def test_agent_framework_refuses_a_rejection_with_a_reason(peer_server):
    t = AgUiThread(peer_server("agent-framework").url())
    await _refund_interrupt(t, AGENT_FRAMEWORK)
    resumed = await t.decide(REJECT)
    assert resumed.transcript.outcome.kind == "error"
    assert resumed.transcript.outcome.code == "APPROVAL_RESUME_INVALID"


async def test_agent_framework_rejection_result_arrives_only_in_the_messages_snapshot(peer_server):
    t = AgUiThread(peer_server("agent-framework").url())
    original = await _refund_interrupt(t, AGENT_FRAMEWORK)
    resumed = await t.decide(REJECT_PLAIN)
    assert "TOOL_CALL_RESULT" not in resumed.types
    assert resumed.transcript.tool_calls[original.id].result == AGENT_FRAMEWORK.rejected


async def test_agent_framework_takes_a_confirm_changes_answer_only_as_its_interrupts_resume(peer_server):
    url = peer_server("agent-framework").url()
    t = AgUiThread(url)
    run = await t.send("refund my order A-1001")
    confirm = call_named(run.transcript, "confirm_changes")
    [interrupt] = run.transcript.open_interrupts
    # It asks about the call the approval interrupt names.
    assert confirm.args["function_call_id"] == interrupt.tool_call_id == "call_refund"
    assert confirm.args["function_arguments"] == common.REFUND_ARGS
    # Answered as a client tool while the approval waits, it is refused.
    steps = [{"description": "Execute issue_refund", "status": "enabled"}]
    answer = tool_answer("confirm-answer", confirm.id, {"accepted": True, "steps": steps})
    refused = await AgUiThread(url, thread_id=t.thread_id).send(messages=[*t.messages, answer])
    assert refused.transcript.outcome.code == "APPROVAL_RESUME_REQUIRED"
    # The card's Yes is the interrupt's resume: the refund runs and the thread goes on.
    resumed = await t.decide({"approved": True})
    assert resumed.text == f"Done: {REFUND}"
    assert (await t.send("hello")).text.startswith("Hello again! I see")
