"""Every declaration shape into one profile: the facts, and where each one came from."""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import AgentCapabilities

from agents_ui.capabilities import (
    UNSAID,
    Fact,
    Kind,
    Provenance,
    SubagentInfo,
    ToolInfo,
    read_agui,
    read_declaration,
    read_policy,
)
from agents_ui.capabilities.provenance import RAW_TEXT_LIMIT, any_flag
from agents_ui.sdk.external.policy import Negotiated, PublicExternalAgentPolicy
from tests.capabilities.declarations import ADK_NOTHING, CREWAI, STANDARD, STRANDS


def where(fact: Fact[Any]) -> list[tuple[str, str, Any, Kind]]:
    return [(p.source, p.path, p.raw, p.kind) for p in fact.provenance]


# ------------------------------------------------------------------------------------------------
# The standard shape


def test_a_standard_declaration_gives_every_category_with_its_field() -> None:
    profile = read_agui(STANDARD)

    assert profile.shape.key == "agui" and profile.protocol == "agui"
    assert profile.identity.name.value == "Analyst"
    assert profile.identity.type.value == "langgraph"
    assert profile.identity.metadata.value == {"region": "eu"}
    assert profile.identity.documentation_url.value == "https://docs.example/analyst"
    transport = profile.transport
    assert (
        transport.streaming.value,
        transport.websocket.value,
        transport.http_binary.value,
        transport.push_notifications.value,
        transport.resumable.value,
    ) == (True, False, True, True, True)
    assert profile.tools.items.value == (ToolInfo("query", "Query a table", {"type": "object"}),)
    assert profile.tools.parallel_calls.value is True and profile.tools.client_provided.value is True
    assert profile.output.mime_types.value == ("application/json",)
    assert (profile.state.memory.value, profile.state.persistent_state.value) == (True, False)
    assert profile.multi_agent.subagents.value == (SubagentInfo("charts"),)
    assert profile.multimodal.input.audio.value is True and profile.multimodal.input.video.value is False
    assert profile.multimodal.output.image.value is True and profile.multimodal.output.audio.value is False
    execution = profile.execution
    assert (execution.code_execution.value, execution.sandboxed.value) == (True, False)
    assert (execution.max_iterations.value, execution.max_execution_time.value) == (12, 120000)
    hitl = profile.human_in_the_loop
    assert (hitl.approvals.value, hitl.interventions.value, hitl.feedback.value) == (True, True, True)
    assert (hitl.interrupts.value, hitl.approve_with_edits.value) == (True, False)
    assert profile.limits.requests_per_minute.value == 6
    assert profile.files.max_bytes.value == 5242880
    assert profile.custom.value == STANDARD["custom"]
    assert profile.extensions == ()


def test_each_fact_names_its_source_field_raw_value_and_kind() -> None:
    profile = read_agui(STANDARD)

    assert where(profile.transport.resumable) == [
        ("AG-UI capabilities", "transport.resumable", True, Kind.DECLARED)
    ]
    assert where(profile.limits.requests_per_minute) == [
        ("AG-UI capabilities", "custom.rateLimit.maxRequestsPerMinute", 6, Kind.DECLARED)
    ]


def test_the_model_and_its_wire_json_read_the_same() -> None:
    assert read_agui(AgentCapabilities.model_validate(STANDARD)) == read_agui(STANDARD)


def test_absent_is_unknown_with_the_field_it_would_be_in() -> None:
    fact = read_agui({"reasoning": {"supported": True}}).transport.streaming

    assert fact.value is None and fact.sayable
    assert where(fact) == [("AG-UI capabilities", "transport.streaming", None, Kind.DECLARED)]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://docs.example", "https://docs.example"),
        ("HTTP://docs.example", "HTTP://docs.example"),
        ("javascript:alert(1)", None),
        ("data:text/html,<b>x</b>", None),
        ("//docs.example", None),
    ],
)
def test_documentation_url_is_http_or_https_only(url: str, shown: str | None) -> None:
    fact = read_agui({"identity": {"documentationUrl": url}}).identity.documentation_url

    assert fact.value == shown
    assert fact.origin.raw == url
    if shown is None:
        assert "http(s)" in fact.origin.note


