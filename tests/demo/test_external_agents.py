"""The external-policy demo agents, through the SDK's ExternalAgentClient over real HTTP.

Refusals the SDK would already catch on the client side (a file too large, a mislabelled file) are
sent with plain httpx: the agent must refuse them itself, as a last line.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from agents_ui.demo.external import support_desk
from agents_ui.demo.external.store import STORE
from agents_ui.demo.registry import EXTERNAL_AGENTS
from agents_ui.sdk import (
    SDK_VERSION,
    ApprovalAlreadyDecidedError,
    ApprovalExpiredError,
    ApprovalRequested,
    ApprovalResolved,
    ArtifactCreated,
    Done,
    ExternalAgentClient,
    GroundingEvent,
    HostContextRejectedError,
    LegacyText,
    MessageCompleted,
    MessageDelta,
    ModuleEvent,
    NotFoundError,
    PublicExternalAgentPolicy,
    RateLimitedError,
    RunCompleted,
    RunStarted,
    SdkVersionUnsupportedError,
    SpendLimitExceededError,
    ToolCompleted,
    ToolStarted,
    UnsupportedCapabilityError,
)

from .conftest import PNG_1PX, SDK_HEADERS, keyed, pdf_bytes


def client(live_url: str, slug: str, **kwargs: Any) -> ExternalAgentClient:
    return ExternalAgentClient(f"{live_url}/demo-agents/{slug}", timeout=10, headers=keyed(), **kwargs)


async def send(agent: ExternalAgentClient, text: str, **kwargs: Any) -> list[Any]:
    conversation = await agent.create_conversation()
    return [event async for event in agent.send_message(conversation.id, text, **kwargs)]


def answer(events: list[Any]) -> str:
    return next(e.content for e in events if isinstance(e, MessageCompleted))


async def raw(
    method: str, url: str, *, headers: dict[str, str] | None = None, **kwargs: Any
) -> httpx.Response:
    """One request as the product sends it (with the demo key), bypassing the SDK's own checks."""
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.request(method, url, headers={**keyed(), **(headers or {})}, **kwargs)


# --- Policies ----------------------------------------------------------------------------------------


def _extras(model: BaseModel, where: str = "policy") -> list[str]:
    """Unknown keys anywhere in a parsed policy: the SDK keeps them silently, so a typo would hide."""
    found = [f"{where}.{key}" for key in (model.model_extra or {})]
    for name in type(model).model_fields:
        value = getattr(model, name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                found += _extras(item, f"{where}.{name}")
    return found


@pytest.mark.parametrize("agent", list(EXTERNAL_AGENTS.values()), ids=lambda a: a.slug)
def test_each_policy_is_valid_for_the_sdk_with_no_unknown_field(agent):
    policy = PublicExternalAgentPolicy.model_validate(agent.policy)
    assert _extras(policy) == []
    assert policy.default_stream_profile in policy.stream_profiles
    assert policy.identity.name and policy.identity.description and policy.identity.version


async def test_support_desk_policy_declares_everything_the_ui_adapts_to(live_url):
    policy = await client(live_url, "support-desk").get_effective_policy()

    caps = policy.capabilities
    assert caps.messages and caps.conversations and caps.files and caps.interactions and caps.approvals
    assert caps.artifacts is False
    assert policy.stream_profiles == ["runtime-standard-v1", "modules-v1", "chat-legacy-v1"]
    assert policy.output_module_types == ["citation"] and policy.provider_grounding_display is True
    classes = {t.operation.side_effect_class for t in policy.domain_tools}
    assert classes == {"read", "write", "external", "financial", "destructive"}
    refund = next(t for t in policy.domain_tools if t.public_name == "issue_refund")
    assert refund.operation.approval_required and refund.operation.idempotency == "non_idempotent"
    assert {t.status for t in policy.domain_tools} == {"active", "degraded", "disabled"}
    assert policy.file_policy.allowed_mime_types == ["application/pdf", "image/png"]
    assert policy.file_policy.max_upload_bytes == 5 * 1024 * 1024
    assert policy.host_context_policy.accepted_fields == ["page.url", "page.title", "user.locale"]
    assert policy.rate_limits and policy.spend_limits and policy.public_error_detail == "standard"


async def test_archive_has_a_different_policy(live_url):
    policy = await client(live_url, "archive").get_effective_policy()

    assert policy.capabilities.artifacts is True
    assert policy.capabilities.files is False and policy.capabilities.approvals is False
    assert policy.public_error_detail == "minimal" and policy.default_stream_profile == "modules-v1"
    assert policy.output_module_types == ["table", "citation"]


async def test_future_agent_policy_is_readable_but_every_other_call_needs_a_newer_sdk(live_url):
    agent = client(live_url, "future-agent")
    policy = await agent.get_effective_policy()
    assert policy.sdk.min_version == "2.0.0" and SDK_VERSION == "1.0.0"

    with pytest.raises(SdkVersionUnsupportedError) as error:
        await agent.prepare()
    assert error.value.status == 426
    with pytest.raises(SdkVersionUnsupportedError):
        await agent.create_conversation()
    response = await raw("POST", f"{live_url}/demo-agents/future-agent/interactions", json={})
    assert response.status_code == 426
    assert response.json()["error"]["details"] == {"minVersion": "2.0.0", "receivedVersion": None}

    newer = client(live_url, "future-agent", sdk_version="2.1.0")
    events = await send(newer, "Hello from the future")
    assert isinstance(events[-1], RunCompleted)


async def test_prepare_grants_what_the_agent_can(live_url):
    agent = client(live_url, "support-desk")

    granted = await agent.prepare("no-such-profile", ["citation", "table"], True)
    assert granted.negotiated.stream_profile == "runtime-standard-v1"
    assert granted.negotiated.output_module_types == ["citation"]
    assert granted.negotiated.provider_grounding_display is True

    archive = await client(live_url, "archive").prepare("runtime-standard-v1", ["table"], True)
    assert archive.negotiated.stream_profile == "runtime-standard-v1"
    assert archive.negotiated.output_module_types == ["table"]
    assert archive.negotiated.provider_grounding_display is False  # its policy does not allow it


# --- Conversations and the three profiles ----------------------------------------------------------


async def test_support_desk_streams_a_full_runtime_standard_answer(live_url):
    agent = client(live_url, "support-desk")
    await agent.prepare("runtime-standard-v1", ["citation"], True)

    events = await send(agent, "Where is my order of blue shoes?")

    kinds = [type(e) for e in events]
    assert kinds[0] is RunStarted and kinds[-1] is RunCompleted
    assert ToolStarted in kinds and ToolCompleted in kinds
    assert "".join(e.delta for e in events if isinstance(e, MessageDelta)) == answer(events)
    assert "order of blue shoes" in answer(events)
    modules = [e for e in events if isinstance(e, ModuleEvent)]
    assert [m.type for m in modules] == ["citation"]
    assert next(e for e in events if isinstance(e, GroundingEvent)).sources
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))


