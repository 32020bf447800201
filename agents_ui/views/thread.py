"""Going back in a thread: answer the same message again (regenerate, retry), or edit a message
and send it again. Either way the thread continues from there: what came after is superseded
(kept in the database, no longer shown, no longer sent to the agent).

An agent the product sends the thread's whole history with every run continues from exactly what
is shown. An agent that keeps its own history (the plan's `agent_keeps_thread`: under its
conversation or context id) has no way to take a message back: going back to the first message
starts a new conversation with it (nothing before is lost), and going back to a later one leaves its
own history as it was, which the page says."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Q
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from agents_ui.decisions import Plan
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import Attachment, Conversation, Message, Run
from agents_ui.runs import throttle, turns
from agents_ui.runs.live import start_run
from agents_ui.views.access import users_run
from agents_ui.views.htmx import HtmxHttpRequest


class CannotContinue(Exception):
    """Why the thread cannot go back to this point now, in the person's words."""


@login_required
@require_POST
async def regenerate(request: HtmxHttpRequest, run_id: Any) -> HttpResponse:
    """A new answer to the same message; the old one is replaced (and no longer sent to the agent)."""
    run = await users_run(request, run_id)
    return await _continue(request, run, None)


@login_required
@require_POST
async def edit(request: HtmxHttpRequest, run_id: Any) -> HttpResponse:
    """The message that started this turn, edited and sent again; later turns are superseded."""
    run = await users_run(request, run_id)
    content = (request.POST.get("content") or "").strip()
    return await _continue(request, run, content)


async def _continue(request: HtmxHttpRequest, run: Run, content: str | None) -> HttpResponse:
    page = run.conversation.get_absolute_url()
    user = await request.auser()
    endpoint = run.conversation.endpoint
    plan = (await plan_inputs(endpoint, await user_abilities(user), negotiate=False)).plan()
    try:
        if content is not None and not content:
            raise CannotContinue("Write a message first.")
        if content is not None and len(content) > settings.AGENTS_UI_MAX_MESSAGE_CHARS:
            limit = settings.AGENTS_UI_MAX_MESSAGE_CHARS
            raise CannotContinue(f"The message is too long: the limit is {limit:,} characters.")
        new_run = await sync_to_async(continue_from, thread_sensitive=True)(
            run, content, plan=plan, user=user
        )
    except (CannotContinue, throttle.Throttled) as problem:
        messages.error(request, str(problem))
        return _to(request, page)
    new_run.conversation = run.conversation
    start_run(new_run)
    if plan.agent_keeps_thread:
        name = run.conversation.endpoint.name
        if new_run.conversation.remote_id:
            messages.info(
                request,
                f"{name} keeps its own copy of this conversation, which cannot be rewound: "
                "it still remembers what was replaced here.",
            )
        else:
            messages.info(
                request,
                f"{name} starts a new conversation of its own from this message, "
                "so it remembers nothing of what was replaced.",
            )
    return _to(request, page)


def _to(request: HtmxHttpRequest, page: str) -> HttpResponse:
    """The conversation page again, which now shows the thread as it continues."""
    if request.htmx:
        return HttpResponseClientRedirect(page)
    return redirect(page)


def turn_start(run: Run) -> Run:
    """The run that answered the person's message this run belongs to (a resume answers none)."""
    if (run.request or {}).get("message_id"):
        return run
    earlier = (
        run.conversation.runs.filter(created_at__lt=run.created_at, superseded_at__isnull=True)
        .order_by("-created_at")
        .only("request", "created_at")
    )
    for candidate in earlier:
        if (candidate.request or {}).get("message_id"):
            return candidate
    raise CannotContinue("This answer does not belong to a message of yours.")


def continue_from(run: Run, content: str | None, *, plan: Plan | None = None, user: Any = None) -> Run:
    """Supersede the turn of `run` and every later one, then save the run that answers again
    (with the edited message when `content` is given). Returns the new, pending run. With `plan`,
    the agent's rate holds (`runs.throttle`): raises Throttled past it, changing nothing."""
    conversation = run.conversation
    if run.superseded_at is not None:
        raise CannotContinue("This answer was already replaced.")
    start = turn_start(run)
    later = conversation.runs.filter(created_at__gte=start.created_at, superseded_at__isnull=True)
    if turns.busy(conversation):
        raise CannotContinue("The agent is still answering: stop it first.")
    asked = Message.objects.filter(pk=start.request["message_id"], conversation=conversation).first()
    if asked is None:
        raise CannotContinue("The message this answers is no longer there.")
    now = timezone.now()
    with transaction.atomic():
        if plan is not None:
            throttle.hold(plan, conversation.endpoint_id, user)
        later_ids = list(later.values_list("pk", flat=True))
        after = Q(created_at__gt=asked.created_at) | Q(run__in=later_ids)
        if content is not None:
            after |= Q(pk=asked.pk)
        conversation.messages.filter(after, superseded_at__isnull=True).update(superseded_at=now)
        Run.objects.filter(pk__in=later_ids).update(superseded_at=now)
        message = asked
        if content is not None:
            message = Message.objects.create(
                conversation=conversation, role=Message.Role.USER, content=content, edited_from=asked
            )
            for file in asked.attachments.all():  # the files go with the message again
                Attachment.objects.create(
                    message=message, name=file.name, mime_type=file.mime_type, size=file.size, data=file.data
                )
        request = {**start.request, "message_id": message.pk}
        try:
            new_run = turns.next_run(conversation, request)
        except turns.Busy:
            raise CannotContinue("The agent is still answering: stop it first.") from None
        first = not conversation.runs.filter(
            created_at__lt=start.created_at, superseded_at__isnull=True
        ).exists()
        if first and conversation.remote_id:
            # An agent's own history cannot be cut: from the first message, a new one starts.
            Conversation.objects.filter(pk=conversation.pk).update(remote_id="")
            conversation.remote_id = ""
        conversation.__class__.objects.filter(pk=conversation.pk).update(updated_at=now)
    return new_run
