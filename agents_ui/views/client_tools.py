"""Answers to tool calls the client runs: the person answers (or dismisses) a call the agent left
for the client, and a new run of the thread takes the answer to the agent as a tool message."""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Sequence
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from agents_ui.display.run_view import RunView
from agents_ui.display.values import call_dom
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import Run, WaitingItem
from agents_ui.runs import turns, waiting
from agents_ui.runs.history import transcript_of
from agents_ui.runs.inputs import KEPT, ToolAnswer, kept_answers
from agents_ui.runs.live import start_run
from agents_ui.runs.protocols import (
    DISMISSED,
    NotFound,
    adapter_for,
    client_tool,
    other_answer,
    read_answer,
    read_shaped,
)
from agents_ui.views.access import users_run
from agents_ui.views.htmx import HtmxHttpRequest, fragment_or_page
from agents_ui.views.inbox import from_inbox, resolved


class _Refused(Exception):
    """Why the answer cannot be sent; the card keeps what the person wrote."""


def _note(request: HtmxHttpRequest, run: Run, target_id: str, text: str) -> HttpResponse:
    return fragment_or_page(
        request,
        "agents_ui/run.html#form-note",
        {"target_id": target_id, "text": text, "tone": "error"},
        page=reverse("inbox") if from_inbox(request) else run.conversation.get_absolute_url(),
        note=text,
        level=messages.ERROR,
    )


@login_required
@require_POST
async def answer(request: HtmxHttpRequest, run_id: Any) -> HttpResponse:
    run = await users_run(request, run_id)
    call_id = request.POST.get("call") or ""
    transcript = await sync_to_async(transcript_of)(run)
    call = transcript.tool_calls.get(call_id)
    if call is None:
        raise Http404("No such tool call.")
    errors_id = f"{call_dom(run.pk, call_id)}-errors"
    inputs = await plan_inputs(run.conversation.endpoint, await user_abilities(await request.auser()))
    plan = inputs.plan()
    if not plan.answers_tool_calls:
        raise Http404("No such tool call.")
    # The calls the run left for the client, and, of those, the ones without a kept answer yet.
    asked = RunView(run, transcript, plan)
    awaiting = [c.id for c in transcript.tool_calls.values() if asked.call_view(c).awaiting]
    try:
        if call.id not in awaiting or call.id in kept_answers(run):
            raise _Refused("This call is not waiting for an answer.")
        tool = client_tool(call.name, call.args)
        dismissed = request.POST.get("action") == "dismiss"
        if dismissed:
            content = DISMISSED
        elif tool is not None:
            # The agent's schema is checked off the event loop (bounded in time by the SDK).
            value, problem = await sync_to_async(read_answer, thread_sensitive=False)(tool, request.POST)
            if problem:
                raise _Refused(problem)
            content = json.dumps(value, ensure_ascii=False)
        elif request.POST.get("format") == "shaped" and (shaped := asked.answer_form(call)):
            value, problem = read_shaped(shaped, request.POST, request.POST.getlist)
            if problem:
                raise _Refused(problem)
            content = json.dumps(value, ensure_ascii=False)
        else:
            as_json = request.POST.get("format") == "json"
            content, problem = other_answer(request.POST.get("answer") or "", as_json)
            if problem:
                raise _Refused(problem)
        stored = ToolAnswer(
            id=f"answer-{uuid.uuid4().hex[:16]}",
            tool_call_id=call.id,
            content=content,
            tool_name=call.name,
            arguments=call.args_text,
            parent_message_id=call.parent_message_id or "",
            dismissed=dismissed,
        )
        new_run, answers = await sync_to_async(_answer_run, thread_sensitive=True)(run, stored, awaiting)
    except _Refused as problem:
        if (
            from_inbox(request)
            and not await WaitingItem.objects.open_for(await request.auser())
            .filter(run=run, request_id=call.id)
            .aexists()
        ):
            return await resolved(request, run)  # answered elsewhere meanwhile: said so, not sent again
        return _note(request, run, errors_id, str(problem))
    if from_inbox(request):
        if new_run is not None:
            start_run(new_run, plan)
        return await resolved(request, run, fresh=True)
    if new_run is None:  # other calls of the run still wait for theirs: the answer is kept until then
        if not request.htmx:
            return redirect(run.conversation.get_absolute_url())
        old = RunView(run, transcript, plan, answers=answers)
        context = {"old": old, "calls": [old.call_view(call)]}
        return TemplateResponse(request, "agents_ui/run.html#answer-kept", context)
    start_run(new_run, plan)
    if not request.htmx:
        return redirect(run.conversation.get_absolute_url())
    old = RunView(run, transcript, plan, answers=answers, answerable=False)
    new_view = RunView(new_run, transcript_of(new_run), plan, live=True)
    # Every card answered now shows what was sent (the kept ones said they were waiting).
    calls = [old.call_view(transcript.tool_calls[call_id]) for call_id in answers]
    return TemplateResponse(
        request, "agents_ui/run.html#answered", {"old": old, "new": new_view, "calls": calls}
    )


def thread_answers(runs: Sequence[Run]) -> dict[Any, dict[str, dict[str, Any]]]:
    """The person's answers to each run's calls (oldest run first): run pk -> call id -> answer.

    A run's answers are carried by the run after it (call ids may repeat from one run to the
    next), beside those kept on it while its other calls wait. The page and a later run's stream
    read the same, so an answered card looks the same live and after a reload.
    """
    found = {run.pk: kept_answers(run) for run in runs}
    for asked, answering in itertools.pairwise(runs):
        carried = (answering.request or {}).get("answers") or ()
        found[asked.pk].update({a.get("toolCallId"): a for a in carried})
    return found


def _answer_run(
    run: Run, stored: ToolAnswer, awaiting: list[str]
) -> tuple[Run | None, dict[str, dict[str, Any]]]:
    """The run that takes the answers to the agent once every call awaiting one has it (None until
    then: the answer is kept on the asking run); refused once the thread has gone on."""
    with transaction.atomic():
        try:
            turns.check(run.conversation, after=run)
        except turns.MovedOn:
            raise _Refused("The conversation went on: this call can no longer be answered.") from None
        except turns.Busy:
            raise _Refused("The agent is still answering: answer once it is done.") from None
        asking = Run.objects.select_for_update().get(pk=run.pk)
        kept = list((asking.request or {}).get(KEPT) or ())
        if any(a.get("toolCallId") == stored.tool_call_id for a in kept):
            raise _Refused("This call is not waiting for an answer.")
        kept.append(stored.as_json())
        answered = {a.get("toolCallId") for a in kept}
        if not set(awaiting) <= answered:
            asking.request = {**(asking.request or {}), KEPT: kept}
            asking.save(update_fields=["request"])
            waiting.close_one(run, WaitingItem.Kind.ANSWER, stored.tool_call_id)
            run.request = asking.request
            return None, kept_answers(asking)
        answers = tuple(ToolAnswer.from_json(a).as_json() for a in kept if a.get("toolCallId") in awaiting)
        try:
            new_run = adapter_for(run.conversation.endpoint).answer_tools(run, answers)
        except NotFound:
            raise _Refused("This call is not waiting for an answer.") from None
    return new_run, {a["toolCallId"]: a for a in answers}
