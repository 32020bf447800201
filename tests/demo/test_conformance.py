"""The AG-UI conformance checker (ag-ui-validate) finds nothing wrong with any AG-UI demo agent."""

from __future__ import annotations

import pytest
from ag_ui.core import ToolCallResultEvent
from ag_ui_validate.pytest_plugin import validate_agui_endpoint

from .conftest import PNG_1PX, agui_run, b64, keyed, pdf_bytes, run_input


def _findings(report) -> list[str]:
    return [f"{d.rule} {d.severity}: {d.message}" for d in report.diagnostics if d.severity != "info"]


DOCUMENT_INPUT = run_input(
    content=[
        {"type": "text", "text": "Is this contract complete?"},
        {
            "type": "document",
            "source": {"type": "data", "value": b64(pdf_bytes(3)), "mimeType": "application/pdf"},
            "metadata": {"filename": "contract.pdf"},
        },
        {"type": "image", "source": {"type": "data", "value": b64(PNG_1PX), "mimeType": "image/png"}},
    ]
)


@pytest.mark.parametrize(
    ("slug", "body"),
    [
        ("research-assistant", run_input("How do heat pumps compare with gas boilers?")),
        ("orchestrator", run_input("Write a launch brief for our new mobile app.")),
        ("document-reviewer", DOCUMENT_INPUT),
        ("operations", run_input("Pay the vendor 120 euros.")),
        ("planner", run_input("Plan the launch of the Berlin office.")),
        ("toolsmith", run_input("Convert 10 km to miles.")),
        ("cipher", run_input("Should we sign the deal?")),
        ("legacy", run_input("My printer is broken.")),
        ("booking-desk", run_input("Book a meeting room for Thursday.")),
        ("booking-desk", run_input("Show me every component")),
    ],
)
async def test_every_agui_demo_agent_passes_the_conformance_checker(live_url, slug, body):
    report = await validate_agui_endpoint(
        f"{live_url}/demo-agents/{slug}/", input=body, timeout_ms=10_000, headers=keyed()
    )

    assert report.event_count > 3
    assert report.internal_errors == []
    assert report.summary.errors == 0 and report.summary.warnings == 0, _findings(report)


# ag-ui-validate 0.4.0 (its newest release) still reads a tool result's content as a string only;
# ag-ui-protocol 1.0, which it checks against, also allows a list of text, image and audio parts.
CHECKER_LAG = "AGUI504 error: TOOL_CALL_RESULT: field 'content' must be a string, got array"


async def test_the_media_demo_agent_passes_the_checker_but_for_its_multimodal_tool_result(live_url):
    url, body = f"{live_url}/demo-agents/studio/", run_input("Sketch a lighthouse at dusk.")
    report = await validate_agui_endpoint(url, input=body, timeout_ms=10_000, headers=keyed())
    assert report.event_count > 3 and report.internal_errors == []
    found = _findings(report)
    assert found and set(found) == {CHECKER_LAG}
    # Each such result is what ag-ui-protocol 1.0's own type takes, with its image and audio parts.
    results = [e for e in await agui_run(url, body) if e["type"] == "TOOL_CALL_RESULT"]
    assert len(results) == len(found)
    kinds = {part.type for event in results for part in ToolCallResultEvent.model_validate(event).content}
    assert kinds >= {"image", "audio"}


@pytest.mark.parametrize(
    "payload", [{"approved": True}, {"approved": False}, {"approved": True, "editedArgs": {}}]
)
async def test_the_resumed_operations_run_passes_the_conformance_checker(live_url, payload):
    url = f"{live_url}/demo-agents/operations/"
    first = run_input("Pay the vendor 80 euros.")
    events = await agui_run(url, first)
    interrupt = events[-1]["outcome"]["interrupts"][0]
    if "editedArgs" in payload:
        payload = {
            **payload,
            "editedArgs": {"fromAccount": "OPS-001", "toAccount": "X", "amount": 1, "currency": "EUR"},
        }
    resume = run_input(
        thread_id=first["threadId"],
        messages=[],
        resume=[{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}],
    )

    report = await validate_agui_endpoint(url, input=resume, timeout_ms=10_000, headers=keyed())

    assert report.summary.errors == 0 and report.summary.warnings == 0, _findings(report)
