"""The composer: a message (and its files) checked, saved with the run that answers it, and sent."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, OperationalError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_POST
from django_htmx.http import push_url, reswap, retarget

from agents_ui.capabilities.values import SkillInfo
from agents_ui.decisions import Plan
from agents_ui.display.run_view import RunView
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import AgentEndpoint, Attachment, Conversation, Message, Run
from agents_ui.monitoring import metrics
from agents_ui.runs import queue, turns
from agents_ui.runs.control import request_stop
from agents_ui.runs.history import transcript_of
from agents_ui.runs.inputs import RunRequest, host_context
from agents_ui.runs.live import CHANGED_COURSE, live_run, start_run
from agents_ui.runs.throttle import allowance, claim
from agents_ui.sdk import sniff_mime_type
from agents_ui.sdk.transcript import Transcript
from agents_ui.views.access import sending_refusal, usable_endpoint, users_conversation
from agents_ui.views.conversations import Recent
from agents_ui.views.htmx import HtmxHttpRequest
from agents_ui.views.inbox import answered_in_inbox, from_inbox
from agents_ui.views.workspace import new_client_token, render_workspace


class ComposerError(Exception):
    """Something the person must change before the message can go; the message is kept."""


@login_required
@require_POST
async def send_message(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """htmx: the message and its live run, appended to the transcript; a plain post: the page."""
    endpoint = await usable_endpoint(request, slug, announce=False)
    user = await request.auser()
    if refusal := sending_refusal(endpoint):
        return await _refused(request, endpoint, refusal)
    inputs = await plan_inputs(endpoint, await user_abilities(user))
    plan, discovery = inputs.plan(), inputs.discovery
    token = (request.POST.get("client_token") or "")[:64]
    # The same message submitted again gets its first run. A submit that is saved finds it by the
    # token's uniqueness (save_turn); one that would be refused, or would stop a run, looks first.
    try:
        check_discovery(discovery)
        content, files, request_fields = _read_composer(request, plan)
        if request_fields["intervention"] and (earlier := await _sent_first(user, token)):
            return await _sent(request, *earlier, plan)
        if queue.separate() and await sync_to_async(queue.full)():
            if earlier := await _sent_first(user, token):
                return await _sent(request, *earlier, plan)
            return await _overloaded(request, endpoint)
        try:
            conversation = await _conversation_for(request, endpoint)
            if request_fields["intervention"] and conversation is not None:
                await _change_course(conversation)
            run, message, first = await sync_to_async(save_turn, thread_sensitive=True)(
                conversation, user, content, files, request_fields, endpoint, plan, request, token
            )
        except OperationalError as exc:  # e.g. SQLite still locked after its busy timeout
            raise ComposerError(
                "The server is busy and your message was not sent. It is still here: try again."
            ) from exc
    except ComposerError as problem:
        if earlier := await _sent_first(user, token):
            return await _sent(request, *earlier, plan)
        return await _refused(request, endpoint, str(problem))
    if first:
        start_run(run, plan)
    if from_inbox(request):  # a task's question answered in the inbox: its item is redrawn there
        return await answered_in_inbox(request)
    return await _sent(request, run, message, plan, new=first)


def check_discovery(discovery: Any) -> None:
    """Refuse a message to an agent whose discovery says it cannot take one."""
    if discovery.refused:
        raise ComposerError(f"This agent cannot be used. {discovery.in_words} Your message was not sent.")
    if discovery.needs_newer_client:
        raise ComposerError(
            f"This agent needs a newer client (SDK {discovery.min_version} or later) and refuses "
            "messages from this one."
        )


async def _sent(
    request: HtmxHttpRequest, run: Run, message: Message | None, plan: Plan, *, new: bool = False
) -> HttpResponse:
    """The message and its run appended to the transcript (htmx), or the conversation's page.
    `new`: the run was saved by this request (its transcript is empty, or live here)."""
    conversation = run.conversation
    if not request.htmx:
        return redirect(conversation.get_absolute_url())
    found = live_run(run.pk)
    live = found is not None or run.status in (Run.Status.PENDING, Run.Status.RUNNING)
    if new:  # nothing of it is stored yet: no event log to read
        transcript = found.transcript if found is not None else Transcript()
    else:
        transcript = await sync_to_async(transcript_of)(run)
    view = RunView(run, transcript, plan, can_approve=not plan["approvals"].disabled, live=live)
    if queue.separate() and run.status == Run.Status.PENDING:
        view.queued_ahead = await sync_to_async(queue.ahead_of)(run)
    # The templates' `user` is the one this request has (request.user would read it again).
    request.user = user = await request.auser()
    sent = TemplateResponse(
        request,
        "agents_ui/workspace.html#sent",
        {
            **view.context(),
            "message": message,
            "conversation": conversation,
            "client_token": new_client_token(),
            "allowance": await allowance(plan, conversation.endpoint_id, user),
            # The page had no conversation yet: its empty state goes, and the side list gains this one.
            "first_turn": not request.POST.get("conversation"),
            "recent": Recent(user, conversation.endpoint),  # read as the response renders
            "endpoint": conversation.endpoint,
        },
    )
    return push_url(sent, conversation.get_absolute_url())


async def _sent_first(user: Any, token: str) -> tuple[Run, Message | None] | None:
    """The run and message of an earlier submit with this composer token, if there was one."""
    return await sync_to_async(_sent_before)(user, token) if token else None


def _sent_before(user: Any, token: str) -> tuple[Run, Message | None] | None:
    run = (
        Run.objects.select_related("conversation__endpoint")
        .filter(client_token=token, conversation__user=user)
        .first()
    )
    if run is None:
        return None
    message_id = (run.request or {}).get("message_id")
    message = Message.objects.prefetch_related("attachments").filter(pk=message_id).first()
    return run, message


async def _refused(request: HtmxHttpRequest, endpoint: AgentEndpoint, problem: str) -> HttpResponse:
    """The composer's words back, with what must change; the message stays typed."""
    if request.htmx:
        refusal = TemplateResponse(
            request, "agents_ui/workspace.html#composer-error", {"composer_error": problem}
        )
        if from_inbox(request):  # the inbox's answer form has its own message area, its target
            return reswap(refusal, "innerHTML")
        return retarget(reswap(refusal, "innerHTML"), "#composer-errors")
    return await render_workspace(
        request, endpoint, composer_error=problem, typed=request.POST.get("content", ""), status=422
    )


