"""Approvals: deciding what an agent asked before acting. One form, whatever the agent: for each
request it shows, `decision-<id>` = approve | reject | edit and, optionally, `edited-<id>` (JSON);
the agent's adapter (agents_ui.runs.protocols) applies them."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from agents_ui.display.run_view import RunView
from agents_ui.display.values import dom_id
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import Run, WaitingItem
from agents_ui.runs.history import decided_for, transcript_of
from agents_ui.runs.live import start_run
from agents_ui.runs.protocols import NotFound, Refused, adapter_for
from agents_ui.runs.turns import Busy
from agents_ui.views.access import users_run
from agents_ui.views.htmx import HtmxHttpRequest, fragment_or_page
from agents_ui.views.inbox import BULK_LIMIT, decided_already, from_inbox, named_items, open_items, resolved


def _note(request: HtmxHttpRequest, run: Run, target_id: str, text: str, tone: str = "error") -> HttpResponse:
    """The outcome, in the form's own message area (htmx) or on the page (a plain form post)."""
    return fragment_or_page(
        request,
        "agents_ui/run.html#form-note",
        {"target_id": target_id, "text": text, "tone": tone},
        page=reverse("inbox") if from_inbox(request) else run.conversation.get_absolute_url(),
        note=text,
        level=messages.ERROR if tone == "error" else messages.INFO,
    )


def _errors_id(run: Run, about: str) -> str:
    """Where a note goes: the card of the request it is about, else the run's decision form."""
    return f"{dom_id('apr', about)}-errors" if about else f"run-{run.pk}-decision-errors"


NO_PERMISSION = "You do not have permission to decide this: only people allowed to approve can. Ask an admin."


@dataclass
class Outcome:
    """What deciding a run's requests came to: the run that resumes it (None when the agent's own
    stream goes on), or why nothing was decided and which request that is about."""

    plan: Any
    transcript: Any = None
    new_run: Run | None = None
    problem: str = ""
    about: str = ""


async def apply_decision(request: HtmxHttpRequest, run: Run, posted: Any) -> Outcome:
    """Decide the run's requests as `posted` says (`decision-<id>`, `edited-<id>`), through its
    agent's adapter; the run that resumes it is started. The decide view and a decision of several
    requests at once both come here."""
    endpoint = run.conversation.endpoint
    user = await request.auser()
    plan = (await plan_inputs(endpoint, await user_abilities(user))).plan()
    if plan["approvals"].disabled or not await user.ahas_perm("agents_ui.approve_actions"):
        return Outcome(plan, problem=NO_PERMISSION)
    transcript = await sync_to_async(transcript_of)(run)
    decided = await sync_to_async(decided_for)(run)
    view = RunView(run, transcript, plan)
    shown = {card.id: card for card in view.approvals()}
    try:
        outcome = await adapter_for(endpoint).decide(run, transcript, shown, decided, posted, user)
    except Refused as refusal:
        return Outcome(plan, transcript, problem=refusal.text, about=refusal.about)
    except IntegrityError:
        return Outcome(plan, transcript, problem="This request was already decided.")
    except Busy:
        return Outcome(plan, transcript, problem="The agent is still answering: decide once it is done.")
    if outcome.run is not None:
        start_run(outcome.run, plan)
    return Outcome(plan, transcript, new_run=outcome.run, about=outcome.about)


@login_required
@require_POST
async def decide(request: HtmxHttpRequest, run_id: Any) -> HttpResponse:
    run = await users_run(request, run_id)
    inbox = from_inbox(request)
    # From the inbox, a request decided elsewhere is said so, and never sent to the agent again.
    if inbox and await decided_already(run, request.POST):
        return await resolved(request, run)
    try:
        done = await apply_decision(request, run, request.POST)
    except NotFound as missing:
        raise Http404(str(missing)) from None
    if done.problem:
        if inbox and await decided_already(run, request.POST):
            return await resolved(request, run)
        about = done.about if done.problem != NO_PERMISSION else ""
        return _note(request, run, _errors_id(run, about), done.problem)
    if inbox:
        return await resolved(request, run, fresh=True)
    new_run, plan, transcript = done.new_run, done.plan, done.transcript
    if new_run is None:  # the agent's own stream goes on with the decision
        return _note(request, run, _errors_id(run, done.about), "Decision sent.", tone="info")
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


@login_required
@require_POST
async def decide_many(request: HtmxHttpRequest) -> HttpResponse:
    """Approve or reject several approvals of one agent: first a confirmation listing them, then
    each run's decided as its own form would (apply_decision); what was decided elsewhere
    in between is said, never decided again."""
    user = await request.auser()
    action = request.POST.get("action")
    if action not in ("approve", "reject"):
        messages.error(request, "Choose approve or reject.")
        return redirect("inbox")
    chosen = [
        i
        for i in await named_items(user, request.POST.getlist("items"))
        if i.kind == WaitingItem.Kind.APPROVAL
    ]
    still = {
        pk async for pk in open_items(user).filter(pk__in=[i.pk for i in chosen]).values_list("pk", flat=True)
    }
    chosen = [i for i in chosen if i.pk in still][:BULK_LIMIT]
    if not chosen:
        messages.error(request, "Choose the requests to decide: none of those is waiting any more.")
        return redirect("inbox")
    if len({i.endpoint_id for i in chosen}) > 1:
        messages.error(request, "Decide together only requests of one agent.")
        return redirect("inbox")
    if request.POST.get("confirmed") != "1":
        context = {"items": chosen, "action": action, "endpoint": chosen[0].endpoint}
        return TemplateResponse(request, "agents_ui/inbox_bulk.html", context)
    done, problems = [], []
    by_run: OrderedDict[Any, list[WaitingItem]] = OrderedDict()
    for item in chosen:
        by_run.setdefault(item.run_id, []).append(item)
    for run_items in by_run.values():
        run = run_items[0].run
        posted = {f"decision-{i.request_id}": action for i in run_items}
        try:
            problem = (await apply_decision(request, run, posted)).problem
        except NotFound as missing:
            problem = str(missing)
        names = ", ".join(i.title or "a request" for i in run_items)
        if problem:
            problems.append(f"{names}: {problem}")
        else:
            done.append(names)
    verb = "Approved" if action == "approve" else "Rejected"
    if done:
        messages.success(request, f"{verb} {len(done)}: {'; '.join(done)}.")
    for problem in problems:
        messages.error(request, problem)
    return redirect(reverse("inbox"))
