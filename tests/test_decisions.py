"""The plan of controls: every control against absent, false and true in each source.

Declarations are built from wire JSON with the real models (ag_ui.core.AgentCapabilities and the
SDK's policy models), exactly as discovery would parse them.
"""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import AgentCapabilities

from agents_ui import decisions
from agents_ui.capabilities import RateLimit, SubagentInfo, read_card
from agents_ui.decisions import (
    CONTROL_NAMES,
    Decision,
    Observations,
    Plan,
    Reason,
    UserAbilities,
    decide,
)
from agents_ui.sdk.external.policy import Negotiated, PublicExternalAgentPolicy
from tests.capabilities.declarations import CREWAI, STANDARD, STRANDS

SHOWN, HIDDEN, DISABLED = Decision.SHOWN, Decision.HIDDEN, Decision.DISABLED


def agui(**declaration: Any) -> AgentCapabilities:
    return AgentCapabilities.model_validate(declaration)


def external(**declaration: Any) -> PublicExternalAgentPolicy:
    return PublicExternalAgentPolicy.model_validate(declaration)


def granted(**negotiated: Any) -> Negotiated:
    return Negotiated.model_validate({"streamProfile": "runtime-standard-v1", **negotiated})


def links(plan: Plan, name: str) -> list[tuple[str, str, Any]]:
    return [(reason.source, reason.field, reason.value) for reason in plan[name].reasons]


def texts(plan: Plan, name: str) -> str:
    return " | ".join(reason.text for reason in plan[name].reasons)


def tool(name: str, **operation: Any) -> dict[str, Any]:
    return {
        "publicName": name,
        "description": f"{name} things",
        "operation": {"kind": "call", "sideEffectClass": "read", "idempotency": "idempotent", **operation},
        "inputSchema": {"type": "object"},
    }


SUBAGENTS = [{"name": "writer", "description": "Writes"}, {"name": "critic"}]
AGUI_TOOLS = [{"name": "search", "description": "Search the web", "parameters": {"type": "object"}}]


# ------------------------------------------------------------------------------------------------
# 1. What an AG-UI agent declares: absent, false and true for every control it can declare.

AGUI_CASES = [
    # control, declaration, decision, a reason (source, field, value) that must be in the chain
    ("reasoning", {}, HIDDEN, ("declared", "reasoning.supported", None)),
    ("reasoning", {"reasoning": {"supported": False}}, HIDDEN, ("declared", "reasoning.supported", False)),
    ("reasoning", {"reasoning": {"supported": True}}, SHOWN, ("declared", "reasoning.supported", True)),
    ("subagents", {}, HIDDEN, ("declared", "multiAgent.subagents", None)),
    ("subagents", {"multiAgent": {"subagents": []}}, HIDDEN, ("declared", "multiAgent.subagents", [])),
    ("subagents", {"multiAgent": {"supported": False}}, HIDDEN, ("declared", "multiAgent.supported", False)),
    (
        "subagents",
        {"multiAgent": {"subagents": SUBAGENTS}},
        SHOWN,
        ("declared", "multiAgent.subagents", ["writer", "critic"]),
    ),
    ("upload", {}, HIDDEN, ("declared", "multimodal.input.pdf", None)),
    (
        "upload",
        {
            "multimodal": {
                "input": {"image": False, "audio": False, "video": False, "pdf": False, "file": False}
            }
        },
        HIDDEN,
        ("declared", "multimodal.input.file", False),
    ),
    # One explicit false says nothing about the other modalities: still unknown.
    ("upload", {"multimodal": {"input": {"image": False}}}, HIDDEN, ("default", "upload", None)),
    ("upload", {"multimodal": {"input": {"pdf": True}}}, SHOWN, ("declared", "multimodal.input.pdf", True)),
    ("approvals", {}, HIDDEN, ("declared", "humanInTheLoop.approvals", None)),
    (
        "approvals",
        {"humanInTheLoop": {"approvals": False, "interrupts": False}},
        HIDDEN,
        ("declared", "humanInTheLoop.interrupts", False),
    ),
    (
        "approvals",
        {"humanInTheLoop": {"supported": False}},
        HIDDEN,
        ("declared", "humanInTheLoop.supported", False),
    ),
    (
        "approvals",
        {"humanInTheLoop": {"approvals": True}},
        SHOWN,
        ("declared", "humanInTheLoop.approvals", True),
    ),
    (
        "approvals",
        {"humanInTheLoop": {"interrupts": True}},
        SHOWN,
        ("declared", "humanInTheLoop.interrupts", True),
    ),
    ("tools", {}, HIDDEN, ("declared", "tools.supported", None)),
    (
        "tools",
        {"tools": {"supported": False, "items": AGUI_TOOLS}},
        HIDDEN,
        ("declared", "tools.supported", False),
    ),
    ("tools", {"tools": {"supported": True, "items": []}}, HIDDEN, ("declared", "tools.items", [])),
    ("tools", {"tools": {"supported": True}}, HIDDEN, ("default", "tools", None)),
    (
        "tools",
        {"tools": {"supported": True, "items": AGUI_TOOLS}},
        SHOWN,
        ("declared", "tools.items", ["search"]),
    ),
    ("state", {}, HIDDEN, ("declared", "state.snapshots", None)),
    ("state", {"state": {"snapshots": False, "deltas": False}}, HIDDEN, ("declared", "state.deltas", False)),
    ("state", {"state": {"deltas": True}}, SHOWN, ("declared", "state.deltas", True)),
    ("structured-output", {}, HIDDEN, ("declared", "output.structuredOutput", None)),
    (
        "structured-output",
        {"output": {"structuredOutput": False}},
        HIDDEN,
        ("declared", "output.structuredOutput", False),
    ),
    (
        "structured-output",
        {"output": {"structuredOutput": True}},
        SHOWN,
        ("declared", "output.structuredOutput", True),
    ),
    ("feedback", {}, HIDDEN, ("declared", "humanInTheLoop.feedback", None)),
    (
        "feedback",
        {"humanInTheLoop": {"feedback": False}},
        HIDDEN,
        ("declared", "humanInTheLoop.feedback", False),
    ),
    (
        "feedback",
        {"humanInTheLoop": {"feedback": True}},
        SHOWN,
        ("declared", "humanInTheLoop.feedback", True),
    ),
    ("stop", {}, HIDDEN, ("declared", "transport.streaming", None)),
    (
        "stop",
        {"transport": {"streaming": False}, "humanInTheLoop": {"interventions": False}},
        HIDDEN,
        ("declared", "transport.streaming", False),
    ),
    ("stop", {"transport": {"streaming": True}}, SHOWN, ("declared", "transport.streaming", True)),
    (
        "stop",
        {"humanInTheLoop": {"interventions": True}},
        SHOWN,
        ("declared", "humanInTheLoop.interventions", True),
    ),
    ("limits", {}, HIDDEN, ("declared", "execution.maxIterations", None)),
    ("limits", {"execution": {"maxIterations": 8}}, SHOWN, ("declared", "execution.maxIterations", 8)),
    (
        "limits",
        {"execution": {"maxExecutionTime": 30000}},
        SHOWN,
        ("declared", "execution.maxExecutionTime", 30000),
    ),
    # AG-UI has no field for these: never declared, so hidden (not unsupported).
    ("grounding", {"reasoning": {"supported": True}}, HIDDEN, ("declared", "capabilities", None)),
    ("host-context", {}, HIDDEN, ("declared", "capabilities", None)),
    ("stream-profile", {}, HIDDEN, ("declared", "capabilities", None)),
]


