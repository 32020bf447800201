"""Who may see what: an endpoint or a run the user may not use is "not found", never "forbidden"."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import connections, router
from django.http import Http404, HttpRequest

from agents_ui.models import AgentEndpoint, Conversation, Run
from agents_ui.prepared import open_to_query


async def usable_endpoint(request: HttpRequest, slug: str, *, announce: bool = True) -> AgentEndpoint:
    """An endpoint this user may use.

    Preview (`?preview=1`, linked from the endpoint's admin page): staff who may view endpoints see
    any endpoint, disabled or restricted to other groups, before it is enabled for anyone. Seeing is
    all a preview gives: sending obeys the same access rules as without it, so an endpoint the user
    could not otherwise use comes back with `preview_only` set and its composer off.
    """
    user = await request.auser()
    if request.GET.get("preview") and user.is_staff and await user.ahas_perm("agents_ui.view_agentendpoint"):
        try:
            endpoint = await AgentEndpoint.objects.aget(slug=slug)
        except AgentEndpoint.DoesNotExist:
            raise Http404("No such agent.") from None
        endpoint.preview_only = not await sync_to_async(open_to)(endpoint, user)
        if announce:
            messages.info(request, preview_note(endpoint), extra_tags="preview")
        return endpoint
    endpoint = await sync_to_async(usable_endpoint_now)(user, slug)
    endpoint.preview_only = False
    return endpoint


def usable_endpoint_now(user: Any, slug: str) -> AgentEndpoint:
    """The endpoint with this slug if this user may use it, in one trip to a thread."""
    try:
        endpoint = AgentEndpoint.objects.get(slug=slug, enabled=True)
    except AgentEndpoint.DoesNotExist:
        raise Http404("No such agent.") from None
    if not open_to(endpoint, user):
        raise Http404("No such agent.")
    return endpoint


def open_to(endpoint: AgentEndpoint, user: Any) -> bool:
    """Whether this user may use this endpoint, read already: the rule of
    AgentEndpointQuerySet.usable_by for one endpoint, in one prepared statement (a request that
    opens a run or a workspace asks it, and the queryset's joins cost more to build than to run)."""
    if not endpoint.enabled or not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    using = router.db_for_read(AgentEndpoint)
    with connections[using].cursor() as cursor:
        cursor.execute(open_to_query(AgentEndpoint, using), [endpoint.pk, endpoint.pk, user.pk])
        return bool(cursor.fetchone()[0])


def preview_note(endpoint: AgentEndpoint) -> str:
    state = ""
    if not endpoint.enabled:
        state = " It is disabled: nobody else can open it yet."
    elif endpoint.preview_only:
        state = " It is restricted to groups you are not in."
    if endpoint.preview_only:
        state += " Sending is off in preview."
    return (
        f"Preview: {endpoint.name} as a user would see it, with its current declaration and overrides.{state}"
    )


def sending_refusal(endpoint: AgentEndpoint) -> str:
    """Why the composer is off for this endpoint, or "" when the user may send to it."""
    if not getattr(endpoint, "preview_only", False):
        return ""
    why = "This agent is disabled" if not endpoint.enabled else "This agent is restricted to other groups"
    return f"{why}: sending is off in preview. Enable it, or add yourself to its groups, to talk to it."


async def users_conversation(
    request: HttpRequest, endpoint: AgentEndpoint, conversation_id: Any
) -> Conversation:
    user = await request.auser()
    try:
        conversation = await Conversation.objects.aget(pk=conversation_id, user=user, endpoint=endpoint)
    except (Conversation.DoesNotExist, ValidationError):
        raise Http404("No such conversation.") from None
    conversation.endpoint = endpoint
    return conversation


async def users_run(request: HttpRequest, run_id: Any) -> Run:
    """A run of one of this user's conversations with an agent they may still use."""
    return await sync_to_async(users_run_now)(await request.auser(), run_id)


def users_run_now(user: Any, run_id: Any) -> Run:
    """users_run, for a caller already on a thread of its own: both of its queries in one trip."""
    try:
        run = Run.objects.select_related("conversation__endpoint").get(pk=run_id, conversation__user=user)
    except (Run.DoesNotExist, ValidationError):
        raise Http404("No such run.") from None
    if not open_to(run.conversation.endpoint, user):
        raise Http404("No such run.")
    return run
