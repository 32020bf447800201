"""Talking to an agent: send a message, follow the run live, stop it, decide approvals, give feedback."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import jsonschema
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, OperationalError, connections, transaction
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.html import escape
from django.views.decorators.http import require_POST

from agents_ui import agent_errors
from agents_ui.access import usable_endpoint, users_conversation, users_run
from agents_ui.decisions import Observations, Plan
from agents_ui.discovery import discover_one, sdk_client
from agents_ui.http import agent_http_client
from agents_ui.models import (
    AgentEndpoint,
    ApprovalRecord,
    Attachment,
    Conversation,
    Feedback,
    Message,
    Run,
    RunEvent,
)
from agents_ui.negotiation import prepared_for
from agents_ui.plans import build_plan, observations_of, user_abilities
from agents_ui.run_render import RunView, StreamRenderer, dom_id, render_run
from agents_ui.runs import (
    RunRequest,
    earlier_ids,
    event_from_record,
    live_run,
    start_run,
    stop_run,
    transcript_of,
)
from agents_ui.sdk import AgentError, ExternalAgentClient, sniff_mime_type
from agents_ui.sdk.transcript import TranscriptBuilder

# The browser gets at most this many swaps a second per run: a fast agent is coalesced, a slow
# one still shows each word as it comes.
MIN_SWAP_INTERVAL = 1 / 30
POLL_SECONDS = 0.25  # following a run driven by another server process
ORPHANED = "The server restarted while the agent was answering. What it said until then is kept."


class ComposerError(Exception):
    """Something the person must change before the message can go; the message is kept."""


# --- Helpers ------------------------------------------------------------------------------------


async def plan_for(request: HttpRequest, endpoint: AgentEndpoint) -> Plan:
    discovery = await discover_one(endpoint)
    return await stream_plan(endpoint, discovery, await user_abilities(await request.auser()))


async def stream_plan(endpoint: AgentEndpoint, discovery: Any, abilities: Any) -> Plan:
    """The plan a run is shown under: with the same negotiation the workspace made."""
    prepared, _ = await prepared_for(endpoint, discovery)
    return build_plan(endpoint, discovery, user=abilities, prepared=prepared)


def decided_for(run: Run) -> dict[str, ApprovalRecord]:
    return {r.request_id: r for r in ApprovalRecord.objects.filter(run=run).select_related("decided_by")}


def sse_frame(event: str, html: str) -> bytes:
    data = "\n".join(f"data: {line}" for line in (html.splitlines() or [""]))
    return f"event: {event}\n{data}\n\n".encode()


# The stream's last frame: the page's htmx closes the EventSource on it (sse-close), instead of
# reconnecting.
DONE_FRAME = sse_frame("done", "")


def oob_message(target_id: str, text: str, tone: str = "error") -> str:
    alert = f'<p class="alert alert-{tone} small">{escape(text)}</p>'
    return f'<div id="{target_id}" hx-swap-oob="innerHTML">{alert}</div>'


# --- Sending a message --------------------------------------------------------------------------


@login_required
@require_POST
async def send_message(request: HttpRequest, slug: str) -> HttpResponse:
    endpoint = await usable_endpoint(request, slug)
    user = await request.auser()
    discovery = await discover_one(endpoint)
    plan = await stream_plan(endpoint, discovery, await user_abilities(user))
    try:
        if discovery.needs_newer_client:
            raise ComposerError(
                f"This agent needs a newer client (SDK {discovery.min_version} or later) and refuses "
                "messages from this one."
            )
        content, files, request_fields = _read_composer(request, plan)
        try:
            conversation = await _conversation_for(request, endpoint, user, content)
            run, message = await sync_to_async(_save_turn, thread_sensitive=True)(
                conversation, content, files, request_fields, endpoint, plan, request
            )
        except OperationalError as exc:  # e.g. SQLite still locked after its busy timeout
            raise ComposerError(
                "The server is busy and your message was not sent. It is still here: try again."
            ) from exc
    except ComposerError as problem:
        if request.headers.get("HX-Request"):
            response = HttpResponse(
                f'<p class="alert alert-error small" role="alert">{escape(str(problem))}</p>'
            )
            response["HX-Retarget"] = "#composer-errors"
            response["HX-Reswap"] = "innerHTML"
            return response
        from agents_ui.views import render_workspace  # the page, with the message kept

        return await render_workspace(
            request, endpoint, composer_error=str(problem), typed=request.POST.get("content", ""), status=422
        )
    start_run(run)
    if not request.headers.get("HX-Request"):
        return redirect(conversation.get_absolute_url())
    view = RunView(run, transcript_of(run), plan, can_approve=not plan["approvals"].disabled, live=True)
    html = render_to_string("agents_ui/run.html#user-message", {"message": message}) + render_run(view)
    html += _composer_oob(conversation)
    response = HttpResponse(html)
    response["HX-Push-Url"] = conversation.get_absolute_url()
    return response


def _composer_oob(conversation: Conversation) -> str:
    """After a send: the composer now belongs to this conversation, and earlier errors go."""
    html = (
        '<input type="hidden" name="conversation" id="conversation-id"'
        f' value="{conversation.pk}" hx-swap-oob="true">'
    )
    html += '<div class="transcript-empty" id="transcript-empty" hx-swap-oob="delete"></div>'
    html += '<div id="composer-errors" hx-swap-oob="innerHTML"></div>'
    return html


def _read_composer(
    request: HttpRequest, plan: Plan
) -> tuple[str, list[tuple[str, str, bytes]], dict[str, Any]]:
    content = (request.POST.get("content") or "").strip()
    uploads = request.FILES.getlist("attachment")
    if not content and not uploads:
        raise ComposerError("Write a message first.")
    if len(content) > settings.AGENTS_UI_MAX_MESSAGE_CHARS:
        limit = settings.AGENTS_UI_MAX_MESSAGE_CHARS
        raise ComposerError(f"The message is {len(content):,} characters long; the limit is {limit:,}.")
    files = [_checked_upload(upload, plan) for upload in uploads]
    subagent = request.POST.get("subagent") or ""
    if subagent:
        names = {s["name"] for s in plan["subagents"].details.get("subagents") or []}
        if not plan["subagents"].visible or subagent not in names:
            raise ComposerError("Choose one of the sub-agents this agent has.")
    profile = request.POST.get("profile") or ""
    if profile and profile not in (plan["stream-profile"].details.get("offered") or []):
        raise ComposerError("Choose one of the stream profiles this agent offers.")
    return content, files, {"subagent": subagent, "profile": profile}


def _checked_upload(upload: Any, plan: Plan) -> tuple[str, str, bytes]:
    """The server's own check of a file: the browser's check may be missing or bypassed."""
    control = plan["upload"]
    name = upload.name or "file"
    if control.hidden:
        raise ComposerError("This agent does not take files.")
    if control.disabled:
        raise ComposerError("You do not have permission to send files to agents.")
    limit = control.details.get("max_bytes") or settings.AGENTS_UI_MAX_UPLOAD_BYTES
    if upload.size == 0:
        raise ComposerError(f"“{name}” is empty.")
    if upload.size > limit:
        label = control.details.get("max_bytes_label") or f"{limit // (1024 * 1024)} MB"
        raise ComposerError(f"“{name}” is too large: this agent takes files up to {label}.")
    data = upload.read()
    mime_type = sniff_mime_type(data, upload.content_type)
    accept = control.details.get("accept") or []
    if accept and not any(_mime_matches(mime_type, pattern) for pattern in accept):
        declared = upload.content_type or "unknown"
        looks = (
            f" (its content is {mime_type}, although it is labelled {declared})"
            if declared != mime_type
            else ""
        )
        raise ComposerError(
            f"“{name}” is not a type this agent accepts{looks}. It takes: {', '.join(accept)}."
        )
    return name, mime_type, data


def _mime_matches(mime_type: str, pattern: str) -> bool:
    if pattern.endswith("/*"):
        return mime_type.startswith(pattern[:-1])
    return mime_type == pattern


async def _conversation_for(
    request: HttpRequest, endpoint: AgentEndpoint, user: Any, content: str
) -> Conversation:
    conversation_id = request.POST.get("conversation") or ""
    if conversation_id:
        return await users_conversation(request, endpoint, conversation_id)
    title = " ".join(content.split())[:80] or "Files"
    conversation = await Conversation.objects.acreate(user=user, endpoint=endpoint, title=title)
    conversation.endpoint = endpoint
    return conversation


def _save_turn(
    conversation: Conversation,
    content: str,
    files: list[tuple[str, str, bytes]],
    fields: dict[str, Any],
    endpoint: AgentEndpoint,
    plan: Plan,
    request: HttpRequest,
) -> tuple[Run, Message]:
    """The user's message and the run that answers it, saved before the agent is called."""
    with transaction.atomic():
        message = Message.objects.create(conversation=conversation, role=Message.Role.USER, content=content)
        for name, mime_type, data in files:
            Attachment.objects.create(
                message=message, name=name[:255], mime_type=mime_type, size=len(data), data=data
            )
        run_request = RunRequest(
            message_id=message.pk,
            subagent=fields["subagent"],
            stream_profile=fields["profile"] or (plan["stream-profile"].details.get("negotiated") or ""),
            output_module_types=tuple(plan["structured-output"].details.get("offered_module_types") or ()),
            host_context=host_context(request, plan, endpoint, conversation),
        )
        run = Run.objects.create(conversation=conversation, request=run_request.as_json())
        Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    run.conversation = conversation
    message = Message.objects.prefetch_related("attachments").get(pk=message.pk)
    return run, message


