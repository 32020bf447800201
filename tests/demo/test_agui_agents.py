"""Each AG-UI demo agent: what it declares, and what its runs do, through the SDK over real HTTP."""

from __future__ import annotations

import base64
import json
import re
import time
from typing import Any

import httpx
import pytest
from ag_ui.core import AgentCapabilities, EventType, RunAgentInput

from agents_ui.demo.agui.document_reviewer import pdf_page_count
from agents_ui.demo.agui.planner import STEP_WORK
from agents_ui.demo.agui.running import upgrade_legacy_parts
from agents_ui.demo.agui.studio import picture_png, sound_wav
from agents_ui.sdk import AgUiAgent

from .conftest import PNG_1PX, b64, keyed, packed_pdf_bytes, pdf_bytes, run_input


def agent(live_url: str, slug: str) -> AgUiAgent:
    return AgUiAgent(f"{live_url}/demo-agents/{slug}/", timeout=10, headers=keyed())


async def run(live_url: str, slug: str, body: dict[str, Any]) -> list[Any]:
    return [event async for event in agent(live_url, slug).run(RunAgentInput.model_validate(body))]


def types(events: list[Any]) -> list[str]:
    return [event.type.value for event in events]


def text_of(events: list[Any]) -> str:
    return "".join(e.delta for e in events if e.type == EventType.TEXT_MESSAGE_CONTENT)


async def test_every_declaring_agent_answers_discovery_with_a_rich_valid_declaration(live_url):
    slugs = ["research-assistant", "orchestrator", "document-reviewer", "operations", "planner", "toolsmith"]
    for slug in [*slugs, "studio", "cipher"]:
        result = await agent(live_url, slug).discover()
        assert result.status == "declared", (slug, result.error)
        identity = result.declaration.identity
        assert identity.name and identity.description and identity.version and identity.provider
        assert identity.documentation_url.endswith(f"/demo-agents/{slug}/docs")
        assert result.declaration.transport.streaming is True
        async with httpx.AsyncClient() as client:
            docs = await client.get(identity.documentation_url)
        assert docs.status_code == 200 and identity.name in docs.text


async def test_declarations_differ_so_the_ui_reshapes(live_url):
    slugs = ("research-assistant", "planner", "cipher", "orchestrator")
    raw = [(await agent(live_url, slug).discover()).raw for slug in slugs]
    assert len({json.dumps(r, sort_keys=True) for r in raw}) == 4
    assert raw[1]["reasoning"] == {"supported": False}  # explicit "unsupported", not absent
    assert "reasoning" in raw[0] and "state" not in raw[3]  # absent means unknown


async def test_research_assistant_streams_reasoning_calls_tools_in_parallel_and_returns_structured_output(
    live_url,
):
    caps = await agent(live_url, "research-assistant").get_capabilities()
    assert caps.reasoning.supported and caps.reasoning.streaming and not caps.reasoning.encrypted
    assert caps.tools.parallel_calls is True
    assert {t.name for t in caps.tools.items} == {"web_search", "read_paper"}
    assert all(t.parameters["type"] == "object" for t in caps.tools.items)
    assert caps.output.structured_output is True
    assert caps.human_in_the_loop.feedback is True
    assert caps.execution.max_iterations == 6

    events = await run(live_url, "research-assistant", run_input("How do heat pumps compare with boilers?"))

    kinds = types(events)
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    assert kinds.count("REASONING_MESSAGE_CONTENT") > 1  # streamed, not at once
    starts = [i for i, k in enumerate(kinds) if k == "TOOL_CALL_START"]
    first_end = kinds.index("TOOL_CALL_END")
    assert len(starts) == 2 and starts[1] < first_end  # the second call opens before the first ends
    result = events[-1].result
    assert result["topic"] == "How do heat pumps compare with boilers"
    assert result["subject"] == "heat pumps" and len(result["findings"]) == 3
    assert all(source["url"].startswith("https://") for source in result["sources"])


