"""The catalogue: a card per agent the person may use, with what its plan shows."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.template.loader import get_template
from django.template.response import TemplateResponse

from agents_ui.endpoints.cards import FILTERS, AgentCard, card_for
from agents_ui.endpoints.discovery import discover, discover_one
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import AgentEndpoint
from agents_ui.templatetags.agents_ui_tags import ago
from agents_ui.views.access import usable_endpoint
from agents_ui.views.htmx import HtmxHttpRequest


@login_required
async def catalogue(request: HtmxHttpRequest) -> TemplateResponse:
    user = await request.auser()
    endpoints = [e async for e in AgentEndpoint.objects.usable_by(user)]
    discoveries = await discover(endpoints)
    abilities = await user_abilities(user)
    cards = []
    for endpoint in endpoints:
        inputs = await plan_inputs(endpoint, abilities, discovery=discoveries[endpoint.pk], negotiate=False)
        cards.append(card_for(endpoint, inputs.discovery, inputs.plan()))
    for card in cards:
        card.html = _card_html(card, abilities)
    return TemplateResponse(request, "agents_ui/catalogue.html", {"cards": cards, "filters": FILTERS})


_CARDS: dict[tuple, tuple[str, str]] = {}


def _card_html(card: AgentCard, abilities: Any) -> str:
    """A catalogue card, rendered once while nothing a person reads on it changes (warm and cold
    catalogues alike); only its exact check time is put in afresh."""
    endpoint, discovery = card.endpoint, card.discovery
    key = (
        endpoint.pk, endpoint.updated_at, discovery.digest, discovery.status, discovery.error,
        ago(discovery.checked_at), ago(discovery.last_known_at), abilities,
    )  # fmt: skip
    checked = f'data-checked="{discovery.checked_at.isoformat()}"'
    memo = _CARDS.get(key) if discovery.digest else None
    if memo is None:
        html = get_template("agents_ui/catalogue.html#agent-card").render({"card": card, "checked": checked})
        if len(_CARDS) > 4096:
            _CARDS.clear()
        _CARDS[key] = (html, checked)
        return html
    html, then = memo
    return html.replace(then, checked, 1)


@login_required
async def catalogue_card(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """One card, discovered again now (the card's refresh button)."""
    endpoint = await usable_endpoint(request, slug)
    discovery = await discover_one(endpoint, refresh=True)
    abilities = await user_abilities(await request.auser())
    inputs = await plan_inputs(endpoint, abilities, discovery=discovery, negotiate=False)
    card = card_for(endpoint, discovery, inputs.plan())
    return HttpResponse(_card_html(card, abilities))