@pytest.mark.parametrize(("name", "declaration", "decision", "reason"), AGUI_CASES)
def test_agui_declaration(name: str, declaration: dict, decision: Decision, reason: tuple) -> None:
    plan = decide(capabilities=agui(**declaration))

    assert plan[name].decision == decision, texts(plan, name)
    assert reason in links(plan, name)
    assert plan.protocol == "agui"


# ------------------------------------------------------------------------------------------------
# 2. What an external agent's policy declares.

FILES_ON = {
    "capabilities": {"files": True},
    "filePolicy": {"upload": True, "allowedMimeTypes": ["image/png"]},
}

EXTERNAL_CASES = [
    ("upload", {}, HIDDEN, ("declared", "capabilities.files", None)),
    (
        "upload",
        {"capabilities": {"files": False}, "filePolicy": {"upload": True}},
        HIDDEN,
        ("declared", "capabilities.files", False),
    ),
    (
        "upload",
        {"capabilities": {"files": True}, "filePolicy": {"upload": False}},
        HIDDEN,
        ("declared", "filePolicy.upload", False),
    ),
    # Files without a file policy: unknown, not unsupported.
    ("upload", {"capabilities": {"files": True}}, HIDDEN, ("default", "upload", None)),
    (
        "upload",
        {"capabilities": {"files": True}, "filePolicy": {"upload": True, "allowedMimeTypes": []}},
        HIDDEN,
        ("declared", "filePolicy.allowedMimeTypes", []),
    ),
    ("upload", FILES_ON, SHOWN, ("declared", "filePolicy.allowedMimeTypes", ["image/png"])),
    ("approvals", {}, HIDDEN, ("declared", "capabilities.approvals", None)),
    (
        "approvals",
        {"capabilities": {"approvals": False}},
        HIDDEN,
        ("declared", "capabilities.approvals", False),
    ),
    ("approvals", {"capabilities": {"approvals": True}}, SHOWN, ("declared", "capabilities.approvals", True)),
    (
        "approvals",
        {"domainTools": [tool("pay", approvalRequired=True), tool("look")]},
        SHOWN,
        ("declared", "domainTools[].operation.approvalRequired", ["pay"]),
    ),
    ("tools", {}, HIDDEN, ("declared", "domainTools", None)),
    ("tools", {"domainTools": []}, HIDDEN, ("declared", "domainTools", [])),
    ("tools", {"domainTools": [tool("look")]}, SHOWN, ("declared", "domainTools", ["look"])),
    ("feedback", {}, HIDDEN, ("declared", "capabilities.interactions", None)),
    (
        "feedback",
        {"capabilities": {"interactions": False}},
        HIDDEN,
        ("declared", "capabilities.interactions", False),
    ),
    (
        "feedback",
        {"capabilities": {"interactions": True}},
        SHOWN,
        ("declared", "capabilities.interactions", True),
    ),
    ("stop", {}, HIDDEN, ("declared", "capabilities.messages", None)),
    ("stop", {"capabilities": {"messages": False}}, HIDDEN, ("declared", "capabilities.messages", False)),
    ("stop", {"capabilities": {"messages": True}}, SHOWN, ("declared", "capabilities.messages", True)),
    ("limits", {}, HIDDEN, ("declared", "rateLimits", None)),
    ("limits", {"rateLimits": [], "spendLimits": []}, HIDDEN, ("declared", "spendLimits", [])),
    (
        "limits",
        {"spendLimits": [{"scope": "user", "limit": 5.0, "currency": "EUR", "windowSeconds": 86400}]},
        SHOWN,
        (
            "declared",
            "spendLimits",
            [{"scope": "user", "limit": 5.0, "currency": "EUR", "window_seconds": 86400}],
        ),
    ),
    ("host-context", {}, HIDDEN, ("declared", "hostContextPolicy.acceptedFields", None)),
    (
        "host-context",
        {"hostContextPolicy": {"acceptedFields": []}},
        HIDDEN,
        ("declared", "hostContextPolicy.acceptedFields", []),
    ),
    (
        "host-context",
        {"hostContextPolicy": {"acceptedFields": ["page.url"]}},
        SHOWN,
        ("declared", "hostContextPolicy.acceptedFields", ["page.url"]),
    ),
    ("stream-profile", {}, HIDDEN, ("declared", "streamProfiles", None)),
    ("stream-profile", {"streamProfiles": []}, HIDDEN, ("declared", "streamProfiles", [])),
    (
        "stream-profile",
        {"streamProfiles": ["runtime-standard-v1"]},
        SHOWN,
        ("declared", "streamProfiles", ["runtime-standard-v1"]),
    ),
    # The policy has no field for these: not declared.
    ("reasoning", {"capabilities": {"messages": True}}, HIDDEN, ("declared", "policy", None)),
    ("subagents", {}, HIDDEN, ("declared", "policy", None)),
    ("state", {}, HIDDEN, ("declared", "policy", None)),
]


@pytest.mark.parametrize(("name", "declaration", "decision", "reason"), EXTERNAL_CASES)
def test_external_policy(name: str, declaration: dict, decision: Decision, reason: tuple) -> None:
    plan = decide(policy=external(**declaration))

    assert plan[name].decision == decision, texts(plan, name)
    assert reason in links(plan, name)
    assert plan.protocol == "external"


def test_a_policy_flag_the_agent_did_not_send_is_unknown_not_the_sdk_default() -> None:
    # The SDK model defaults capabilities.files to false; the agent never said so.
    policy = external(capabilities={"messages": True})
    assert policy.capabilities.files is False

    plan = decide(policy=policy, overrides={"upload": "allow"})

    assert ("declared", "capabilities.files", None) in links(plan, "upload")
    assert plan["upload"].shown


# ------------------------------------------------------------------------------------------------
# 3. What was negotiated: a client reads the grant, never the policy's offer nor its own request.

NEGOTIATION_CASES = [
    # control, policy, negotiated (None: not prepared yet), decision, reason
    (
        "structured-output",
        {"outputModuleTypes": ["citation", "table"]},
        None,
        HIDDEN,
        ("negotiated", "negotiated.outputModuleTypes", None),
    ),
    (
        "structured-output",
        {"outputModuleTypes": ["citation", "table"]},
        {"outputModuleTypes": []},
        HIDDEN,
        ("negotiated", "negotiated.outputModuleTypes", []),
    ),
    (
        "structured-output",
        {"outputModuleTypes": ["citation", "table"]},
        {"outputModuleTypes": ["citation"]},
        SHOWN,
        ("negotiated", "negotiated.outputModuleTypes", ["citation"]),
    ),
    # Nothing offered: nothing can be granted.
    ("structured-output", {"outputModuleTypes": []}, None, HIDDEN, ("declared", "outputModuleTypes", [])),
    (
        "grounding",
        {"providerGroundingDisplay": True},
        None,
        HIDDEN,
        ("negotiated", "negotiated.providerGroundingDisplay", None),
    ),
    (
        "grounding",
        {"providerGroundingDisplay": True},
        {"providerGroundingDisplay": False},
        HIDDEN,
        ("negotiated", "negotiated.providerGroundingDisplay", False),
    ),
    (
        "grounding",
        {"providerGroundingDisplay": True},
        {"providerGroundingDisplay": True},
        SHOWN,
        ("negotiated", "negotiated.providerGroundingDisplay", True),
    ),
    # Not prepared yet, but the policy already forbids it.
    (
        "grounding",
        {"providerGroundingDisplay": False},
        None,
        HIDDEN,
        ("declared", "providerGroundingDisplay", False),
    ),
    (
        "stream-profile",
        {"streamProfiles": ["runtime-standard-v1", "modules-v1"]},
        None,
        SHOWN,
        ("negotiated", "negotiated.streamProfile", None),
    ),
    (
        "stream-profile",
        {"streamProfiles": ["runtime-standard-v1", "modules-v1"]},
        {"streamProfile": "modules-v1"},
        SHOWN,
        ("negotiated", "negotiated.streamProfile", "modules-v1"),
    ),
]


