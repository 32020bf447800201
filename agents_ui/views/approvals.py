"""Approvals: deciding what an agent asked before acting. One form, whatever the agent: for each
request it shows, `decision-<id>` = approve | reject | edit and, optionally, `edited-<id>` (JSON);
the agent's adapter (agents_ui.runs.protocols) applies them."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_POST

from agents_ui.display.run_view import RunView
from agents_ui.display.values import dom_id
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import Run
from agents_ui.runs.history import decided_for, transcript_of
from agents_ui.runs.live import start_run
from agents_ui.runs.protocols import NotFound, Refused, adapter_for
from agents_ui.runs.turns import Busy
from agents_ui.views.access import users_run
from agents_ui.views.htmx import HtmxHttpRequest, fragment_or_page


def _note(request: HtmxHttpRequest, run: Run, target_id: str, text: str, tone: str = "error") -> HttpResponse:
    """The outcome, in the form's own message area (htmx) or on the page (a plain form post)."""
    return fragment_or_page(
        request,
        "agents_ui/run.html#form-note",
        {"target_id": target_id, "text": text, "tone": tone},
        page=run.conversation.get_absolute_url(),
        note=text,
        level=messages.ERROR if tone == "error" else messages.INFO,
    )


def _errors_id(run: Run, about: str) -> str:
    """Where a note goes: the card of the request it is about, else the run's decision form."""
    return f"{dom_id('apr', about)}-errors" if about else f"run-{run.pk}-decision-errors"


@login_required
@require_POST
async def decide(request: HtmxHttpRequest, run_id: Any) -> HttpResponse:
    run = await users_run(request, run_id)
    endpoint = run.conversation.endpoint
    user = await request.auser()
    plan = (await plan_inputs(endpoint, await user_abilities(user))).plan()
    if plan["approvals"].disabled or not await user.ahas_perm("agents_ui.approve_actions"):
        return _note(
            request,
            run,
            f"run-{run.pk}-decision-errors",
            "You do not have permission to decide this: only people allowed to approve can. Ask an admin.",
        )
    transcript = await sync_to_async(transcript_of)(run)
    decided = await sync_to_async(decided_for)(run)
    view = RunView(run, transcript, plan)
    shown = {card.id: card for card in view.approvals()}
    try:
        outcome = await adapter_for(endpoint).decide(run, transcript, shown, decided, request.POST, user)
    except NotFound as missing:
        raise Http404(str(missing)) from None
    except Refused as refusal:
        return _note(request, run, _errors_id(run, refusal.about), refusal.text)
    except IntegrityError:
        return _note(request, run, _errors_id(run, ""), "This request was already decided.")
    except Busy:
        text = "The agent is still answering: decide once it is done."
        return _note(request, run, _errors_id(run, ""), text)
    new_run = outcome.run
    if new_run is None:  # the agent's own stream goes on with the decision
        return _note(request, run, _errors_id(run, outcome.about), "Decision sent.", tone="info")
    start_run(new_run, plan)
    if not request.htmx:
        return redirect(run.conversation.get_absolute_url())
    decided = await sync_to_async(decided_for)(run)
    old = RunView(run, transcript, plan, can_approve=True, decided=decided)
    new_view = RunView(new_run, transcript_of(new_run), plan, can_approve=True, live=True)
    # The new run goes after the old one; the old one's approvals now show what was decided, and
    # so do the cards of the calls decided on (arguments as edited, a confirmation answered).
    calls = [old.call_view(c) for c in transcript.tool_calls.values() if old.decision_of(c) is not None]
    return TemplateResponse(
        request, "agents_ui/run.html#decided", {"old": old, "new": new_view, "calls": calls}
    )
