"""Which demo agents exist, and how they become AgentEndpoints the product can use."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from django.db import transaction

from agents_ui.demo.a2a import signing
from agents_ui.demo.agui.base import AgUiDemoAgent
from agents_ui.demo.agui.booking import BookingDesk
from agents_ui.demo.agui.cipher import Cipher
from agents_ui.demo.agui.document_reviewer import DocumentReviewer
from agents_ui.demo.agui.legacy import Legacy
from agents_ui.demo.agui.operations import Operations
from agents_ui.demo.agui.orchestrator import Orchestrator
from agents_ui.demo.agui.planner import Planner
from agents_ui.demo.agui.research_assistant import ResearchAssistant
from agents_ui.demo.agui.studio import Studio
from agents_ui.demo.agui.toolsmith import Toolsmith
from agents_ui.demo.external.archive import ARCHIVE
from agents_ui.demo.external.base import ExternalDemoAgent
from agents_ui.demo.external.future_agent import FUTURE_AGENT
from agents_ui.demo.external.store import STORE
from agents_ui.demo.external.support_desk import SUPPORT_DESK
from agents_ui.demo.gate import KEY_HEADER, demo_key
from agents_ui.models import AgentEndpoint

AGUI = AgentEndpoint.Protocol.AGUI
EXTERNAL = AgentEndpoint.Protocol.EXTERNAL
A2A = AgentEndpoint.Protocol.A2A


@dataclass(frozen=True)
class DemoAgent:
    slug: str
    name: str
    protocol: str
    description: str
    demonstrates: str

    def url(self, base_url: str) -> str:
        """AG-UI: the run URL (discovery is {url}/capabilities). External: the base of /policy ...
        A2A: the base of its Agent Card (/.well-known/agent-card.json)."""
        if self.protocol == A2A:
            return f"{base_url.rstrip('/')}/demo-a2a/{self.slug}"
        root = f"{base_url.rstrip('/')}/demo-agents/{self.slug}"
        return f"{root}/" if self.protocol == AGUI else root


DEMO_AGENTS: list[DemoAgent] = [
    DemoAgent(
        "research-assistant",
        "Research Assistant",
        AGUI,
        "Researches a question: streams its reasoning, calls its own search tools in parallel, and answers "
        "with a structured summary.",
        "streamed reasoning, own tools with JSON Schemas, parallel calls, structured output, feedback, "
        "execution limits, audio input, code execution in a sandbox, memory, a rate limit (custom.rateLimit)",
    ),
    DemoAgent(
        "orchestrator",
        "Project Orchestrator",
        AGUI,
        "Delegates research and drafting to sub-agents, then hands the conversation off to a reviewer.",
        "sub-agents with descriptions, delegation, handoffs, nested SUBAGENT_* events",
    ),
    DemoAgent(
        "document-reviewer",
        "Document Reviewer",
        AGUI,
        "Reviews the PDFs and images you attach: names, types, sizes and page counts.",
        "multimodal input (PDF, images), non-streamed reasoning",
    ),
    DemoAgent(
        "operations",
        "Operations Agent",
        AGUI,
        "Runs back-office operations; moving money or deleting records waits for your approval, "
        "and you may edit the arguments first.",
        "interrupts, approvals, approve with edits, resume, interventions",
    ),
    DemoAgent(
        "planner",
        "Launch Planner",
        AGUI,
        "Builds a plan as a live state document, advanced step by step with JSON Patch.",
        "STATE_SNAPSHOT and STATE_DELTA, steps, execution.maxIterations, explicit 'not supported'",
    ),
    DemoAgent(
        "toolsmith",
        "Toolsmith",
        AGUI,
        "Hot-loads tool plugins: its tool list changes from one discovery to the next.",
        "a tool list that changes at runtime, client-provided tools",
    ),
    DemoAgent(
        "studio",
        "Sketch Studio",
        AGUI,
        "Answers with a small picture and a short sound of what you name.",
        "images and audio in answers (multimodal.output): content parts of tool results, inline data",
    ),
    DemoAgent(
        "cipher",
        "Cipher",
        AGUI,
        "Reasons privately: its reasoning only travels as an encrypted blob.",
        "encrypted reasoning (REASONING_ENCRYPTED_VALUE only)",
    ),
    DemoAgent(
        "booking-desk",
        "Booking Desk",
        AGUI,
        "Books meeting rooms through a form it builds for you: a day, a room, then a confirmation card.",
        "A2UI v0.9 surfaces in ACTIVITY_SNAPSHOT / ACTIVITY_DELTA, button actions back as "
        "forwardedProps.a2uiAction, custom.a2ui",
    ),
    DemoAgent(
        "legacy",
        "Legacy Helpdesk Bot",
        AGUI,
        "An older agent without capability discovery; it reasons anyway.",
        "no discovery (404): everything unknown, reasoning observed in runs",
    ),
    DemoAgent(
        "support-desk",
        "Support Desk",
        EXTERNAL,
        "Customer support for orders; refunds pause for a human approval.",
        "messages, conversations, files, feedback, approvals, domain tools, three stream profiles, "
        "citations, grounding, host context, rate and spend limits, 403 for artifacts",
    ),
    DemoAgent(
        "archive",
        "Records Archive",
        EXTERNAL,
        "Searches the company archive and returns tables and downloadable summaries.",
        "artifacts, table modules, no files or approvals, minimal error detail",
    ),
    DemoAgent(
        "future-agent",
        "Nova (preview)",
        EXTERNAL,
        "A preview agent that requires a newer client SDK.",
        "sdk.minVersion above the product's SDK: 426 on every call but /policy",
    ),
    DemoAgent(
        "trip-planner",
        "Trip Planner",
        A2A,
        "Plans trips over A2A: asks where you want to go, streams an itinerary, reads your lists.",
        "an A2A Agent Card: skills with examples, file input modes, streaming, artifacts (text, file, "
        "data), input-required, auth-required, failed and rejected tasks, tasks/cancel",
    ),
]

DEMO_AGENTS_BY_SLUG: dict[str, DemoAgent] = {agent.slug: agent for agent in DEMO_AGENTS}

# What answers each demo agent's routes.
AGUI_AGENTS: dict[str, AgUiDemoAgent] = {
    agent.slug: agent
    for agent in (
        ResearchAssistant(),
        Orchestrator(),
        DocumentReviewer(),
        Operations(),
        Planner(),
        Toolsmith(),
        Studio(),
        Cipher(),
        BookingDesk(),
        Legacy(),
    )
}
EXTERNAL_AGENTS: dict[str, ExternalDemoAgent] = {a.slug: a for a in (SUPPORT_DESK, ARCHIVE, FUTURE_AGENT)}


def reset_state() -> None:
    """Forget everything the demo agents remember (tests, and a fresh demo).

    Open interrupts, the toolsmith's reloads, conversations, files, approvals, artifacts, limit counters.
    """
    for agent in AGUI_AGENTS.values():
        agent.reset()
    STORE.clear()
    # The A2A server (Starlette) is loaded only where the demo agents are served (project/asgi.py).
    a2a_server = sys.modules.get("agents_ui.demo.a2a.server")
    if a2a_server is not None:
        a2a_server.reset()


def credential_fields() -> dict[str, str]:
    """How a demo endpoint authenticates: this installation's demo key, in the header gate.py reads."""
    return {
        "auth_kind": AgentEndpoint.AuthKind.HEADER,
        "auth_header_name": KEY_HEADER,
        "credential": demo_key(),
    }