async def test_research_assistant_declares_audio_sandboxed_code_memory_and_a_rate_limit(live_url):
    result = await agent(live_url, "research-assistant").discover()
    caps = result.declaration  # parsed by the SDK: a valid AgentCapabilities

    assert result.status == "declared"
    assert caps.multimodal.input.audio is True and caps.multimodal.input.image is False
    assert caps.execution.code_execution is True and caps.execution.sandboxed is True
    assert caps.state.memory is True
    assert caps.custom["rateLimit"] == {"maxRequestsPerMinute": 10}
    assert caps.custom["input"]["maxBytes"] == 5 * 1024 * 1024
    assert result.raw["execution"]["codeExecution"] is True  # the wire's camelCase names
    assert AgentCapabilities.model_validate(result.raw) == caps


async def test_research_assistant_says_what_it_did_with_a_voice_note(live_url):
    clip = b"\x1aE\xdf\xa3" + b"\x00" * 2044  # the start of a WebM file
    body = run_input(
        content=[
            {"type": "text", "text": "Are heat pumps noisy?"},
            {"type": "document", "source": {"type": "data", "value": b64(clip), "mimeType": "audio/webm"}},
        ]
    )
    events = await run(live_url, "research-assistant", body)

    answer = text_of(events)
    assert answer.startswith("I received 1 recording (audio/webm, 2.0 KB), but I cannot listen to audio")
    assert "A heat pump moves heat" in answer  # and it answers the written question


async def test_research_assistant_takes_a_voice_note_larger_than_a_text_run(live_url):
    clip = b64(b"\x1aE\xdf\xa3" + b"\x00" * (3 * 1024 * 1024))
    part = {"type": "document", "source": {"type": "data", "value": clip, "mimeType": "audio/webm"}}
    events = await run(live_url, "research-assistant", run_input(content=[part]))
    assert text_of(events).startswith("I received 1 recording (audio/webm, 3.0 MB)")


async def test_research_assistant_answers_the_question_asked_from_its_library(live_url):
    compare = text_of(
        await run(live_url, "research-assistant", run_input("Are heat pumps better than gas boilers?"))
    )
    winter = text_of(await run(live_url, "research-assistant", run_input("Do heat pumps work in winter?")))

    assert compare.startswith("A heat pump moves heat instead of making it")
    # The facts that fit the question come first: the comparison for one, the cold for the other.
    first_point = [answer.split("\n- ")[1] for answer in (compare, winter)]
    assert first_point[0].startswith("A condensing gas boiler turns roughly 90%")
    assert first_point[1].startswith("Efficiency falls as the outside air gets colder")
    assert "[The Future of Heat Pumps](https://www.iea.org/reports/the-future-of-heat-pumps)" in compare
    for templated in ("Here is what I found about", "Sources agree on the basics", "example.org"):
        assert templated not in compare


async def test_research_assistant_gives_the_same_answer_to_the_same_question(live_url):
    body = run_input("Compare lithium and sodium batteries")
    first, second = [text_of(await run(live_url, "research-assistant", body)) for _ in range(2)]
    assert first == second and "sodium-ion" in first


async def test_research_assistant_says_when_a_question_is_outside_its_library(live_url):
    events = await run(live_url, "research-assistant", run_input("What is the history of the Berlin wall?"))

    answer = text_of(events)
    assert answer.startswith("I could not find sources I would rely on for the history of the Berlin wall")
    assert "https://en.wikipedia.org/w/index.php?search=the+history+of+the+Berlin+wall" in answer
    assert events[-1].result["confidence"] < 0.5 and events[-1].result["subject"] is None


async def test_research_assistant_answers_a_greeting_without_searching(live_url):
    events = await run(live_url, "research-assistant", run_input("Hello!"))
    assert text_of(events).startswith("Hello! Ask me a question")
    assert "TOOL_CALL_START" not in types(events)