def test_a_value_of_the_wrong_type_is_not_read_and_says_why() -> None:
    profile = read_agui(
        {"reasoning": {"supported": "yes"}, "execution": {"maxIterations": True}, "custom": {"rateLimit": 5}}
    )

    assert profile.reasoning.supported.value is None
    assert profile.reasoning.supported.origin.note == "not true or false: not read"
    assert profile.execution.max_iterations.value is None
    assert profile.limits.requests_per_minute.value is None


def test_the_legacy_sub_agents_spelling_is_read() -> None:
    fact = read_agui({"multiAgent": {"subAgents": [{"name": "a", "description": "A"}, {"nope": 1}]}})

    assert fact.multi_agent.subagents.value == (SubagentInfo("a", "A"),)
    assert fact.multi_agent.subagents.origin.path == "multiAgent.subAgents"


def test_non_standard_fields_of_a_standard_declaration_are_kept_not_read() -> None:
    profile = read_agui({"reasoning": {"supported": True, "depth": 3}, "mood": "sunny"})

    assert [(p.path, p.raw) for p in profile.extensions] == [("reasoning.depth", 3), ("mood", "sunny")]
    assert profile.reasoning.supported.value is True


def test_custom_input_limits_are_read_only_where_sent() -> None:
    absent = read_agui({"multimodal": {"input": {"pdf": True}}}).files

    assert absent.max_bytes is UNSAID and absent.mime_types is UNSAID
    sent = read_agui({"custom": {"input": {"maxBytes": 1024, "mimeTypes": ["application/pdf"]}}}).files
    assert (sent.max_bytes.value, sent.mime_types.value) == (1024, ("application/pdf",))


# ------------------------------------------------------------------------------------------------
# Google ADK's {}: the agent declares nothing


def test_an_empty_declaration_declares_nothing() -> None:
    profile = read_agui(ADK_NOTHING)

    assert profile.shape.key == "agui-empty"
    assert profile.shape.declares_nothing
    assert profile.protocol == "agui"
    assert profile.reasoning.supported.value is None and profile.reasoning.supported.sayable
    assert profile.extensions == ()


def test_no_declaration_is_not_an_empty_one() -> None:
    profile = read_declaration()

    assert profile.shape.key == "none" and profile.shape.declares_nothing
    assert profile.protocol is None
    assert profile.reasoning.supported is UNSAID


# ------------------------------------------------------------------------------------------------
# AWS Strands


def test_strands_flags_are_read_into_the_facts_they_mean() -> None:
    profile = read_agui(STRANDS)

    assert profile.shape.key == "strands" and profile.protocol == "agui"
    hitl = profile.human_in_the_loop
    assert where(hitl.interrupts) == [
        ("AWS Strands capabilities", "features.interrupts", True, Kind.DECLARED)
    ]
    assert where(hitl.approve_with_edits) == [
        ("AWS Strands capabilities", "features.toolCallInterruptEditedArgs", True, Kind.DECLARED)
    ]
    assert profile.transport.streaming.value is True
    assert profile.transport.streaming.origin.path == "transports.sse"
    assert profile.transport.resumable.value is False
    assert profile.transport.websocket.value is False
    assert profile.transport.http_binary.value is True
    assert [p.path for p in profile.transport.http_binary.provenance] == [
        "features.protobuf",
        "transports.protobuf",
    ]
    assert (profile.state.snapshots.value, profile.state.deltas.value) == (True, False)
    assert profile.reasoning.supported.value is True
    assert profile.reasoning.supported.origin.kind is Kind.INFERRED


def test_what_the_strands_shape_cannot_say_stays_unknown() -> None:
    profile = read_agui(STRANDS)

    for fact in (
        profile.identity.name,
        profile.human_in_the_loop.approvals,
        profile.human_in_the_loop.feedback,
        profile.multi_agent.subagents,
        profile.multimodal.input.image,
        profile.execution.code_execution,
        profile.tools.items,
        profile.custom,
    ):
        assert fact is UNSAID


