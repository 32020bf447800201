"""A person's conversations, per agent they may still use, with what waits for them: found by their
title or by what was said in them, renamed, deleted."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import router
from django.db.models import OuterRef, Q, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods, require_POST

from agents_ui.models import AgentEndpoint, Conversation, Message, Run
from agents_ui.prepared import recent_query
from agents_ui.runs.live import live_run
from agents_ui.views.access import usable_endpoint
from agents_ui.views.htmx import HtmxHttpRequest

TITLE_LIMIT = Conversation._meta.get_field("title").max_length
SEARCH_LIMIT = 200
RECENT_LIMIT = 8


@login_required
async def conversations(request: HtmxHttpRequest) -> TemplateResponse:
    user = await request.auser()
    usable = AgentEndpoint.objects.usable_by(user)
    query = " ".join((request.GET.get("q") or "").split())[:SEARCH_LIMIT]
    found = listed(Conversation.objects.filter(user=user, endpoint__in=usable))
    if query:
        said = Message.objects.filter(
            content__icontains=query, superseded_at__isnull=True, role__in=("user", "assistant")
        ).values("conversation_id")
        found = found.filter(Q(title__icontains=query) | Q(pk__in=said))
    last_status = Run.objects.filter(conversation=OuterRef("pk")).order_by("-created_at").values("status")[:1]
    found = found.annotate(last_status=Subquery(last_status))
    threads = [c async for c in found.select_related("endpoint").order_by("endpoint__name", "-updated_at")]
    waiting = {
        conversation_id
        async for conversation_id in Run.objects.filter(
            conversation__in=[c.pk for c in threads], status=Run.Status.INTERRUPTED, approvals__isnull=True
        ).values_list("conversation_id", flat=True)
    }
    groups: dict[AgentEndpoint, list[Conversation]] = {}
    for thread in threads:
        thread.waiting = thread.pk in waiting
        thread.needs_authorization = thread.last_status == Run.Status.AUTH_REQUIRED
        groups.setdefault(thread.endpoint, []).append(thread)
    return TemplateResponse(request, "agents_ui/conversations.html", {"groups": groups, "query": query})


def listed(conversations: Any) -> Any:
    """Leave out an agent's side of a comparison until the person continues with it."""
    return conversations.exclude(compare_pane__isnull=False, compare_pane__continued_at__isnull=True)


async def recent_conversations(user: Any, endpoint: AgentEndpoint) -> list[Conversation]:
    """The person's latest conversations with this agent, for the workspace's side column."""
    return await sync_to_async(list)(Recent(user, endpoint))


class Recent:
    """recent_conversations, read when first listed: a template that lists them reads them as it
    renders, in the thread that renders it. Each is only what the list shows, on the one endpoint."""

    def __init__(self, user: Any, endpoint: AgentEndpoint) -> None:
        self.user, self.endpoint = user, endpoint

    @cached_property
    def conversations(self) -> list[Conversation]:
        using = router.db_for_read(Conversation)
        found = Conversation.objects.raw(recent_query(using), [self.user.pk, self.endpoint.pk, RECENT_LIMIT])
        listed_here = list(found.using(using))
        for conversation in listed_here:
            conversation.endpoint = self.endpoint
        return listed_here

    def __iter__(self) -> Iterator[Conversation]:
        return iter(self.conversations)

    def __len__(self) -> int:
        return len(self.conversations)


def side_list(
    request: HttpRequest,
    endpoint: AgentEndpoint,
    current: Conversation | None,
    recent: list[Conversation],
    **extra: Any,
) -> TemplateResponse:
    context = {"endpoint": endpoint, "conversation": current, "recent": recent, **extra}
    return TemplateResponse(request, "agents_ui/conversation_list.html", context)


@login_required
async def conversation_list(request: HtmxHttpRequest, slug: str) -> TemplateResponse:
    """The side column's list again, as it is now (a conversation renamed or deleted elsewhere)."""
    endpoint = await usable_endpoint(request, slug, announce=False)
    recent = await recent_conversations(await request.auser(), endpoint)
    current = next((c for c in recent if str(c.pk) == request.GET.get("current")), None)
    if current is None and request.GET.get("current"):
        user = await request.auser()
        try:
            current = await Conversation.objects.aget(pk=request.GET["current"], user=user, endpoint=endpoint)
        except (Conversation.DoesNotExist, ValidationError):
            current = None  # deleted meanwhile: the list no longer offers to rename it
    return side_list(request, endpoint, current, recent)


async def own_conversation(request: HttpRequest, conversation_id: Any) -> Conversation:
    """One of this person's conversations (anyone else's is "not found")."""
    user = await request.auser()
    try:
        return await Conversation.objects.select_related("endpoint").aget(pk=conversation_id, user=user)
    except (Conversation.DoesNotExist, ValidationError):
        raise Http404("No such conversation.") from None


@login_required
@require_POST
async def rename(request: HtmxHttpRequest, conversation_id: Any) -> HttpResponse:
    """A new name; from the workspace's side column (htmx), the list comes back with it."""
    thread = await own_conversation(request, conversation_id)
    title = " ".join((request.POST.get("title") or "").split())
    problem = (
        "Give the conversation a name."
        if not title
        else f"A name has at most {TITLE_LIMIT} characters."
        if len(title) > TITLE_LIMIT
        else ""
    )
    if not problem:
        await Conversation.objects.filter(pk=thread.pk).aupdate(title=title)
        thread.title = title
    if request.htmx:
        recent = await recent_conversations(await request.auser(), thread.endpoint)
        return side_list(request, thread.endpoint, thread, recent, rename_error=problem)
    if problem:
        messages.error(request, problem)
    else:
        messages.success(request, f"Renamed to “{title}”.")
    return redirect("conversations")


@login_required
@require_http_methods(["GET", "POST"])
async def delete(request: HtmxHttpRequest, conversation_id: Any) -> HttpResponse:
    """GET: the question, with what will go; POST: gone, with its runs, messages and files."""
    thread = await own_conversation(request, conversation_id)
    if request.method == "GET":
        count = await thread.messages.filter(superseded_at__isnull=True).exclude(role="reasoning").acount()
        return TemplateResponse(
            request, "agents_ui/conversation_delete.html", {"thread": thread, "message_count": count}
        )
    name = str(thread)
    # A run still answering writes into the conversation: it is stopped first, not cut off mid-write.
    async for run_id in thread.runs.exclude(status__in=Run.FINISHED).values_list("pk", flat=True):
        if live_run(run_id) is not None:
            messages.error(request, f"The agent is still answering in “{name}”: stop it first, then delete.")
            return redirect("conversations")
    await thread.adelete()
    messages.success(request, f"Deleted “{name}”.")
    return redirect("conversations")