async def test_orchestrator_delegates_to_nested_subagents_and_hands_off(live_url):
    caps = await agent(live_url, "orchestrator").get_capabilities()
    assert caps.multi_agent.delegation and caps.multi_agent.handoffs
    assert [s.name for s in caps.multi_agent.subagents] == [
        "researcher",
        "fact-checker",
        "writer",
        "reviewer",
    ]
    assert all(s.description for s in caps.multi_agent.subagents)

    events = await run(live_url, "orchestrator", run_input("Write a launch brief for the app."))

    started = [e for e in events if e.type == EventType.SUBAGENT_STARTED]
    finished = {e.subagent_run_id for e in events if e.type == EventType.SUBAGENT_FINISHED}
    assert [s.name for s in started] == ["researcher", "fact-checker", "writer", "reviewer"]
    assert {s.subagent_run_id for s in started} == finished
    researcher, checker = started[0], started[1]
    assert checker.parent_subagent_run_id == researcher.subagent_run_id  # nested
    delegations = [
        e for e in events if e.type == EventType.TOOL_CALL_START and e.tool_call_name == "delegate"
    ]
    assert researcher.parent_tool_call_id == delegations[0].tool_call_id
    handoff = next(e for e in events if e.type == EventType.CUSTOM)
    assert handoff.name == "agents_ui.handoff" and handoff.value["to"] == "reviewer"
    reviewer_text = [
        e
        for e in events
        if e.type == EventType.TEXT_MESSAGE_START and e.subagent_run_id == started[3].subagent_run_id
    ]
    assert reviewer_text, "after the handoff the reviewer speaks as itself"


async def test_document_reviewer_reports_names_types_sizes_and_pdf_pages(live_url):
    caps = await agent(live_url, "document-reviewer").get_capabilities()
    assert caps.multimodal.input.pdf and caps.multimodal.input.image
    assert caps.multimodal.input.audio is False and caps.multimodal.input.video is False
    assert caps.reasoning.streaming is False
    assert caps.custom["input"]["maxBytes"] == 10 * 1024 * 1024

    pdf = pdf_bytes(4)
    body = run_input(
        content=[
            {"type": "text", "text": "Is the lease complete?"},
            {
                "type": "document",
                "source": {"type": "data", "value": b64(pdf), "mimeType": "application/pdf"},
                "metadata": {"filename": "lease.pdf"},
            },
            {
                "type": "image",
                "source": {"type": "data", "value": b64(PNG_1PX), "mimeType": "image/jpeg"},
                "metadata": {"filename": "scan.jpg"},
            },
            {
                "type": "image",
                "source": {"type": "url", "value": "https://example.com/files/floor%20plan.png"},
            },
        ]
    )
    events = await run(live_url, "document-reviewer", body)

    text = text_of(events)
    assert f"**lease.pdf**: application/pdf, {len(pdf)} bytes, 4 pages" in text
    assert "**scan.jpg**: image/png, 70 bytes (labelled image/jpeg but the bytes are image/png)" in text
    assert "**floor plan.png**" in text
    assert "Is the lease complete" in text
    reasoning = [e for e in events if e.type == EventType.REASONING_MESSAGE_CONTENT]
    assert len(reasoning) == 1  # not streaming: delivered whole
    assert events[-1].result["files"][0] == {
        "name": "lease.pdf",
        "mimeType": "application/pdf",
        "size": len(pdf),
        "pages": 4,
    }


async def test_document_reviewer_accepts_the_pre_1_0_binary_part(live_url):
    legacy = {
        "type": "binary",
        "mimeType": "application/pdf",
        "data": b64(pdf_bytes(2)),
        "filename": "old.pdf",
    }
    async with httpx.AsyncClient(headers=keyed()) as client:
        response = await client.post(
            f"{live_url}/demo-agents/document-reviewer/", json=run_input(content=[legacy])
        )
    assert response.status_code == 200
    assert '"name":"old.pdf","mimeType":"application/pdf"' in response.text and '"pages":2' in response.text


