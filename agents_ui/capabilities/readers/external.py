"""The external agent's public policy (`GET /policy`) and what `prepare()` negotiated.

docs/PROTOCOLS.md 2 is the binding. Only the fields the agent sent count: the SDK's models default
an absent flag to false, but absent is unknown here (docs/protocol-decisions.md). Two facts follow
from the protocol itself rather than from a field: every message streams over SSE (so
`capabilities.messages` is what AG-UI calls `transport.streaming`), and a message carries no
client tools; and an approval decision may carry `editedInput`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents_ui.capabilities.profile import (
    EXTERNAL,
    CapabilityProfile,
    Files,
    HostContext,
    HumanInTheLoop,
    Identity,
    Limits,
    Negotiation,
    Output,
    StreamProfiles,
    Thread,
    Tools,
    Transport,
    follows,
)
from agents_ui.capabilities.provenance import Fact, Kind, Provenance
from agents_ui.capabilities.readers import a2ui
from agents_ui.capabilities.readers.document import Document, count_or_zero
from agents_ui.capabilities.values import RateLimit, SpendLimit, ToolInfo

SOURCE = "external agent policy"
NEGOTIATION = "negotiation (prepare)"
PROTOCOL = "external agent protocol (docs/PROTOCOLS.md 2.2)"


def read(policy: Mapping[str, Any], negotiated: Mapping[str, Any] | None = None) -> CapabilityProfile:
    doc = Document(policy, SOURCE)
    domain_tools = doc.items("domainTools", _domain_tool)
    needing = None
    if domain_tools.value is not None:
        needing = tuple(tool.name for tool in domain_tools.value if tool.approval_required)
    offered_modules = doc.texts("outputModuleTypes")
    negotiation = _negotiation(negotiated)
    return CapabilityProfile(
        shape=EXTERNAL,
        identity=Identity(
            name=doc.text("identity.name"),
            description=doc.text("identity.description"),
            version=doc.text("identity.version"),
            provider=doc.text("identity.provider"),
        ),
        transport=Transport(
            streaming=doc.flag(
                "capabilities.messages",
                note="every message streams over SSE, so a run can be stopped by closing it",
            ),
        ),
        tools=Tools(
            items=domain_tools,
            client_provided=Fact(
                False,
                (
                    Provenance(
                        PROTOCOL,
                        "POST conversations/{id}/messages",
                        None,
                        Kind.INFERRED,
                        "A message carries no client tools: the agent takes none",
                    ),
                ),
            ),
            needing_approval=Fact(
                needing,
                (
                    Provenance(
                        SOURCE,
                        "domainTools[].operation.approvalRequired",
                        needing,
                        Kind.DECLARED,
                    ),
                ),
            )
            if needing
            else Fact(),
        ),
        output=Output(
            module_types=offered_modules,
            grounding=doc.flag("providerGroundingDisplay"),
        ),
        human_in_the_loop=HumanInTheLoop(
            approvals=doc.flag("capabilities.approvals"),
            feedback=doc.flag("capabilities.interactions", note="what AG-UI calls humanInTheLoop.feedback"),
            approve_with_edits=Fact(
                True,
                (
                    Provenance(
                        PROTOCOL,
                        "POST approvals/{approvalId} editedInput",
                        None,
                        Kind.INFERRED,
                        "An approval decision may carry edited input: approving with edits is offered",
                    ),
                ),
            ),
        ),
        files=Files(
            enabled=doc.flag("capabilities.files"),
            upload=doc.flag("filePolicy.upload"),
            read=doc.flag("filePolicy.read"),
            max_bytes=doc.read(
                "filePolicy.maxUploadBytes", count_or_zero, why_not="not a byte count: not read"
            ),
            mime_types=doc.texts("filePolicy.allowedMimeTypes"),
        ),
        limits=Limits(
            rate_limits=doc.items("rateLimits", _rate_limit),
            spend_limits=doc.items("spendLimits", _spend_limit),
        ),
        stream_profiles=StreamProfiles(
            offered=doc.texts("streamProfiles"),
            default=doc.text("defaultStreamProfile"),
        ),
        host_context=HostContext(
            accepted_fields=doc.texts("hostContextPolicy.acceptedFields"),
            max_total_bytes=doc.read(
                "hostContextPolicy.maxTotalBytes", count_or_zero, why_not="not a byte count: not read"
            ),
        ),
        negotiation=negotiation,
        thread=THREAD,
        generative_ui=a2ui.from_modules(
            offered_modules, negotiation.output_module_types, negotiation.prepared
        ),
        raw=policy,
    )


# The agent keeps the conversation under its id and takes ratings (POST interactions); an A2UI
# surface it sends is shown only, and its tool calls are its own to finish.
THREAD = Thread(
    kept_by_agent=follows(
        PROTOCOL,
        "conversations/{id}",
        True,
        "The agent keeps its own copy of the conversation under its id: a message cannot be taken back",
    ),
    feedback_sent=follows(
        PROTOCOL, "POST conversations/{id}/interactions", True, "A rating of an answer is sent to the agent"
    ),
    surface_actions=follows(
        PROTOCOL, "POST conversations/{id}/messages", False, "A message carries no interface action back"
    ),
    tool_answers=follows(
        PROTOCOL,
        "POST conversations/{id}/messages",
        False,
        "The agent runs its own tools: none waits for the client",
    ),
)


def _negotiation(negotiated: Mapping[str, Any] | None) -> Negotiation:
    doc = Document(negotiated or {}, NEGOTIATION)

    def granted(path: str, fact: Fact[Any]) -> Fact[Any]:
        # Named as the product's reasons always named them: negotiated.<field>.
        return Fact(
            fact.value,
            tuple(
                Provenance(p.source, f"negotiated.{path}", p.raw, Kind.NEGOTIATED, p.note)
                for p in fact.provenance
            ),
        )

    return Negotiation(
        prepared=negotiated is not None,
        stream_profile=granted("streamProfile", doc.text("streamProfile")),
        output_module_types=granted("outputModuleTypes", doc.texts("outputModuleTypes")),
        grounding=granted("providerGroundingDisplay", doc.flag("providerGroundingDisplay")),
    )


def _text(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return value if isinstance(value, str) else None


def _domain_tool(raw: Any) -> ToolInfo | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("publicName"), str):
        return None
    operation = raw.get("operation") if isinstance(raw.get("operation"), Mapping) else {}
    # An entry's unsent fields read as the protocol's defaults: active, described by nothing, and
    # acting without approval.
    return ToolInfo(
        name=raw["publicName"],
        description=_text(raw, "description") or "",
        schema=raw.get("inputSchema"),
        output_schema=raw.get("outputSchema"),
        status=_text(raw, "status") or "active",
        kind=_text(operation, "kind"),
        side_effect_class=_text(operation, "sideEffectClass"),
        idempotency=_text(operation, "idempotency"),
        approval_required=operation.get("approvalRequired") is True,
    )


def _whole(raw: Any) -> int | None:
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else None


def _rate_limit(raw: Any) -> RateLimit | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("scope"), str):
        return None
    limit, window = _whole(raw.get("limit")), _whole(raw.get("windowSeconds"))
    if limit is None or window is None:
        return None
    return RateLimit(raw["scope"], limit, window)


def _spend_limit(raw: Any) -> SpendLimit | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("scope"), str):
        return None
    limit, window, currency = raw.get("limit"), _whole(raw.get("windowSeconds")), raw.get("currency")
    if not isinstance(limit, int | float) or isinstance(limit, bool) or window is None:
        return None
    if not isinstance(currency, str):
        return None
    return SpendLimit(raw["scope"], limit, currency, window)