@pytest.mark.parametrize(("name", "policy", "negotiated", "decision", "reason"), NEGOTIATION_CASES)
def test_negotiation(
    name: str, policy: dict, negotiated: dict | None, decision: Decision, reason: tuple
) -> None:
    plan = decide(
        policy=external(**policy), negotiated=granted(**negotiated) if negotiated is not None else None
    )

    assert plan[name].decision == decision, texts(plan, name)
    assert reason in links(plan, name)


def test_structured_output_details_are_the_granted_modules_not_the_offered_ones() -> None:
    plan = decide(
        policy=external(outputModuleTypes=["citation", "table"]),
        negotiated=granted(outputModuleTypes=["citation"]),
    )

    assert plan["structured-output"].details.module_types == ("citation",)
    assert plan["structured-output"].details.offered_module_types == ("citation", "table")


# ------------------------------------------------------------------------------------------------
# 4. What the admin set: hide wins; allow fills silence but never beats an explicit false.

# For every control but identity: a declaration that supports it and one that explicitly does not.
SUPPORTED = {
    "reasoning": {"capabilities": agui(reasoning={"supported": True})},
    "subagents": {"capabilities": agui(multiAgent={"subagents": SUBAGENTS})},
    "skills": {"profile": read_card({"skills": [{"id": "plan", "name": "Plan", "examples": ["Plan it"]}]})},
    "upload": {"policy": external(**FILES_ON)},
    "approvals": {"capabilities": agui(humanInTheLoop={"approvals": True})},
    "tools": {"capabilities": agui(tools={"supported": True, "items": AGUI_TOOLS})},
    "state": {"capabilities": agui(state={"snapshots": True})},
    "structured-output": {
        "policy": external(outputModuleTypes=["citation"]),
        "negotiated": granted(outputModuleTypes=["citation"]),
    },
    "grounding": {
        "policy": external(providerGroundingDisplay=True),
        "negotiated": granted(providerGroundingDisplay=True),
    },
    "feedback": {"policy": external(capabilities={"interactions": True})},
    "stop": {"capabilities": agui(transport={"streaming": True})},
    "limits": {"capabilities": agui(execution={"maxIterations": 3})},
    "host-context": {"policy": external(hostContextPolicy={"acceptedFields": ["page.url"]})},
    "stream-profile": {"policy": external(streamProfiles=["runtime-standard-v1"])},
    "image-picker": {"capabilities": agui(multimodal={"input": {"image": True}})},
    "audio-recorder": {"capabilities": agui(multimodal={"input": {"audio": True}})},
    "media-output": {"capabilities": agui(multimodal={"output": {"image": True}})},
    "frontend-tools": {"capabilities": agui(tools={"clientProvided": True})},
    "transport": {"capabilities": agui(transport={"resumable": True})},
    "code-execution": {"capabilities": agui(execution={"codeExecution": True, "sandboxed": True})},
    "memory": {"capabilities": agui(state={"memory": True})},
    "throttle": {"capabilities": agui(custom={"rateLimit": {"maxRequestsPerMinute": 6}})},
    "generative-ui": {"capabilities": agui(custom={"a2ui": {"v0.9": {"supportedCatalogIds": ["basic"]}}})},
    "custom": {"capabilities": agui(custom={"region": "eu"})},
}
UNSUPPORTED = {
    "reasoning": {"capabilities": agui(reasoning={"supported": False})},
    "subagents": {"capabilities": agui(multiAgent={"subagents": []})},
    "skills": {"profile": read_card({"skills": []})},
    "upload": {"policy": external(capabilities={"files": False})},
    "approvals": {"capabilities": agui(humanInTheLoop={"approvals": False, "interrupts": False})},
    "tools": {"capabilities": agui(tools={"supported": False})},
    "state": {"capabilities": agui(state={"snapshots": False, "deltas": False})},
    "structured-output": {"policy": external(outputModuleTypes=[])},
    "grounding": {"policy": external(providerGroundingDisplay=False)},
    "feedback": {"policy": external(capabilities={"interactions": False})},
    "stop": {"policy": external(capabilities={"messages": False})},
    "limits": {"policy": external(rateLimits=[], spendLimits=[])},
    "host-context": {"policy": external(hostContextPolicy={"acceptedFields": []})},
    "stream-profile": {"policy": external(streamProfiles=[])},
    "image-picker": {"capabilities": agui(multimodal={"input": {"image": False}})},
    "audio-recorder": {"capabilities": agui(multimodal={"input": {"audio": False}})},
    "media-output": {"capabilities": agui(multimodal={"output": {"image": False, "audio": False}})},
    "frontend-tools": {"capabilities": agui(tools={"clientProvided": False})},
    "transport": {
        "capabilities": agui(
            transport={
                "streaming": True,
                "resumable": False,
                "httpBinary": False,
                "websocket": False,
                "pushNotifications": False,
            }
        )
    },
    "code-execution": {"capabilities": agui(execution={"codeExecution": False})},
    "memory": {"capabilities": agui(state={"memory": False})},
    "generative-ui": {"capabilities": agui(custom={"a2ui": False})},
    "custom": {"capabilities": agui(custom={})},
}
SILENT: dict[str, Any] = {"capabilities": agui()}  # discovery answered {}: nothing declared
CONTROLS = [name for name in CONTROL_NAMES if name != "identity"]
# A send rate can only say "there is one": no declaration makes the throttle unsupported.
CANNOT_BE_UNSUPPORTED = {"throttle"}
assert set(SUPPORTED) == set(CONTROLS)
assert set(UNSUPPORTED) == set(CONTROLS) - CANNOT_BE_UNSUPPORTED


OVERRIDE_CASES = [
    ("supported", None, SHOWN),
    ("supported", "hide", HIDDEN),
    ("supported", "allow", SHOWN),
    ("silent", None, HIDDEN),
    ("silent", "hide", HIDDEN),
    ("silent", "allow", SHOWN),
    ("unsupported", None, HIDDEN),
    ("unsupported", "hide", HIDDEN),
    ("unsupported", "allow", HIDDEN),
]


@pytest.mark.parametrize(
    ("name", "declared", "override", "decision"),
    [
        (name, *case)
        for name in CONTROLS
        for case in OVERRIDE_CASES
        if not (case[0] == "unsupported" and name in CANNOT_BE_UNSUPPORTED)
    ],
)
def test_overrides(name: str, declared: str, override: str | None, decision: Decision) -> None:
    sources = {"supported": SUPPORTED[name], "silent": SILENT, "unsupported": UNSUPPORTED.get(name)}[declared]
    overrides = {name: override} if override else None

    plan = decide(**sources, overrides=overrides)

    assert plan[name].decision == decision, texts(plan, name)
    last = plan[name].reasons[-1]
    if override:
        assert ("override", f"overrides.{name}", override) in links(plan, name)
    elif declared == "silent":
        assert (last.source, last.value) == ("default", None)
        assert "not declared" in texts(plan, name).lower()
    if override == "allow" and declared == "unsupported":
        assert "the declaration wins" in texts(plan, name)
    if override == "hide":
        assert last.text == "The admin forced this control off"