async def test_document_reviewer_takes_a_pdf_larger_than_djangos_default_body_limit(live_url):
    pdf = pdf_bytes(3, padding=3 * 1024 * 1024)  # 3 MB: 4 MB once base64-encoded
    part = {"type": "document", "source": {"type": "data", "value": b64(pdf), "mimeType": "application/pdf"}}
    events = await run(live_url, "document-reviewer", run_input(content=[part]))
    assert events[-1].result["files"][0]["pages"] == 3


async def test_document_reviewer_without_attachments_asks_for_one(live_url):
    events = await run(live_url, "document-reviewer", run_input("What do you think?"))
    assert "attach a PDF or an image" in text_of(events)


async def test_studio_answers_with_a_picture_and_a_sound_in_its_tools_results(live_url):
    caps = await agent(live_url, "studio").get_capabilities()
    assert caps.multimodal.output.image is True and caps.multimodal.output.audio is True
    events = await run(live_url, "studio", run_input("Draw a lighthouse"))
    results = [e for e in events if e.type == EventType.TOOL_CALL_RESULT]
    parts = [part for result in results for part in result.content]
    media = {part.type: base64.b64decode(part.source.value) for part in parts if part.type != "text"}
    assert set(media) == {"image", "audio"}
    assert media["image"] == picture_png("a lighthouse") and media["audio"] == sound_wav("a lighthouse")
    assert media["image"].startswith(b"\x89PNG") and media["audio"][8:12] == b"WAVE"
    assert len(media["image"]) < 2048 and len(media["audio"]) < 8192  # tiny
    again = await run(live_url, "studio", run_input("Draw a lighthouse"))
    assert [e.content for e in again if e.type == EventType.TOOL_CALL_RESULT] == [r.content for r in results]
    assert "Here is a picture of a lighthouse" in text_of(events)


def test_pdf_page_count_reads_the_pages_of_a_real_pdf():
    assert pdf_page_count(pdf_bytes(7)) == 7
    assert pdf_page_count(pdf_bytes(1)) == 1


def test_pdf_page_count_reads_pages_kept_in_compressed_object_streams():
    packed = packed_pdf_bytes(17)
    assert not re.search(rb"/Type\s*/Page\b", packed)  # a search of the bytes finds no page at all
    assert pdf_page_count(packed) == 17


def test_pdf_page_count_is_none_for_a_pdf_it_cannot_read():
    assert pdf_page_count(pdf_bytes(3)[:200]) is None
    assert pdf_page_count(b"%PDF-1.7\nnot a PDF after all") is None


async def test_document_reviewer_counts_the_pages_of_a_17_page_pdf(live_url):
    part = {
        "type": "document",
        "source": {"type": "data", "value": b64(packed_pdf_bytes(17)), "mimeType": "application/pdf"},
        "metadata": {"filename": "annual-report.pdf"},
    }
    events = await run(live_url, "document-reviewer", run_input(content=[part]))
    assert "**annual-report.pdf**: application/pdf" in text_of(events) and "17 pages" in text_of(events)
    assert events[-1].result["files"][0]["pages"] == 17


async def test_document_reviewer_says_when_a_pdf_cannot_be_read(live_url):
    damaged = b64(pdf_bytes(2)[:300])
    part = {"type": "document", "source": {"type": "data", "value": damaged, "mimeType": "application/pdf"}}
    events = await run(live_url, "document-reviewer", run_input(content=[part]))
    assert "I could not read its pages: the PDF looks damaged" in text_of(events)
    assert events[-1].result["files"][0]["pages"] is None


def test_upgrade_legacy_parts_rewrites_binary_into_media_parts():
    payload = {
        "messages": [{"content": [{"type": "binary", "mimeType": "image/png", "url": "https://x/y.png"}]}]
    }
    part = upgrade_legacy_parts(payload)["messages"][0]["content"][0]
    assert part == {
        "type": "image",
        "source": {"type": "url", "value": "https://x/y.png", "mimeType": "image/png"},
    }


