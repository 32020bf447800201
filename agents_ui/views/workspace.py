"""An agent's workspace: the controls its plan shows, and a conversation with it."""

from __future__ import annotations

import itertools
import json
import secrets
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest
from django.template.response import TemplateResponse

from agents_ui.decisions import CONTROL_NAMES, Plan
from agents_ui.display.activities import prior_surfaces, sent_actions
from agents_ui.display.run_view import RunView
from agents_ui.display.state_tree import state_tree
from agents_ui.display.values import pretty_json
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.endpoints.signatures import card_signature, extended_card
from agents_ui.models import AgentEndpoint, ApprovalRecord, Conversation, Feedback, Message, Run
from agents_ui.runs.history import thought_seconds, thread_runs
from agents_ui.runs.inputs import host_context, host_context_candidates, kept_answers
from agents_ui.runs.live import live_run
from agents_ui.runs.throttle import allowance
from agents_ui.views.access import sending_refusal, usable_endpoint, users_conversation
from agents_ui.views.conversations import recent_conversations
from agents_ui.views.htmx import HtmxHttpRequest


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
    """The page; also what a plain (non-htmx) message refused by the server gets, its words kept."""
    user = await request.auser()
    abilities = await user_abilities(user)
    inputs = await plan_inputs(endpoint, abilities, profile=request.GET.get("profile"))
    plan, discovery, prepared = inputs.plan(), inputs.discovery, inputs.prepared
    turns = await sync_to_async(_turns)(conversation, plan, abilities.can_approve) if conversation else []
    shared = host_context(request, plan, endpoint, conversation)
    context = {
        "endpoint": endpoint,
        "discovery": discovery,
        "plan": plan,
        "controls": [plan[name] for name in CONTROL_NAMES],
        "prepare_error": inputs.prepare_error,
        "card_signature": card_signature(endpoint, discovery.signature),
        "extended_card": extended_card(endpoint, discovery),
        "raw_declaration": _pretty(discovery.raw if discovery.raw is not None else discovery.last_known),
        "raw_extended": _pretty((discovery.extended or {}).get("payload")),
        "raw_negotiation": _pretty(prepared.negotiated.model_dump(mode="json")) if prepared else "",
        "conversation": conversation,
        "turns": turns,
        **_state_document(turns),
        "running": any(view.live for _, view in turns),
        "recent": await recent_conversations(user, endpoint),
        "composer_error": composer_error,
        "sending_off": sending_refusal(endpoint),
        # A composer rendered with a message kept (a refusal) keeps its token: that message was not sent.
        "client_token": (request.POST.get("client_token") if composer_error else "") or new_client_token(),
        "typed": typed,
        "shared_context": shared,
        "withheld_context": sorted(
            set(host_context_candidates(request, conversation, endpoint)) - set(shared)
        ),
        "allowance": await allowance(plan, endpoint, user),
    }
    return TemplateResponse(request, "agents_ui/workspace.html", context, status=status)


def new_client_token() -> str:
    """A token for one composed message: the server answers each token once."""
    return secrets.token_urlsafe(18)


def _turns(conversation: Conversation, plan: Plan, can_approve: bool) -> list[tuple[Message | None, RunView]]:
    """Each run with the message that started it, oldest first."""
    messages = {
        m.pk: m for m in conversation.messages.filter(role=Message.Role.USER).prefetch_related("attachments")
    }
    feedback = dict(
        Feedback.objects.filter(message__conversation=conversation, user=conversation.user).values_list(
            "message__remote_id", "value"
        )
    )
    decided: dict[Any, dict[str, ApprovalRecord]] = {}
    for record in ApprovalRecord.objects.filter(run__conversation=conversation).select_related("decided_by"):
        decided.setdefault(record.run_id, {})[record.request_id] = record
    turns = []
    folded = thread_runs(conversation)
    runs = [run for run, _ in folded]
    # A run's answers are carried by the run after it (call ids may repeat from one run to the next).
    answers = {
        asked.pk: {a.get("toolCallId"): a for a in (answering.request or {}).get("answers") or ()}
        for asked, answering in itertools.pairwise(runs)
    }
    sent = sent_actions(runs)
    prior: dict[str, Any] = {}
    for run, transcript in folded:
        live = live_run(run.pk) is not None or run.status in (Run.Status.PENDING, Run.Status.RUNNING)
        view = RunView(
            run, transcript, plan, can_approve=can_approve, live=live, decided=decided.get(run.pk, {}),
            answers={**kept_answers(run), **answers.get(run.pk, {})}, answerable=run is runs[-1],
            last=run is runs[-1], feedback=feedback, thought=thought_seconds(run, transcript),
            a2ui_sent=sent.get(str(run.pk), {}), a2ui_prior=prior,
        )  # fmt: skip
        prior = prior_surfaces([transcript], prior)
        turns.append((messages.get((run.request or {}).get("message_id")), view))
    return turns


def _state_document(turns: list[tuple[Message | None, RunView]]) -> dict[str, Any]:
    """The thread's state document as its last run left it (or the run still going), for the panel:
    its JSON and its tree, the same the live stream swaps in (StreamRenderer.state_fragment)."""
    for _, view in reversed(turns):
        document = view.transcript.state if view.transcript.state is not None else view.run.state
        if document is not None:
            return {"state": pretty_json(document), "tree": state_tree(document)}
    return {"state": "", "tree": []}


def _pretty(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True) if data is not None else ""
