"""The catalogue: a card per agent the person may use, with what its plan shows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import SafeString

from agents_ui.conformance import Evidence, report
from agents_ui.decisions import UserAbilities
from agents_ui.endpoints import conformance
from agents_ui.endpoints.catalogue import FILTERS, entry_for
from agents_ui.endpoints.discovery import Discovery, discover, discover_one
from agents_ui.endpoints.memo import Memo
from agents_ui.endpoints.plans import observations_of, plan_inputs, user_abilities
from agents_ui.models import AgentEndpoint
from agents_ui.templatetags.agents_ui_tags import ago
from agents_ui.views.access import usable_endpoint
from agents_ui.views.htmx import HtmxHttpRequest


@login_required
async def catalogue(request: HtmxHttpRequest) -> TemplateResponse:
    return await _catalogue_page(request)


async def _catalogue_page(request: HtmxHttpRequest) -> TemplateResponse:
    user = await request.auser()
    endpoints = [e async for e in AgentEndpoint.objects.usable_by(user)]
    discoveries = await discover(endpoints)
    abilities = await user_abilities(user)
    # Staff read each card's conformance badge: one aggregate over every card's evidence.
    evidence = await _evidence(endpoints) if user.is_staff else {}
    cards = [
        await _card(endpoint, discoveries[endpoint.pk], abilities, user.is_staff, evidence.get(endpoint.pk))
        for endpoint in endpoints
    ]
    return TemplateResponse(request, "agents_ui/catalogue.html", {"cards": cards, "filters": FILTERS})


@login_required
async def catalogue_card(request: HtmxHttpRequest, slug: str) -> TemplateResponse:
    """One card, discovered again now (the card's refresh link); without htmx, the whole catalogue."""
    endpoint = await usable_endpoint(request, slug)
    discovery = await discover_one(endpoint, refresh=True)
    if not request.htmx:
        return await _catalogue_page(request)
    user = await request.auser()
    evidence = (await _evidence([endpoint])).get(endpoint.pk) if user.is_staff else None
    card = await _card(endpoint, discovery, await user_abilities(user), user.is_staff, evidence)
    return TemplateResponse(request, "agents_ui/catalogue.html#agent-card", {"card": card})


@dataclass(frozen=True)
class RenderedCard:
    """A card as the catalogue lists it: the attributes of its frame, and its body as HTML."""

    slug: str
    filters: str
    status: str
    body: SafeString
    checked_at: datetime


# A card's body is rendered once while nothing it shows changes (a warm catalogue, and a cold one
# whose declarations did not change); the exact check time is on its frame, rendered every time.
_BODIES = Memo("catalogue cards", size=4096)


async def _evidence(endpoints: list[AgentEndpoint]) -> dict[int, dict[str, Evidence]]:
    return await sync_to_async(conformance.evidence_of)([e.pk for e in endpoints], recent=0)


async def _card(
    endpoint: AgentEndpoint,
    discovery: Discovery,
    abilities: UserAbilities,
    staff: bool,
    evidence: dict[str, Evidence] | None = None,
) -> RenderedCard:
    key = None
    if discovery.digest:
        # Everything the body shows: the endpoint as last edited, what its runs showed (kept apart
        # from edits), the discovery, how long ago it was checked, and what the person may do.
        key = (
            endpoint.pk, endpoint.updated_at, observations_of(endpoint), discovery.digest, discovery.status,
            discovery.error, ago(discovery.checked_at), ago(discovery.last_known_at), abilities, staff,
            tuple(sorted((key, found.seen, found.refused) for key, found in (evidence or {}).items())),
        )  # fmt: skip
        found = _BODIES.get(key)
        if found is not None:
            return RenderedCard(endpoint.slug, *found, checked_at=discovery.checked_at)
    inputs = await plan_inputs(endpoint, abilities, discovery=discovery, negotiate=False)
    plan = inputs.plan()
    card = entry_for(endpoint, discovery, plan)
    frame = (" ".join(card.filters), card.status.key if card.status else "")
    context = {"card": card, "staff": staff}
    if staff:
        found = report(plan.profile, evidence or {}, observations_of(endpoint))
        context["conformance"] = {
            "summary": found.summary,
            "contradictions": len(found.contradictions),
            "url": reverse("admin:agents_ui_agentendpoint_conformance", args=[endpoint.pk]),
        }
    body = render_to_string("agents_ui/catalogue.html#agent-card-body", context)
    if key is not None:
        _BODIES.put(key, (*frame, body))
    return RenderedCard(endpoint.slug, *frame, checked_at=discovery.checked_at, body=body)
