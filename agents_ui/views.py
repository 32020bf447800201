"""Pages: the catalogue of agents, each agent's workspace, and a person's conversations."""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.template.loader import get_template
from django.template.response import TemplateResponse
from django_htmx.middleware import HtmxDetails

from agents_ui.access import usable_endpoint, users_conversation
from agents_ui.decisions import CONTROL_NAMES
from agents_ui.discovery import discover, discover_one
from agents_ui.models import AgentEndpoint, ApprovalRecord, Conversation, Message, Run
from agents_ui.negotiation import prepared_for
from agents_ui.plans import FILTERS, build_plan, card_for, user_abilities
from agents_ui.run_render import RunView
from agents_ui.run_views import host_context, host_context_candidates
from agents_ui.runs import live_run, transcript_of
from agents_ui.templatetags.agents_ui_tags import ago


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


@login_required
async def catalogue(request: HtmxHttpRequest) -> TemplateResponse:
    user = await request.auser()
    endpoints = [e async for e in AgentEndpoint.objects.usable_by(user)]
    discoveries = await discover(endpoints)
    abilities = await user_abilities(user)
    cards = [
        card_for(e, discoveries[e.pk], build_plan(e, discoveries[e.pk], user=abilities)) for e in endpoints
    ]
    for card in cards:
        card.html = _card_html(card, abilities)
    return TemplateResponse(request, "agents_ui/catalogue.html", {"cards": cards, "filters": FILTERS})


_CARDS: dict[tuple, tuple[str, str]] = {}


def _card_html(card: Any, abilities: Any) -> str:
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
    card = card_for(endpoint, discovery, build_plan(endpoint, discovery, user=abilities))
    return HttpResponse(_card_html(card, abilities))


@login_required
async def workspace(request: HtmxHttpRequest, slug: str) -> TemplateResponse:
    endpoint = await usable_endpoint(request, slug)
    return await render_workspace(request, endpoint)


@login_required
async def conversation(request: HtmxHttpRequest, slug: str, conversation_id: Any) -> TemplateResponse:
    endpoint = await usable_endpoint(request, slug)
    thread = await users_conversation(request, endpoint, conversation_id)
    return await render_workspace(request, endpoint, conversation=thread)


async def render_workspace(
    request: HttpRequest,
    endpoint: AgentEndpoint,
    *,
    conversation: Conversation | None = None,
    composer_error: str = "",
    typed: str = "",
    status: int = 200,
) -> TemplateResponse:
    user = await request.auser()
    discovery = await discover_one(endpoint)
    prepared, prepare_error = await prepared_for(endpoint, discovery, request.GET.get("profile"))
    abilities = await user_abilities(user)
    plan = build_plan(endpoint, discovery, user=abilities, prepared=prepared)
    turns = await sync_to_async(_turns)(conversation, plan, abilities.can_approve) if conversation else []
    shared = host_context(request, plan, endpoint, conversation)
    context = {
        "endpoint": endpoint,
        "discovery": discovery,
        "plan": plan,
        "controls": [plan[name] for name in CONTROL_NAMES],
        "prepare_error": prepare_error,
        "raw_declaration": _pretty(discovery.raw if discovery.raw is not None else discovery.last_known),
        "raw_negotiation": _pretty(prepared.negotiated.model_dump(mode="json")) if prepared else "",
        "conversation": conversation,
        "turns": turns,
        "running": any(view.live for _, view in turns),
        "recent": await _recent_conversations(user, endpoint),
        "composer_error": composer_error,
        "typed": typed,
        "shared_context": shared,
        "withheld_context": sorted(
            set(host_context_candidates(request, conversation, endpoint)) - set(shared)
        ),
    }
    return TemplateResponse(request, "agents_ui/workspace.html", context, status=status)


def _turns(conversation: Conversation, plan: Any, can_approve: bool) -> list[tuple[Message | None, RunView]]:
    """Each run with the message that started it, oldest first."""
    runs = list(conversation.runs.order_by("created_at"))
    messages = {
        m.pk: m for m in conversation.messages.filter(role=Message.Role.USER).prefetch_related("attachments")
    }
    decided: dict[Any, dict[str, ApprovalRecord]] = {}
    for record in ApprovalRecord.objects.filter(run__conversation=conversation).select_related("decided_by"):
        decided.setdefault(record.run_id, {})[record.request_id] = record
    turns = []
    seen: set[str] = set()
    for run in runs:
        run.conversation = conversation
        live = live_run(run.pk) is not None or run.status in (Run.Status.PENDING, Run.Status.RUNNING)
        transcript = transcript_of(run)
        view = RunView(
            run, transcript, plan, can_approve=can_approve, live=live, decided=decided.get(run.pk, {}),
            earlier=frozenset(seen),
        )  # fmt: skip
        seen.update(m.id for m in transcript.messages)
        seen.update(transcript.tool_calls)
        turns.append((messages.get((run.request or {}).get("message_id")), view))
    return turns


async def _recent_conversations(user: Any, endpoint: AgentEndpoint) -> list[Conversation]:
    return [
        c async for c in Conversation.objects.filter(user=user, endpoint=endpoint).order_by("-updated_at")[:8]
    ]


@login_required
async def conversations(request: HtmxHttpRequest) -> TemplateResponse:
    """Every conversation of this person, per agent they may still use, with what waits for them."""
    user = await request.auser()
    usable = AgentEndpoint.objects.usable_by(user)
    threads = [
        c
        async for c in Conversation.objects.filter(user=user, endpoint__in=usable)
        .select_related("endpoint")
        .order_by("endpoint__name", "-updated_at")
    ]
    waiting = {
        conversation_id
        async for conversation_id in Run.objects.filter(
            conversation__in=[c.pk for c in threads], status=Run.Status.INTERRUPTED
        ).values_list("conversation_id", flat=True)
    }
    groups: dict[AgentEndpoint, list[Conversation]] = {}
    for thread in threads:
        thread.waiting = thread.pk in waiting
        groups.setdefault(thread.endpoint, []).append(thread)
    return TemplateResponse(request, "agents_ui/conversations.html", {"groups": groups})


def _pretty(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True) if data is not None else ""