def test_an_override_only_touches_its_own_control() -> None:
    plan = decide(**SUPPORTED["reasoning"], overrides={"tools": "hide", "state": "allow"})

    assert plan["reasoning"].shown
    assert plan["state"].shown
    assert plan["tools"].hidden


def test_identity_cannot_be_hidden() -> None:
    plan = decide(overrides={"identity": "hide"}, fallback_identity={"name": "Helper"})

    assert plan["identity"].shown
    assert ("override", "overrides.identity", "hide") in links(plan, "identity")
    assert "always shown" in texts(plan, "identity")


def test_an_unknown_override_value_is_ignored_and_said() -> None:
    plan = decide(**SUPPORTED["reasoning"], overrides={"reasoning": "force", "nonsense": "hide"})

    assert plan["reasoning"].shown
    assert ("override", "overrides.reasoning", "force") in links(plan, "reasoning")
    assert "ignored" in plan["reasoning"].reasons[-2].text


# ------------------------------------------------------------------------------------------------
# 5. What the user may do: a missing permission disables, it never hides nor shows.

PERMISSION_CASES = [
    ("reasoning", "can_view_reasoning", "agents_ui.view_reasoning"),
    ("upload", "can_upload", "agents_ui.upload_files"),
    ("approvals", "can_approve", "agents_ui.approve_actions"),
    ("image-picker", "can_upload", "agents_ui.upload_files"),
    ("audio-recorder", "can_upload", "agents_ui.upload_files"),
]


@pytest.mark.parametrize(("name", "ability", "permission"), PERMISSION_CASES)
@pytest.mark.parametrize(
    ("declared", "allowed", "decision"),
    [
        ("supported", True, SHOWN),
        ("supported", False, DISABLED),
        ("silent", True, HIDDEN),
        ("silent", False, HIDDEN),
        ("unsupported", False, HIDDEN),
    ],
)
def test_user_permissions(
    name: str, ability: str, permission: str, declared: str, allowed: bool, decision: Decision
) -> None:
    sources = {"supported": SUPPORTED[name], "silent": SILENT, "unsupported": UNSUPPORTED[name]}[declared]

    plan = decide(**sources, user=UserAbilities(**{ability: allowed}))

    assert plan[name].decision == decision, texts(plan, name)
    if declared == "supported":
        assert plan[name].reasons[-1] == Reason(
            "user",
            f"permission {permission}",
            allowed,
            plan[name].reasons[-1].text,
        )
        assert ("You may" if allowed else "You do not have permission") in plan[name].reasons[-1].text


def test_a_user_without_any_permission_still_sees_the_other_controls() -> None:
    nobody = UserAbilities.from_permissions(set())

    others = (
        "tools",
        "state",
        "feedback",
        "stop",
        "limits",
        "host-context",
        "stream-profile",
        "media-output",
    )
    others += ("frontend-tools", "transport", "code-execution", "memory", "throttle", "generative-ui")
    others += ("custom",)
    for name in others:
        assert decide(**SUPPORTED[name], user=nobody)[name].shown, name


def test_user_abilities_from_django_permissions() -> None:
    user = UserAbilities.from_permissions({"agents_ui.upload_files", "auth.view_user"})

    assert user == UserAbilities(can_upload=True, can_approve=False, can_view_reasoning=False)
    assert UserAbilities() == UserAbilities(can_upload=True, can_approve=True, can_view_reasoning=True)


# ------------------------------------------------------------------------------------------------
# 6. What runs observed: evidence shows a control, whatever the declaration said.

OBSERVATION_CASES = [
    ("reasoning", "reasoning_seen"),
    ("approvals", "interrupts_seen"),
    ("state", "state_seen"),
]


@pytest.mark.parametrize(("name", "evidence"), OBSERVATION_CASES)
@pytest.mark.parametrize(
    ("declared", "seen", "decision", "text"),
    [
        ("silent", False, HIDDEN, None),
        ("silent", True, SHOWN, "never declared"),
        ("unsupported", False, HIDDEN, None),
        ("unsupported", True, SHOWN, "declared unsupported"),
        ("supported", True, SHOWN, "as declared"),
    ],
)
def test_observations(
    name: str, evidence: str, declared: str, seen: bool, decision: Decision, text: str
) -> None:
    sources = {"supported": SUPPORTED[name], "silent": SILENT, "unsupported": UNSUPPORTED[name]}[declared]

    plan = decide(**sources, observed=Observations(**{evidence: seen}))

    assert plan[name].decision == decision, texts(plan, name)
    observed = [reason for reason in plan[name].reasons if reason.source == "observed"]
    if seen:
        assert [(reason.field, reason.value) for reason in observed] == [(evidence, True)]
        assert text in observed[0].text
    else:
        assert observed == []


def test_the_admin_hides_even_what_was_observed() -> None:
    plan = decide(observed=Observations(reasoning_seen=True), overrides={"reasoning": "hide"})

    assert plan["reasoning"].hidden
    assert [reason.source for reason in plan["reasoning"].reasons][-2:] == ["observed", "override"]


def test_observed_reasoning_is_still_gated_by_the_permission() -> None:
    plan = decide(observed=Observations(reasoning_seen=True), user=UserAbilities(can_view_reasoning=False))

    assert plan["reasoning"].disabled


# ------------------------------------------------------------------------------------------------
# The details each control needs


@pytest.mark.parametrize(
    ("modalities", "accept", "accept_any"),
    [
        ({"image": True}, ("image/*",), False),
        ({"pdf": True, "image": True, "audio": False}, ("image/*", "application/pdf"), False),
        ({"audio": True, "video": True}, ("audio/*", "video/*"), False),
        ({"file": True, "pdf": True}, (), True),  # "file": any kind of file
    ],
)
def test_agui_upload_accepts_what_the_modalities_say(
    modalities: dict, accept: tuple, accept_any: bool
) -> None:
    upload = decide(capabilities=agui(multimodal={"input": modalities}))["upload"]

    assert upload.shown
    assert upload.details.accept == accept
    assert upload.details.accept_attr == ",".join(accept)
    assert upload.details.accept_any is accept_any
    assert upload.details.max_bytes is None


def test_external_upload_reads_the_file_policy_in_order() -> None:
    policy = external(
        capabilities={"files": True},
        filePolicy={
            "upload": True,
            "read": True,
            "maxUploadBytes": 10 * 1024 * 1024,
            "allowedMimeTypes": ["application/pdf", "image/png"],
        },
    )

    upload = decide(policy=policy)["upload"]

    assert upload.shown
    assert upload.details == decisions.UploadDetails(
        accept=("application/pdf", "image/png"),
        accept_any=False,
        accept_attr="application/pdf,image/png",
        max_bytes=10485760,
        max_bytes_label="10 MB",
        read=True,
    )
    assert [(r.source, r.field, r.value) for r in upload.reasons] == [
        ("declared", "capabilities.files", True),
        ("declared", "filePolicy.upload", True),
        ("declared", "filePolicy.allowedMimeTypes", ["application/pdf", "image/png"]),
        ("declared", "filePolicy.maxUploadBytes", 10485760),
        ("user", "permission agents_ui.upload_files", True),
    ]


def test_external_upload_without_a_type_list_accepts_any_type() -> None:
    upload = decide(policy=external(capabilities={"files": True}, filePolicy={"upload": True}))["upload"]

    assert upload.shown
    assert upload.details.accept_any is True
    assert "any type" in texts_of(upload)


def texts_of(control: decisions.ControlDecision) -> str:
    return " | ".join(reason.text for reason in control.reasons)


