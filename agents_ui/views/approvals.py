"""Approvals: deciding what an agent asked before acting, for both protocols."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_POST

from agents_ui.decisions import Plan
from agents_ui.endpoints import errors
from agents_ui.endpoints.clients import agent_client, sdk_client
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import AgentEndpoint, ApprovalRecord, Run
from agents_ui.runs.history import decided_for, transcript_of
from agents_ui.runs.inputs import RunRequest
from agents_ui.runs.live import live_run, start_run
from agents_ui.runs.resume import decided_payload
from agents_ui.sdk import AgentError, ExternalAgentClient, validate_against_async
from agents_ui.views.access import users_run
from agents_ui.views.htmx import HtmxHttpRequest, fragment_or_page
from agents_ui.views.run_render import RunView, dom_id


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
    if endpoint.protocol == AgentEndpoint.Protocol.EXTERNAL:
        return await _decide_external(request, run, plan, user)
    return await _decide_interrupts(request, run, plan, user)


async def _decide_interrupts(request: HtmxHttpRequest, run: Run, plan: Plan, user: Any) -> HttpResponse:
    """AG-UI: one new run on the same thread whose resume answers every open interrupt at once."""
    errors_id = f"run-{run.pk}-decision-errors"
    transcript = await sync_to_async(transcript_of)(run)
    decided = await sync_to_async(decided_for)(run)
    open_interrupts = [i for i in transcript.open_interrupts if i.id not in decided]
    if not open_interrupts:
        return _note(request, run, errors_id, "This request was already decided.")
    resume, records = [], []
    view = RunView(run, transcript, plan)
    by_id = {i["id"]: i for i in view.interrupts()}
    for interrupt in open_interrupts:
        choice = request.POST.get(f"decision-{interrupt.id}")
        info = by_id.get(interrupt.id, {})
        if choice not in ("approve", "reject", "edit"):  # never a decision nobody chose
            return _note(request, run, errors_id, "Choose approve or reject for each request.")
        if interrupt.expires_at and _expired(interrupt.expires_at):
            return _note(request, run, errors_id, "This request expired: the agent no longer waits for it.")
        if choice == "reject":
            decision, edited = ApprovalRecord.Decision.REJECTED, None
        elif choice == "edit" and info.get("editable"):
            try:
                edited = json.loads(request.POST.get(f"edited-{interrupt.id}") or "")
            except (ValueError, RecursionError) as exc:
                return _note(request, run, errors_id, f"The edited arguments are not valid JSON: {_why(exc)}")
            problem = await _schema_problem(edited, _edit_schema(interrupt, info))
            if problem:
                return _note(request, run, errors_id, f"The edited arguments do not fit: {problem}")
            decision = ApprovalRecord.Decision.APPROVED_WITH_EDITS
        else:
            decision, edited = ApprovalRecord.Decision.APPROVED, None
        # Written as the interrupt's responseSchema asks, and checked against it (runs/resume.py).
        payload, problem = await decided_payload(interrupt, decision, edited, request.POST)
        if problem:
            return _note(request, run, errors_id, problem)
        resume.append({"interruptId": interrupt.id, "status": "resolved", "payload": payload})
        records.append(
            ApprovalRecord(
                run=run, request_id=interrupt.id, tool_name=info.get("tool", "")[:200],
                arguments=info.get("args") or {}, decision=decision, edited_arguments=edited, decided_by=user,
            )
        )  # fmt: skip
    try:
        new_run = await sync_to_async(_record_and_resume, thread_sensitive=True)(run, records, resume)
    except IntegrityError:
        return _note(request, run, errors_id, "This request was already decided.")
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


def _record_and_resume(run: Run, records: list[ApprovalRecord], resume: list[dict[str, Any]]) -> Run:
    with transaction.atomic():
        ApprovalRecord.objects.bulk_create(records)
        new_run = Run.objects.create(
            conversation=run.conversation, request=RunRequest(kind="resume", resume=tuple(resume)).as_json()
        )
    new_run.conversation = run.conversation
    return new_run


def _edit_schema(interrupt: Any, info: dict[str, Any]) -> dict[str, Any] | None:
    schema = interrupt.response_schema or {}
    edited = (schema.get("properties") or {}).get("editedArgs")
    if isinstance(edited, dict):
        return edited
    return info.get("schema")


async def _schema_problem(value: Any, schema: dict[str, Any] | None) -> str:
    """What is wrong with edited arguments for the agent's schema, "" when nothing.

    The schema is the agent's: it is checked by the SDK's bounded validator, off the event loop,
    so no reference it names is fetched and no pattern it holds can stall the server.
    """
    if not schema:
        return "" if isinstance(value, dict) else "arguments must be a JSON object"
    return "; ".join(await validate_against_async(value, schema))


def _why(exc: Exception) -> str:
    return "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def _expired(expires_at: str) -> bool:
    try:
        moment = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    except ValueError:
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment <= timezone.now()


async def _decide_external(request: HtmxHttpRequest, run: Run, plan: Plan, user: Any) -> HttpResponse:
    """External agents: post the decision while the run's stream waits; the same stream goes on."""
    approval_id = request.POST.get("approval") or ""
    transcript = await sync_to_async(transcript_of)(run)
    approval = transcript.approvals.get(approval_id)
    if approval is None:
        raise Http404("No such approval.")
    errors_id = f"{dom_id('apr', approval_id)}-errors"
    choice = request.POST.get("decision")
    if choice not in ("approve", "deny"):
        return _note(request, run, errors_id, "Choose approve or reject.")
    edited = None
    view = RunView(run, transcript, plan)
    info = next((a for a in view.approvals() if a["id"] == approval_id), {})
    raw_edit = (request.POST.get("edited") or "").strip()
    if choice == "approve" and raw_edit and raw_edit != info.get("args_json", "").strip():
        try:
            edited = json.loads(raw_edit)
        except (ValueError, RecursionError) as exc:
            return _note(request, run, errors_id, f"The edited input is not valid JSON: {_why(exc)}")
        problem = await _schema_problem(edited, info.get("schema"))
        if problem:
            return _note(request, run, errors_id, f"The edited input does not fit: {problem}")
    decision = (
        ApprovalRecord.Decision.REJECTED if choice == "deny"
        else ApprovalRecord.Decision.APPROVED_WITH_EDITS if edited is not None
        else ApprovalRecord.Decision.APPROVED
    )  # fmt: skip
    record = ApprovalRecord(
        run=run, request_id=approval_id, tool_name=(approval.name or "")[:200],
        arguments=approval.input if isinstance(approval.input, dict) else {},
        decision=decision, edited_arguments=edited, decided_by=user, decided_at=timezone.now(),
    )  # fmt: skip
    # Known to the run's streams before the agent goes on, so its record shows who decided and what
    # was sent as soon as the agent says the request is resolved.
    live = live_run(run.pk)
    if live is not None and approval_id not in live.decided:
        live.decided[approval_id] = record
    async with agent_client() as client:
        agent = sdk_client(run.conversation.endpoint, client)
        assert isinstance(agent, ExternalAgentClient)
        try:
            await agent.decide_approval(approval_id, choice, edited_input=edited)
        except AgentError as exc:
            if live is not None and live.decided.get(approval_id) is record:
                del live.decided[approval_id]
            return _note(request, run, errors_id, errors.describe(exc))
    try:
        await record.asave(force_insert=True)
    except IntegrityError:
        return _note(request, run, errors_id, "This request was already decided.")
    return _note(request, run, errors_id, "Decision sent.", tone="info")
