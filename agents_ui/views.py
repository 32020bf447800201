"""Pages: the catalogue of agents and each agent's workspace."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest
from django.template.response import TemplateResponse
from django_htmx.middleware import HtmxDetails

from agents_ui import agent_errors
from agents_ui.decisions import CONTROL_NAMES
from agents_ui.discovery import discover, discover_one, sdk_client
from agents_ui.http import agent_http_client
from agents_ui.models import AgentEndpoint
from agents_ui.plans import FILTERS, build_plan, card_for, user_abilities
from agents_ui.sdk import AgentError, PrepareResult

# What this UI can render, asked for in prepare(); the agent grants a subset (PROTOCOLS.md 2.1).
UI_STREAM_PROFILE = "runtime-standard-v1"
UI_OUTPUT_MODULES = ["citation", "table"]


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


async def _usable_endpoint(request: HttpRequest, slug: str) -> AgentEndpoint:
    """An endpoint this user may use; anything else is "not found", never "forbidden"."""
    user = await request.auser()
    try:
        return await AgentEndpoint.objects.usable_by(user).aget(slug=slug)
    except AgentEndpoint.DoesNotExist:
        raise Http404("No such agent.") from None


@login_required
async def catalogue(request: HtmxHttpRequest) -> TemplateResponse:
    user = await request.auser()
    endpoints = [e async for e in AgentEndpoint.objects.usable_by(user)]
    discoveries = await discover(endpoints)
    abilities = await user_abilities(user)
    cards = [
        card_for(e, discoveries[e.pk], build_plan(e, discoveries[e.pk], user=abilities)) for e in endpoints
    ]
    return TemplateResponse(request, "agents_ui/catalogue.html", {"cards": cards, "filters": FILTERS})


@login_required
async def catalogue_card(request: HtmxHttpRequest, slug: str) -> TemplateResponse:
    """One card, discovered again now (the card's refresh button)."""
    endpoint = await _usable_endpoint(request, slug)
    discovery = await discover_one(endpoint, refresh=True)
    plan = build_plan(endpoint, discovery, user=await user_abilities(await request.auser()))
    return TemplateResponse(
        request, "agents_ui/catalogue.html#agent-card", {"card": card_for(endpoint, discovery, plan)}
    )


@login_required
async def workspace(request: HtmxHttpRequest, slug: str) -> TemplateResponse:
    endpoint = await _usable_endpoint(request, slug)
    discovery = await discover_one(endpoint)
    prepared, prepare_error = None, ""
    if discovery.policy is not None and discovery.status == "declared" and not discovery.needs_newer_client:
        prepared, prepare_error = await _prepare(endpoint, request.GET.get("profile") or UI_STREAM_PROFILE)
    plan = build_plan(
        endpoint, discovery, user=await user_abilities(await request.auser()), prepared=prepared
    )
    context = {
        "endpoint": endpoint,
        "discovery": discovery,
        "plan": plan,
        "controls": [plan[name] for name in CONTROL_NAMES],
        "prepare_error": prepare_error,
        "raw_declaration": _pretty(discovery.raw if discovery.raw is not None else discovery.last_known),
        "raw_negotiation": _pretty(prepared.negotiated.model_dump(mode="json")) if prepared else "",
    }
    return TemplateResponse(request, "agents_ui/workspace.html", context)


async def _prepare(endpoint: AgentEndpoint, profile: str) -> tuple[PrepareResult | None, str]:
    async with agent_http_client() as client:
        agent = sdk_client(endpoint, client)
        try:
            result = await agent.prepare(
                stream_profile=profile,
                output_module_types=UI_OUTPUT_MODULES,
                provider_grounding_display=True,
            )
        except AgentError as error:
            return None, agent_errors.describe(error)
    return result, ""


def _pretty(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True) if data is not None else ""