@pytest.mark.parametrize(
    ("size", "label"),
    [
        (512, "512 bytes"),
        (2048, "2 KB"),
        (1536 * 1024, "1.5 MB"),
        (10 * 1024**2, "10 MB"),
        (3 * 1024**3, "3 GB"),
    ],
)
def test_byte_limit_labels(size: int, label: str) -> None:
    policy = external(capabilities={"files": True}, filePolicy={"upload": True, "maxUploadBytes": size})

    assert decide(policy=policy)["upload"].details.max_bytes_label == label


@pytest.mark.parametrize(
    ("declaration", "streaming", "encrypted", "text"),
    [
        ({"supported": True, "streaming": True}, True, None, "live"),
        ({"supported": True, "streaming": False}, False, None, "at the end"),
        ({"supported": True, "encrypted": True}, None, True, "never the value"),
    ],
)
def test_reasoning_details(
    declaration: dict, streaming: bool | None, encrypted: bool | None, text: str
) -> None:
    reasoning = decide(capabilities=agui(reasoning=declaration))["reasoning"]

    assert reasoning.details == decisions.ReasoningDetails(streaming=streaming, encrypted=encrypted)
    assert text in texts_of(reasoning)


def test_subagent_details() -> None:
    plan = decide(
        capabilities=agui(multiAgent={"subagents": SUBAGENTS, "delegation": True, "handoffs": False})
    )

    assert plan["subagents"].details == decisions.SubagentsDetails(
        subagents=(SubagentInfo("writer", "Writes"), SubagentInfo("critic", None)),
        delegation=True,
        handoffs=False,
    )


@pytest.mark.parametrize(("edits", "expected"), [(None, None), (False, False), (True, True)])
def test_agui_approvals_offer_edits_only_when_declared(edits: bool | None, expected: bool | None) -> None:
    hitl = {"interrupts": True} if edits is None else {"interrupts": True, "approveWithEdits": edits}

    approvals = decide(capabilities=agui(humanInTheLoop=hitl))["approvals"]

    assert approvals.details.approve_with_edits is expected
    assert approvals.details.interrupts is True
    assert approvals.details.approvals is None


def test_external_approvals_list_the_tools_that_need_one() -> None:
    policy = external(
        capabilities={"approvals": True},
        domainTools=[
            tool("refund", approvalRequired=True, sideEffectClass="financial", idempotency="non_idempotent"),
            tool("lookup"),
        ],
    )

    approvals = decide(policy=policy)["approvals"]

    assert approvals.shown
    [needing] = approvals.details.tools_needing_approval
    assert (needing.name, needing.side_effect_class, needing.idempotency) == (
        "refund",
        "financial",
        "non_idempotent",
    )


def test_approval_tools_under_a_policy_without_approvals_are_visible_but_not_decidable() -> None:
    policy = external(capabilities={"approvals": False}, domainTools=[tool("wipe", approvalRequired=True)])

    approvals = decide(policy=policy)["approvals"]

    assert approvals.disabled
    assert approvals.reasons[-1].field == "capabilities.approvals"
    assert "can be seen but not decided" in approvals.reasons[-1].text


def test_tool_details_agui() -> None:
    tools = decide(capabilities=agui(tools={"supported": True, "items": AGUI_TOOLS, "parallelCalls": True}))[
        "tools"
    ]

    assert tools.details.parallel_calls is True
    assert tools.details.client_provided is None
    [entry] = tools.details.tools
    assert (entry.name, entry.description, entry.schema, entry.status) == (
        "search",
        "Search the web",
        {"type": "object"},
        None,
    )


def test_tool_details_external_keep_every_status() -> None:
    policy = external(
        domainTools=[
            {**tool("refund", sideEffectClass="financial", approvalRequired=True), "status": "degraded"},
            {**tool("wipe", sideEffectClass="destructive"), "status": "disabled"},
        ]
    )

    tools = decide(policy=policy)["tools"]

    assert tools.shown
    assert [(t.name, t.status, t.side_effect_class, t.approval_required) for t in tools.details.tools] == [
        ("refund", "degraded", "financial", True),
        ("wipe", "disabled", "destructive", False),
    ]
    assert tools.details.tools[0].schema == {"type": "object"}


def test_state_details() -> None:
    state = decide(capabilities=agui(state={"snapshots": True, "deltas": False, "persistentState": True}))[
        "state"
    ]

    assert state.details == decisions.StateDetails(
        snapshots=True, deltas=False, persistent_state=True, memory=None, send_state_back=True
    )


def test_structured_output_details_agui() -> None:
    output = decide(
        capabilities=agui(output={"structuredOutput": True, "supportedMimeTypes": ["application/json"]})
    )["structured-output"]

    assert output.details.mime_types == ("application/json",)
    assert output.details.module_types == ()


@pytest.mark.parametrize(
    ("declaration", "intervene"),
    [
        ({"transport": {"streaming": True}}, False),
        ({"transport": {"streaming": True}, "humanInTheLoop": {"interventions": True}}, True),
    ],
)
def test_stop_offers_intervene_only_with_interventions(declaration: dict, intervene: bool) -> None:
    assert decide(capabilities=agui(**declaration))["stop"].details.intervene is intervene


def test_external_stop_has_no_intervene() -> None:
    stop = decide(policy=external(capabilities={"messages": True}))["stop"]

    assert stop.shown
    assert stop.details.intervene is False


def test_limits_details() -> None:
    agui_limits = decide(capabilities=agui(execution={"maxIterations": 5, "maxExecutionTime": 90000}))[
        "limits"
    ]
    external_limits = decide(
        policy=external(rateLimits=[{"scope": "user", "limit": 10, "windowSeconds": 60}])
    )["limits"]

    assert agui_limits.details.max_iterations == 5
    assert agui_limits.details.max_execution_time == 90000
    assert agui_limits.details.max_execution_time_label == "1 min 30 s"
    assert external_limits.details.rate_limits == (RateLimit(scope="user", limit=10, window_seconds=60),)
    assert external_limits.details.spend_limits == ()


def test_host_context_details() -> None:
    policy = external(
        hostContextPolicy={"acceptedFields": ["page.url", "user.locale"], "maxTotalBytes": 4096}
    )

    host = decide(policy=policy)["host-context"]

    assert host.details == decisions.HostContextDetails(
        accepted_fields=("page.url", "user.locale"), max_total_bytes=4096, max_total_bytes_label="4 KB"
    )


@pytest.mark.parametrize(
    ("offered", "negotiated", "chooser"),
    [
        (["runtime-standard-v1"], "runtime-standard-v1", False),
        (["runtime-standard-v1", "modules-v1", "chat-legacy-v1"], "modules-v1", True),
    ],
)
def test_stream_profile_details(offered: list, negotiated: str, chooser: bool) -> None:
    plan = decide(
        policy=external(streamProfiles=offered, defaultStreamProfile="runtime-standard-v1"),
        negotiated=granted(streamProfile=negotiated),
    )

    assert plan["stream-profile"].details == decisions.StreamProfileDetails(
        offered=tuple(offered), default="runtime-standard-v1", negotiated=negotiated, chooser=chooser
    )


# ------------------------------------------------------------------------------------------------
# Identity: always shown, from the declaration, else from what the admin entered.