def host_context_candidates(
    request: HttpRequest, conversation: Conversation | None, endpoint: AgentEndpoint
) -> dict[str, Any]:
    """Everything the page could tell an agent about where it is used. Only accepted fields go."""
    page = request.build_absolute_uri(
        conversation.get_absolute_url() if conversation else endpoint.get_absolute_url()
    )
    return {
        "page.url": page,
        "page.title": conversation.title if conversation else endpoint.name,
        "user.locale": getattr(request, "LANGUAGE_CODE", None) or settings.LANGUAGE_CODE,
        "user.timezone": settings.TIME_ZONE,
    }


def host_context(
    request: HttpRequest, plan: Plan, endpoint: AgentEndpoint, conversation: Conversation | None
) -> dict[str, Any]:
    control = plan["host-context"]
    if control.hidden:
        return {}
    candidates = host_context_candidates(request, conversation, endpoint)
    accepted = control.details.get("accepted_fields") or []
    limit = control.details.get("max_total_bytes")
    shared: dict[str, Any] = {}
    for name in accepted:
        if name not in candidates:
            continue
        trial = {**shared, name: candidates[name]}
        if limit is not None and len(json.dumps(trial).encode()) > limit:
            break  # the next field would go over the agent's limit: send what fits
        shared = trial
    return shared


