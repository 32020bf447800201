"""From an endpoint, its discovery and a user to the plan of controls, and the catalogue's summary of it.

The decisions themselves are made in agents_ui.decisions; this module only gathers their inputs
from the database and the discovery service, and turns a plan into catalogue badges.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from agents_ui.decisions import Observations, Plan, UserAbilities, decide
from agents_ui.discovery import Discovery
from agents_ui.models import AgentEndpoint, CapabilitySnapshot
from agents_ui.sdk import PrepareResult

Status = CapabilitySnapshot.Status


async def user_abilities(user) -> UserAbilities:
    return UserAbilities.from_permissions(await user.aget_all_permissions())


_PLANS: dict[tuple, Plan] = {}


def build_plan(
    endpoint: AgentEndpoint,
    discovery: Discovery,
    *,
    user: UserAbilities,
    prepared: PrepareResult | None = None,
    observed: Observations | None = None,
) -> Plan:
    """The plan for this user; an external agent's prepare() answer supersedes its discovered policy.

    decide() is pure, so a plan is reused while its inputs are the same (a warm catalogue).
    """
    observed = observed or observations_of(endpoint)
    key = None
    if prepared is None and discovery.digest:
        key = (
            discovery.digest,
            discovery.status,
            discovery.protocol,
            json.dumps(endpoint.overrides or {}, sort_keys=True),
            user,
            observed,
            endpoint.name,
            endpoint.description,
        )
        if key in _PLANS:
            return _PLANS[key]
    plan = decide(
        capabilities=discovery.capabilities,
        policy=prepared.policy if prepared else discovery.policy,
        negotiated=prepared.negotiated if prepared else None,
        overrides=endpoint.overrides or {},
        user=user,
        observed=observed,
        fallback_identity={"name": endpoint.name, "description": endpoint.description},
    )
    if key is not None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def observations_of(endpoint: AgentEndpoint) -> Observations:
    seen = endpoint.observed or {}
    return Observations(
        reasoning_seen=bool(seen.get("reasoning")),
        interrupts_seen=bool(seen.get("interrupts")),
        state_seen=bool(seen.get("state")),
    )


@dataclass(frozen=True)
class Badge:
    label: str
    tone: str = "accent"  # accent | ok | warn | info


@dataclass(frozen=True)
class StatusLine:
    key: str  # declared | none | invalid | unreachable | newer-client
    text: str


@dataclass
class AgentCard:
    endpoint: AgentEndpoint
    discovery: Discovery
    plan: Plan
    badges: list[Badge] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    status: StatusLine | None = None
    html: str = ""  # the rendered card (views.py caches it while nothing on it changes)


# Catalogue filters: key -> label. A card carries the keys whose controls its plan shows.
FILTERS: dict[str, str] = {
    "pdf": "Accepts PDFs",
    "uploads": "Takes files",
    "approvals": "Asks before acting",
    "subagents": "Has sub-agents",
    "reasoning": "Shows reasoning",
    "tools": "Uses tools",
    "state": "Shared state",
}


def status_line(discovery: Discovery) -> StatusLine:
    if discovery.status == Status.DECLARED and discovery.needs_newer_client:
        return StatusLine("newer-client", f"Needs a newer client (SDK {discovery.min_version} or later)")
    if discovery.status == Status.DECLARED:
        return StatusLine("declared", "Declared")
    if discovery.status == Status.NONE:
        return StatusLine("none", "No discovery: capabilities unknown")
    if discovery.status == Status.INVALID:
        return StatusLine("invalid", "Invalid declaration")
    if discovery.last_known_at:
        return StatusLine("unreachable", "Unreachable, last known from")
    return StatusLine("unreachable", "Unreachable")


def card_for(endpoint: AgentEndpoint, discovery: Discovery, plan: Plan) -> AgentCard:
    badges: list[Badge] = []
    filters: list[str] = []
    if plan["reasoning"].visible:
        encrypted = plan["reasoning"].details.get("encrypted")
        badges.append(Badge("Reasoning (encrypted)" if encrypted else "Reasoning"))
        filters.append("reasoning")
    if plan["subagents"].visible:
        count = len(plan["subagents"].details["subagents"])
        badges.append(Badge(f"{count} sub-agent{'s' if count != 1 else ''}"))
        filters.append("subagents")
    upload = plan["upload"]
    if upload.visible:
        accept = upload.details["accept"]
        kinds = _upload_kinds(accept)
        limit = upload.details.get("max_bytes_label")
        badges.append(Badge(f"Accepts {kinds}" + (f" ≤ {limit}" if limit else ""), "info"))
        filters.append("uploads")
        if upload.details["accept_any"] or "application/pdf" in accept:
            filters.append("pdf")
    if plan["approvals"].visible:
        badges.append(Badge("Asks before acting", "warn"))
        filters.append("approvals")
    if plan["tools"].visible:
        count = len(plan["tools"].details["tools"])
        badges.append(Badge(f"{count} tool{'s' if count != 1 else ''}"))
        filters.append("tools")
    if plan["state"].visible:
        badges.append(Badge("Shared state"))
        filters.append("state")
    # Before negotiation, what the agent offers (a workspace negotiates it when opened).
    output = plan["structured-output"]
    if output.visible or output.details.get("offered_module_types"):
        badges.append(Badge("Structured output"))
    grounding = plan["grounding"]
    if grounding.visible or grounding.details.get("offered"):
        badges.append(Badge("Cites sources"))
    if plan["feedback"].visible:
        badges.append(Badge("Feedback", "ok"))
    return AgentCard(endpoint, discovery, plan, badges, filters, status_line(discovery))


def _upload_kinds(accept: list[str]) -> str:
    if not accept:
        return "any file"
    names = []
    for mime in accept:
        if mime == "application/pdf":
            names.append("PDF")
        elif mime.endswith("/*"):
            names.append(mime.split("/")[0] + "s")
        else:
            names.append(mime.split("/")[-1].upper())
    return ", ".join(dict.fromkeys(names))