FALLBACK = {"name": "Admin's name", "description": "Admin's description"}


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        ({}, {"name": "Admin's name", "description": "Admin's description", "version": None}),
        (
            {"capabilities": agui(identity={"name": "researcher", "version": "1.2.0", "type": "langgraph"})},
            {
                "name": "researcher",
                "description": "Admin's description",
                "version": "1.2.0",
                "framework": "langgraph",
            },
        ),
        (
            {"policy": external(identity={"name": "ops", "provider": "ACME"})},
            {"name": "ops", "description": "Admin's description", "provider": "ACME", "framework": None},
        ),
    ],
)
def test_identity_is_always_shown(sources: dict, expected: dict) -> None:
    plan = decide(**sources, fallback_identity=FALLBACK, overrides={"identity": "hide"})

    identity = plan["identity"]
    assert identity.shown
    assert {key: getattr(identity.details, key) for key in expected} == expected
    assert {f.name for f in fields(identity.details)} == {
        "name",
        "description",
        "version",
        "provider",
        "documentation_url",
        "framework",
        "metadata",
    }
    assert ("default", "identity.description", "Admin's description") in links(plan, "identity")


def test_agui_identity_details() -> None:
    declared = agui(identity={"name": "x", "documentationUrl": "https://docs.example", "provider": "P"})

    identity = decide(capabilities=declared)["identity"]

    assert identity.details.documentation_url == "https://docs.example"
    assert ("declared", "identity.documentationUrl", "https://docs.example") in [
        (r.source, r.field, r.value) for r in identity.reasons
    ]


# ------------------------------------------------------------------------------------------------
# The plan itself


def test_no_discovery_means_everything_unknown() -> None:
    plan = decide(fallback_identity=FALLBACK)

    assert plan.protocol is None
    assert [control.name for control in plan.visible()] == ["identity"]
    for name in CONTROLS:
        assert plan[name].reasons[0].text.startswith("Not declared"), name
        assert plan[name].reasons[-1].source == "default", name


def test_the_plan_lists_every_control_in_table_order() -> None:
    plan = decide(
        capabilities=agui(reasoning={"supported": True}, tools={"supported": True, "items": AGUI_TOOLS})
    )

    assert tuple(plan.controls) == CONTROL_NAMES
    assert [control.name for control in plan] == list(CONTROL_NAMES)
    assert [control.name for control in plan.visible()] == ["identity", "reasoning", "tools"]
    assert plan["structured_output"] is plan["structured-output"]
    assert plan["reasoning"].label == "Reasoning panel"


def test_visible_includes_disabled_controls() -> None:
    plan = decide(
        capabilities=agui(reasoning={"supported": True}), user=UserAbilities(can_view_reasoning=False)
    )

    assert plan["reasoning"] in plan.visible()
    assert plan["reasoning"].visible and plan["reasoning"].disabled and not plan["reasoning"].shown


def test_decisions_compare_as_plain_strings_for_templates() -> None:
    assert decide()["identity"].decision == "shown"
    assert decide()["reasoning"].decision == "hidden"


def test_capabilities_and_policy_together_are_a_mistake() -> None:
    with pytest.raises(ValueError, match="not both"):
        decide(capabilities=agui(), policy=external())


def test_the_module_is_pure() -> None:
    tree = ast.parse(Path(decisions.__file__).read_text())
    imported = {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    } | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}

    assert not {
        name for name in imported if name.split(".")[0] in {"django", "httpx", "requests", "os", "socket"}
    }


def test_agui_upload_limits_come_from_custom_input():
    caps = AgentCapabilities.model_validate(
        {
            "multimodal": {"input": {"pdf": True, "image": True}},
            "custom": {
                "input": {"maxBytes": 10 * 1024 * 1024, "mimeTypes": ["application/pdf", "image/png"]}
            },
        }
    )
    upload = decide(capabilities=caps)["upload"]
    assert upload.details.max_bytes == 10 * 1024 * 1024
    assert upload.details.max_bytes_label == "10 MB"
    assert upload.details.accept == ("application/pdf", "image/png")
    assert any(r.field == "custom.input.maxBytes" for r in upload.reasons)


# ------------------------------------------------------------------------------------------------
# Every shape real agents declare in, into the same controls


def reason_of(plan: Plan, name: str, field: str) -> Reason:
    [reason] = [r for r in plan[name].reasons if r.field == field]
    return reason


def test_strands_interrupts_and_edited_args_give_approvals_with_editing() -> None:
    plan = decide(capabilities=agui(**STRANDS), fallback_identity=FALLBACK)

    approvals = plan["approvals"]
    assert approvals.shown
    assert approvals.details.interrupts is True and approvals.details.approve_with_edits is True
    assert approvals.details.can_edit()
    assert ("declared", "features.interrupts", True) in links(plan, "approvals")
    assert ("declared", "features.toolCallInterruptEditedArgs", True) in links(plan, "approvals")
    edits = reason_of(plan, "approvals", "features.toolCallInterruptEditedArgs")
    assert "humanInTheLoop.approveWithEdits" in edits.text
    [link] = edits.provenance
    assert (link.source, link.path, link.raw, link.kind) == (
        "AWS Strands capabilities",
        "features.toolCallInterruptEditedArgs",
        True,
        "declared",
    )
    assert plan.protocol == "agui" and plan.profile.shape.key == "strands"


def test_strands_reads_streaming_state_and_reasoning_and_says_what_it_cannot_say() -> None:
    plan = decide(capabilities=agui(**STRANDS), fallback_identity=FALLBACK)

    assert plan["stop"].shown and ("declared", "transports.sse", True) in links(plan, "stop")
    assert plan["state"].shown and plan["state"].details.deltas is False
    assert plan["reasoning"].shown
    assert ("inferred", "events.REASONING_START", True) in links(plan, "reasoning")
    assert plan["identity"].details.name == "Admin's name"
    for name in ("subagents", "upload", "feedback", "limits"):
        assert plan[name].hidden, name
        assert (
            plan[name].reasons[0].text.startswith("Not declared: AWS Strands capabilities have no field")
        ), name
    # Tool calls are emitted, but no tool is listed: nothing to show.
    assert plan["tools"].hidden
    assert ("inferred", "events.TOOL_CALL_START", True) in links(plan, "tools")


def test_crewai_standard_fields_are_read_and_its_interrupts_false_kept() -> None:
    plan = decide(capabilities=agui(**CREWAI))

    assert plan.profile.shape.key == "crewai"
    assert plan["identity"].details.framework == "crewai"
    assert plan["reasoning"].shown and plan["state"].shown and plan["stop"].shown
    # Interrupts are declared false and approvals are not declared: unknown, not unsupported.
    approvals = plan["approvals"]
    assert approvals.hidden
    assert ("declared", "humanInTheLoop.interrupts", False) in links(plan, "approvals")
    assert ("declared", "humanInTheLoop.approvals", None) in links(plan, "approvals")
    assert decide(capabilities=agui(**CREWAI), overrides={"approvals": "allow"})["approvals"].shown
    assert plan["tools"].details.client_provided is True
    assert ("inferred", "humanInTheLoop.mechanism", True) in links(plan, "tools")


def test_adk_empty_declaration_declares_nothing() -> None:
    plan = decide(capabilities=agui(), fallback_identity=FALLBACK)

    assert plan.profile.shape.declares_nothing
    assert [control.name for control in plan.visible()] == ["identity"]
    assert ("declared", "reasoning.supported", None) in links(plan, "reasoning")
    assert "reasoning.supported is not declared" in texts(plan, "reasoning")