async def _interrupted(live_url: str, text: str) -> tuple[dict[str, Any], Any, Any]:
    body = run_input(text)
    events = await run(live_url, "operations", body)
    finished = events[-1]
    assert finished.type == EventType.RUN_FINISHED and finished.outcome.type == "interrupt"
    call = next(e for e in events if e.type == EventType.TOOL_CALL_START)
    return body, finished.outcome.interrupts[0], call


def _resume(
    body: dict[str, Any], interrupt_id: str, payload: Any, status: str = "resolved"
) -> dict[str, Any]:
    return run_input(
        thread_id=body["threadId"],
        messages=[],
        resume=[{"interruptId": interrupt_id, "status": status, "payload": payload}],
    )


async def test_operations_declares_interrupts_with_edits(live_url):
    caps = await agent(live_url, "operations").get_capabilities()
    hitl = caps.human_in_the_loop
    assert hitl.approvals and hitl.interrupts and hitl.approve_with_edits and hitl.interventions
    assert {t.name for t in caps.tools.items} == {"transfer_funds", "delete_records", "get_balance"}


async def test_operations_pauses_a_sensitive_call_with_an_interrupt(live_url):
    _, interrupt, call = await _interrupted(live_url, "Pay the vendor 120 euros.")

    assert call.tool_call_name == "transfer_funds"
    assert interrupt.reason == "tool_call" and interrupt.tool_call_id == call.tool_call_id
    assert interrupt.message == "Transfer 120 EUR from OPS-001 to VENDOR-042?"
    assert "editedArgs" in interrupt.response_schema["properties"]
    assert interrupt.expires_at.endswith("Z")


async def test_operations_resume_approved_runs_the_proposed_call(live_url):
    body, interrupt, call = await _interrupted(live_url, "Pay the vendor 120 euros.")

    events = await run(live_url, "operations", _resume(body, interrupt.id, {"approved": True}))

    assert types(events)[:2] == ["RUN_STARTED", "MESSAGES_SNAPSHOT"]
    result = next(e for e in events if e.type == EventType.TOOL_CALL_RESULT)
    output = json.loads(result.content)
    assert result.tool_call_id == call.tool_call_id
    assert output["status"] == "executed" and output["arguments"]["amount"] == 120
    assert "the proposed arguments (120 EUR to VENDOR-042)" in text_of(events)
    assert events[-1].outcome.type == "success"


async def test_operations_resume_rejected_changes_nothing(live_url):
    body, interrupt, _ = await _interrupted(live_url, "Delete old logs please.")

    events = await run(live_url, "operations", _resume(body, interrupt.id, {"approved": False}))

    output = json.loads(next(e for e in events if e.type == EventType.TOOL_CALL_RESULT).content)
    assert output == {"status": "rejected", "tool": "delete_records"}
    assert "you rejected `delete_records`, so nothing was changed" in text_of(events)


async def test_operations_resume_with_edited_arguments_uses_the_edits(live_url):
    body, interrupt, _ = await _interrupted(live_url, "Pay the vendor 120 euros.")
    edited = {"fromAccount": "OPS-001", "toAccount": "VENDOR-007", "amount": 99.5, "currency": "GBP"}

    events = await run(
        live_url, "operations", _resume(body, interrupt.id, {"approved": True, "editedArgs": edited})
    )

    output = json.loads(next(e for e in events if e.type == EventType.TOOL_CALL_RESULT).content)
    assert output["arguments"] == edited
    assert "your edited arguments (99.5 GBP to VENDOR-007)" in text_of(events)