def signing_fields(demo: DemoAgent) -> dict[str, object]:
    """An A2A demo's card is signed by this installation's demo key: its endpoint trusts that key."""
    if demo.protocol != A2A:
        return {}
    return {"signing_keys": signing.key_set(), "signer_name": signing.SIGNER}


@transaction.atomic
def register_demo_agents(base_url: str, *, create_missing: bool = True) -> list[AgentEndpoint]:
    """Create the missing demo endpoints and point the existing ones at `base_url`. Idempotent.

    Existing demo endpoints keep everything an admin may have changed (name, enabled, access);
    only their URL, their credential and their card signing key follow the server, so a new port or a
    new SECRET_KEY keeps them working. A slug already taken by an admin's own (non-demo) endpoint is
    left alone. Returns the demo endpoints that now exist.
    """
    endpoints = []
    existing = {
        endpoint.slug: endpoint for endpoint in AgentEndpoint.objects.filter(slug__in=DEMO_AGENTS_BY_SLUG)
    }
    credentials = credential_fields()
    for demo in DEMO_AGENTS:
        url = demo.url(base_url)
        endpoint = existing.get(demo.slug)
        if endpoint is None:
            if not create_missing:
                continue
            endpoint = AgentEndpoint(
                slug=demo.slug,
                name=demo.name,
                description=demo.description,
                protocol=demo.protocol,
                base_url=url,
                is_demo=True,
                **credentials,
                **signing_fields(demo),
            )
            endpoint.full_clean()
            endpoint.save()
        elif not endpoint.is_demo:
            continue
        else:
            current = {"base_url": url, **credentials, **signing_fields(demo)}
            changed = [name for name, value in current.items() if getattr(endpoint, name) != value]
            if changed:
                for name in changed:
                    setattr(endpoint, name, current[name])
                endpoint.save(update_fields=[*changed, "updated_at"])
        endpoints.append(endpoint)
    return endpoints