async def _overloaded(request: HtmxHttpRequest, endpoint: AgentEndpoint) -> HttpResponse:
    """Past the queue's bound: refused for now (503, Retry-After), saying so; the message stays typed."""
    wait = settings.AGENTS_UI_QUEUE_RETRY_AFTER
    metrics.QUEUE_REFUSALS.inc()
    response = await _refused(
        request,
        endpoint,
        f"Too many answers are waiting to start, so your message was not sent. It is still here: "
        f"try again in {wait} seconds.",
    )
    response.status_code = 503
    response["Retry-After"] = str(wait)
    return response


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
    skill = request.POST.get("skill") or ""
    chosen = None
    if skill:
        chosen = {s.id: s for s in plan["skills"].details.get("skills") or ()}.get(skill)
        if not plan["skills"].visible or chosen is None:
            raise ComposerError("Choose one of the skills this agent names.")
    files = [checked_upload(upload, plan, chosen) for upload in uploads]
    subagent = request.POST.get("subagent") or ""
    if subagent:
        names = {s["name"] for s in plan["subagents"].details.get("subagents") or []}
        if not plan["subagents"].visible or subagent not in names:
            raise ComposerError("Choose one of the sub-agents this agent has.")
    profile = request.POST.get("profile") or ""
    if profile and profile not in (plan["stream-profile"].details.get("offered") or []):
        raise ComposerError("Choose one of the stream profiles this agent offers.")
    intervention = bool(request.POST.get("intervene"))
    stop = plan["stop"]
    if intervention and not (stop.visible and not stop.disabled and stop.details.get("intervene")):
        raise ComposerError("This agent does not say it takes a change of course: stop it, then write.")
    return (
        content,
        files,
        {"subagent": subagent, "skill": skill, "profile": profile, "intervention": intervention},
    )


def checked_upload(upload: Any, plan: Plan, skill: SkillInfo | None = None) -> tuple[str, str, bytes]:
    """The server's own check of a file: the browser's check may be missing or bypassed. A chosen
    skill that names its input modes replaces the agent's default ones, as the file picker does."""
    control = plan["upload"]
    name = upload.name or "file"
    if control.hidden:
        raise ComposerError("This agent does not take files.")
    if control.disabled:
        raise ComposerError(
            "You do not have permission to send files to agents: only people allowed to upload can. "
            "Ask an admin."
        )
    limit = control.details.get("max_bytes") or settings.AGENTS_UI_MAX_UPLOAD_BYTES
    if upload.size == 0:
        raise ComposerError(f"“{name}” is empty.")
    if upload.size > limit:
        label = control.details.get("max_bytes_label") or f"{limit // (1024 * 1024)} MB"
        raise ComposerError(f"“{name}” is too large: this agent takes files up to {label}.")
    data = upload.read()
    mime_type = sniff_mime_type(data, upload.content_type)
    accept = list(control.details.get("accept") or [])
    takes = "this agent accepts"
    if skill is not None and skill.input_modes is not None:
        if not skill.input_modes:
            raise ComposerError(f"The skill {skill.name} takes no files: “{name}” cannot go with it.")
        accept, takes = [m.lower() for m in skill.input_modes], f"the skill {skill.name} takes"
    refused = [
        pattern for pattern in control.details.get("refuse") or () if _mime_matches(mime_type, pattern)
    ]
    if refused:
        raise ComposerError(f"“{name}” is {mime_type}: this agent says it cannot process {refused[0]}.")
    if accept and not any(_mime_matches(mime_type, pattern) for pattern in accept):
        declared = upload.content_type or "unknown"
        looks = (
            f" (its content is {mime_type}, although it is labelled {declared})"
            if declared != mime_type
            else ""
        )
        raise ComposerError(f"“{name}” is not a type {takes}{looks}. It takes: {', '.join(accept)}.")
    return name, mime_type, data