async def test_modules_profile_carries_only_lifecycle_and_modules(live_url):
    events = await send(client(live_url, "support-desk"), "Where is my parcel?", stream_profile="modules-v1")

    assert {type(e) for e in events} == {RunStarted, ModuleEvent, RunCompleted}


async def test_chat_legacy_profile_is_plain_text_frames_then_done(live_url):
    events = await send(
        client(live_url, "support-desk"), "Where is my parcel?", stream_profile="chat-legacy-v1"
    )

    assert isinstance(events[-1], Done)
    assert all(isinstance(e, LegacyText) for e in events[:-1])
    assert "Where is my parcel" in "".join(e.text for e in events[:-1])


async def test_only_negotiated_module_types_are_emitted(live_url):
    events = await send(client(live_url, "support-desk"), "Hi", output_module_types=[])
    assert not [e for e in events if isinstance(e, ModuleEvent)]


async def test_unknown_conversation_is_not_found(live_url):
    agent = client(live_url, "support-desk")
    with pytest.raises(NotFoundError):
        [event async for event in agent.send_message("conv_missing", "hello")]


# --- Approvals ---------------------------------------------------------------------------------------


async def _until_approval(stream: Any) -> tuple[list[Any], ApprovalRequested]:
    seen = []
    async for event in stream:
        seen.append(event)
        if isinstance(event, ApprovalRequested):
            return seen, event
    raise AssertionError("no approval:requested")


@pytest.mark.parametrize(
    ("decision", "edited", "status", "says"),
    [
        ("approve", None, "completed", "Refund of 30 EUR issued."),
        ("approve", {"amount": 12.5}, "completed", "Refund of 12.5 EUR issued (with your edits)."),
        ("deny", None, "denied", "No refund was issued: it was denied."),
    ],
)
async def test_a_refund_pauses_the_stream_until_the_approval_is_decided(
    live_url, decision, edited, status, says
):
    agent = client(live_url, "support-desk")
    conversation = await agent.create_conversation()
    stream = agent.send_message(conversation.id, "I want a refund of 30 euros for my order.")

    _, requested = await _until_approval(stream)
    assert requested.public_name == "issue_refund" and requested.side_effect_class == "financial"
    assert requested.input["amount"] == 30 and requested.expires_at.endswith("Z")
    # The stream is paused: nothing more arrives until someone decides.
    following = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.3)
    assert not following.done()

    answer_body = await agent.decide_approval(requested.approval_id, decision, edited_input=edited)
    assert answer_body == {"approvalId": requested.approval_id, "decision": decision}
    rest = [await following] + [event async for event in stream]

    resolved = next(e for e in rest if isinstance(e, ApprovalResolved))
    assert resolved.decision == decision
    completed = next(
        e for e in rest if isinstance(e, ToolCompleted) and e.tool_call_id == requested.tool_call_id
    )
    assert completed.status == status
    assert says in answer(rest)
    with pytest.raises(ApprovalAlreadyDecidedError):
        await agent.decide_approval(requested.approval_id, "approve")