async def test_a_new_request_on_the_thread_supersedes_the_open_interrupt(live_url):
    body, first, _ = await _interrupted(live_url, "Pay 10 euros.")
    again = run_input("Actually, pay 20 euros.", thread_id=body["threadId"])
    events = await run(live_url, "operations", again)
    second = events[-1].outcome.interrupts[0]

    stale = await run(live_url, "operations", _resume(body, first.id, {"approved": True}))
    fresh = await run(live_url, "operations", _resume(body, second.id, {"approved": True}))

    assert types(stale)[-1] == "RUN_ERROR"
    assert "20 EUR" in text_of(fresh)


async def test_operations_resume_cancelled_is_reported_as_cancelled(live_url):
    body, interrupt, _ = await _interrupted(live_url, "Pay 10 euros.")
    events = await run(live_url, "operations", _resume(body, interrupt.id, None, status="cancelled"))
    assert "you cancelled" in text_of(events)


@pytest.mark.parametrize("interrupt_id", ["interrupt-does-not-exist", None])
async def test_operations_resume_with_an_unknown_or_used_interrupt_is_a_run_error(live_url, interrupt_id):
    body, interrupt, _ = await _interrupted(live_url, "Pay 10 euros.")
    if interrupt_id is None:  # answering the same interrupt twice: the second time it is unknown
        await run(live_url, "operations", _resume(body, interrupt.id, {"approved": True}))
        interrupt_id = interrupt.id

    events = await run(live_url, "operations", _resume(body, interrupt_id, {"approved": True}))

    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1].code == "unknown_interrupt" and interrupt_id in events[-1].message


async def test_planner_advances_a_state_document_with_json_patch(live_url):
    import jsonpatch

    caps = await agent(live_url, "planner").get_capabilities()
    assert caps.state.snapshots and caps.state.deltas and caps.execution.max_iterations == 5

    events = await run(live_url, "planner", run_input("Plan the launch of the Berlin office."))

    snapshots = [e for e in events if e.type == EventType.STATE_SNAPSHOT]
    state = snapshots[0].snapshot
    assert state["goal"] == "Plan the launch of the Berlin office" and state["status"] == "planning"
    for event in events[events.index(snapshots[0]) + 1 :]:
        if event.type == EventType.STATE_DELTA:
            state = jsonpatch.apply_patch(state, [op.model_dump(by_alias=True) for op in event.delta])
    assert state == snapshots[-1].snapshot  # the deltas, applied in order, give the final snapshot
    assert state["status"] == "ready" and all(step["status"] == "done" for step in state["steps"])
    assert state["iteration"] <= state["maxIterations"] == 5


def final_state(events: list[Any]) -> dict[str, Any]:
    """The state the deltas lead to from the first snapshot, checked against the closing snapshot."""
    import jsonpatch

    snapshots = [e for e in events if e.type == EventType.STATE_SNAPSHOT]
    state = snapshots[0].snapshot
    for event in events[events.index(snapshots[0]) + 1 :]:
        if event.type == EventType.STATE_DELTA:
            state = jsonpatch.apply_patch(state, [op.model_dump(by_alias=True) for op in event.delta])
    assert state == snapshots[-1].snapshot
    return state


async def test_planner_builds_on_the_threads_plan_instead_of_replacing_the_goal(live_url):
    first = run_input("Plan the launch of the Berlin office.")
    plan = final_state(await run(live_url, "planner", first))

    follow_up = run_input("Add a press event with local media.", thread_id=first["threadId"], state=plan)
    events = await run(live_url, "planner", follow_up)
    state = final_state(events)

    opening = next(e for e in events if e.type == EventType.STATE_SNAPSHOT).snapshot
    assert opening["goal"] == state["goal"] == "Plan the launch of the Berlin office"
    assert state["steps"][: len(plan["steps"])] == plan["steps"]  # the earlier steps stay as they were
    added = state["steps"][len(plan["steps"]) :]
    assert added and added[0]["title"] == "Work in the change: Add a press event with local media"
    assert all(step["status"] == "done" for step in state["steps"]) and state["status"] == "ready"
    assert state["revision"] == 2 and state["requests"][-1] == "Add a press event with local media"
    assert state["iteration"] == len(added) <= state["maxIterations"]
    assert "I built on the plan for Plan the launch of the Berlin office (revision 2)" in text_of(events)


