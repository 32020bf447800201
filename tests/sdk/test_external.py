"""ExternalAgentClient against an in-process external agent."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from agents_ui.sdk import (
    SDK_VERSION,
    AgentTimeoutError,
    ApprovalAlreadyDecidedError,
    ApprovalExpiredError,
    ApprovalRequested,
    Done,
    ExternalAgentClient,
    FileTooLargeError,
    HostContextRejectedError,
    InternalAgentError,
    InvalidRequestError,
    LegacyText,
    MessageDelta,
    ModuleEvent,
    NotFoundError,
    ProtocolError,
    PublicExternalAgentPolicy,
    RateLimitedError,
    RunCompleted,
    RunStarted,
    SdkVersionUnsupportedError,
    SpendLimitExceededError,
    UnsupportedCapabilityError,
    UnsupportedMediaTypeError,
    afold,
    sniff_mime_type,
)

from .fakes import Exchange, sse

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64

POLICY = {
    "identity": {"name": "Ledger", "version": "2.1"},
    "capabilities": {
        "messages": True,
        "conversations": True,
        "files": True,
        "artifacts": True,
        "interactions": True,
        "approvals": True,
    },
    "streamProfiles": ["runtime-standard-v1", "modules-v1", "chat-legacy-v1"],
    "defaultStreamProfile": "runtime-standard-v1",
    "outputModuleTypes": ["citation", "table"],
    "providerGroundingDisplay": True,
    "domainTools": [
        {
            "publicName": "pay_invoice",
            "description": "Pay an invoice",
            "operation": {
                "kind": "payment",
                "sideEffectClass": "financial",
                "idempotency": "non_idempotent",
                "approvalRequired": True,
            },
            "status": "active",
        }
    ],
    "filePolicy": {"upload": True, "read": True, "maxUploadBytes": 1000, "allowedMimeTypes": ["image/png"]},
    "hostContextPolicy": {"acceptedFields": ["page.url"], "maxTotalBytes": 2048},
    "rateLimits": [{"scope": "user", "limit": 60, "windowSeconds": 60}],
    "spendLimits": [{"scope": "org", "limit": 100, "currency": "EUR", "windowSeconds": 86400}],
    "publicErrorDetail": "standard",
    "sdk": {"minVersion": "1.0.0"},
}


def runtime_standard_stream() -> list[str]:
    return [
        sse({"runId": "run1", "conversationId": "c1"}, event="run:started", id=1),
        sse({"messageId": "m1", "role": "assistant"}, event="message:started", id=2),
        sse({"messageId": "m1", "delta": "Paying "}, event="message:delta", id=3),
        sse({"messageId": "m1", "delta": "now."}, event="message:delta", id=4),
        sse(
            {"toolCallId": "tc1", "publicName": "lookup", "input": {"q": "inv-7"}}, event="tool:started", id=5
        ),
        sse({"toolCallId": "tc1", "status": "ok", "output": {"amount": 12}}, event="tool:completed", id=6),
        sse({"type": "citation", "data": {"n": 1}}, event="module", id=7),
        sse(
            {"sources": [{"title": "Docs", "url": "https://d.example", "snippet": "s"}]},
            event="grounding",
            id=8,
        ),
        sse(
            {"artifactId": "a1", "name": "r.pdf", "mimeType": "application/pdf", "size": 10},
            event="artifact:created",
            id=9,
        ),
        sse({"some": "thing"}, event="telemetry:new", id=10),
        sse({"messageId": "m1", "content": "Paying now."}, event="message:completed", id=11),
        sse({"runId": "run1", "usage": {"tokens": 5}}, event="run:completed", id=12),
    ]


def make_handler(stream: list[str] | None = None, routes: dict | None = None):
    async def handler(ex: Exchange) -> None:
        key = (ex.request.method, ex.request.path)
        if routes and key in routes:
            await routes[key](ex)
        elif key == ("GET", "/policy"):
            ex.respond(200, POLICY)
        elif key == ("POST", "/prepare"):
            asked = ex.request.json()
            profile = asked.get("streamProfile")
            granted = profile if profile in POLICY["streamProfiles"] else POLICY["defaultStreamProfile"]
            negotiated = {
                "streamProfile": granted,
                "outputModuleTypes": [
                    t for t in asked.get("outputModuleTypes", []) if t in ("citation", "table")
                ],
                "providerGroundingDisplay": bool(asked.get("providerGroundingDisplay")),
            }
            ex.respond(200, {"policy": POLICY, "negotiated": negotiated})
        elif key == ("POST", "/conversations"):
            ex.respond(201, {"id": "c1"})
        elif key == ("POST", "/conversations/c1/messages"):
            ex.start_sse()
            for frame in stream or runtime_standard_stream():
                await ex.send(frame)
        else:
            ex.respond(404, {"error": {"code": "not_found", "message": f"no {ex.request.path}"}})

    return handler


async def test_policy_and_headers(fake_server):
    server = await fake_server(make_handler())
    client = ExternalAgentClient(f"{server.url}/", token="tok-123")
    policy = await client.get_effective_policy()
    assert isinstance(policy, PublicExternalAgentPolicy)
    assert policy.capabilities.files is True
    assert policy.domain_tools[0].operation.side_effect_class == "financial"
    assert policy.domain_tools[0].operation.approval_required is True
    assert policy.spend_limits[0].currency == "EUR"
    assert policy.sdk.min_version == "1.0.0"
    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer tok-123"
    assert headers["x-agent-sdk-version"] == SDK_VERSION == "1.0.0"
    assert "tok-123" not in repr(client)


async def test_prepare_reads_what_was_granted(fake_server):
    server = await fake_server(make_handler())
    client = ExternalAgentClient(server.url)
    result = await client.prepare("unknown-profile", ["citation", "chart"], True)
    assert server.requests[0].json() == {
        "streamProfile": "unknown-profile",
        "outputModuleTypes": ["citation", "chart"],
        "providerGroundingDisplay": True,
    }
    assert result.negotiated.stream_profile == "runtime-standard-v1"
    assert result.negotiated.output_module_types == ["citation"]
    assert result.policy.identity.name == "Ledger"


async def test_discover_keeps_invalid_policies(fake_server):
    bad = {
        **POLICY,
        "domainTools": [{"publicName": "x", "operation": {"kind": "k", "sideEffectClass": "maybe"}}],
    }

    async def invalid(ex: Exchange) -> None:
        ex.respond(200, bad)

    server = await fake_server(make_handler(routes={("GET", "/policy"): invalid}))
    result = await ExternalAgentClient(server.url).discover()
    assert result.status == "invalid"
    assert result.raw == bad
    assert "sideEffectClass" in result.error
    with pytest.raises(ProtocolError, match="not a valid PublicExternalAgentPolicy"):
        await ExternalAgentClient(server.url).get_effective_policy()


async def test_discover_statuses(fake_server):
    server = await fake_server(make_handler())
    assert (await ExternalAgentClient(server.url).discover()).status == "declared"
    assert (await ExternalAgentClient(f"{server.url}/nothing-here").discover()).status == "none"


async def test_runtime_standard_stream(fake_server, caplog):
    server = await fake_server(make_handler())
    client = ExternalAgentClient(server.url)
    await client.prepare("runtime-standard-v1", ["citation"], True)
    conversation = await client.create_conversation()
    events = [
        e async for e in client.send_message(conversation.id, "pay inv-7", host_context={"page.url": "/x"})
    ]
    sent = server.requests[-1].json()
    assert sent == {
        "content": "pay inv-7",
        "hostContext": {"page.url": "/x"},
        "streamProfile": "runtime-standard-v1",
        "outputModuleTypes": ["citation"],
    }
    assert server.requests[-1].headers["accept"] == "text/event-stream"
    assert isinstance(events[0], RunStarted) and events[0].sequence == 1
    assert isinstance(events[2], MessageDelta) and events[2].delta == "Paying "
    assert isinstance(events[-1], RunCompleted) and events[-1].sequence == 12
    assert "telemetry:new" in caplog.text  # unknown: skipped and logged
    assert len(events) == 11

    async def replay():
        for e in events:
            yield e

    transcript = await afold(replay())
    assert [(m.id, m.text) for m in transcript.messages] == [("m1", "Paying now.")]
    assert transcript.tool_calls["tc1"].args == {"q": "inv-7"}
    assert transcript.tool_calls["tc1"].result == {"amount": 12}
    assert transcript.modules == [("citation", {"n": 1})]
    assert transcript.grounding[0].url == "https://d.example"
    assert transcript.artifacts["a1"].remote and transcript.artifacts["a1"].id == "a1"
    assert transcript.outcome.kind == "success"
    assert transcript.thread_id == "c1"


async def test_modules_profile(fake_server):
    stream = [
        sse({"runId": "r"}, event="run:started", id=1),
        sse({"type": "table", "data": {"rows": [[1, 2]]}}, event="module", id=2),
        sse({"runId": "r"}, event="run:completed", id=3),
    ]
    server = await fake_server(make_handler(stream))
    events = [
        e async for e in ExternalAgentClient(server.url).send_message("c1", "hi", stream_profile="modules-v1")
    ]
    assert server.requests[0].json()["streamProfile"] == "modules-v1"
    assert isinstance(events[1], ModuleEvent) and events[1].data == {"rows": [[1, 2]]}


async def test_chat_legacy_profile(fake_server):
    stream = [sse({"text": "Hel"}), sse({"text": "lo"}), "data: [DONE]\n\n"]
    server = await fake_server(make_handler(stream))
    client = ExternalAgentClient(server.url)
    events = [e async for e in client.send_message("c1", "hi", stream_profile="chat-legacy-v1")]
    assert [type(e) for e in events] == [LegacyText, LegacyText, Done]

    async def replay():
        for e in events:
            yield e

    transcript = await afold(replay())
    assert [m.text for m in transcript.messages] == ["Hello"]
    assert transcript.outcome.kind == "success"


async def test_legacy_stream_without_done_is_a_protocol_error(fake_server):
    server = await fake_server(make_handler([sse({"text": "Hel"})]))
    client = ExternalAgentClient(server.url)
    with pytest.raises(ProtocolError, match=r"before \[DONE\]"):
        _ = [e async for e in client.send_message("c1", "hi", stream_profile="chat-legacy-v1")]


async def test_approval_pauses_the_stream_until_decided(fake_server):
    decided = asyncio.Event()
    decisions: list[dict] = []

    async def stream(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"runId": "r"}, event="run:started", id=1))
        await ex.send(
            sse(
                {
                    "approvalId": "ap1",
                    "toolCallId": "tc1",
                    "publicName": "pay_invoice",
                    "input": {"amount": 12},
                    "sideEffectClass": "financial",
                    "expiresAt": "2030-01-01T00:00:00Z",
                },
                event="approval:requested",
                id=2,
            )
        )
        await asyncio.wait_for(decided.wait(), 5)
        await ex.send(sse({"approvalId": "ap1", "decision": "approve"}, event="approval:resolved", id=3))
        await ex.send(
            sse({"toolCallId": "tc1", "status": "ok", "output": "paid"}, event="tool:completed", id=4)
        )
        await ex.send(sse({"runId": "r"}, event="run:completed", id=5))

    async def decide(ex: Exchange) -> None:
        if decisions:
            ex.respond(409, {"error": {"code": "approval_already_decided"}})
            return
        decisions.append(ex.request.json())
        decided.set()
        ex.respond(200, {"approvalId": "ap1", "decision": "approve"})

    routes = {("POST", "/conversations/c1/messages"): stream, ("POST", "/approvals/ap1"): decide}
    server = await fake_server(make_handler(routes=routes))
    client = ExternalAgentClient(server.url)
    received = []
    async for event in client.send_message("c1", "pay"):
        received.append(event)
        if isinstance(event, ApprovalRequested):
            answer = await client.decide_approval("ap1", "approve", edited_input={"amount": 10})
            assert answer == {"approvalId": "ap1", "decision": "approve"}
    assert decisions == [{"decision": "approve", "editedInput": {"amount": 10}}]
    with pytest.raises(ApprovalAlreadyDecidedError):
        await client.decide_approval("ap1", "deny")

    async def replay():
        for e in received:
            yield e

    transcript = await afold(replay())
    assert transcript.approvals["ap1"].decision == "approve"
    assert transcript.approvals["ap1"].side_effect_class == "financial"
    assert transcript.tool_calls["tc1"].result == "paid"


async def test_closing_the_message_stream_closes_the_connection(fake_server):
    async def stream(ex: Exchange) -> None:
        ex.start_sse()
        await ex.send(sse({"runId": "r"}, event="run:started", id=1))
        await asyncio.wait_for(ex.disconnected.wait(), 5)

    server = await fake_server(make_handler(routes={("POST", "/conversations/c1/messages"): stream}))
    async with httpx.AsyncClient() as http:
        events = ExternalAgentClient(server.url, client=http).send_message("c1", "hi")
        assert isinstance(await anext(events), RunStarted)
        await events.aclose()
        await asyncio.wait_for(server.exchanges[0].disconnected.wait(), 2)


async def test_idle_timeout_on_message_stream(fake_server):
    async def stream(ex: Exchange) -> None:
        ex.start_sse()
        await asyncio.sleep(5)

    server = await fake_server(make_handler(routes={("POST", "/conversations/c1/messages"): stream}))
    client = ExternalAgentClient(server.url, timeout=httpx.Timeout(2.0, read=0.2))
    with pytest.raises(AgentTimeoutError):
        _ = [e async for e in client.send_message("c1", "hi")]


ERROR_TABLE = [
    (400, "invalid_request", InvalidRequestError),
    (403, "unsupported_capability", UnsupportedCapabilityError),
    (404, "not_found", NotFoundError),
    (409, "approval_already_decided", ApprovalAlreadyDecidedError),
    (410, "approval_expired", ApprovalExpiredError),
    (413, "file_too_large", FileTooLargeError),
    (415, "unsupported_media_type", UnsupportedMediaTypeError),
    (422, "host_context_rejected", HostContextRejectedError),
    (426, "sdk_version_unsupported", SdkVersionUnsupportedError),
    (429, "rate_limited", RateLimitedError),
    (429, "spend_limit_exceeded", SpendLimitExceededError),
    (500, "internal", InternalAgentError),
]


@pytest.mark.parametrize(("status", "code", "cls"), ERROR_TABLE)
async def test_every_row_of_the_error_table_over_http(fake_server, status, code, cls):
    error = {"code": code, "message": f"{code} happened", "capability": "files", "requestId": "req-9"}

    async def fail(ex: Exchange) -> None:
        ex.respond(status, {"error": error}, {"Retry-After": "7"} if status == 429 else None)

    routes = {("POST", "/conversations"): fail, ("POST", "/conversations/c1/messages"): fail}
    server = await fake_server(make_handler(routes=routes))
    client = ExternalAgentClient(server.url, token="secret-token")
    with pytest.raises(cls) as info:
        await client.create_conversation()
    exc = info.value
    assert type(exc) is cls
    assert exc.code == code
    assert exc.status == status
    assert exc.capability == "files"
    assert exc.request_id == "req-9"
    assert exc.retry_after == (7.0 if status == 429 else None)
    assert "secret-token" not in str(exc)
    # The same mapping applies before a stream starts.
    with pytest.raises(cls):
        _ = [e async for e in client.send_message("c1", "hi")]


async def test_upload_checks_the_policy_locally_before_sending(fake_server):
    async def upload(ex: Exchange) -> None:
        assert b'name="file"' in ex.request.body
        assert b"Content-Type: image/png" in ex.request.body
        ex.respond(201, {"id": "f1", "name": "pic.png", "mimeType": "image/png", "size": len(PNG)})

    server = await fake_server(make_handler(routes={("POST", "/files"): upload}))
    client = ExternalAgentClient(server.url)
    await client.get_effective_policy()

    info = await client.upload_file(PNG, "pic.png", declared_mime_type="image/png")
    assert (info.id, info.mime_type) == ("f1", "image/png")
    sent = len(server.requests)

    with pytest.raises(FileTooLargeError, match="at most 1000"):
        await client.upload_file(PNG + b"\x00" * 2000, "big.png")
    # Declared as PNG, but the bytes are a PDF: judged on the bytes.
    with pytest.raises(UnsupportedMediaTypeError, match="application/pdf"):
        await client.upload_file(b"%PDF-1.7\n" + b"0" * 50, "fake.png", declared_mime_type="image/png")
    no_files = PublicExternalAgentPolicy.model_validate({**POLICY, "capabilities": {"files": False}})
    with pytest.raises(UnsupportedCapabilityError) as info:
        await client.upload_file(PNG, "pic.png", policy=no_files)
    assert info.value.capability == "files"
    no_upload = PublicExternalAgentPolicy.model_validate({**POLICY, "filePolicy": {"upload": False}})
    with pytest.raises(UnsupportedCapabilityError):
        await client.upload_file(PNG, "pic.png", policy=no_upload)
    assert len(server.requests) == sent  # nothing refused was sent


def test_sniff_mime_type():
    assert sniff_mime_type(PNG, "text/plain") == "image/png"
    assert sniff_mime_type(b"a,b\n1,2\n", "text/csv") == "text/csv"
    assert sniff_mime_type(b"hello", "image/png") == "text/plain"
    assert sniff_mime_type(b"\xff\xfe\x00\x01garbage") == "application/octet-stream"


async def test_artifacts_interactions_and_files(fake_server):
    async def artifacts(ex: Exchange) -> None:
        ex.respond(
            200, {"artifacts": [{"id": "a1", "name": "r.pdf", "mimeType": "application/pdf", "size": 3}]}
        )

    async def artifact(ex: Exchange) -> None:
        ex.respond(200, {"id": "a1", "name": "r.pdf"})

    async def interaction(ex: Exchange) -> None:
        ex.respond(204)

    async def file(ex: Exchange) -> None:
        ex.respond(200, {"id": "f1", "name": "x.png", "mimeType": "image/png", "size": 4})

    routes = {
        ("GET", "/conversations/c1/artifacts"): artifacts,
        ("GET", "/artifacts/a1"): artifact,
        ("POST", "/interactions"): interaction,
        ("GET", "/files/f1"): file,
    }
    server = await fake_server(make_handler(routes=routes))
    client = ExternalAgentClient(server.url)
    listed = await client.list_artifacts("c1")
    assert [(a.id, a.mime_type) for a in listed] == [("a1", "application/pdf")]
    assert (await client.get_artifact("a1")).name == "r.pdf"
    assert (await client.get_file("f1")).size == 4
    assert await client.send_interaction("c1", "m1", "up", comment="nice") is None
    assert json.loads(server.requests[-1].body) == {
        "conversationId": "c1",
        "messageId": "m1",
        "type": "feedback",
        "value": "up",
        "comment": "nice",
    }


async def test_a_json_answer_that_is_not_json_is_a_protocol_error(fake_server):
    async def broken(ex: Exchange) -> None:
        ex.respond(200, "{oops", {"Content-Type": "application/json"})

    server = await fake_server(make_handler(routes={("GET", "/policy"): broken}))
    with pytest.raises(ProtocolError, match="not valid JSON"):
        await ExternalAgentClient(server.url).get_effective_policy()