async def test_a_decision_after_keep_alives_still_resumes_the_stream(live_url, monkeypatch):
    """While it waits the stream sends SSE comments; a decision after some of them must still wake it."""
    monkeypatch.setattr(support_desk, "KEEPALIVE_SECONDS", 0.05)
    agent = client(live_url, "support-desk")
    conversation = await agent.create_conversation()
    stream = agent.send_message(conversation.id, "refund 5 euros")
    _, requested = await _until_approval(stream)
    await asyncio.sleep(0.2)
    await agent.decide_approval(requested.approval_id, "approve")
    assert "Refund of 5 EUR issued." in answer([e async for e in stream])


async def test_an_expired_approval_is_denied_by_the_agent_and_refuses_a_late_decision(live_url, monkeypatch):
    monkeypatch.setattr(support_desk, "APPROVAL_TTL_SECONDS", 0.3)
    agent = client(live_url, "support-desk")
    conversation = await agent.create_conversation()
    stream = agent.send_message(conversation.id, "refund 20 euros")
    _, requested = await _until_approval(stream)

    rest = [event async for event in stream]

    assert next(e for e in rest if isinstance(e, ApprovalResolved)).decision == "deny"
    assert "it expired" in answer(rest)
    with pytest.raises(ApprovalExpiredError) as error:
        await agent.decide_approval(requested.approval_id, "approve")
    assert error.value.status == 410


async def test_unknown_approval_and_bad_decision(live_url):
    agent = client(live_url, "support-desk")
    with pytest.raises(NotFoundError):
        await agent.decide_approval("approval_missing", "approve")
    response = await raw(
        "POST",
        f"{live_url}/demo-agents/support-desk/approvals/x",
        json={"decision": "maybe"},
        headers=SDK_HEADERS,
    )
    assert response.status_code == 404  # unknown first: there is nothing to decide


async def test_refunds_above_the_spend_limit_are_refused_with_retry_after(live_url):
    agent = client(live_url, "support-desk")
    conversation = await agent.create_conversation()
    with pytest.raises(SpendLimitExceededError) as error:
        [e async for e in agent.send_message(conversation.id, "Refund 900 euros now")]
    assert error.value.status == 429 and error.value.retry_after > 0


# --- Files, host context, limits, interactions, artifacts -------------------------------------------


async def test_upload_a_pdf_and_a_png_then_use_them_in_a_message(live_url):
    agent = client(live_url, "support-desk")
    pdf = await agent.upload_file(pdf_bytes(2), "invoice.pdf")
    png = await agent.upload_file(PNG_1PX, "photo.png")
    assert (pdf.mime_type, pdf.size, png.mime_type) == ("application/pdf", len(pdf_bytes(2)), "image/png")
    assert (await agent.get_file(pdf.id)).name == "invoice.pdf"

    events = await send(agent, "The parcel arrived broken", file_ids=[pdf.id, png.id])
    assert "invoice.pdf (application/pdf" in answer(events) and "photo.png (image/png" in answer(events)


@pytest.mark.parametrize(
    ("content", "declared", "status", "code"),
    [
        (b"%PDF-1.4\n" + b"0" * (5 * 1024 * 1024), "application/pdf", 413, "file_too_large"),
        (b"GIF89a" + b"\0" * 64, "image/gif", 415, "unsupported_media_type"),  # a type it does not take
        (b"MZ\x90\0" + b"\0" * 64, "application/pdf", 415, "unsupported_media_type"),  # not a PDF inside
        (PNG_1PX, "application/pdf", 415, "unsupported_media_type"),  # mislabelled: a PNG called a PDF
    ],
)
async def test_uploads_are_checked_on_size_and_on_the_bytes(live_url, content, declared, status, code):
    response = await raw(
        "POST",
        f"{live_url}/demo-agents/support-desk/files",
        files={"file": ("upload.pdf", content, declared)},
        headers=SDK_HEADERS,
    )
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code and error["message"] and error["requestId"]