def test_a_declaration_in_an_unknown_shape_decides_nothing_from_it() -> None:
    plan = decide(capabilities=agui(abilities=["reasoning", "tools"]), overrides={"reasoning": "allow"})

    assert plan.profile.shape.unknown
    assert plan["reasoning"].shown  # the admin allowed it: nothing in the declaration says otherwise
    for name in CONTROLS:
        if name == "custom":
            continue
        assert (
            plan[name].reasons[0].text.startswith("Not declared: the declaration is in an unknown shape")
        ), name
    # The declaration itself is shown, field by field, as it was sent.
    custom = plan["custom"]
    assert custom.shown and custom.details.unknown_shape
    assert [(p.path, p.raw) for p in custom.details.extensions] == [("abilities", ["reasoning", "tools"])]
    assert custom.reasons[0].text.startswith("A declaration in an unknown shape: nothing in it is read")


def test_a_standard_declaration_reads_every_control_it_declares() -> None:
    plan = decide(capabilities=agui(**STANDARD))

    for name in ("reasoning", "subagents", "upload", "approvals", "tools", "state", "structured-output"):
        assert plan[name].shown, name
    assert plan["approvals"].details.approve_with_edits is False
    assert plan["stop"].details.intervene is True
    assert plan["upload"].details.max_bytes == 5242880


def test_every_reason_goes_down_to_its_source_field_and_raw_value() -> None:
    plans = [
        decide(capabilities=agui(**declaration), observed=Observations(reasoning_seen=True))
        for declaration in (STANDARD, STRANDS, CREWAI, {}, {"abilities": []})
    ]
    plans.append(
        decide(
            policy=external(**FILES_ON, streamProfiles=["a"]),
            negotiated=granted(),
            overrides={"tools": "allow"},
        )
    )
    plans.append(decide())

    for plan in plans:
        for control in plan:
            for reason in control.reasons:
                if reason.source in ("user", "default"):
                    continue
                assert reason.provenance, (control.name, reason)
                origin = reason.provenance[0]
                assert origin.kind == reason.source, (control.name, reason)
                assert origin.path in (reason.field, ""), (control.name, reason)
                if origin.path == "":
                    assert reason.field == plan.profile.shape.root


def test_an_override_and_an_observation_carry_their_provenance() -> None:
    plan = decide(observed=Observations(reasoning_seen=True), overrides={"reasoning": "hide"})

    observed, override = plan["reasoning"].reasons[-2:]
    assert [(p.source, p.path, p.raw, p.kind) for p in observed.provenance] == [
        ("runs", "reasoning_seen", True, "observed")
    ]
    assert [(p.source, p.path, p.raw, p.kind) for p in override.provenance] == [
        ("admin overrides", "overrides.reasoning", "hide", "override")
    ]


# ------------------------------------------------------------------------------------------------
# Editing what an approval request will do: one rule, read in one line by the run view


EDITED_ARGS = {"type": "object", "properties": {"approved": {"type": "boolean"}, "editedArgs": {}}}


@pytest.mark.parametrize(
    ("declaration", "schema", "editable"),
    [
        ({"humanInTheLoop": {"interrupts": True}}, None, False),
        ({"humanInTheLoop": {"interrupts": True}}, {"properties": {"approved": {}}}, False),
        ({"humanInTheLoop": {"interrupts": True}}, EDITED_ARGS, True),
        ({"humanInTheLoop": {"interrupts": True, "approveWithEdits": True}}, None, True),
        ({"humanInTheLoop": {"interrupts": True, "approveWithEdits": False}}, EDITED_ARGS, True),
        ({"humanInTheLoop": {"interrupts": True}}, {"properties": "editedArgs"}, False),
    ],
)
def test_an_approval_is_editable_where_edits_are_declared_or_the_request_asks_for_them(
    declaration: dict, schema: dict | None, editable: bool
) -> None:
    assert decide(capabilities=agui(**declaration))["approvals"].details.can_edit(schema) is editable


def test_an_external_approval_takes_edited_input_by_protocol() -> None:
    approvals = decide(policy=external(capabilities={"approvals": True}))["approvals"]

    assert approvals.details.can_edit()
    assert ("inferred", "POST approvals/{approvalId} editedInput", True) in [
        (r.source, r.field, r.value) for r in approvals.reasons
    ]


# ------------------------------------------------------------------------------------------------
# Typed details read the way templates and older callers read them


def test_details_read_by_attribute_by_name_and_in_templates() -> None:
    from django.template import Context, Engine

    plan = decide(capabilities=agui(**STANDARD))
    upload, tools = plan["upload"], plan["tools"]

    assert upload.details["accept"] == upload.details.accept == ("image/*", "audio/*", "application/pdf")
    assert upload.details.get("max_bytes_label") == "5 MB"
    assert upload.details.get("nothing") is None
    with pytest.raises(KeyError):
        upload.details["nothing"]
    assert tools.details["tools"][0]["name"] == tools.details.tools[0].get("name") == "query"
    template = Engine().from_string(
        "{{ plan.upload.details.accept_attr }}"
        "|{% for t in plan.tools.details.tools %}{{ t.name }}{% endfor %}"
        "|{{ plan.subagents.details.subagents.0.name }}"
    )
    assert template.render(Context({"plan": plan})) == "image/*,audio/*,application/pdf|query|charts"


# ------------------------------------------------------------------------------------------------
# One model, no branch per protocol or shape