# --- Following a run ----------------------------------------------------------------------------


@login_required
async def run_events(request: HttpRequest, run_id: Any) -> StreamingHttpResponse:
    """The run as Server-Sent Events of htmx fragments. Following a run never starts it."""
    run = await users_run(request, run_id)
    endpoint = run.conversation.endpoint
    abilities = await user_abilities(await request.auser())
    discovery = await discover_one(endpoint)
    decided = await sync_to_async(decided_for)(run)
    earlier = await sync_to_async(earlier_ids)(run)
    prepared, _ = await prepared_for(endpoint, discovery)
    # A stream may stay open for minutes: it must not hold a database connection meanwhile (the
    # request's thread keeps its own connection until the response ends).
    await sync_to_async(connections.close_all)()

    def plan_with(seen: Any) -> Plan:
        base = observations_of(endpoint)
        observed = Observations(
            reasoning_seen=base.reasoning_seen or seen.reasoning,
            interrupts_seen=base.interrupts_seen or seen.interrupts,
            state_seen=base.state_seen or seen.state_events,
        )
        return build_plan(endpoint, discovery, user=abilities, prepared=prepared, observed=observed)

    live = live_run(run.pk)
    source = live.transcript if live else TranscriptBuilder().transcript
    view = RunView(
        run,
        source,
        plan_with(source.observed),
        can_approve=abilities.can_approve,
        decided=decided,
        earlier=earlier,
    )
    renderer = StreamRenderer(view)
    if live is not None:
        frames = _follow_live(live, run, view, renderer, plan_with)
    else:
        frames = _follow_stored(run, view, renderer, plan_with)
    response = EventStreamResponse(frames, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


class EventStreamResponse(StreamingHttpResponse):
    """Server-Sent Events whose frames are bytes already: served as they come.

    StreamingHttpResponse passes each part through two more async generators on its way to the
    server (one to turn it into bytes); with hundreds of open streams that is a measurable share
    of the event loop, for nothing here.
    """

    def __aiter__(self) -> AsyncIterator[bytes]:
        if not self.is_async:  # a middleware replaced the content: Django's way, then
            return super().__aiter__()
        return self._iterator


async def _follow_live(
    live: Any, run: Run, view: RunView, renderer: StreamRenderer, plan_with: Any
) -> AsyncIterator[bytes]:
    changed = live.subscribe()
    observed = _observed_key(live.transcript)
    try:
        yield sse_frame("update", renderer.first() + renderer.state_fragment())
        last = time.monotonic()
        while not live.done:
            await changed.wait()
            wait = MIN_SWAP_INTERVAL - (time.monotonic() - last)
            if wait > 0:
                await asyncio.sleep(wait)  # coalesce what arrives meanwhile into one swap
            changed.clear()
            if live.done:
                run.status, run.error = live.status, live.error
            now_observed = _observed_key(live.transcript)
            if now_observed != observed:
                observed = now_observed
                view.plan = plan_with(live.transcript.observed)
                html = renderer.first()
            else:
                html = renderer.update()
            html += renderer.state_fragment()
            if html:
                yield sse_frame("update", html)
                last = time.monotonic()
        run.status, run.error = live.status, live.error
        yield sse_frame("update", renderer.update() + renderer.state_fragment())
    finally:
        live.unsubscribe(changed)
    yield DONE_FRAME


async def _follow_stored(
    run: Run, view: RunView, renderer: StreamRenderer, plan_with: Any
) -> AsyncIterator[bytes]:
    """A run this process is not driving: read its event log as it grows, until it ends."""
    builder = TranscriptBuilder()
    view.transcript = builder.transcript
    endpoint = run.conversation.endpoint
    # No event for longer than the agent may stay silent: nobody is driving the run any more
    # (the server restarted mid-run). Say so, and keep what was said.
    silence_limit = endpoint.read_timeout + 30
    last_seq, first, last_progress = 0, True, time.monotonic()
    while True:
        fresh = await sync_to_async(_events_after)(run.pk, last_seq)
        for seq, type_, payload in fresh:
            last_seq = seq
            try:
                event = event_from_record(endpoint.protocol, type_, payload)
            except Exception:
                continue
            if event is not None:
                builder.apply(event)
        if fresh:
            last_progress = time.monotonic()
        status = await Run.objects.filter(pk=run.pk).values_list("status", "error").afirst()
        if status:
            run.status, run.error = status
        if run.status not in Run.FINISHED and time.monotonic() - last_progress > silence_limit:
            run.status, run.error = Run.Status.FAILED, ORPHANED
            await Run.objects.filter(pk=run.pk, status__in=[Run.Status.PENDING, Run.Status.RUNNING]).aupdate(
                status=run.status, error=run.error, finished_at=timezone.now()
            )
        view.plan = plan_with(builder.transcript.observed)
        html = renderer.first() if first else renderer.update()
        html += renderer.state_fragment()
        first = False
        if html:
            yield sse_frame("update", html)
        if run.status in Run.FINISHED:
            yield DONE_FRAME
            return
        await asyncio.sleep(POLL_SECONDS)


def _events_after(run_id: Any, seq: int) -> list[tuple[int, str, Any]]:
    return list(
        RunEvent.objects.filter(run_id=run_id, seq__gt=seq)
        .order_by("seq")
        .values_list("seq", "type", "payload")[:5000]
    )


def _observed_key(transcript: Any) -> tuple[bool, bool, bool]:
    seen = transcript.observed
    return seen.reasoning, seen.interrupts, seen.state_events


# --- Stopping -----------------------------------------------------------------------------------


@login_required
@require_POST
async def stop(request: HttpRequest, run_id: Any) -> HttpResponse:
    run = await users_run(request, run_id)
    stopped = await stop_run(run.pk)
    if not stopped and run.status not in Run.FINISHED:
        # Driven by another process, or orphaned by a restart: record the stop; nothing else runs it.
        await Run.objects.filter(pk=run.pk, status__in=[Run.Status.PENDING, Run.Status.RUNNING]).aupdate(
            status=Run.Status.CANCELLED,
            error="Stopped. The answer so far is kept.",
            finished_at=timezone.now(),
        )
    return HttpResponse(status=204)


@login_required
@require_POST
async def stop_conversation(request: HttpRequest, slug: str) -> HttpResponse:
    """The composer's stop button: stop whatever the conversation on the page is running."""
    endpoint = await usable_endpoint(request, slug)
    thread = await users_conversation(request, endpoint, request.POST.get("conversation") or "")
    async for run in Run.objects.filter(
        conversation=thread, status__in=[Run.Status.PENDING, Run.Status.RUNNING]
    ):
        await stop_run(run.pk)
    return HttpResponse(status=204)


# --- Approvals ----------------------------------------------------------------------------------


@login_required
@require_POST
async def decide(request: HttpRequest, run_id: Any) -> HttpResponse:
    run = await users_run(request, run_id)
    endpoint = run.conversation.endpoint
    plan = await plan_for(request, endpoint)
    user = await request.auser()
    if plan["approvals"].disabled or not await user.ahas_perm("agents_ui.approve_actions"):
        return HttpResponse(
            oob_message(f"run-{run.pk}-decision-errors", "You do not have permission to decide this."),
            status=200,
        )
    if endpoint.protocol == AgentEndpoint.Protocol.EXTERNAL:
        return await _decide_external(request, run, plan, user)
    return await _decide_interrupts(request, run, plan, user)


async def _decide_interrupts(request: HttpRequest, run: Run, plan: Plan, user: Any) -> HttpResponse:
    """AG-UI: one new run on the same thread whose resume answers every open interrupt at once."""
    errors_id = f"run-{run.pk}-decision-errors"
    transcript = await sync_to_async(transcript_of)(run)
    decided = await sync_to_async(decided_for)(run)
    open_interrupts = [i for i in transcript.open_interrupts if i.id not in decided]
    if not open_interrupts:
        return HttpResponse(oob_message(errors_id, "This request was already decided."))
    resume, records = [], []
    view = RunView(run, transcript, plan)
    by_id = {i["id"]: i for i in view.interrupts()}
    for interrupt in open_interrupts:
        choice = request.POST.get(f"decision-{interrupt.id}") or "approve"
        info = by_id.get(interrupt.id, {})
        if interrupt.expires_at and _expired(interrupt.expires_at):
            return HttpResponse(
                oob_message(errors_id, "This request expired: the agent no longer waits for it.")
            )
        if choice == "reject":
            payload: dict[str, Any] = {"approved": False}
            decision, edited = ApprovalRecord.Decision.REJECTED, None
        elif choice == "edit" and info.get("editable"):
            try:
                edited = json.loads(request.POST.get(f"edited-{interrupt.id}") or "")
            except ValueError as exc:
                return HttpResponse(oob_message(errors_id, f"The edited arguments are not valid JSON: {exc}"))
            problem = _schema_problem(edited, _edit_schema(interrupt, info))
            if problem:
                return HttpResponse(oob_message(errors_id, f"The edited arguments do not fit: {problem}"))
            payload = {"approved": True, "editedArgs": edited}
            decision = ApprovalRecord.Decision.APPROVED_WITH_EDITS
        else:
            payload, decision, edited = {"approved": True}, ApprovalRecord.Decision.APPROVED, None
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
        return HttpResponse(oob_message(errors_id, "This request was already decided."))
    start_run(new_run)
    decided = await sync_to_async(decided_for)(run)
    old = RunView(run, transcript, plan, can_approve=True, decided=decided)
    html = render_to_string("agents_ui/run.html#approvals", old.context()).replace(
        ">", ' hx-swap-oob="true">', 1
    )
    earlier = await sync_to_async(earlier_ids)(new_run)
    new_view = RunView(new_run, transcript_of(new_run), plan, can_approve=True, live=True, earlier=earlier)
    return HttpResponse(render_run(new_view) + html)


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


def _schema_problem(value: Any, schema: dict[str, Any] | None) -> str:
    if not schema:
        return "" if isinstance(value, dict) else "arguments must be a JSON object"
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        return f"{where + ': ' if where else ''}{exc.message}"
    except jsonschema.SchemaError:
        return "" if isinstance(value, dict) else "arguments must be a JSON object"
    return ""


def _expired(expires_at: str) -> bool:
    try:
        moment = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    except ValueError:
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment <= timezone.now()


async def _decide_external(request: HttpRequest, run: Run, plan: Plan, user: Any) -> HttpResponse:
    """External agents: post the decision while the run's stream waits; the same stream goes on."""
    approval_id = request.POST.get("approval") or ""
    transcript = await sync_to_async(transcript_of)(run)
    approval = transcript.approvals.get(approval_id)
    if approval is None:
        raise Http404("No such approval.")
    errors_id = f"{dom_id('apr', approval_id)}-errors"
    choice = request.POST.get("decision")
    if choice not in ("approve", "deny"):
        return HttpResponse(oob_message(errors_id, "Choose approve or reject."))
    edited = None
    view = RunView(run, transcript, plan)
    info = next((a for a in view.approvals() if a["id"] == approval_id), {})
    raw_edit = (request.POST.get("edited") or "").strip()
    if choice == "approve" and raw_edit and raw_edit != info.get("args_json", "").strip():
        try:
            edited = json.loads(raw_edit)
        except ValueError as exc:
            return HttpResponse(oob_message(errors_id, f"The edited input is not valid JSON: {exc}"))
        problem = _schema_problem(edited, info.get("schema"))
        if problem:
            return HttpResponse(oob_message(errors_id, f"The edited input does not fit: {problem}"))
    async with agent_http_client() as client:
        agent = sdk_client(run.conversation.endpoint, client)
        assert isinstance(agent, ExternalAgentClient)
        try:
            await agent.decide_approval(approval_id, choice, edited_input=edited)
        except AgentError as exc:
            return HttpResponse(oob_message(errors_id, agent_errors.describe(exc)))
    decision = (
        ApprovalRecord.Decision.REJECTED if choice == "deny"
        else ApprovalRecord.Decision.APPROVED_WITH_EDITS if edited is not None
        else ApprovalRecord.Decision.APPROVED
    )  # fmt: skip
    try:
        await ApprovalRecord.objects.acreate(
            run=run, request_id=approval_id, tool_name=(approval.public_name or "")[:200],
            arguments=approval.input if isinstance(approval.input, dict) else {},
            decision=decision, edited_arguments=edited, decided_by=user,
        )  # fmt: skip
    except IntegrityError:
        return HttpResponse(oob_message(errors_id, "This request was already decided."))
    return HttpResponse(oob_message(errors_id, "Decision sent.", tone="info"))


# --- Feedback -----------------------------------------------------------------------------------


@login_required
@require_POST
async def feedback(request: HttpRequest, run_id: Any) -> HttpResponse:
    run = await users_run(request, run_id)
    value = request.POST.get("value")
    remote_id = request.POST.get("message") or ""
    if value not in ("up", "down"):
        return HttpResponse('<p class="small muted">Choose 👍 or 👎.</p>')
    message = await Message.objects.filter(run=run, remote_id=remote_id, role=Message.Role.ASSISTANT).afirst()
    if message is None:
        raise Http404("No such message.")
    user = await request.auser()
    record, _ = await Feedback.objects.aupdate_or_create(
        message=message, user=user, defaults={"value": value}
    )
    endpoint = run.conversation.endpoint
    note = "Thanks: marked helpful." if value == "up" else "Thanks: marked not helpful."
    if endpoint.protocol == AgentEndpoint.Protocol.EXTERNAL and run.conversation.remote_id:
        async with agent_http_client() as client:
            agent = sdk_client(endpoint, client)
            try:
                await agent.send_interaction(run.conversation.remote_id, remote_id, value)
                await Feedback.objects.filter(pk=record.pk).aupdate(sent_to_agent=True)
            except AgentError as exc:
                note = f"Saved here; the agent did not take it: {agent_errors.describe(exc)}"
    return HttpResponse(f'<p class="feedback-done small muted" role="status">{escape(note)}</p>')