async def test_uploads_to_an_agent_without_files_are_403(live_url):
    response = await raw(
        "POST", f"{live_url}/demo-agents/archive/files", files={"file": ("a.png", PNG_1PX, "image/png")}
    )
    assert response.status_code == 403
    assert response.json() == {"error": {"code": "unsupported_capability"}}  # minimal detail


async def test_host_context_is_checked_against_the_policy(live_url):
    agent = client(live_url, "support-desk")
    events = await send(
        agent, "Help", host_context={"page": {"url": "https://shop.example/cart"}, "user.locale": "de-DE"}
    )
    assert "de-DE" in answer(events) and "https://shop.example/cart" in answer(events)

    with pytest.raises(HostContextRejectedError) as refused:
        await send(agent, "Help", host_context={"user": {"email": "a@b.c"}})
    assert refused.value.status == 422 and "user.email" in refused.value.message
    with pytest.raises(HostContextRejectedError):
        await send(agent, "Help", host_context={"page.title": "x" * 2000})


async def test_rate_limit_per_conversation_answers_429_with_retry_after(live_url):
    agent = client(live_url, "support-desk")
    conversation = await agent.create_conversation()
    for _ in range(20):
        [e async for e in agent.send_message(conversation.id, "hi", stream_profile="chat-legacy-v1")]
    with pytest.raises(RateLimitedError) as error:
        [e async for e in agent.send_message(conversation.id, "hi", stream_profile="chat-legacy-v1")]
    assert error.value.code == "rate_limited" and error.value.retry_after >= 1


async def test_feedback_on_a_message_is_recorded(live_url):
    agent = client(live_url, "support-desk")
    conversation = await agent.create_conversation()
    events = [e async for e in agent.send_message(conversation.id, "Thanks!")]
    message_id = next(e.message_id for e in events if isinstance(e, MessageCompleted))

    recorded = await agent.send_interaction(conversation.id, message_id, "up", comment="quick")
    assert recorded["value"] == "up" and STORE.interactions[0]["comment"] == "quick"
    with pytest.raises(NotFoundError):
        await agent.send_interaction(conversation.id, "msg_unknown", "down")


async def test_support_desk_answers_artifacts_with_403_unsupported_capability(live_url):
    agent = client(live_url, "support-desk")
    conversation = await agent.create_conversation()
    with pytest.raises(UnsupportedCapabilityError) as error:
        await agent.list_artifacts(conversation.id)
    assert error.value.status == 403 and error.value.capability == "artifacts"
    response = await raw("GET", f"{live_url}/demo-agents/support-desk/artifacts/a1", headers=SDK_HEADERS)
    assert response.status_code == 403 and response.json()["error"]["capability"] == "artifacts"


async def test_archive_creates_artifacts_and_tables(live_url):
    agent = client(live_url, "archive")
    await agent.prepare()
    conversation = await agent.create_conversation()
    events = [e async for e in agent.send_message(conversation.id, "Find the 2021 supplier contracts")]
    assert [m.type for m in events if isinstance(m, ModuleEvent)] == ["table", "citation"]  # modules-v1

    full = [
        e
        async for e in agent.send_message(
            conversation.id, "And the invoices", stream_profile="runtime-standard-v1"
        )
    ]
    created = next(e for e in full if isinstance(e, ArtifactCreated))
    listed = await agent.list_artifacts(conversation.id)
    assert [a.name for a in listed] == ["summary-1.md", "summary-2.md"]
    artifact = await agent.get_artifact(created.artifact_id)
    assert artifact.mime_type == "text/markdown" and artifact.size == created.size
    with pytest.raises(UnsupportedCapabilityError):
        await agent.send_interaction(conversation.id, "m", "up")


async def test_error_bodies_follow_the_detail_level(live_url):
    standard = await raw(
        "POST",
        f"{live_url}/demo-agents/support-desk/conversations/nope/messages",
        json={"content": "x"},
        headers=SDK_HEADERS,
    )
    minimal = await raw(
        "POST", f"{live_url}/demo-agents/archive/conversations/nope/messages", json={"content": "x"}
    )
    bad = await raw("POST", f"{live_url}/demo-agents/support-desk/prepare", content=b"{", headers=SDK_HEADERS)

    assert standard.status_code == 404 and set(standard.json()["error"]) == {"code", "message", "requestId"}
    assert minimal.status_code == 404 and minimal.json() == {"error": {"code": "not_found"}}
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_request"
    assert json.loads(standard.content)["error"]["code"] == "not_found"