async def test_planner_finishes_open_steps_first_and_reads_only_a_plans_shape(live_url):
    sent_back = {
        "goal": "Open a shop in Lyon",
        "revision": "three",  # not a number: read as the first revision
        "steps": [
            {"title": "Find premises", "status": "done", "note": "Signed."},
            {"title": "Hire staff", "status": "in_progress"},
            {"title": 42},
            "not a step",
        ],
    }
    events = await run(live_url, "planner", run_input("Also plan the opening party.", state=sent_back))
    state = final_state(events)

    assert state["goal"] == "Open a shop in Lyon" and state["revision"] == 2
    assert [step["title"] for step in state["steps"][:2]] == ["Find premises", "Hire staff"]
    started = [e.step_name for e in events if e.type == EventType.STEP_STARTED]
    assert started[0] == "Hire staff"  # the step left open is finished before the new ones
    assert state["steps"][0] == {"title": "Find premises", "status": "done", "note": "Signed."}


async def test_planner_changes_course_when_its_plan_was_stopped_midway(live_url):
    # What a stopped run leaves as the thread's state: its pass still "planning", one step open.
    stopped = {
        "goal": "Open a shop in Lyon",
        "revision": 1,
        "requests": ["Open a shop in Lyon"],
        "status": "planning",
        "steps": [
            {"title": "Find premises", "status": "done", "note": "Signed."},
            {"title": "Hire staff", "status": "in_progress"},
            {"title": "Draft the schedule", "status": "pending"},
        ],
    }
    events = await run(live_url, "planner", run_input("Open in Marseille instead.", state=stopped))
    state = final_state(events)

    assert state["setAside"] == ["Hire staff", "Draft the schedule"]
    assert state["steps"][0] == {"title": "Find premises", "status": "done", "note": "Signed."}
    assert state["steps"][1]["title"] == "Change course: Open in Marseille instead"
    assert "Hire staff" not in [step["title"] for step in state["steps"]]
    started = [e.step_name for e in events if e.type == EventType.STEP_STARTED]
    assert started[0] == "Change course: Open in Marseille instead"
    assert "I changed course on the plan for Open a shop in Lyon (revision 2)" in text_of(events)
    assert "set aside (Hire staff; Draft the schedule)" in text_of(events)

    # A plan whose pass finished is built on, not changed: the same open step is finished first.
    events = await run(live_url, "planner", run_input("Add a party.", state={**stopped, "status": "paused"}))
    assert "setAside" not in final_state(events)
    assert next(e.step_name for e in events if e.type == EventType.STEP_STARTED) == "Hire staff"


async def test_planner_steps_advance_visibly_one_after_another(live_url, settings):
    settings.AGENTS_UI_DEMO_PACING = 0.01
    client = agent(live_url, "planner")
    arrivals: list[tuple[float, Any]] = []
    asked_at = time.monotonic()
    async for event in client.run(RunAgentInput.model_validate(run_input("Plan a team offsite."))):
        arrivals.append((time.monotonic(), event))

    finished = [at for at, event in arrivals if event.type == EventType.STEP_FINISHED]
    assert len(finished) >= 4
    # Each step takes STEP_WORK pacing steps. Arrivals can bunch on a busy machine, but the last
    # step cannot finish before all the steps' work is done.
    assert finished[-1] - asked_at >= len(finished) * STEP_WORK * 0.01 * 0.9


def test_a_plan_step_takes_about_a_second_at_the_pacing_the_product_runs_with():
    import project.settings as served  # the settings `make run` serves with, before the tests' own

    assert 0.5 <= STEP_WORK * served.AGENTS_UI_DEMO_PACING <= 1.5