def test_strands_fields_without_a_fact_are_kept_as_extensions() -> None:
    paths = {p.path: p.raw for p in read_agui(STRANDS).extensions}

    assert paths["protocol"] == "1"
    assert paths["features.messagesSnapshot"] is True
    assert paths["features.multipleRunsPerStream"] is False
    assert paths["events"] == STRANDS["events"]
    assert "features.interrupts" not in paths


def test_strands_in_chunk_mode_still_calls_tools() -> None:
    events = {**STRANDS["events"], "TOOL_CALL_START": False, "TOOL_CALL_CHUNK": True}

    tools = read_agui({**STRANDS, "events": events}).tools.supported

    assert tools.value is True
    assert tools.origin.path == "events.TOOL_CALL_CHUNK"


# ------------------------------------------------------------------------------------------------
# CrewAI


def test_crewai_reads_as_standard_with_its_own_categories_kept() -> None:
    profile = read_agui(CREWAI)

    assert profile.shape.key == "crewai"
    assert profile.identity.type.value == "crewai"
    assert profile.human_in_the_loop.supported.value is True
    assert profile.human_in_the_loop.interrupts.value is False
    assert profile.human_in_the_loop.approvals.value is None
    assert profile.human_in_the_loop.mechanism.value == "frontend-tool-calls"
    assert (profile.state.snapshots.value, profile.state.deltas.value) == (True, False)
    assert profile.reasoning.supported.value is True
    extensions = {p.path: p for p in profile.extensions}
    assert set(extensions) >= {"wireShape", "rawEvents", "conversationalFlows", "crewChat"}
    assert {"identity.crewaiVersion", "transport.streamFrames", "reasoning.litellmChannel"} <= set(extensions)
    assert "triples" in extensions["wireShape"].note


def test_crewai_frontend_tool_calls_mean_it_takes_client_tools() -> None:
    fact = read_agui(CREWAI).tools.client_provided

    assert fact.value is True
    assert where(fact)[0] == (
        "AG-UI capabilities",
        "humanInTheLoop.mechanism",
        "frontend-tool-calls",
        Kind.INFERRED,
    )


def test_a_declared_client_provided_wins_over_the_mechanism() -> None:
    declared = {**CREWAI, "tools": {"clientProvided": False}}

    assert read_agui(declared).tools.client_provided.value is False


# ------------------------------------------------------------------------------------------------
# An unknown shape


def test_an_object_in_no_known_shape_is_kept_raw_and_nothing_is_read() -> None:
    raw = {"abilities": ["chat", "search"], "version": 2}

    profile = read_agui(raw)

    assert profile.shape.key == "unknown" and profile.shape.unknown
    assert profile.raw == raw
    assert [(p.path, p.raw) for p in profile.unread] == [("abilities", ["chat", "search"]), ("version", 2)]
    assert all(p.source == "declaration in an unknown shape" for p in profile.unread)
    assert profile.extensions == ()
    assert profile.reasoning.supported is UNSAID


# ------------------------------------------------------------------------------------------------
# The external agent's policy and its negotiation


def policy(**declaration: Any) -> PublicExternalAgentPolicy:
    return PublicExternalAgentPolicy.model_validate(declaration)


def test_policy_fields_map_to_the_same_facts() -> None:
    profile = read_policy(
        policy(
            identity={"name": "Support"},
            capabilities={"messages": True, "files": True, "interactions": True},
            filePolicy={"upload": True, "maxUploadBytes": 0, "allowedMimeTypes": ["image/png"]},
            rateLimits=[{"scope": "user", "limit": 10, "windowSeconds": 60}],
        )
    )

    assert profile.shape.key == "external" and profile.protocol == "external"
    assert profile.identity.name.value == "Support"
    assert where(profile.transport.streaming) == [
        ("external agent policy", "capabilities.messages", True, Kind.DECLARED)
    ]
    assert where(profile.human_in_the_loop.feedback)[0][1] == "capabilities.interactions"
    assert (profile.files.enabled.value, profile.files.upload.value) == (True, True)
    assert profile.files.max_bytes.value == 0
    assert profile.files.mime_types.value == ("image/png",)
    assert profile.limits.rate_limits.value[0].window_seconds == 60


