"""The policy models: camelCase on the wire, validation, helpers."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agents_ui.sdk.external.policy import (
    EXTERNAL_EVENT_TYPES,
    Done,
    FilePolicy,
    LegacyText,
    MessageDelta,
    Negotiated,
    PrepareResult,
    PublicExternalAgentPolicy,
    RunFailed,
)


def test_minimal_policy_has_conservative_defaults():
    policy = PublicExternalAgentPolicy.model_validate({})
    assert policy.capabilities.files is False
    assert policy.file_policy.upload is False
    assert policy.public_error_detail == "standard"
    assert policy.sdk is None


def test_round_trip_is_camel_case_and_keeps_unknown_fields():
    wire = {
        "capabilities": {"messages": True},
        "defaultStreamProfile": "modules-v1",
        "domainTools": [
            {
                "publicName": "delete_user",
                "operation": {
                    "kind": "delete",
                    "sideEffectClass": "destructive",
                    "idempotency": "idempotent",
                    "approvalRequired": True,
                },
                "status": "degraded",
            }
        ],
        "futureField": {"x": 1},
    }
    policy = PublicExternalAgentPolicy.model_validate(wire)
    assert policy.default_stream_profile == "modules-v1"
    assert policy.domain_tools[0].status == "degraded"
    dumped = json.loads(policy.model_dump_json())
    assert dumped["domainTools"][0]["operation"]["sideEffectClass"] == "destructive"
    assert dumped["futureField"] == {"x": 1}
    # Python names work too.
    assert Negotiated(stream_profile="modules-v1").model_dump() == {
        "streamProfile": "modules-v1",
        "outputModuleTypes": [],
        "providerGroundingDisplay": False,
    }


def test_unknown_side_effect_class_is_invalid():
    with pytest.raises(ValidationError, match="sideEffectClass"):
        PublicExternalAgentPolicy.model_validate(
            {
                "domainTools": [
                    {
                        "publicName": "x",
                        "operation": {"kind": "k", "sideEffectClass": "??", "idempotency": "idempotent"},
                    }
                ]
            }
        )


def test_prepare_result():
    result = PrepareResult.model_validate({"policy": {}, "negotiated": {"streamProfile": "chat-legacy-v1"}})
    assert result.negotiated.stream_profile == "chat-legacy-v1"


@pytest.mark.parametrize(
    ("allowed", "mime", "ok"),
    [
        (["image/png"], "image/png", True),
        (["image/*"], "image/jpeg", True),
        (["image/png"], "IMAGE/PNG; charset=binary", True),
        (["image/png"], "application/pdf", False),
        ([], "text/plain", False),
    ],
)
def test_allows_mime_type(allowed, mime, ok):
    assert FilePolicy(allowed_mime_types=allowed).allows_mime_type(mime) is ok


def test_events_encode_as_sse_frames():
    assert MessageDelta(message_id="m", delta="x").to_sse(4) == (
        'id: 4\nevent: message:delta\ndata: {"messageId":"m","delta":"x"}\n\n'
    )
    assert LegacyText(text="hi").to_sse() == 'data: {"text": "hi"}\n\n'
    assert Done().to_sse() == "data: [DONE]\n\n"
    assert set(EXTERNAL_EVENT_TYPES) >= {
        "run:started",
        "approval:requested",
        "module",
        "grounding",
        "run:failed",
    }


def test_run_failed_message_from_either_shape():
    assert RunFailed(error="boom").message == "boom"
    assert (
        RunFailed.model_validate({"error": {"code": "internal", "message": "db down"}}).message == "db down"
    )