def test_no_control_asks_which_protocol_or_shape_a_fact_came_from() -> None:
    tree = ast.parse(Path(decisions.__file__).read_text())
    # decide() itself only checks its arguments (a declaration, or a profile read from one).
    tree.body = [node for node in tree.body if getattr(node, "name", "") != "decide"]
    names = {"agui", "external", "strands", "crewai", "policy", "capabilities", "protocol", "shape"}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If | ast.IfExp | ast.Match):
            continue
        test = node.subject if isinstance(node, ast.Match) else node.test
        mentioned = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
        mentioned |= {n.attr for n in ast.walk(test) if isinstance(n, ast.Attribute)}
        mentioned |= {
            n.value for n in ast.walk(test) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
        assert not mentioned & names, ast.unparse(test)


# ------------------------------------------------------------------------------------------------
# Every field of the AG-UI seed reaches a control the workspace can act on

FULL = {
    **STANDARD,
    "multiAgent": {**STANDARD["multiAgent"], "handoffs": False},
    "humanInTheLoop": {**STANDARD["humanInTheLoop"], "approveWithEdits": True},
}


def leaves(declaration: dict, prefix: str = "") -> list[str]:
    found = []
    for key, value in declaration.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and key != "metadata":
            found += leaves(value, f"{path}.")
        else:
            found.append(path)
    return found


def test_every_field_of_the_seed_is_read_by_a_control() -> None:
    plan = decide(capabilities=agui(**FULL))
    read = {link.path for control in plan for reason in control.reasons for link in reason.provenance}

    unread = [path for path in leaves(FULL) if path not in read]

    assert unread == []


@pytest.mark.parametrize(
    ("declaration", "accept"),
    [
        ({"multimodal": {"input": {"image": True}}}, ("image/*",)),
        (
            {
                "multimodal": {"input": {"image": True}},
                "custom": {"input": {"mimeTypes": ["image/png", "application/pdf"], "maxBytes": 2048}},
            },
            ("image/png",),
        ),
    ],
)
def test_image_picker_takes_photos_and_pasted_images(declaration: dict, accept: tuple) -> None:
    picker = decide(capabilities=agui(**declaration))["image-picker"]

    assert picker.shown
    assert (picker.details.accept, picker.details.accept_attr) == (accept, ",".join(accept))
    assert (picker.details.capture, picker.details.paste) == ("environment", True)
    assert ("declared", "multimodal.input.image", True) in [
        (r.source, r.field, r.value) for r in picker.reasons
    ]


def test_image_picker_and_recorder_need_the_upload_permission() -> None:
    plan = decide(capabilities=agui(**STANDARD), user=UserAbilities(can_upload=False))

    assert plan["image-picker"].disabled and plan["audio-recorder"].disabled


def test_audio_recorder_records_in_a_type_the_agent_takes() -> None:
    default = decide(capabilities=agui(multimodal={"input": {"audio": True}}))["audio-recorder"]
    declared = decide(
        capabilities=agui(
            multimodal={"input": {"audio": True}},
            custom={"input": {"mimeTypes": ["audio/ogg"], "maxBytes": 1048576}},
        )
    )["audio-recorder"]

    assert default.shown and default.details.mime_types == ("audio/webm", "audio/ogg", "audio/mp4")
    assert declared.details.mime_types == ("audio/ogg",)
    assert declared.details.max_bytes_label == "1 MB"


def test_media_output_shows_images_and_plays_audio() -> None:
    output = decide(capabilities=agui(multimodal={"output": {"image": True, "audio": False}}))["media-output"]

    assert output.shown
    assert output.details == decisions.MediaOutputDetails(images=True, audio=False)


@pytest.mark.parametrize(
    ("transport", "decision", "expected", "says"),
    [
        ({"streaming": False}, SHOWN, {"stream": False, "resume": False}, "one complete response"),
        ({"streaming": True, "resumable": True}, SHOWN, {"stream": True, "resume": True}, "resumes"),
        ({"httpBinary": True}, SHOWN, {"http_binary": True, "use_binary": False}, "reads the stream as SSE"),
        (
            {"websocket": True, "pushNotifications": True},
            SHOWN,
            {"websocket": True},
            "pushNotifications is true",
        ),
        ({"streaming": True}, HIDDEN, {"stream": True}, "transport.resumable is not declared"),
    ],
)
def test_transport_chooses_the_connection(
    transport: dict, decision: Decision, expected: dict, says: str
) -> None:
    control = decide(capabilities=agui(transport=transport))["transport"]

    assert control.decision == decision, texts_of(control)
    assert {key: control.details[key] for key in expected} == expected
    assert says in texts_of(control)


def test_an_external_agent_streams_every_message() -> None:
    control = decide(policy=external(capabilities={"messages": True}))["transport"]

    assert control.hidden
    assert control.details.stream is True
    assert "nothing to show" in texts_of(control)


@pytest.mark.parametrize(
    ("sources", "decision", "offer"),
    [
        ({"capabilities": agui(tools={"clientProvided": True})}, SHOWN, True),
        ({"capabilities": agui(tools={"clientProvided": False})}, HIDDEN, False),
        ({"capabilities": agui()}, HIDDEN, True),  # not said: offered, the agent ignores what it does not use
        ({"capabilities": agui(tools={"supported": False})}, HIDDEN, False),
        ({"capabilities": agui(**CREWAI)}, SHOWN, True),
        ({"policy": external()}, HIDDEN, False),  # a message of the external protocol carries no tools
    ],
)
def test_frontend_tools_are_offered_unless_the_agent_takes_none(
    sources: dict, decision: Decision, offer: bool
) -> None:
    control = decide(**sources)["frontend-tools"]

    assert control.decision == decision, texts_of(control)
    assert control.details.offer is offer


@pytest.mark.parametrize(
    ("execution", "sandbox", "warn", "says"),
    [
        ({"codeExecution": True, "sandboxed": True}, "sandboxed", False, "runs in a sandbox"),
        ({"codeExecution": True, "sandboxed": False}, "not-sandboxed", True, "outside a sandbox"),
        ({"codeExecution": True}, "unknown", True, "whether its code runs in a sandbox is unknown"),
    ],
)
def test_code_execution_warns_outside_a_sandbox(execution: dict, sandbox: str, warn: bool, says: str) -> None:
    control = decide(capabilities=agui(execution=execution))["code-execution"]

    assert control.shown
    assert (control.details.sandbox, control.details.warn) == (sandbox, warn)
    assert says in texts_of(control)


def test_memory_remembers_across_conversations() -> None:
    control = decide(capabilities=agui(state={"memory": True, "persistentState": True}))["memory"]

    assert control.shown
    assert control.details == decisions.MemoryDetails(memory=True, persistent_state=True)
    assert "remembers across conversations" in texts_of(control)


@pytest.mark.parametrize(("persistent", "send_back"), [(None, True), (True, True), (False, False)])
def test_state_is_sent_back_where_it_persists_or_nothing_was_said(
    persistent: bool | None, send_back: bool
) -> None:
    state = {"snapshots": True} if persistent is None else {"snapshots": True, "persistentState": persistent}

    control = decide(capabilities=agui(state=state))["state"]

    assert control.details.send_state_back is send_back
    if persistent is False:
        assert "no state is sent back" in texts_of(control)


def test_the_rate_limit_of_custom_throttles_sends() -> None:
    plan = decide(capabilities=agui(custom={"rateLimit": {"maxRequestsPerMinute": 6}}))

    throttle = plan["throttle"]
    assert throttle.shown
    assert throttle.details == decisions.ThrottleDetails(max_requests=6, window_seconds=60)
    assert ("declared", "custom.rateLimit.maxRequestsPerMinute", 6) in [
        (r.source, r.field, r.value) for r in throttle.reasons
    ]
    assert plan["limits"].shown and plan["limits"].details.requests_per_minute == 6


@pytest.mark.parametrize("rate", [0, -1, "6", True, None, {"per": "minute"}])
def test_a_rate_limit_that_is_not_a_count_throttles_nothing(rate: Any) -> None:
    throttle = decide(capabilities=agui(custom={"rateLimit": {"maxRequestsPerMinute": rate}}))["throttle"]

    assert throttle.hidden
    assert throttle.details.max_requests is None


def test_custom_and_non_standard_fields_are_shown_in_the_explain_view() -> None:
    standard = decide(capabilities=agui(**STANDARD))["custom"]
    strands = decide(capabilities=agui(**STRANDS))["custom"]
    crewai = decide(capabilities=agui(**CREWAI))["custom"]

    assert standard.shown
    assert [(p.path, p.raw) for p in standard.details.custom] == [
        ("custom.rateLimit", {"maxRequestsPerMinute": 6}),
        ("custom.input", {"maxBytes": 5242880}),
    ]
    assert "features.multipleRunsPerStream" in {p.path for p in strands.details.extensions}
    assert {"wireShape", "rawEvents", "conversationalFlows", "crewChat"} <= {r.field for r in crewai.reasons}
    assert not standard.details.unknown_shape


def test_identity_metadata_and_only_a_web_documentation_link() -> None:
    plan = decide(
        capabilities=agui(
            identity={"name": "x", "documentationUrl": "javascript:alert(1)", "metadata": {"a": 1}}
        )
    )

    identity = plan["identity"]
    assert identity.details.documentation_url is None
    assert identity.details.metadata == {"a": 1}
    assert "identity.documentationUrl is javascript:alert(1): not an http(s) address: not shown" in texts_of(
        identity
    )


def test_crewai_asks_through_frontend_tools() -> None:
    approvals = decide(capabilities=agui(**CREWAI))["approvals"]

    assert approvals.details.mechanism == "frontend-tool-calls"


def test_an_approval_seen_in_a_run_shows_the_workflow() -> None:
    plan = decide(policy=external(), observed=Observations(approvals_seen=True))

    assert plan["approvals"].shown
    assert ("observed", "approvals_seen", True) in links(plan, "approvals")
