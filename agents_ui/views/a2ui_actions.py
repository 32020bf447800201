"""A person's action on an A2UI surface: a button press posts the surface's form; the action goes to
the agent in a new run of the thread, in the form its protocol takes (agents_ui.runs.protocols;
docs/PROTOCOLS.md), and the conversation goes on. Where the protocol takes none
(`Plan.surfaces_take_actions`), the surface is shown without its buttons and a post is refused."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_POST

from agents_ui.decisions import Plan
from agents_ui.display.activities import dom_of, prior_surfaces, refused_by_plan, surfaces_before
from agents_ui.display.run_view import RunView
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import Run
from agents_ui.runs import throttle, turns
from agents_ui.runs.history import thread_runs, transcript_of
from agents_ui.runs.live import start_run
from agents_ui.runs.protocols import NotFound, adapter_for
from agents_ui.sdk import a2ui
from agents_ui.views.access import users_run
from agents_ui.views.htmx import HtmxHttpRequest


def _note(request: HtmxHttpRequest, run: Run, target_id: str, problems: list[str]) -> HttpResponse:
    if not request.htmx:
        return redirect(run.conversation.get_absolute_url())
    return TemplateResponse(
        request, "agents_ui/a2ui/problems.html", {"target_id": target_id, "problems": problems[:8]}
    )


@login_required
@require_POST
async def act(request: HtmxHttpRequest, run_id: Any) -> HttpResponse:
    """A person pressed a button of a surface: the action goes to the agent in a new run."""
    run = await users_run(request, run_id)
    transcript = await sync_to_async(transcript_of)(run)
    record = transcript.activities.get(request.POST.get("activity") or "")
    if record is None or record.activity_type != a2ui.ACTIVITY_TYPE:
        raise Http404("No such interface.")
    earlier = await sync_to_async(thread_runs)(run.conversation, before=run)
    prior = prior_surfaces([t for _, t in earlier])
    activity = a2ui.read_activity(record.content, surfaces_before(prior, transcript, record))
    surface = activity.surface(request.POST.get("surface") or "")
    if surface is None or not surface.supported:
        raise Http404("No such surface.")
    inputs = await plan_inputs(run.conversation.endpoint, await user_abilities(await request.auser()))
    plan = inputs.plan()
    if not plan.surfaces_take_actions:
        raise Http404("No such interface.")
    dom = dom_of(run.pk, record.message_id)
    errors_id = f"{dom}-errors"
    if refused_by_plan(plan):
        return _note(request, run, errors_id, [refused_by_plan(plan)])
    posted = {key: request.POST.getlist(key) for key in request.POST if key.startswith("a2ui:")}
    moment = timezone.now().isoformat().replace("+00:00", "Z")
    submission = a2ui.submit(surface, request.POST.get("a2ui-action") or "", posted, moment)
    if submission.user_action is None:
        return _note(request, run, errors_id, submission.problems)
    label = _button_text(surface, submission.user_action["sourceComponentId"])
    action = {
        "run": str(run.pk),
        "activity": record.message_id,
        "surface": surface.id,
        "version": surface.version,
        "userAction": submission.user_action,
        "dataModel": submission.data_model,
        "values": submission.values,
        "label": label,
    }
    try:
        new_run = await sync_to_async(_action_run, thread_sensitive=True)(
            run, action, plan, await request.auser()
        )
    except NotFound as missing:
        raise Http404(str(missing)) from None
    except throttle.Throttled as refused:
        return _note(request, run, errors_id, [str(refused)])
    if new_run is None:
        return _note(request, run, errors_id, ["The agent is still answering: press again once it is done."])
    start_run(new_run, plan)
    if not request.htmx:
        return redirect(run.conversation.get_absolute_url())
    old = RunView(run, transcript, plan, a2ui_prior=prior)
    old.a2ui_sent = {record.message_id: {surface.id: action}}
    new_view = RunView(new_run, transcript_of(new_run), plan, live=True)
    context = {"old": old, "new": new_view, "activity": old.activity_view(record), "action": action}
    return TemplateResponse(request, "agents_ui/a2ui/sent.html", context)


def _action_run(run: Run, action: dict[str, Any], plan: Plan, user: Any) -> Run | None:
    """The run that takes the action to the agent; None while another run of the thread is going.
    A press is a turn: the agent's rate holds (Throttled past it)."""
    try:
        with transaction.atomic():
            throttle.hold(plan, run.conversation.endpoint_id, user)
            return adapter_for(run.conversation.endpoint).act(run, action)
    except turns.Busy:
        return None


def _button_text(surface: a2ui.Surface, component_id: str) -> str:
    """The words on the pressed button (its Text child), for the person's side of the conversation."""
    button = surface.components.get(component_id, {})
    child = surface.components.get(button.get("child"), {}) if isinstance(button.get("child"), str) else {}
    text = child.get("text")
    return text[:120] if isinstance(text, str) else component_id[:120]