def _mime_matches(mime_type: str, pattern: str) -> bool:
    if pattern.endswith("/*"):
        return mime_type.startswith(pattern[:-1])
    return mime_type == pattern


def saved_with(instance: Any, name: str, related: list[Any]) -> None:
    """`instance.<name>.all()` is `related`, just saved with it: the page shows it without reading it
    back (as prefetch_related would store it)."""
    found = getattr(instance, name).all()
    found._result_cache, found._prefetch_done = list(related), True
    instance._prefetched_objects_cache = {**getattr(instance, "_prefetched_objects_cache", {}), name: found}


async def _change_course(conversation: Conversation) -> None:
    """Stop what the conversation is running, keeping what it said, so that the correction goes as
    the next run on the same thread, which runs.turns makes only once no run of it is going."""
    async for run in Run.objects.filter(
        conversation=conversation, status__in=[Run.Status.PENDING, Run.Status.RUNNING]
    ):
        await request_stop(run.pk, CHANGED_COURSE)


async def _conversation_for(request: HttpRequest, endpoint: AgentEndpoint) -> Conversation | None:
    """The conversation the message goes on, or None for a new one (created with the message)."""
    conversation_id = request.POST.get("conversation") or ""
    if conversation_id:
        return await users_conversation(request, endpoint, conversation_id)
    return None


def save_turn(
    conversation: Conversation | None,
    user: Any,
    content: str,
    files: list[tuple[str, str, bytes]],
    fields: dict[str, Any],
    endpoint: AgentEndpoint,
    plan: Plan,
    request: HttpRequest,
    token: str,
) -> tuple[Run, Message | None, bool]:
    """The user's message and the run that answers it, saved before the agent is called.

    With a token already used by this user (a second submit racing the first), nothing new is saved
    and the first submit's run comes back; the flag says whether this call saved it.
    """
    try:
        with transaction.atomic():
            # Checked and recorded at once: sends at the same instant count one after another.
            if (left := claim(plan, endpoint, user)) is not None and left.exhausted:
                metrics.THROTTLE_REFUSALS.labels(endpoint.slug).inc()
                raise ComposerError(left.refusal())
            new_thread = conversation is None
            if conversation is None:
                title = " ".join(content.split())[:80] or "Files"
                conversation = Conversation.objects.create(user=user, endpoint=endpoint, title=title)
            message = Message.objects.create(
                conversation=conversation, role=Message.Role.USER, content=content
            )
            attachments = [
                Attachment.objects.create(
                    message=message, name=name[:255], mime_type=mime_type, size=len(data), data=data
                )
                for name, mime_type, data in files
            ]
            run_request = RunRequest(
                message_id=message.pk,
                subagent=fields["subagent"],
                skill=fields["skill"],
                stream_profile=fields["profile"] or (plan["stream-profile"].details.get("negotiated") or ""),
                output_module_types=tuple(
                    plan["structured-output"].details.get("offered_module_types") or ()
                ),
                host_context=host_context(request, plan, endpoint, conversation),
                intervention=fields["intervention"],
            )
            try:
                run = turns.next_run(
                    conversation, run_request.as_json(), client_token=token, new_thread=new_thread
                )
            except turns.Busy:
                raise ComposerError(
                    "The agent is still answering: wait for its answer, or stop it first."
                ) from None
            if not new_thread:  # a new one was made just now
                Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    except IntegrityError:
        earlier = _sent_before(user, token) if token else None
        if earlier is None:  # another user's token: refused, as if it were never valid
            raise ComposerError("This message could not be sent. Reload the page and try again.") from None
        return *earlier, False
    conversation.endpoint = endpoint
    run.conversation = conversation
    run.first_of_thread = new_thread  # a drive started from here has no earlier runs to read
    saved_with(message, "attachments", attachments)  # for the page: the message as saved
    return run, message, True
