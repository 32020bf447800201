"""prepare() for external agents: what this UI asks for, and what the agent granted (cached).

The workspace, the message that starts a run and the stream that shows it must all see the same
negotiation, so its answer is cached for as long as a discovered declaration is trusted.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache

from agents_ui.endpoints import errors
from agents_ui.endpoints.clients import agent_client, sdk_client
from agents_ui.endpoints.discovery import Discovery
from agents_ui.models import AgentEndpoint
from agents_ui.sdk import AgentError, PrepareResult

# What this UI can render, asked for in prepare(); the agent grants a subset (docs/PROTOCOLS.md 2.1).
UI_STREAM_PROFILE = "runtime-standard-v1"
UI_OUTPUT_MODULES = ["citation", "table"]


def can_prepare(discovery: Discovery) -> bool:
    return (
        discovery.policy is not None and discovery.status == "declared" and not discovery.needs_newer_client
    )


async def prepared_for(
    endpoint: AgentEndpoint, discovery: Discovery, profile: str | None = None
) -> tuple[PrepareResult | None, str]:
    """(the agent's answer to prepare(), "") or (None, a message saying why there is none)."""
    if not can_prepare(discovery):
        return None, ""
    profile = profile or UI_STREAM_PROFILE
    key = f"prepare:{endpoint.pk}:{endpoint.updated_at.timestamp():.6f}:{discovery.digest}:{profile}"
    cached = await cache.aget(key)
    if cached is not None:
        return PrepareResult.model_validate(cached), ""
    async with agent_client() as client:
        agent = sdk_client(endpoint, client)
        try:
            result = await agent.prepare(
                stream_profile=profile, output_module_types=UI_OUTPUT_MODULES, provider_grounding_display=True
            )
        except AgentError as error:
            return None, errors.describe(error)
    await cache.aset(key, result.model_dump(mode="json"), timeout=settings.AGENTS_UI_DISCOVERY_TTL)
    return result, ""