async def test_toolsmith_tool_list_changes_between_two_discoveries(live_url):
    toolsmith = agent(live_url, "toolsmith")
    first = await toolsmith.get_capabilities()
    second = await toolsmith.get_capabilities()

    first_names = [t.name for t in first.tools.items]
    second_names = [t.name for t in second.tools.items]
    assert first_names != second_names
    assert first_names[0] == second_names[0] == "list_tools"
    assert first.tools.client_provided is True

    events = await run(
        live_url,
        "toolsmith",
        run_input(
            "What can you do?", tools=[{"name": "pick_colour", "description": "Ask the user for a colour."}]
        ),
    )
    result = json.loads(next(e for e in events if e.type == EventType.TOOL_CALL_RESULT).content)
    third = await toolsmith.get_capabilities()
    assert result["tools"] == [t.name for t in third.tools.items]  # runs use the current list
    assert "Your client also offered: pick_colour" in text_of(events)


async def test_cipher_reasons_only_in_encrypted_form(live_url):
    caps = await agent(live_url, "cipher").get_capabilities()
    assert caps.reasoning.encrypted is True and caps.reasoning.streaming is False

    events = await run(live_url, "cipher", run_input("Should we sign?"))

    kinds = types(events)
    # A reasoning span holding only the sealed value: no reasoning text ever travels.
    reasoning = [k for k in kinds if k.startswith("REASONING_")]
    assert reasoning == ["REASONING_START", "REASONING_ENCRYPTED_VALUE", "REASONING_END"]
    blob = next(e for e in events if e.type == EventType.REASONING_ENCRYPTED_VALUE)
    start = next(e for e in events if e.type == EventType.REASONING_START)
    assert blob.subtype == "message" and blob.entity_id == start.message_id
    assert "Should we sign" not in blob.encrypted_value

    returned = run_input("And now?")
    returned["messages"].insert(
        0, {"id": "r1", "role": "reasoning", "content": "", "encryptedValue": blob.encrypted_value}
    )
    again = await run(live_url, "cipher", returned)
    assert "You sent back 1 encrypted reasoning block" in text_of(again)


async def test_legacy_has_no_discovery_but_reasons_in_its_runs(live_url):
    result = await agent(live_url, "legacy").discover()
    assert result.status == "none" and result.declaration is None

    events = await run(live_url, "legacy", run_input("My printer is broken."))

    assert "REASONING_MESSAGE_CONTENT" in types(events)
    assert events[0].protocol_version is None and events[-1].outcome is None  # an older server
    assert "printer is broken" in text_of(events)


async def test_a_malformed_run_input_is_refused_before_the_stream(live_url):
    async with httpx.AsyncClient(headers=keyed()) as client:
        bad = await client.post(f"{live_url}/demo-agents/planner/", json={"messages": "nope"})
        not_json = await client.post(
            f"{live_url}/demo-agents/planner/", content=b"{", headers={"Content-Type": "application/json"}
        )
        get = await client.get(f"{live_url}/demo-agents/planner/")
        unknown = await client.post(f"{live_url}/demo-agents/nobody/", json=run_input())
    assert bad.status_code == 422 and bad.headers["content-type"] == "application/json"
    assert not_json.status_code == 422
    assert get.status_code == 405
    async with httpx.AsyncClient() as client:
        doubled = await client.get(f"{live_url}/demo-agents/planner//capabilities")
    assert doubled.status_code == 200  # "{url}/capabilities" joined onto a URL ending in "/"
    assert unknown.status_code == 404


async def test_runs_are_paced_by_the_setting(live_url, settings):
    import time

    settings.AGENTS_UI_DEMO_PACING = 0.02
    started = time.monotonic()
    events = await run(live_url, "legacy", run_input("hello there"))
    deltas = len(
        [e for e in events if e.type in (EventType.TEXT_MESSAGE_CONTENT, EventType.REASONING_MESSAGE_CONTENT)]
    )
    assert time.monotonic() - started >= 0.02 * (deltas - 2)