def test_a_policy_default_is_not_a_declaration() -> None:
    # The SDK defaults capabilities.files to false; the agent never sent it.
    profile = read_policy(policy(capabilities={"messages": True}))

    assert profile.files.enabled.value is None and profile.files.enabled.sayable


def test_what_follows_from_the_external_protocol_is_inferred() -> None:
    profile = read_policy(policy())

    assert profile.tools.client_provided.value is False
    assert profile.tools.client_provided.origin.kind is Kind.INFERRED
    assert profile.human_in_the_loop.approve_with_edits.value is True
    assert profile.human_in_the_loop.approve_with_edits.origin.kind is Kind.INFERRED


def test_domain_tools_keep_the_protocol_defaults_and_name_the_ones_needing_approval() -> None:
    profile = read_policy(
        policy(
            domainTools=[
                {
                    "publicName": "refund",
                    "operation": {
                        "kind": "command",
                        "sideEffectClass": "financial",
                        "idempotency": "non_idempotent",
                        "approvalRequired": True,
                    },
                },
                {
                    "publicName": "look",
                    "operation": {"kind": "query", "sideEffectClass": "read", "idempotency": "idempotent"},
                },
            ]
        )
    )

    refund, look = profile.tools.items.value
    assert (refund.status, refund.approval_required, look.approval_required) == ("active", True, False)
    assert profile.tools.needing_approval.value == ("refund",)
    assert profile.tools.needing_approval.origin.path == "domainTools[].operation.approvalRequired"


def test_negotiation_is_unknown_until_prepared_then_read() -> None:
    before = read_policy(policy(streamProfiles=["a"]))
    after = read_policy(
        policy(streamProfiles=["a"]),
        Negotiated.model_validate({"streamProfile": "a", "outputModuleTypes": []}),
    )

    assert not before.negotiation.prepared
    assert before.negotiation.stream_profile.origin.path == "negotiated.streamProfile"
    assert after.negotiation.prepared
    assert where(after.negotiation.stream_profile) == [
        ("negotiation (prepare)", "negotiated.streamProfile", "a", Kind.NEGOTIATED)
    ]
    assert after.negotiation.output_module_types.value == ()
    assert after.negotiation.grounding.value is None


def test_an_agent_declares_one_or_the_other() -> None:
    with pytest.raises(ValueError, match="not both"):
        read_declaration(capabilities={}, policy={})


# ------------------------------------------------------------------------------------------------
# Provenance itself


def test_a_raw_value_is_shown_short() -> None:
    long = Provenance("AG-UI capabilities", "custom", {"blob": "x" * 5000})

    assert len(long.raw_text) == RAW_TEXT_LIMIT
    assert (
        str(Provenance("runs", "reasoning_seen", True, Kind.OBSERVED))
        == "runs > reasoning_seen = true (observed)"
    )
    assert Provenance("AG-UI capabilities", "x").raw_text == "absent"


def test_a_cyclic_raw_value_is_shown_without_failing() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop

    assert Provenance("x", "y", loop).raw_text == "(dict)"


@pytest.mark.parametrize(
    ("values", "expected"),
    [((True, None), True), ((False, None), False), ((None, None), None), ((False, True), True)],
)
def test_several_fields_saying_one_thing(values: tuple, expected: bool | None) -> None:
    facts = [Fact(v, (Provenance("s", f"f{i}", v),)) for i, v in enumerate(values)]

    combined = any_flag(*facts)

    assert combined.value is expected
    assert {p.path for p in combined.provenance} == {"f0", "f1"}
    assert any_flag(UNSAID, UNSAID) is UNSAID


@pytest.mark.parametrize(
    "raw",
    [
        {f"field{i}": i for i in range(5000)},  # an unknown shape
        {"reasoning": {"supported": True}, **{f"extra{i}": i for i in range(5000)}},
        {"reasoning": {"supported": True, **{f"extra{i}": i for i in range(5000)}}},
        {**STRANDS, "features": {**STRANDS["features"], **{f"f{i}": True for i in range(5000)}}},
    ],
)
def test_fields_kept_unread_are_bounded(raw: dict) -> None:
    profile = read_agui(raw)

    kept = (*profile.extensions, *profile.unread)
    assert len(kept) <= 51
    assert "more fields, not shown" in kept[-1].note
